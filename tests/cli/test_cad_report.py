"""``rewardsmith cad-report`` reads a scored file with `RunReader`: rows of other tasks in
a mixed dump (a skipped CAD verdict) are not part of the set; unreadable rows are counted."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from rewardsmith.cli.main import app
from rewardsmith.verifiers.types import Status, Verdict


def _row(k: int, verdict: Verdict) -> str:
    reward = {"value": verdict.score, "verdicts": {"mesh": verdict.to_dict()}}
    return json.dumps({"id": str(k), "task": "mesh", "rewardsmith": reward}) + "\n"


def test_skipped_rows_are_left_out_and_bad_rows_counted(tmp_path: Path) -> None:
    raw = {"raw": {"chamfer": 2e-4, "iou": 0.8, "n_points": 100}}
    measured = Verdict(name="mesh_compare", version="1", status=Status.PARTIAL, score=0.5,
                       evidence=raw, elapsed_s=0.1)  # fmt: skip
    skipped = Verdict.skipped("mesh_compare", "1", "not a mesh row")
    path = tmp_path / "scored.jsonl"
    path.write_text(_row(0, measured) + _row(1, skipped) + _row(2, skipped) + "{broken\n")
    out = tmp_path / "figures.json"
    result = CliRunner().invoke(app, ["cad-report", str(path), "--json", str(out)])
    assert result.exit_code == 0, result.output
    figures = json.loads(out.read_text())
    assert figures["samples"] == 1 and figures["valid"] == 1
    assert figures["not_scored"] == 1  # the broken line, counted, not fatal
