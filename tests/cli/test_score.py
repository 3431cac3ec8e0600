"""`rewardsmith score`, driven as a real subprocess."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.plugin import install_plugin

REPO = Path(__file__).resolve().parents[2]
CLI = [sys.executable, "-m", "rewardsmith.cli.main"]
DEMO = REPO / "datasets" / "samples" / "demo.jsonl"


WIDE = {**os.environ, "COLUMNS": "250"}  # rich wraps at 80 columns when not on a terminal


def _run(*args: object, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*CLI, *map(str, args)], capture_output=True, text=True, timeout=300, env=env or WIDE
    )


def test_scores_the_demo_dump(tmp_path: Path) -> None:
    out = tmp_path / "scored.jsonl"
    result = _run(
        "score", DEMO, "-v", "exact_match", "-v", "format:required_tags=answer", "-o", out
    )
    assert result.returncode == 0, result.stderr
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 24
    by_id = {r["id"]: r["rewardsmith"]["verdicts"] for r in rows}
    rewards = {r["id"]: r["rewardsmith"]["value"] for r in rows}
    assert rewards["capital-france-good"] == 1.0 and rewards["capital-france-wrong"] == 0.5
    assert by_id["capital-france-good"]["exact_match"]["status"] == "pass"
    assert by_id["capital-france-wrong"]["exact_match"]["failure"] == "wrong_answer"
    assert by_id["capital-france-untagged"]["format"]["failure"] == "format"
    assert "exact_match" in result.stdout and "0.333" in result.stdout  # 8 of 24 right
    assert "0.500" in result.stdout  # the mean reward: (8 * 1 + 8 * 0.5 + 8 * 0) / 24


def test_bad_rows_are_reported_and_good_rows_scored(tmp_path: Path) -> None:
    dump = tmp_path / "d.jsonl"
    dump.write_bytes(b'{"id": "1", "completion": "a", "reference": "a"}\n{broken\n'
                     b'{"id": "3", "completion": "b", "reference": "a"}\n')  # fmt: skip
    out = tmp_path / "o.jsonl"
    result = _run("score", dump, "-v", "exact_match", "-o", out)
    assert result.returncode == 0
    assert f"{dump}:2: (line): malformed JSON" in result.stderr
    assert len(out.read_text().splitlines()) == 2
    strict = _run("score", dump, "-v", "exact_match", "-o", tmp_path / "s.jsonl", "--fail-on-error")
    assert strict.returncode == 1 and "d.jsonl:2" in strict.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["-v", "exact_mach"], "Did you mean 'exact_match'"),
        (["-v", "format:required_tags"], "key=value"),
        (["-v", "format:json_tag=answer"], "json_schema"),
    ],
)
def test_bad_verifier_arguments_say_how_to_fix_them(
    tmp_path: Path, args: list[str], message: str
) -> None:
    result = _run("score", DEMO, *args, "-o", tmp_path / "o.jsonl")
    assert result.returncode == 2 and message in result.stderr


def test_empty_and_missing_dumps(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    result = _run("score", empty, "-v", "exact_match", "-o", tmp_path / "o.jsonl")
    assert result.returncode == 1 and "no rows to score" in result.stderr
    missing = _run(
        "score", tmp_path / "nope.jsonl", "-v", "exact_match", "-o", tmp_path / "o.jsonl"
    )
    assert missing.returncode == 1 and "no such file" in missing.stderr


def test_parquet_in_parquet_out(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    dump = tmp_path / "d.parquet"
    rows = [{"prompt": "p", "completion": "x", "answer": "x" if i % 2 else "y"} for i in range(10)]
    pq.write_table(pa.Table.from_pylist(rows), dump)
    out = tmp_path / "o.parquet"
    assert _run("score", dump, "-v", "exact_match", "-o", out).returncode == 0
    table = pq.read_table(out)
    statuses = [
        json.loads(v)["verdicts"]["exact_match"]["status"] for v in table["rewardsmith"].to_pylist()
    ]
    assert statuses.count("pass") == 5 and table["answer"].to_pylist() == [
        r["answer"] for r in rows
    ]


NORMALISED_SPEC = """
grader:
  chain:
    - weighted:
        components:
          echo: {verify: slow_echo, delay_s: 0.01}
          exact: exact_match
    - group_normalize: {by: prompt, scale: mean}
    - running_normalize: {window: 50}
"""


def _values(path: Path) -> dict[str, float | None]:
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    return {r["id"]: r["rewardsmith"]["value"] for r in rows}


@pytest.mark.slow
def test_a_killed_and_resumed_run_equals_an_uninterrupted_one(tmp_path: Path) -> None:
    """SIGKILL mid-run, resume: no row lost or duplicated, and every reward equal to an
    uninterrupted run's, group and running normalisation included (the state is saved
    with each chunk and the unfinished chunk is rescored from its start)."""
    plugin = install_plugin(tmp_path / "plugin")
    env = {**WIDE, "PYTHONPATH": f"{plugin}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    spec = tmp_path / "spec.yaml"
    spec.write_text(NORMALISED_SPEC)
    dump = tmp_path / "d.jsonl"
    rows = [
        {"id": f"r{i}", "prompt": f"p{i // 6}", "completion": "x", "reference": "xy"[i % 3 == 0]}
        for i in range(300)
    ]
    dump.write_text("".join(json.dumps(row) + "\n" for row in rows))
    common = ["score", str(dump), "--spec", str(spec), "--chunk-size", "16", "--backend", "inline"]
    whole = tmp_path / "whole.jsonl"
    assert _run(*common, "-o", whole, env=env).returncode == 0
    out = tmp_path / "o.jsonl"
    args = [*CLI, *common, "-o", str(out)]
    process = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and (not out.exists() or out.stat().st_size < 20_000):
        time.sleep(0.02)
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    partial = out.read_text().count("\n")
    assert 0 < partial < 300, "the kill should land mid-run"
    result = subprocess.run(args, env=env, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    ids = [json.loads(line)["id"] for line in out.read_text().splitlines()]
    assert len(ids) == len(set(ids)) == 300
    assert "kept from before" in result.stdout
    assert _values(out) == _values(whole)
    assert len(set(_values(whole).values())) > 3  # normalisation made the values differ
