"""Consistency of the answer's table (a PDF reference sets how much it must check): totals,
balance sheets and growth rates, in model tables and in real PDFs (the bundled reports)."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from rewardsmith.verifiers.finance.consistency import Consistency, check_table
from rewardsmith.verifiers.finance.exploits import markdown
from rewardsmith.verifiers.finance.reference import ExtractedTable, ExtractionLimits, read_pdf_table
from rewardsmith.verifiers.finance.tables import read_table
from rewardsmith.verifiers.types import Failure, Sample, Status

BALANCE = """| Item | 2024 | 2023 |
|---|---|---|
| Cash | 12,035 | 7,289 |
| Receivables | 6,228 | 12,886 |
| Total assets | 18,263 | 20,175 |
| Payables | 10,104 | 12,028 |
| Total liabilities | 10,104 | 12,028 |
| Total equity | 8,159 | 8,147 |"""

INCOME = """Item,2024,2023,% change
Revenue,"122,445","150,239",-18.5%
Cost of sales,"(44,943)","(43,084)",-4.3%
Operating result,"77,502","107,155",-27.7%"""


def _restated(reference: dict) -> str:
    """The PDF's table written out as the answer (the right answer to "restate and check")."""
    found = read_pdf_table(reference["pdf"], reference.get("page", 1), 0, ExtractionLimits())
    assert isinstance(found, ExtractedTable), found
    return markdown(found.table.grid())


def test_an_empty_answer_to_a_pdf_task_earns_nothing(bundled: Path) -> None:
    reference = {"pdf": str(bundled / "acme.pdf"), "page": 2, "table": 0}
    for answer in ("", "I will not do this.", "Cash rose 65.1% from 7,289 to 12,035."):
        verdict = Consistency()(Sample(id="p", completion=answer, reference=reference))
        assert verdict.score == 0.0, answer


def _run(completion: str, **config: object) -> object:
    return Consistency(**config)(Sample(id="c", completion=completion))  # type: ignore[arg-type]


def test_consistent_balance_sheet_passes() -> None:
    verdict = _run(BALANCE)
    assert verdict.status is Status.PASS  # type: ignore[attr-defined]
    assert verdict.evidence["kinds"] == ["balance", "total"]  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("old", "new", "kind"),
    [
        ("| Total assets | 18,263 |", "| Total assets | 18,236 |", "total"),  # transposed digits
        ("| Total equity | 8,159 |", "| Total equity | 8,195 |", "balance"),
        ("| Cash | 12,035 |", "| Cash | (12,035) |", "total"),  # sign flipped
    ],
)
def test_broken_arithmetic_is_found(old: str, new: str, kind: str) -> None:
    verdict = _run(BALANCE.replace(old, new))
    # Every check must hold: the checks that do hold do not dilute a broken one.
    assert verdict.status is Status.FAIL and verdict.score == 0.0  # type: ignore[attr-defined]
    assert kind in {c["kind"] for c in verdict.evidence["failed"]}  # type: ignore[attr-defined]


def test_growth_rates_are_recomputed() -> None:
    checks = [c for c in check_table(read_table(INCOME)) if c.kind == "growth"]
    assert [c.ok for c in checks] == [True, True, True]
    wrong = check_table(read_table(INCOME.replace("-27.7%", "-72.7%")))
    assert [c.where for c in wrong if not c.ok] == [
        "Operating result / % change = (2024 - 2023) / |2023|"
    ]


def test_growth_follows_year_order() -> None:
    older_first = "Item,2023,2024,Change\nRevenue,100,110,10.0%"
    assert all(c.ok for c in check_table(read_table(older_first)))


def test_rounded_statements_get_rounding_slack() -> None:
    rounded = "Item,2024\nA,1.4\nB,1.4\nTotal,2.9"  # 1.4 + 1.4 = 2.8; printed parts were rounded
    assert all(c.ok for c in check_table(read_table(rounded)))
    assert not all(c.ok for c in check_table(read_table(rounded.replace("2.9", "3.1"))))


@pytest.mark.parametrize(
    ("claim", "ok"),
    [
        ("Revenue fell 18.5% from 150,239 to 122,445.", True),
        ("Revenue rose 18.5% from 150,239 to 122,445.", False),  # wrong direction
        ("Revenue fell 81.5% from 150,239 to 122,445.", False),
        ("Cash grew by 65.1% from $7,289 to $12,035.", True),
        ("Costs rose 4.3% from (43,084) to (44,943).", True),  # magnitudes of costs
        ("Sales increased 10% from 1.0 million to 1.1 million", True),
    ],
)
def test_growth_claims_in_prose(claim: str, ok: bool) -> None:
    verdict = _run(f"{BALANCE}\n\n{claim}")  # read beside the answer's table
    assert verdict.status is (Status.PASS if ok else Status.FAIL)  # type: ignore[attr-defined]
    assert "growth_claim" in verdict.evidence["kinds"]  # type: ignore[attr-defined]
    alone = _run(claim)  # prose is not a table: nothing to check, no reward
    assert alone.status is Status.FAIL and alone.failure is Failure.FORMAT  # type: ignore[attr-defined]


def test_nothing_to_check_is_not_applicable() -> None:
    verdict = _run("Name,Role\nAda,CEO\nBob,CFO")
    assert verdict.status is Status.SKIP and verdict.score is None  # type: ignore[attr-defined]


@pytest.mark.parametrize("completion", ["", "just words", "<table>" * 20_000])
def test_malformed_tables_fail_as_format(completion: str) -> None:
    verdict = _run(completion)
    assert verdict.status is Status.FAIL and verdict.failure is Failure.FORMAT  # type: ignore[attr-defined]


def test_huge_table_is_bounded() -> None:
    rows = "\n".join(f"r{i},{i}" for i in range(5_000))
    verdict = _run(f"Item,2024\n{rows}\nTotal,{sum(range(5_000))}")
    assert verdict.status is Status.PASS  # type: ignore[attr-defined]


@pytest.mark.slow
@pytest.mark.parametrize("company", ["acme", "globex"])
def test_bundled_pdf_tables_are_consistent(bundled: Path, parsed: dict, company: str) -> None:
    for page, kinds in ((1, ["growth", "total"]), (2, ["balance", "total"]), (3, ["total"])):
        reference = {"pdf": str(bundled / f"{company}.pdf"), "page": page, "table": 0}
        verdict = Consistency()(
            Sample(id="p", completion=_restated(reference), reference=reference)
        )
        assert verdict.status is Status.PASS, (page, verdict.feedback)
        assert verdict.evidence["kinds"] == kinds


@pytest.mark.slow
def test_nics_report_totals(shared_data: Path) -> None:
    pdf = shared_data / "pdf/pdfplumber/nics-background-checks-2015-11.pdf"
    reference = {"pdf": str(pdf), "page": 1}
    verdict = Consistency()(Sample(id="nics", completion=_restated(reference), reference=reference))
    assert verdict.status is Status.PASS and verdict.evidence["checks"] >= 20


@pytest.mark.slow
def test_scanned_pdf_is_an_infrastructure_error(hostile: dict[str, Path]) -> None:
    verdict = Consistency()(
        Sample(id="s", completion="", reference={"pdf": str(hostile["scanned"]), "page": 1})
    )
    assert verdict.status is Status.ERROR and verdict.failure is Failure.BAD_REFERENCE
    assert "no text layer" in verdict.feedback


def test_pickle_round_trip() -> None:
    check = Consistency(abs_tol=1.0)
    assert pickle.loads(pickle.dumps(check)) == check
