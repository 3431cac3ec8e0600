"""``rewardsmith score`` on the dumps users already have: --map, --split, veRL's own
generation dump, a BOM, stop mode keeping what was read, the mapping in the fingerprint."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rewardsmith.cli.main import app
from tests.cli.report_cases import write_jsonl
from tests.datasets.test_trainer_dumps import _verl_write_generations


def _score(*args: object) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["score", *map(str, args), "--backend", "inline"])
    return result.exit_code, result.output


def _values(path: Path) -> dict[str, float | None]:
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    return {r["id"]: r["rewardsmith"]["value"] for r in rows}


def test_verl_generation_dump_scores_without_flags(tmp_path: Path) -> None:
    write = _verl_write_generations()
    write(["q1", "q2"], ["Paris", "Lyon"], ["paris", "paris"], [1.0, 0.0], {}, str(tmp_path), 3)
    out = tmp_path / "scored.jsonl"
    code, output = _score(tmp_path / "3.jsonl", "-v", "exact_match", "-o", out)
    assert code == 0, output
    assert _values(out) == {"3:1": 1.0, "3:2": 0.0}
    row = json.loads(out.read_text().splitlines()[0])
    assert row["gts"] == "paris" and row["step"] == 3  # every column kept as written


def test_map_flags_nested_columns_and_a_default_task(tmp_path: Path) -> None:
    rows = [
        {"q": "2+2?", "gen": {"text": "4"}, "gold": json.dumps({"answer": "4"}), "kind": None},
        {"q": "3+3?", "gen": {"text": "7"}, "gold": json.dumps({"answer": "6"}), "kind": "sum"},
    ]
    dump = write_jsonl(tmp_path / "custom.jsonl", rows)
    out = tmp_path / "scored.jsonl"
    maps = ["--map", "completion=gen.text", "--map", "reference=gold.answer"]
    tasks = ["--map", "task=kind", "--map", "task:=arithmetic"]
    code, output = _score(dump, "-v", "exact_match", "-o", out, *maps, *tasks)
    assert code == 0, output
    assert _values(out) == {"custom:1": 1.0, "custom:2": 0.0}
    written = [json.loads(line)["rewardsmith"]["task"] for line in out.read_text().splitlines()]
    assert written == ["arithmetic", "sum"]
    # The mapping is part of the fingerprint: another mapping refuses to resume.
    code, output = _score(dump, "-v", "exact_match", "-o", out, *maps, "--map", "task:=other")
    assert code == 1 and "column mapping" in output and "--rescore" in output
    code, output = _score(dump, "-v", "exact_match", "-o", out, *maps, *tasks)
    assert code == 0 and "0 scored, 2 kept from before" in output


@pytest.mark.parametrize(
    ("flag", "message"),
    [("completion", "FIELD=COLUMN"), ("answer=gen", "not a sample field")],
)
def test_bad_map_flags_say_how_to_write_them(tmp_path: Path, flag: str, message: str) -> None:
    dump = write_jsonl(tmp_path / "d.jsonl", [{"completion": "x"}])
    code, output = _score(dump, "-v", "exact_match", "-o", tmp_path / "o.jsonl", "--map", flag)
    assert code == 2 and message in output


def test_a_column_missing_from_some_rows_is_a_bad_row(tmp_path: Path) -> None:
    dump = write_jsonl(tmp_path / "d.jsonl", [{"out": "x", "ref": "x"}, {"ref": "y"}])
    out = tmp_path / "o.jsonl"
    code, output = _score(dump, "-v", "exact_match", "-o", out, "--map", "completion=out")
    assert code == 0 and len(_values(out)) == 1
    assert "d.jsonl:2: out: completion is mapped to 'out', not in this row" in output


def test_split_chooses_a_split_of_a_saved_dataset_dict(tmp_path: Path) -> None:
    import datasets

    def split(answer: str) -> datasets.Dataset:
        return datasets.Dataset.from_dict({"completion": ["4"], "reference": [answer]})

    folder = tmp_path / "dd"
    datasets.DatasetDict({"train": split("4"), "test": split("5")}).save_to_disk(str(folder))
    out = tmp_path / "o.jsonl"
    code, output = _score(folder, "-v", "exact_match", "-o", out)
    assert code == 1 and "choose one with --split" in output
    code, output = _score(folder, "-v", "exact_match", "-o", out, "--split", "test")
    assert code == 0 and _values(out) == {"dd:1": 0.0}


def test_stop_mode_writes_the_rows_before_the_bad_one(tmp_path: Path) -> None:
    rows = [json.dumps({"id": str(i), "completion": "a", "reference": "a"}) for i in range(300)]
    rows[279] = '{"id": "279", "completion": '  # line 280, cut short
    dump = tmp_path / "d.jsonl"
    dump.write_bytes(b"\xef\xbb\xbf" + "\n".join(rows).encode() + b"\n")  # and a BOM
    out = tmp_path / "o.jsonl"
    code, output = _score(dump, "-v", "exact_match", "-o", out, "--fail-on-error")
    assert code == 1 and "d.jsonl:280: (line): malformed JSON" in output
    assert "at column 29" in output  # just past the 28 characters there are
    assert len(_values(out)) == 279  # one chunk of 256 and the 23 rows read after it
    code, output = _score(dump, "-v", "exact_match", "-o", out)
    assert code == 0 and "20 scored, 279 kept from before" in output
    assert len(_values(out)) == 299


def test_names_from_the_dump_print_as_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")  # no wrapping inside a name
    rows = [
        {"completion": "a", "reference": "a", "task": "[bold red]loud[/bold red]"},
        {"completion": "b", "reference": "a", "task": "[link=https://example.com]x[/link]"},
    ]
    code, output = _score(write_jsonl(tmp_path / "d.jsonl", rows), "-v", "exact_match",
                          "-o", tmp_path / "o.jsonl")  # fmt: skip
    assert code == 0
    assert "[bold red]loud[/bold red]" in output and "[link=https://example.com]x" in output
