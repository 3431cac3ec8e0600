"""Grounding against the bundled reports: true figures pass, invented ones are named."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from rewardsmith.verifiers.finance.grounding import Grounding, cited_figures
from rewardsmith.verifiers.types import Failure, Sample, Status

pytestmark = pytest.mark.slow


def _check(completion: str, pdf: Path, **config: object) -> Sample:
    return Grounding(**config)(Sample(id="g", completion=completion, reference={"pdf": str(pdf)}))  # type: ignore[arg-type,return-value]


def test_cited_figures_pair_sentences_with_pages() -> None:
    found = cited_figures(
        "Revenue was $122,445 thousand (p. 1). Cash rose to 12,035 [page 2]. Also 2024."
    )
    expected = [(122445.0, 1), (12035.0, 2), (2024.0, None)]
    assert [(c.figure.value, c.page) for c in found] == expected


def test_true_figures_in_every_notation_are_grounded(bundled: Path, truth: dict) -> None:
    s = truth["acme"]
    revenue = s["income"]["2024"]["Revenue"]
    cost = -s["income"]["2024"]["Cost of sales"]
    text = (
        f"Revenue was ${revenue:,} thousand in 2024 (p. 1), that is ${revenue / 1000:.1f} million. "
        f"Cost of sales was ({cost:,}) on page 1. "
        f"Total assets were {s['balance']['2024']['Total assets']:,} (page 2)."
    )
    verdict = _check(text, bundled / "acme.pdf")
    assert verdict.status is Status.PASS, verdict.evidence
    assert verdict.evidence["figures"] == 4  # "in 2024" is a date, not a figure to ground


def test_invented_and_misplaced_figures_are_named(bundled: Path, truth: dict) -> None:
    s = truth["acme"]
    assets = s["balance"]["2024"]["Total assets"]
    text = (
        f"Total assets were {assets:,} (p. 2). "
        f"Revenue was 131,313 (p. 1). "  # invented
        f"Total assets were {assets:,} (p. 1). "  # true figure, wrong page
        f"Goodwill was 9,999 (p. 9)."  # no such page
    )
    verdict = _check(text, bundled / "acme.pdf")
    # Every claim must hold: one grounded figure does not dilute three that are not.
    assert verdict.status is Status.FAIL and verdict.score == 0.0
    named = {(i["figure"], i["page"], i["why"]) for i in verdict.evidence["invented"]}
    assert named == {
        ("131,313", 1, "not found"),
        (f"{assets:,}", 1, "not found"),
        ("9,999", 9, "no such page"),
    }
    assert "131,313" in verdict.feedback


def test_rounding_cannot_ground_a_one_digit_guess(bundled: Path) -> None:
    verdict = _check("Revenue was about $1 billion (p. 1).", bundled / "acme.pdf")
    assert verdict.status is Status.FAIL


@pytest.mark.parametrize(
    "text", ["Revenue fell; costs rose in 3 segments.", "", "I will not do this."]
)
def test_nothing_cited_earns_nothing(bundled: Path, text: str) -> None:
    verdict = _check(text, bundled / "acme.pdf")  # no figure, nothing grounded: no reward
    assert verdict.status is Status.FAIL and verdict.score == 0.0


@pytest.mark.parametrize(
    ("kind", "message"),
    [
        ("scanned", "no text layer"),
        ("encrypted", "encrypted"),
        ("truncated", "unreadable"),
        ("empty", "0 bytes"),
        ("long", "500 pages"),
    ],
)
def test_bad_pdfs_are_infrastructure_errors(
    hostile: dict[str, Path], kind: str, message: str
) -> None:
    verdict = _check("Revenue was 122,445.", hostile[kind])
    assert verdict.status is Status.ERROR and verdict.failure is Failure.BAD_REFERENCE
    assert verdict.score is None and message in verdict.feedback


def test_a_cited_page_of_a_500_page_report_is_enough(hostile: dict[str, Path]) -> None:
    ok = _check("Segment revenue was 250,007 thousand (p. 250).", hostile["long"])
    assert ok.status is Status.PASS
    bad = _check("Segment revenue was 250,008 thousand (p. 250).", hostile["long"])
    assert bad.status is Status.FAIL


def test_figures_on_a_scanned_page_are_left_out_not_scored(
    hostile: dict[str, Path], truth: dict
) -> None:
    revenue = truth["acme"]["income"]["2024"]["Revenue"]
    both = f"Revenue was {revenue:,} (p. 1). Costs were 44,943 (p. 5)."  # page 5 is the scan
    verdict = _check(both, hostile["mixed"])
    assert verdict.status is Status.PASS and verdict.evidence["figures"] == 1
    assert verdict.evidence["unchecked_scanned"] == [{"figure": "44,943", "page": 5}]
    only_scan = _check("Costs were 44,943 (p. 5).", hostile["mixed"])
    assert only_scan.status is Status.ERROR and only_scan.failure is Failure.BAD_REFERENCE


def test_huge_completion_is_refused(bundled: Path) -> None:
    verdict = _check("1,234 " * 50_000, bundled / "acme.pdf")
    assert verdict.status is Status.FAIL and verdict.failure is Failure.INPUT_TOO_LARGE


def test_pickle_round_trip() -> None:
    check = Grounding(ignore_below=100)
    assert pickle.loads(pickle.dumps(check)) == check


def test_citing_only_pages_past_the_end_is_the_models_fault(hostile: dict[str, Path]) -> None:
    # An invented page in a 500-page report must not become an infrastructure error.
    verdict = _check("Segment revenue was 250,007 thousand (p. 9999).", hostile["long"])
    assert verdict.status is Status.FAIL and verdict.failure is Failure.WRONG_ANSWER
    assert verdict.evidence["invented"][0]["why"] == "no such page"


@pytest.fixture(scope="module")
def ifrs_pdf(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, int]]:
    """An IFRS income statement in thousands, costs in parentheses, and its 2024 figures."""
    from rewardsmith.datasets.finance.statements import default_layout, draw_pdf, statement

    s = statement("ifrs_income", 3)
    path = tmp_path_factory.mktemp("grounding") / "ifrs.pdf"
    draw_pdf(s, default_layout(s), str(path))
    return path, {line.label: line.values[0] for line in s.lines if line.values}


def _millions(value: int) -> str:
    return f"€{abs(value) / 1000:,.1f} million"  # the statement is in thousands of euros


NATURAL = [
    # (sentence template, label, grounded?)
    ("Cost of sales was {m} (p. 1).", "Cost of sales", True),
    ("Cost of sales was €{t:,} thousand (p. 1).", "Cost of sales", True),
    ("Cost of sales was ${t:,} thousand (p. 1).", "Cost of sales", False),  # not in dollars
    ("Cost of sales was {t:,} thousand dollars (p. 1).", "Cost of sales", False),
    ("The company spent {m} on distribution costs (p. 1).", "Distribution costs", True),
    ("Administrative expenses amounted to {m} (p. 1).", "Administrative expenses", True),
    ("Finance costs of {m} were charged (p. 1).", "Finance costs", True),
    ("Income tax expense was {m} (p. 1).", "Income tax expense", True),
    ("Cost of sales was {p} (p. 1).", "Cost of sales", True),  # as printed
    ("Revenue was {m} (p. 1).", "Revenue", True),
    ("Revenue was {neg} (p. 1).", "Revenue", False),  # the wrong sign
    ("Cost of sales was €{t:,} million (p. 1).", "Cost of sales", False),  # the wrong scale
    ("Revenue was {m} (p. 1).", "Cost of sales", False),  # a cost is not a revenue
    ("Gross profit was {m} (p. 1).", "Distribution costs", False),  # nor a profit
]


@pytest.mark.parametrize(("template", "label", "grounded"), NATURAL)
def test_natural_citations_of_costs_are_grounded(
    ifrs_pdf: tuple[Path, dict[str, int]], template: str, label: str, grounded: bool
) -> None:
    path, values = ifrs_pdf
    value = values[label]
    text = template.format(
        m=_millions(value), t=abs(value), p=f"({abs(value):,})", neg=f"-{_millions(value)}"
    )
    verdict = _check(text, path)
    assert verdict.status is (Status.PASS if grounded else Status.FAIL), (text, verdict.evidence)


@pytest.mark.parametrize(
    ("text", "hedged"),
    [
        ("Revenue was {a} or {b} (p. 1).", True),
        ("Revenue was between {a} and {b} (p. 1).", True),
        ("Revenue was {a}/{b} (p. 1).", True),
        ("Revenue was {a}, or {a_m} (p. 1).", False),  # the same quantity restated
        ("Revenue rose from {b} to {a} (p. 1).", False),
    ],
)
def test_hedged_figures_are_not_grounded(
    ifrs_pdf: tuple[Path, dict[str, int]], text: str, hedged: bool
) -> None:
    path, values = ifrs_pdf
    revenue, profit = values["Revenue"], values["Gross profit"]
    sentence = text.format(a=f"{revenue:,}", b=f"{profit:,}", a_m=_millions(revenue))
    verdict = _check(sentence, path)
    whys = {i["why"].split(":")[0] for i in verdict.evidence.get("invented", [])}
    assert ("hedged" in whys) is hedged, verdict.evidence
