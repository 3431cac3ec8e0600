"""``rewardsmith diff``: changes, transitions, shifts, samples in one run only, the page."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rewardsmith.cli.diff import compare_runs, diff_page
from rewardsmith.cli.main import app
from tests.cli.report_cases import install_test_verifiers, score_file, write_jsonl
from tests.cli.test_report import ALLOWED_TAGS, _elements


@pytest.fixture
def two_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    install_test_verifiers(tmp_path / "plugin", monkeypatch)
    before = [
        {"id": "a", "completion": "x", "reference": "pass"},
        {"id": "b", "completion": "x", "reference": "pass"},
        {"id": "c", "completion": "x", "reference": "fail"},
        {"id": "<img src=x onerror=alert(1)>", "completion": "x", "reference": "skip"},
        {"id": "gone", "completion": "x", "reference": "pass"},
    ]
    after = [
        {"id": "a", "completion": "x", "reference": "pass"},
        {"id": "b", "completion": "x", "reference": "fail"},
        {"id": "c", "completion": "x", "reference": "crash"},
        {"id": "<img src=x onerror=alert(1)>", "completion": "x", "reference": "pass"},
        {"id": "new", "completion": "x", "reference": "pass"},
    ]
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    score_file(write_jsonl(tmp_path / "before.jsonl", before), a, "four_way")
    score_file(write_jsonl(tmp_path / "after.jsonl", after), b, "four_way")
    return a, b


def test_changes_transitions_and_rates(two_runs: tuple[Path, Path]) -> None:
    result = compare_runs(*two_runs)
    assert (result.common, result.only_a, result.only_b) == (4, 1, 1)
    assert (result.only_a_ids, result.only_b_ids) == (["gone"], ["new"])
    assert result.changed == 3 and result.agreement == {"four_way": 0.25}
    assert dict(result.transitions) == {
        ("four_way", "pass", "fail"): 1,
        ("four_way", "fail", "error"): 1,
        ("four_way", "skip", "pass"): 1,
    }
    # Over the common samples: A has pass, pass, fail (a skip is not decided) = 2/3; B has
    # pass, fail, pass (a crash is not decided) = 2/3.
    assert result.pass_rates["four_way"] == pytest.approx((2 / 3, 2 / 3))
    assert result.means["reward"] == pytest.approx((2 / 3, 2 / 3))
    shifts = {s["id"]: (s["a"], s["b"]) for s in result.shifts}
    assert shifts == {
        "b": (1.0, 0.0),
        "c": (0.0, None),
        "<img src=x onerror=alert(1)>": (None, 1.0),
    }
    assert json.loads(json.dumps(result.to_dict()))["changed"] == 3


def test_the_page_and_the_command(two_runs: tuple[Path, Path], tmp_path: Path) -> None:
    out = tmp_path / "diff.html"
    result = CliRunner().invoke(app, ["diff", *map(str, two_runs), "--html", str(out)])
    assert result.exit_code == 0, result.output
    assert "4 samples in both; 1 only in A, 1 only in B; 3 verdicts changed" in result.output
    assert "pass rate four_way" in result.output
    page = out.read_text()
    assert page == diff_page(compare_runs(*two_runs), "a.jsonl", "b.jsonl")
    elements = _elements(page)
    assert set(elements.tags) <= ALLOWED_TAGS and "img" not in elements.tags
    assert "&lt;img src=x onerror=alert(1)&gt;" in page
    as_json = CliRunner().invoke(app, ["diff", *map(str, two_runs), "--json"])
    assert json.loads(as_json.output)["only_b_ids"] == ["new"]


def test_a_missing_run_is_one_clear_error(two_runs: tuple[Path, Path], tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["diff", str(two_runs[0]), str(tmp_path / "nope.jsonl")])
    assert result.exit_code == 1 and "no such file" in result.output
