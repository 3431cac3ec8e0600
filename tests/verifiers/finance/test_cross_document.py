"""Cross-document comparisons over the two bundled reports, with the gold read from the PDFs."""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import pytest

from rewardsmith.verifiers.finance.cross_document import CrossDocument
from rewardsmith.verifiers.types import Failure, Sample, Status


def _run(completion: str, reference: Any) -> Any:
    return CrossDocument()(Sample(id="x", completion=completion, reference=reference))


def _revenues(truth: dict) -> tuple[int, int]:
    return truth["acme"]["income"]["2024"]["Revenue"], truth["globex"]["income"]["2024"]["Revenue"]


@pytest.mark.slow
def test_bundled_task_gold_matches_the_pdfs(tasks: dict, parsed: dict) -> None:
    task = tasks["revenue-higher"]
    gold = task["gold"]
    right = f"<answer>{gold['label']}, higher by ${gold['amount'] / 1e6:.3f} million</answer>"
    assert _run(right, task["reference"]).status is Status.PASS
    loser = "Globex" if gold["label"] == "Acme" else "Acme"
    wrong_label = _run(f"<answer>{loser}, by {gold['amount']:,}</answer>", task["reference"])
    # Every part must hold (docs/finance.md): the right amount does not rescue a wrong label.
    assert wrong_label.status is Status.FAIL and wrong_label.score == 0.0
    both = _run("<answer>Acme and Globex are close</answer>", task["reference"])
    assert both.status is Status.FAIL


@pytest.mark.parametrize(
    ("ask", "answer", "status"),
    [
        ("difference", "<answer>-27,794 thousand</answer>", Status.PASS),
        ("difference", "<answer>27,794 thousand</answer>", Status.FAIL),
        ("ratio", "<answer>0.815</answer>", Status.PASS),
        ("change_pct", "<answer>-18.5%</answer>", Status.PASS),
        ("change_pct", "<answer>-0.185</answer>", Status.PASS),
        ("change_pct", "<answer>18.5%</answer>", Status.FAIL),
        ("lower", "<answer>2024</answer>", Status.PASS),
        ("higher", "<answer>2023</answer>", Status.PASS),
        ("higher", "<answer>2024</answer>", Status.FAIL),
    ],
)
def test_asks_over_given_values(ask: str, answer: str, status: Status) -> None:
    reference = {
        "ask": ask,
        "items": [
            {"label": "2024", "value": "122,445", "scale": "thousand"},
            {"label": "2023", "value": "150,239", "scale": "thousand"},
        ],
    }
    if ask == "change_pct":  # from 2023 to 2024
        reference["items"].reverse()
    assert _run(answer, reference).status is status


def test_year_labels_are_not_read_as_the_amount() -> None:
    reference = {
        "ask": "higher",
        "amount": True,
        "items": [{"label": "2024", "value": 110}, {"label": "2023", "value": 100}],
    }
    assert _run("<answer>2024, by 10</answer>", reference).status is Status.PASS
    assert _run("<answer>2024</answer>", reference).status is Status.FAIL  # no amount


@pytest.mark.parametrize(
    "reference",
    [
        None,
        {"ask": "biggest", "items": [{"label": "a", "value": 1}, {"label": "b", "value": 2}]},
        {"ask": "higher", "items": [{"label": "a", "value": 1}]},
        {"ask": "higher", "items": [{"label": "a", "value": "x"}, {"label": "b", "value": 2}]},
        {"ask": "ratio", "items": [{"label": "a", "value": 1}, {"label": "b", "value": 0}]},
        {
            "ask": "higher",
            "items": [
                {"label": "a", "pdf": "/nonexistent.pdf", "row": "R", "column": "2024"},
                {"label": "b", "value": 2},
            ],
        },
    ],
)
def test_bad_references_are_infrastructure_errors(reference: Any) -> None:
    verdict = _run("<answer>a</answer>", reference)
    assert verdict.status is Status.ERROR and verdict.failure is Failure.BAD_REFERENCE
    assert verdict.score is None


@pytest.mark.slow
def test_row_not_in_pdf_is_named(bundled: Path, parsed: dict) -> None:
    reference = {
        "ask": "higher",
        "items": [
            {
                "label": "Acme",
                "pdf": str(bundled / "acme.pdf"),
                "row": "Goodwill",
                "column": "2024",
            },
            {"label": "Globex", "value": 1},
        ],
    }
    verdict = _run("<answer>Acme</answer>", reference)
    assert verdict.failure is Failure.BAD_REFERENCE and "Goodwill" in verdict.feedback


def test_hostile_answers_are_bounded() -> None:
    reference = {"ask": "higher", "items": [{"label": "a", "value": 1}, {"label": "b", "value": 2}]}
    assert _run("<answer>" * 20_000, reference).status is Status.FAIL
    assert _run("b " * 60_000, reference).failure is Failure.INPUT_TOO_LARGE


def test_pickle_round_trip() -> None:
    check = CrossDocument()
    assert pickle.loads(pickle.dumps(check)) == check
