"""The bundled sample set: reproducible from its generator, small, and self-consistent."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from rewardsmith.verifiers.registry import available, create
from rewardsmith.verifiers.types import Sample, Status

REPO_ROOT = Path(__file__).resolve().parents[3]

FILES = ["acme.pdf", "globex.pdf", "truth.json", "tasks.jsonl"]


def test_generator_reproduces_the_committed_files(bundled: Path, tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, str(bundled / "generate.py"), "--out", str(tmp_path)],
        check=True,
        timeout=120,
    )
    for name in FILES:
        assert (tmp_path / name).read_bytes() == (bundled / name).read_bytes(), name


def test_pdfs_are_small_and_tasks_name_real_verifiers(bundled: Path, tasks: dict) -> None:
    for name in ("acme.pdf", "globex.pdf"):
        assert (bundled / name).stat().st_size < 50_000
    assert {t["task"] for t in tasks.values()} <= set(available())
    assert not (bundled.parent / "__init__.py").exists()  # datasets/ stays a namespace portion


def test_truth_adds_up(truth: dict) -> None:
    for statements in truth.values():
        for year in statements["years"]:
            income = statements["income"][year]
            parts = [v for k, v in income.items() if k != "Total operating result"]
            assert sum(parts) == income["Total operating result"]
            b = statements["balance"][year]
            assert b["Total assets"] == b["Total liabilities"] + b["Total equity"]


def _rooted(reference: Any) -> Any:
    """Task PDF paths are relative to the repository root; make them absolute."""
    if isinstance(reference, dict):
        return {k: _rooted(v) for k, v in reference.items()}
    if isinstance(reference, list):
        return [_rooted(v) for v in reference]
    if isinstance(reference, str) and reference.startswith("datasets/finance/"):
        return str(REPO_ROOT / reference)
    return reference


def _right_answer(task: dict, tasks: dict, truth: dict) -> str:
    company = task["id"].split("-")[0]
    reference = task["reference"]
    if task["task"] == "table_match":
        # The PDF's table is the one the generator printed (the "-income-table" task's gold).
        rows = reference.get("table") or tasks[f"{company}-income-table"]["reference"]["table"]
        return "\n".join(",".join(f'"{c}"' for c in row) for row in rows)
    if task["task"] == "numeric_answer":
        return f"<answer>${reference['answer']} thousand</answer>"
    if task["task"] == "grounding":
        s = truth[company]
        revenue, assets = s["income"]["2024"]["Revenue"], s["balance"]["2024"]["Total assets"]
        return f"Revenue was ${revenue:,} thousand (p. 1). Total assets were {assets:,} (p. 2)."
    if task["task"] == "cross_document":
        return f"<answer>{task['gold']['label']}, by {task['gold']['amount']:,}</answer>"
    if task["task"] == "chart_claims":
        return str(task["gold"])
    # consistency: the balance sheet written out, which the PDF's own table must match
    balance = truth[company]["balance"]
    years = sorted(balance, reverse=True)
    rows = [["Item", *years]] + [
        [label, *(f"{balance[y][label]:,}" for y in years)] for label in balance[years[0]]
    ]
    return "\n".join(",".join(f'"{c}"' for c in row) for row in rows)


@pytest.mark.slow
def test_every_bundled_task_passes_with_its_right_answer(
    tasks: dict, truth: dict, parsed: dict
) -> None:
    for task in tasks.values():
        verifier = create(task["task"])
        sample = Sample(
            id=task["id"],
            completion=_right_answer(task, tasks, truth),
            reference=_rooted(task["reference"]),
        )
        verdict = verifier(sample)
        assert verdict.status is Status.PASS, (task["id"], verdict.feedback)
