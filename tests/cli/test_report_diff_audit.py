"""report, diff and audit on real scored files (scored in process with the inline executor)."""

from __future__ import annotations

import json
from pathlib import Path

from rewardsmith.cli.audit import run_audit
from rewardsmith.cli.diff import compare_runs
from rewardsmith.cli.report import build_report
from rewardsmith.datasets.scored import ScoredWriter
from rewardsmith.graders import Executor, Grader, load_spec, weighted
from rewardsmith.verifiers import Sample, create

ROWS = [
    {
        "id": "good",
        "completion": "<answer>Paris</answer>",
        "reference": "<answer>Paris</answer>",
        "task": "capitals",
    },
    {
        "id": "wrong",
        "completion": "<answer>Lyon</answer>",
        "reference": "<answer>Paris</answer>",
        "task": "capitals",
    },
    {"id": "evil", "completion": "<script>alert(1)</script>", "reference": "x", "task": "xss"},
]


def _score(grader: Grader, path: Path) -> Path:
    samples = [Sample.model_validate(r) for r in ROWS]
    with Executor("inline") as executor, ScoredWriter(path, resume=False) as out:
        for row, reward in zip(ROWS, grader.score(samples, executor), strict=True):
            out.write({**row, "rewardsmith": reward.to_dict()})
    return path


def test_report_is_self_contained_and_escapes_model_text(tmp_path: Path) -> None:
    scored = _score(Grader(weighted({"correct": create("exact_match")})), tmp_path / "a.jsonl")
    page = build_report(scored, "a.jsonl", png_dir=tmp_path / "png").html
    assert "<script>alert" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert page.count("data:image/png;base64,") >= 3
    assert (tmp_path / "png" / "reward.png").stat().st_size > 1000
    assert "mean reward 0.3333 (std 0.4714) over the 3 rewarded" in page


def test_diff_finds_the_changed_verdicts(tmp_path: Path) -> None:
    a = _score(Grader(weighted({"check": create("exact_match")})), tmp_path / "a.jsonl")
    b = _score(
        Grader(weighted({"check": create("exact_match", strip_punctuation=False)})),
        tmp_path / "b.jsonl",
    )
    result = compare_runs(a, b)
    # Without punctuation stripping "<answer>Paris</answer>" still equals itself: no change.
    assert result.common == 3 and result.changes == [] and result.agreement["check"] == 1.0
    c = _score(
        Grader(weighted({"check": create("format", required_tags="answer")})), tmp_path / "c.jsonl"
    )
    changed = compare_runs(a, c)
    assert [ch["id"] for ch in changed.changes] == ["wrong"]
    assert changed.means["reward"] == (1 / 3, 2 / 3)
    assert json.dumps(changed.to_dict())  # serialisable for --json


def test_audit_catches_a_lenient_spec() -> None:
    references = [Sample.model_validate(ROWS[0])]
    strict = load_spec("grader:\n  weighted:\n    components:\n      c: exact_match\n")
    with Executor("inline") as ex:
        assert run_audit(strict, references, ex).ok
        # A spec that only checks for tags rewards a shifted or hedged answer: the audit says so.
        tags_only = "{verify: format, required_tags: [answer]}"
        lenient = load_spec(f"grader:\n  weighted:\n    components:\n      t: {tags_only}\n")
        result = run_audit(lenient, references, ex)
    assert result.corruptions["hedged"] == (0, 1)
    assert any("hedged" in line for line in result.uncaught)
