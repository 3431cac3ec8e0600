"""A claim that names a quantity ("net income", "debt") is grounded only by a figure on a
row of that quantity (or of one of its usual names): "Net income was 122,445 (p. 1)" was
paid by Acme's revenue row, because "income" is a word of the page ("Other income
(expense)"), and a claim naming no row whole was read anywhere on the page."""

from __future__ import annotations

from pathlib import Path

import pytest

from rewardsmith.verifiers.finance import Grounding
from rewardsmith.verifiers.types import Sample

ACME = {"pdf": str(Path(__file__).resolve().parents[3] / "datasets" / "finance" / "acme.pdf")}
CHECK = Grounding()

# Digits printed on the page, claimed for a quantity their row is not.
WRONG = [
    "Net income was 122,445 (p. 1).",  # revenue's
    "Net profit was $122,445 thousand (p. 1).",
    "Profit for 2024 was 122,445 (p. 1).",
    "Dividends were 159 (p. 1).",  # other income's
    "Debt was 12,035 (p. 2).",  # cash's
    "Receivables were 10,104 (p. 2).",  # payables'
    "Cash was 11,851 (p. 2).",  # borrowings'
    "Debt was 7,816 (p. 2).",  # property and equipment's
]

# The quantity under another of its names, or a row named in part.
RIGHT = [
    "Revenue was $122,445 thousand (p. 1).",
    "Sales were $122,445 thousand (p. 1).",
    "Turnover was 122,445 (p. 1).",
    "Other income was 159 in 2023 (p. 1).",
    "Borrowings were 11,851 (p. 2).",
    "Debt was 11,851 (p. 2).",
    "Operating expenses were 16,468 (p. 1).",
    "Expenses were 16,468 (p. 1).",
    "Operating income was 61,034 (p. 1).",
    "The operating result was 61,034 (p. 1).",
]


def _score(text: str) -> float | None:
    return CHECK(Sample(id="g", completion=text, reference=ACME)).score


@pytest.mark.parametrize("text", WRONG)
def test_a_quantity_claimed_with_another_rows_digits_earns_nothing(text: str) -> None:
    assert _score(text) == 0.0


@pytest.mark.parametrize("text", RIGHT)
def test_a_quantity_under_another_name_is_still_grounded(text: str) -> None:
    assert _score(text) == 1.0


def test_the_relation_renames_the_quantity_and_the_claim_earns_nothing() -> None:
    """`finance/grounding_other_quantity` is how `audit --search` finds this class."""
    import random

    from rewardsmith.verifiers.finance.claim_relations import grounding_relations

    relation = next(
        r for r in grounding_relations(CHECK) if r.name == "finance/grounding_other_quantity"
    )
    for text in [*RIGHT[:3], "Total assets were 26,079 (p. 2). Cash was 12,035 (p. 2)."]:
        assert _score(text) == 1.0
        for seed in range(4):
            new = relation.rewrite(
                Sample(id="r", completion=text, reference=ACME), random.Random(seed)
            )
            assert new is not None and CHECK(new).score == 0.0, new


# A two-digit fiscal year ties a figure to its column as "2024" does (red team G1).
YEARS = [
    ("Total assets were 28,147 (FY24) (p. 2).", 0.0),
    ("Total assets were 26,079 (FY24) (p. 2).", 1.0),
    ("Total assets were 26,079 in FY'23 (p. 2).", 0.0),
    ("In FY 23, total assets were 28,147 (p. 2).", 1.0),
    ("In FY-23, total assets were 26,079 (p. 2).", 0.0),
]


@pytest.mark.parametrize(("text", "score"), YEARS)
def test_a_two_digit_fiscal_year_ties_its_column(text: str, score: float) -> None:
    assert _score(text) == score


def test_the_year_relation_writes_two_digit_fiscal_years_too() -> None:
    import random

    from rewardsmith.verifiers.finance.claim_relations import grounding_relations

    relation = next(
        r for r in grounding_relations(CHECK) if r.name == "finance/grounding_another_year"
    )
    right = Sample(
        id="y", prompt="Summarise 2024 total assets.", completion=RIGHT[0], reference=ACME
    )
    made = [relation.rewrite(right, random.Random(seed)) for seed in range(12)]
    assert any("FY23" in str(m.completion) for m in made if m)
    assert all(m is not None and CHECK(m).score == 0.0 for m in made)
