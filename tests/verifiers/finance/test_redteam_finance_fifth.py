"""Red-team tables, fifth finance round (branch rtfin5): figures with digits glued on.

F1. A grouped figure with digits glued after it ("122,4450", "122,445,5", "122,445.0.5")
was read as its well-formed prefix (122,445): a figure ten times the page's, or no figure
at all, was grounded, and a tagged "122,4459" answered 122,445. A malformed digit run now
reads as what its digits say with the separators taken out (1,224,450), which is on no
page and is no gold, so it fails; the Indian grouping "1,22,445" reads 122,445 by the same
rule. A footnote mark glued to a figure or its scale word ("122,445¹", "thousand¹") is
dropped before the text is normalised, so NFKC never turns it into a digit of the figure.

The report: /work/notes/report-rtfin5.md. Before the fix (measured): every F1 exploit row
earned 1.0, every footnote and Indian-grouping right form below earned 0.0.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from rewardsmith.verifiers.finance import (
    Consistency,
    CrossDocument,
    Grounding,
    NumericAnswer,
    TableMatch,
)
from rewardsmith.verifiers.finance.figures import find_figures
from rewardsmith.verifiers.types import Sample

REPO = Path(__file__).resolve().parents[3]
ACME = {"pdf": str(REPO / "datasets" / "finance" / "acme.pdf")}
REVENUE = {"answer": "122,445", "scale": "thousand", "currency": "USD"}
BARE = {"answer": "122,445"}


def _grounding(text: str) -> float | None:
    return Grounding()(Sample(id="g", completion=text, reference=ACME)).score


def _numeric(text: str, reference: dict[str, str]) -> float | None:
    sample = Sample(id="n", prompt="What was 2024 revenue?", completion=text, reference=reference)
    return NumericAnswer()(sample).score


GLUED_CLAIMS = [
    "Revenue was 122,4450 (p. 1).",  # ten times the page's figure
    "Revenue was 122,445,5 (p. 1).",
    "Revenue was 122,445.0.5 (p. 1).",
    "Revenue was 122,4459 (p. 1). Cost of sales was 44,943 (p. 1).",
    "Cost of sales was 44,9430 (p. 1).",
]


@pytest.mark.parametrize("text", GLUED_CLAIMS)
def test_a_figure_with_digits_glued_on_is_not_grounded(text: str) -> None:
    assert _grounding(text) == 0.0


GLUED_ANSWERS = ["<answer>122,4459</answer>", "<answer>122,445,9</answer>", "122,4450"]
MISPLACED = [  # the gold's digits with a comma no grouping puts there, or a decimal comma
    "<answer>12,2445 thousand</answer>",
    "<answer>1,22445 thousand</answer>",
    "<answer>1224,45 thousand</answer>",  # 1,224.45 thousand
    "Revenue was 12,2445 thousand.",
]


@pytest.mark.parametrize("text", MISPLACED)
def test_a_misplaced_comma_states_no_answer(text: str) -> None:
    assert _numeric(text, REVENUE) == 0.0


@pytest.mark.parametrize("text", GLUED_ANSWERS)
def test_a_figure_with_digits_glued_on_is_not_the_answer(text: str) -> None:
    assert _numeric(text, BARE) == 0.0


RIGHT_CLAIMS = [
    "Revenue was 122,445¹ (p. 1).",
    "Revenue was 122,445² (p. 1). Cost of sales was 44,943 (p. 1).",
    "Revenue was 122,445* (p. 1).",
    "Revenue was 122,445 (p. 1).",
]


@pytest.mark.parametrize("text", RIGHT_CLAIMS)
def test_a_footnoted_figure_is_still_grounded(text: str) -> None:
    assert _grounding(text) == 1.0


RIGHT_ANSWERS = [
    "<answer>122,445¹ thousand</answer>",
    "<answer>$122,445 thousand¹</answer>",
    "<answer>$122,445 thousand</answer>",
    "<answer>1,22,445 thousand</answer>",  # Indian grouping (lakh)
    "Revenue was $122,445¹ thousand.",
]


@pytest.mark.parametrize("text", RIGHT_ANSWERS)
def test_a_footnoted_or_lakh_grouped_answer_keeps_full_marks(text: str) -> None:
    assert _numeric(text, REVENUE) == 1.0


@pytest.mark.parametrize(
    ("text", "values"),
    [
        ("122,4450", [1224450.0]),
        ("1,22,445", [122445.0]),
        ("122,445.0.5", [12244505.0]),
        ("1224,45", [1224.45]),
        ("1.234.567", [1234567.0]),
        ("122,445 and 1,234.5", [122445.0, 1234.5]),
        ("notes 1,2 and 3", [3.0]),  # a short run ("1,2") is no figure
        ("122,445¹", [122445.0]),
    ],
)
def test_find_figures_reads_a_glued_run_whole(text: str, values: list[float]) -> None:
    assert [f.value for f in find_figures(text)] == values


def test_the_relation_glues_a_digit_and_the_claim_earns_nothing() -> None:
    """`finance/glued_digit` is how `audit --search` finds this class."""
    from rewardsmith.verifiers.finance.claim_relations import grounding_relations

    relation = next(r for r in grounding_relations(Grounding()) if r.name == "finance/glued_digit")
    right = Sample(id="r", completion="Revenue was 122,445 (p. 1).", reference=ACME)
    assert Grounding()(right).score == 1.0
    for seed in range(4):
        new = relation.rewrite(right, random.Random(seed))
        assert new is not None and Grounding()(new).score == 0.0, new.completion


# --- F2: an entry written in a form the reader cannot read drops out of its total --------
#
# Before the fix (measured): every F2 exploit row earned 1.0 (the total left the unreadable
# entry out of its sum), and the right totals written "1,750 USD" or "1'750" earned 0.0
# ("is not a figure").


CURRENT = [
    ("Cash", "1,000", "900"),
    ("Receivables", "500", "400"),
    ("Inventory", "250", "200"),
    ("Total current assets", "1,750", "1,500"),
]


def _statement(rows: list[tuple[str, str, str]]) -> str:
    lines = ["| Item | 2024 | 2023 |", "|---|---|---|"]
    return "\n".join(lines + [f"| {a} | {b} | {c} |" for a, b, c in rows])


def _consistency(rows: list[tuple[str, str, str]]) -> float | None:
    return Consistency(min_checks=1)(Sample(id="c", completion=_statement(rows))).score


UNREADABLE_ENTRIES = [
    "two hundred fifty",
    "250 see note",
    "~250",
    "≈250",
    "[250]",
    "'250",
    "250 1)",
    "250,-",
    "250 pcs",
]


@pytest.mark.parametrize("cell", UNREADABLE_ENTRIES)
def test_an_unreadable_entry_does_not_drop_out_of_its_total(cell: str) -> None:
    rows = [*CURRENT[:2], ("Inventory", cell, "200"), ("Total current assets", "1,500", "1,500")]
    assert _consistency(rows) == 0.0


READABLE_ENTRIES = ["250 USD", "250 €", "USD 250", "250 (1)"]


def test_an_entry_unreadable_in_every_column_is_no_heading() -> None:
    rows = [
        *CURRENT[:2],
        ("Inventory", "two hundred fifty", "two hundred"),
        ("Total current assets", "1,500", "1,300"),
    ]
    assert _consistency(rows) == 0.0


@pytest.mark.parametrize("cell", READABLE_ENTRIES)
def test_an_entry_in_another_usual_form_is_read_and_summed(cell: str) -> None:
    right = [*CURRENT[:2], ("Inventory", cell, "200"), CURRENT[3]]
    wrong = [*CURRENT[:2], ("Inventory", cell, "200"), ("Total current assets", "1,500", "1,500")]
    assert (_consistency(right), _consistency(wrong)) == (1.0, 0.0)


@pytest.mark.parametrize("cell", ["n/a", "nil", "—", "-", "nm"])
def test_a_nil_entry_is_still_nothing(cell: str) -> None:
    rows = [*CURRENT[:2], ("Inventory", cell, "200"), ("Total current assets", "1,500", "1,500")]
    assert _consistency(rows) == 1.0


@pytest.mark.parametrize("cell", ["1,750 USD", "1'750", "1’750", "$1,750", "1.750,00 €"])
def test_a_right_total_in_another_usual_form_keeps_full_marks(cell: str) -> None:
    assert _consistency([*CURRENT[:3], ("Total current assets", cell, "1,500")]) == 1.0


def test_the_relation_hides_an_entry_and_its_total_leaves_it_out() -> None:
    """`finance/consistency_unreadable_entry` is how `audit --search` finds this class."""
    from rewardsmith.verifiers.finance.relations import consistency_relations

    check = Consistency(min_checks=1)
    relation = next(
        r for r in consistency_relations(check) if r.name == "finance/consistency_unreadable_entry"
    )
    right = Sample(id="r", completion=_statement(CURRENT))
    assert check(right).score == 1.0
    for seed in range(4):
        new = relation.rewrite(right, random.Random(seed))
        assert new is not None and check(new).score == 0.0, new.completion


def test_the_currency_after_relation_keeps_a_right_statement() -> None:
    from rewardsmith.verifiers.finance.relations import consistency_relations

    check = Consistency(min_checks=1)
    relation = next(
        r for r in consistency_relations(check) if r.name == "finance/consistency_currency_after"
    )
    new = relation.rewrite(Sample(id="r", completion=_statement(CURRENT)), random.Random(0))
    assert new is not None and "1,750 USD" in str(new.completion)
    assert check(new).score == 1.0


# --- F3: each label claimed the higher one, in two clauses of one answer ------------------
#
# Before the fix (measured): the rows of TWO_WINNERS earned 1.0 (the comparison was read
# between the first two mentions only, so the second clause was never read).

BUNDLED = REPO / "datasets" / "finance"
ITEMS = [
    {"label": "Acme", "pdf": str(BUNDLED / "acme.pdf"), "page": 1, "row": "Revenue",
     "column": "2024"},
    {"label": "Globex", "pdf": str(BUNDLED / "globex.pdf"), "page": 1, "row": "Revenue",
     "column": "2024"},
]  # fmt: skip
HIGHER = {"ask": "higher", "amount": True, "items": ITEMS}


def _cross(text: str) -> float | None:
    return CrossDocument()(Sample(id="x", completion=text, reference=HIGHER)).score


TWO_WINNERS = [
    "<answer>Globex, higher by 16,849 thousand; Acme, higher by 16,849 thousand</answer>",
    "<answer>Globex is higher by 16,849 thousand. Acme is higher by 16,849 thousand.</answer>",
    "<answer>Globex, higher by 16,849 thousand\nAcme is the higher one</answer>",
    "<answer>Globex is higher than Acme by 16,849 thousand; Acme is higher than Globex</answer>",
]


@pytest.mark.parametrize("text", TWO_WINNERS)
def test_two_clauses_naming_each_label_the_higher_name_none(text: str) -> None:
    assert _cross(text) == 0.0


AGREEING = [
    "<answer>Globex, higher by 16,849 thousand</answer>",
    "<answer>Globex is higher than Acme by 16,849 thousand; Acme is lower.</answer>",
    "<answer>Globex is higher by 16,849 thousand. Acme, by contrast, trails.</answer>",
    "<answer>Globex is higher by 16,849 thousand. Acme is second.</answer>",
    "<answer>Globex is higher than Acme. The gap is 16,849 thousand.</answer>",
]


@pytest.mark.parametrize("text", AGREEING)
def test_clauses_that_agree_keep_full_marks(text: str) -> None:
    assert _cross(text) == 1.0


def test_the_relation_claims_both_labels_and_the_answer_earns_nothing() -> None:
    """`finance/cross_both_higher` is how `audit --search` finds this class."""
    from rewardsmith.verifiers.finance.claim_relations import cross_document_relations

    relation = next(
        r for r in cross_document_relations(None) if r.name == "finance/cross_both_higher"
    )
    right = Sample(id="r", completion=AGREEING[0], reference=HIGHER)
    assert CrossDocument()(right).score == 1.0
    for seed in range(6):
        new = relation.rewrite(right, random.Random(seed))
        assert new is not None and CrossDocument()(new).score == 0.0, new.completion


# --- F4: a wrong relative gap beside the right amount ---------------------------------------
#
# Before the fix (measured): the rows of WRONG_PERCENT earned 1.0 (a percentage beside an
# amount was taken for "another kind of fact" and never checked).

WRONG_PERCENT = [
    "<answer>Globex, higher by 16,849 thousand (99.9%)</answer>",
    "<answer>Globex, higher by 16,849 thousand, or 50%</answer>",
    "<answer>Globex is 25% higher than Acme, by 16,849 thousand</answer>",
]


@pytest.mark.parametrize("text", WRONG_PERCENT)
def test_a_wrong_relative_gap_beside_the_amount_fails(text: str) -> None:
    assert _cross(text) == 0.0


RIGHT_PERCENT = [
    "<answer>Globex, higher by 16,849 thousand (13.8%)</answer>",
    "<answer>Globex, higher by 16,849 thousand (13.76%)</answer>",
    "<answer>Globex is 14% higher than Acme, by 16,849 thousand</answer>",
    "<answer>Globex, higher by 16,849 thousand; Acme is 12.1% lower</answer>",
]


@pytest.mark.parametrize("text", RIGHT_PERCENT)
def test_a_right_relative_gap_beside_the_amount_keeps_full_marks(text: str) -> None:
    assert _cross(text) == 1.0


def test_the_relation_adds_a_wrong_relative_gap_and_the_answer_earns_nothing() -> None:
    """`finance/cross_wrong_relative_gap` is how `audit --search` finds this class."""
    from rewardsmith.verifiers.finance.claim_relations import cross_document_relations

    relation = next(
        r for r in cross_document_relations(None) if r.name == "finance/cross_wrong_relative_gap"
    )
    right = Sample(id="r", completion=AGREEING[0], reference=HIGHER)
    for seed in range(6):
        new = relation.rewrite(right, random.Random(seed))
        assert new is not None and CrossDocument()(new).score == 0.0, new.completion


# --- F5 (a right form refused): fiscal-year headers beside a growth column ----------------
#
# Before the fix (measured): the PDF's own table with its year headers written "FY24",
# "FY2024" or "Dec 31, 2024" scored 0.2 beside its "% change" column (0.0 for "FY24" with
# no growth column): a year was the key only when every column named one, and "FY24" named
# none.


ACME_TABLE = {"pdf": str(REPO / "datasets" / "finance" / "acme.pdf"), "page": 1, "table": 0}
ACME_ROWS = """| Item | 2024 | 2023 | % change |
|---|---|---|---|
| Revenue | 122,445 | 150,239 | -18.5% |
| Cost of sales | (44,943) | (43,084) | 4.3% |
| Operating expenses | (16,468) | (15,991) | 3.0% |
| Other income (expense) | - | 159 | -100.0% |
| Total operating result | 61,034 | 91,323 | -33.2% |"""


def _table(text: str) -> float | None:
    return TableMatch()(Sample(id="t", completion=text, reference=ACME_TABLE)).score


@pytest.mark.parametrize(
    "years",
    [
        "| FY24 | FY23 |",
        "| FY2024 | FY2023 |",
        "| Dec 31, 2024 | Dec 31, 2023 |",
        "| 2024A | 2023A |",
    ],
)
def test_fiscal_year_headers_beside_a_growth_column_score_as_the_years(years: str) -> None:
    assert _table(ACME_ROWS.replace("| 2024 | 2023 |", years)) == _table(ACME_ROWS)


def test_fiscal_year_headers_swapped_still_cost() -> None:
    swapped = ACME_ROWS.replace("| 2024 | 2023 |", "| FY23 | FY24 |")
    assert (_table(swapped) or 0.0) < (_table(ACME_ROWS) or 0.0) - 0.3


def test_the_fiscal_headers_relation_keeps_the_score() -> None:
    """`finance/table_fiscal_headers` (preserving) is how `audit --search` finds this class."""
    from rewardsmith.verifiers.finance.relations import table_relations

    relation = next(
        r for r in table_relations(TableMatch()) if r.name == "finance/table_fiscal_headers"
    )
    right = Sample(id="t", completion=ACME_ROWS, reference=ACME_TABLE)
    for seed in range(6):
        new = relation.rewrite(right, random.Random(seed))
        assert new is not None and _table(str(new.completion)) == _table(ACME_ROWS)


@pytest.mark.slow
def test_a_real_report_with_an_unreadable_entry_fails_and_as_printed_passes(
    shared_data: Path,
) -> None:
    """The NICS report (../shared/data, pdfplumber's tests): its table as printed holds with
    no reference; one more entry hidden above a total ("~1,234") fails it."""
    from rewardsmith.verifiers.finance.exploits import markdown
    from rewardsmith.verifiers.finance.reference import (
        ExtractedTable,
        ExtractionLimits,
        read_pdf_table,
    )
    from rewardsmith.verifiers.finance.relations import consistency_relations

    pdf = shared_data / "pdf/pdfplumber/nics-background-checks-2015-11.pdf"
    found = read_pdf_table(str(pdf), 1, 0, ExtractionLimits())
    assert isinstance(found, ExtractedTable), found
    printed = Sample(id="nics", completion=markdown(found.table.grid()))
    check = Consistency(min_checks=1)
    assert check(printed).score == 1.0
    relation = next(
        r for r in consistency_relations(check) if r.name == "finance/consistency_unreadable_entry"
    )
    made = [relation.rewrite(printed, random.Random(seed)) for seed in range(3)]
    assert all(m is not None and check(m).score == 0.0 for m in made)
