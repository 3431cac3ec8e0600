"""Table match against ground-truth tables and against tables read out of the bundled PDFs."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import pytest

from rewardsmith.verifiers.finance.table_match import TableMatch
from rewardsmith.verifiers.types import Failure, Sample, Status


def _markdown(rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join([lines[0], "|" + "---|" * len(rows[0]), *lines[1:]])


def _sample(completion: str, reference: object) -> Sample:
    return Sample(id="t", completion=completion, reference=reference)


def test_exact_table_in_every_form_passes(tasks: dict) -> None:
    rows = tasks["acme-income-table"]["reference"]["table"]
    for completion in (
        _markdown(rows),
        json.dumps(rows),
        "\n".join(",".join(f'"{c}"' for c in r) for r in rows),
    ):
        verdict = TableMatch()(_sample(completion, {"table": rows}))
        assert verdict.status is Status.PASS, verdict.feedback


@pytest.mark.parametrize(
    ("edit", "missing"),
    [
        (lambda r: r[2].__setitem__(1, "44,943"), "lost parentheses"),  # sign lost
        (lambda r: r[1].__setitem__(1, r[1][1].replace(",", "")[:-3]), "scale"),  # in millions
        (lambda r: r[3].__setitem__(2, "(15,919)"), "transposed"),
    ],
)
def test_one_wrong_cell_is_partial_and_named(tasks: dict, edit, missing: str) -> None:  # type: ignore[no-untyped-def]
    rows = [list(r) for r in tasks["acme-income-table"]["reference"]["table"]]
    gold = [list(r) for r in rows]
    edit(rows)
    verdict = TableMatch()(_sample(_markdown(rows), {"table": gold}))
    assert verdict.status is Status.PARTIAL, missing
    assert len(verdict.evidence["missing"]) == 1 and len(verdict.evidence["extra"]) == 1
    assert "1 cells missing or wrong" in verdict.feedback


def test_score_by_structure_ignores_content(tasks: dict) -> None:
    rows = tasks["acme-income-table"]["reference"]["table"]
    blanked = [rows[0]] + [[r[0]] + ["0"] * (len(r) - 1) for r in rows[1:]]
    verdict = TableMatch(score_by="teds_struct")(_sample(_markdown(blanked), {"table": rows}))
    assert verdict.status is Status.PASS and verdict.evidence["cell_f1"] < 0.5


@pytest.mark.slow
def test_reference_from_the_pdf(tasks: dict, bundled: Path, parsed: dict) -> None:
    gold = tasks["acme-income-table"]["reference"]["table"]
    reference = {"pdf": str(bundled / "acme.pdf"), "page": 1, "table": 0}
    assert TableMatch()(_sample(_markdown(gold), reference)).status is Status.PASS
    regions = tasks["acme-regions-table"]["reference"]["table"]
    half = regions[:20]  # a model that stopped at the page break
    verdict = TableMatch()(
        _sample(_markdown(half), {"pdf": str(bundled / "acme.pdf"), "page": 3, "table": 0})
    )
    assert verdict.status is Status.PARTIAL
    assert verdict.evidence["cell_precision"] == 1.0 and verdict.evidence["cell_recall"] < 0.5


@pytest.mark.slow
def test_unreadable_reference_pdf_is_an_infrastructure_error(hostile: dict[str, Path]) -> None:
    for kind in ("encrypted", "empty", "scanned"):
        verdict = TableMatch()(_sample("a,b\n1,2", {"pdf": str(hostile[kind]), "page": 1}))
        assert verdict.status is Status.ERROR and verdict.failure is Failure.BAD_REFERENCE
        assert verdict.score is None and verdict.feedback


@pytest.mark.parametrize(
    "completion",
    ["", "no table here", "<table>" * 50_000, "|" * 600_000, '{"rows": 5}', "[[[[[[" * 3000],
)
def test_malformed_model_tables_fail_as_format(completion: str) -> None:
    verdict = TableMatch()(_sample(completion, {"table": [["a", "b"], ["x", "1"]]}))
    assert verdict.status is Status.FAIL and verdict.failure is Failure.FORMAT


def test_huge_valid_table_is_bounded() -> None:
    big = "\n".join(f"row{i},{i},{i * 2}" for i in range(2_000))
    verdict = TableMatch()(_sample(big, {"table": [["row0", "0", "0"]]}))
    assert verdict.status in (Status.PARTIAL, Status.FAIL)


@pytest.mark.parametrize("reference", [None, 42, {"pdf": 3}, {"table": "no table"}])
def test_bad_reference(reference: object) -> None:
    verdict = TableMatch()(_sample("a,b\n1,2", reference))
    assert verdict.status is Status.ERROR and verdict.failure is Failure.BAD_REFERENCE


def test_config_is_validated_and_pickles() -> None:
    with pytest.raises(ValueError, match="unknown table measure 'accuracy'"):
        TableMatch(score_by="accuracy")
    with pytest.raises(ValueError, match="renamed"):  # it claimed GriTS without being it
        TableMatch(score_by="grits")
    check = TableMatch(score_by="grits_con", report=("teds",))
    assert pickle.loads(pickle.dumps(check)) == check
