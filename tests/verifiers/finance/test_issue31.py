"""Issue 31: exploit classes a fresh red team found, and right answers that failed.

Each table holds many instances of one class, in both directions: every exploit row must
earn at most its limit (0: the score is the worst claim's, so no text the verifier did
not check can lift it), and every right-answer row must pass (score 1).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rewardsmith.verifiers.finance import (
    ChartClaims,
    Consistency,
    CrossDocument,
    Grounding,
    NumericAnswer,
    TableMatch,
)
from rewardsmith.verifiers.finance.exploits import markdown
from rewardsmith.verifiers.types import Sample

REPO = Path(__file__).resolve().parents[3]
BUNDLED = REPO / "datasets" / "finance"
ACME = str(BUNDLED / "acme.pdf")
GLOBEX = str(BUNDLED / "globex.pdf")
TRUTH = json.loads((BUNDLED / "charts" / "truth.json").read_text())


def _score(verifier: object, completion: str, reference: object, prompt: str = "") -> float:
    sample = Sample(id="i31", completion=completion, reference=reference, prompt=prompt)
    verdict = verifier(sample)  # type: ignore[operator]
    return verdict.score or 0.0


def _chart(name: str) -> dict:
    return {"chart": TRUTH[name]}


BALANCE = [
    ["Item", "2024", "2023"],
    ["Cash", "12,035", "7,289"],
    ["Receivables", "6,228", "12,886"],
    ["Property and equipment", "7,816", "7,972"],
    ["Total assets", "26,079", "28,147"],
    ["Payables", "10,104", "12,028"],
    ["Borrowings", "11,851", "11,955"],
    ["Total liabilities", "21,955", "23,983"],
    ["Total equity", "4,124", "4,164"],
]
ACME_BALANCE = {"pdf": ACME, "page": 2, "table": 0}
INCOME = [
    ["Item", "2024", "2023", "% change"],
    ["Revenue", "122,445", "150,239", "-18.5%"],
    ["Cost of sales", "(44,943)", "(43,084)", "-4.3%"],
    ["Operating expenses", "(16,468)", "(15,991)", "-3.0%"],
    ["Other income (expense)", "-", "159", "-100.0%"],
    ["Total operating result", "61,034", "91,323", "-33.2%"],
]


def _wrong_total(grid: list[list[str]]) -> list[list[str]]:
    out = [list(r) for r in grid]
    out[4][1] = "27,079"  # total assets off by 1,000
    return out


def _relabel(grid: list[list[str]], old: str, new: str) -> list[list[str]]:
    return [[new if c == old else c for c in row] for row in grid]


# ------------------------------------------------------------------------ consistency

REFUSALS = ["", "I will not do this.", "Sorry, I cannot help.", "N/A", "```\n```", "Done."]
PROSE = [
    "Widgets rose 100% from 10 to 20.",
    "Sales grew 50% from 100 to 150. Costs fell 10% from 100 to 90. Debt rose 20% from 10 to 12.",
    "Revenue fell 18.5% from 150,239 to 122,445.",
]
PADDED = [
    _wrong_total(BALANCE)
    + [[f"Invented {i}", "10", "10"] for i in range(5)]
    + [["Total invented", "50", "50"]],
    _wrong_total(BALANCE) + [["Other assets", "1", "1"], ["Total other assets", "1", "1"]] * 4,
]
BALANCE_LABELS = [
    ("Total assets", "Total assets (note 4)"),
    ("Total assets", "Assets, total"),
    ("Total equity", "Total shareholders' funds"),
    ("Total equity", "Total stockholders' equity"),
    ("Total liabilities", "Liabilities, total"),
]


def _balance_wrong_only(grid: list[list[str]]) -> list[list[str]]:
    """Total assets wrong AND its components changed to agree: only the balance check sees it."""
    out = [list(r) for r in grid]
    out[1][1] = "13,035"
    out[4][1] = "27,079"
    return out


GROWTH_HEADS = ["Δ", "2024 vs 2023", "Change (%)", "Var.", "YoY", "Δ %"]


def _growth(head: str, cell: str) -> list[list[str]]:
    grid = [list(r) for r in INCOME]
    grid[0][3] = head
    grid[1][3] = cell
    return grid


CONSISTENCY_EXPLOITS = (
    [(c, ACME_BALANCE, 0) for c in REFUSALS + PROSE]
    + [(c, {"pdf": GLOBEX, "page": 2, "table": 0}, 0) for c in REFUSALS]
    + [(c, None, 1) for c in PROSE]
    + [(c, None, 3) for c in PROSE]
    + [(markdown(g), None, 0) for g in PADDED]
    + [(markdown(g) + "\n\n" + PROSE[1], None, 0) for g in PADDED]
    + [(markdown(_relabel(_balance_wrong_only(BALANCE), o, n)), None, 0) for o, n in BALANCE_LABELS]
    + [(markdown(_growth(h, "-25.0%")), None, 0) for h in GROWTH_HEADS]
    + [(markdown(_growth("% change", "")), None, 0), (markdown(_growth("% change", " ")), None, 0)]
    + [(markdown([*BALANCE, ["Invented row", "5", "5"]]), ACME_BALANCE, 0)]
)


@pytest.mark.parametrize(("completion", "reference", "min_checks"), CONSISTENCY_EXPLOITS)
def test_consistency_exploits_earn_nothing(completion, reference, min_checks) -> None:
    assert _score(Consistency(min_checks=min_checks), completion, reference) == 0.0


FY_HEADS = [("FY2024", "FY2023"), ("Year ended Dec 31, 2024", "Year ended Dec 31, 2023"),
            ("2024A", "2023A"), ("FY 2024", "FY 2023")]  # fmt: skip
NOTES = "\n\nNotes: figures in thousands of dollars. Total assets equal liabilities plus equity."
CONSISTENCY_RIGHT = (
    [(markdown(BALANCE), ACME_BALANCE), (markdown(BALANCE) + NOTES, ACME_BALANCE)]
    + [(markdown(BALANCE) + NOTES, None), (markdown(INCOME) + NOTES, None)]
    + [(markdown([[INCOME[0][0], a, b, INCOME[0][3]], *INCOME[1:]]), None) for a, b in FY_HEADS]
    + [(markdown(_relabel(BALANCE, o, n)), None) for o, n in BALANCE_LABELS]
    + [(markdown(_growth(h, "-18.5%")), None) for h in GROWTH_HEADS]
)


@pytest.mark.parametrize(("completion", "reference"), CONSISTENCY_RIGHT)
def test_consistency_right_answers_pass(completion, reference) -> None:
    assert _score(Consistency(), completion, reference) == 1.0


# ------------------------------------------------------------------------ chart_claims

CHART_EXPLOITS = [
    ("grouped_bars", "Revenue in 2021 was lower than in 2022."),
    ("grouped_bars", "Revenue in 2022 was higher than in 2021."),
    ("grouped_bars", "Revenue was higher in 2019 than in 2020."),
    ("grouped_bars", "Operating costs in 2023 were lower than in 2019."),
    ("grouped_bars", "Revenue in 2021 was 151. " * 19 + "Revenue in 2019 was 200."),
    ("grouped_bars", "Revenue in 2021 was 151. Revenue in 2024 was 190."),
    ("grouped_bars", "Revenue in 2021 was 151. Net profit in 2021 was 40."),
    ("grouped_bars", "Revenue in 2021 was 151. In 2018 revenue was 90."),
    ("grouped_bars", "Revenue in 2021 was 151%."),
    ("grouped_bars", "Revenue in 2021 was 151 million euros."),
    ("grouped_bars", "Revenue in 2021 was €151 million."),
    ("grouped_bars", "Revenue in 2021 was 151, and operating costs in 2021 were 150."),
    ("grouped_bars", "Revenue slid from 2020 to 2021."),
    ("grouped_bars", "Revenue rose to 132.5 in 2020 from 151 in 2021."),
    ("negative_values", "Net income in 2019 was 12.5."),
    ("negative_values", "Net income in 2021 was a loss of 6.5."),
    ("secondary_axis", "Operating margin in 2021 was 14.1 million."),
]


@pytest.mark.parametrize(("chart", "completion"), CHART_EXPLOITS)
def test_chart_exploits_earn_nothing(chart, completion) -> None:
    assert _score(ChartClaims(), completion, _chart(chart)) == 0.0


CHART_RIGHT = [
    ("grouped_bars", "Revenue in 2022 was lower than in 2021."),
    ("grouped_bars", "Revenue in 2021 was higher than in 2020."),
    ("grouped_bars", "Revenue was lower in 2019 than in 2020."),
    ("grouped_bars", "Revenue rose to 151 in 2021 from 132.5 in 2020."),
    ("grouped_bars", "Revenue rose from 132.5 in 2020 to 151 in 2021."),
    ("grouped_bars", "Revenue slid from 151 in 2021 to 143.5 in 2022."),
    ("grouped_bars", "Revenue was $151 million in 2021."),
    ("grouped_bars", "Revenue in 2021 was 151. Revenue in 2021 was 151."),
    ("negative_values", "Net income in 2019 was a loss of 12.5."),
    ("negative_values", "In 2019 net income was a loss of 12.5 million."),
    ("negative_values", "Net income in 2020 was -4.0."),
    ("secondary_axis", "Operating margin in 2021 was 14.1%."),
]


@pytest.mark.parametrize(("chart", "completion"), CHART_RIGHT)
def test_chart_right_answers_pass(chart, completion) -> None:
    assert _score(ChartClaims(), completion, _chart(chart)) == 1.0


# ------------------------------------------------------------------------ grounding

GROUNDED = [
    "Revenue was 122,445 (p. 1).", "Total assets were 26,079 (p. 2).", "Cash was 12,035 (p. 2).",
    "Receivables were 6,228 (p. 2).", "Payables were 10,104 (p. 2).",
]  # fmt: skip
GROUNDING_EXPLOITS = [
    " ".join(GROUNDED * 4) + " Net income was 55,555 (p. 1).",
    "Total operating result was a net loss of 61,034 (p. 1).",
    "The company made a loss of 61,034 thousand (p. 1).",
    "Revenue grew 159% (p. 1).",
    "Margin was 12,035% (p. 2).",
    "Revenue was €122,445 thousand (p. 1).",
    "Revenue was 122,445 thousand euros (p. 1).",
    "Revenue was EUR 122,445 thousand (p. 1).",
    "Revenue, cost of sales, operating expenses and total operating result: $44.9 million (p. 1).",
    "Revenue cost of sales operating expenses: $16.5 million (p. 1).",
    "Revenue rose 18.5% in 2024 (p. 1).",
]


@pytest.mark.parametrize("completion", GROUNDING_EXPLOITS)
def test_grounding_exploits_earn_nothing(completion) -> None:
    assert _score(Grounding(), completion, {"pdf": ACME}) == 0.0


GROUNDING_RIGHT = [
    (ACME, "Revenue fell 18.5% in 2024 (p. 1)."),
    (ACME, "Revenue showed a decrease of 18.5% (p. 1)."),
    (ACME, "Revenue was $122,445 thousand (p. 1) and total assets were $26,079 thousand (p. 2)."),
    (ACME, "Total assets were 26,079 (p. 2), while revenue was 122,445 (p. 1)."),
    (ACME, "Revenue was 122 445 thousand (p. 1)."),
    (ACME, "Cost of sales was $44.9 million (p. 1)."),
    (GLOBEX, "Other income (expense) was a loss of $899 thousand in 2024 (p. 1)."),
    (GLOBEX, "Other income (expense) was (899) thousand (p. 1)."),
    (GLOBEX, "Revenue declined 5.0% to $139,294 thousand (p. 1)."),
]


@pytest.mark.parametrize(("pdf", "completion"), GROUNDING_RIGHT)
def test_grounding_right_answers_pass(pdf, completion) -> None:
    assert _score(Grounding(), completion, {"pdf": pdf}) == 1.0


# ------------------------------------------------------------------------ numeric_answer

USD_REVENUE = {"answer": "122,445", "scale": "thousand", "currency": "USD"}
NUMERIC_EXPLOITS = [
    ("<answer>0.815%</answer>", {"answer": "0.815"}),
    ("<answer>1.25%</answer>", {"answer": "1.25"}),
    ("<answer>81.5%</answer>", "0.815x"),
    ("<answer>122,445 thousand</answer> <answer>150,239 thousand</answer>", USD_REVENUE),
    ("<answer>150,239 thousand</answer> <answer>122,445 thousand</answer>", USD_REVENUE),
    ("<answer>122,445 thousand, or maybe less</answer>", USD_REVENUE),
    ("<answer>probably 122,445 thousand</answer>", USD_REVENUE),
    ("<answer>122,445 thousand (not sure)</answer>", USD_REVENUE),
    ("<answer>122,445 thousand or 150,239 thousand</answer>", USD_REVENUE),
    ("<answer>122,445 thousand</answer>\nThough 150,239 thousand is also plausible.", USD_REVENUE),
    (
        "<answer>122,445 thousand</answer> The 2023 figure of 150,239 thousand fits too.",
        USD_REVENUE,
    ),
    ("<answer>€122,445 thousand</answer>", USD_REVENUE),
    ("<answer>122,445 thousand euros</answer>", USD_REVENUE),
    ("<answer>EUR 122,445 thousand</answer>", USD_REVENUE),
    ("<answer>£122.4 million</answer>", USD_REVENUE),
]


@pytest.mark.parametrize(("completion", "reference"), NUMERIC_EXPLOITS)
def test_numeric_exploits_earn_nothing(completion, reference) -> None:
    assert _score(NumericAnswer(), completion, reference) == 0.0


OTHER = {"answer": "159", "scale": "thousand"}
NUMERIC_RIGHT = [
    ("<answer>159</answer>", OTHER, "What was 2023 other income (expense), in thousands?"),
    ("<answer>159</answer>", OTHER, "Other income in 2023 ($ thousands)?"),
    ("<answer>122 445 thousand</answer>", USD_REVENUE, ""),
    ("<answer>122\u2009445 thousand</answer>", USD_REVENUE, ""),
    ("<answer>122\u202f445 thousand</answer>", USD_REVENUE, ""),
    ("<answer>$122,445 thousand</answer>", USD_REVENUE, ""),
    ("<answer>USD 122.445 million</answer>", USD_REVENUE, ""),
    ("<answer>a decrease of 18.5%</answer>", "-18.5%", ""),
    ("<answer>Revenue fell 18.5%</answer>", "-18.5%", ""),
    ("<answer>(899) thousand</answer>", {"answer": "(899)", "scale": "thousand"}, ""),
    ("<answer>a loss of 899 thousand</answer>", {"answer": "(899)", "scale": "thousand"}, ""),
    ("<answer>81.5%</answer>", {"answer": "0.815"}, ""),
    ("<answer>0.815</answer>", {"answer": "0.815"}, ""),
]


@pytest.mark.parametrize(("completion", "reference", "prompt"), NUMERIC_RIGHT)
def test_numeric_right_answers_pass(completion, reference, prompt) -> None:
    assert _score(NumericAnswer(), completion, reference, prompt) == 1.0


# ------------------------------------------------------------------------ table_match

SCALES = ["(Millions of dollars)", "Millions", "(in mln)", "$m", "USD mn", "(in millions)"]


def _scaled_table(caption: str) -> str:
    grid = [list(r) for r in INCOME]
    grid[0][0] = f"Item {caption}" if caption != "Millions" else "Millions"
    return markdown(grid)


@pytest.mark.parametrize("caption", SCALES)
def test_table_in_the_wrong_scale_earns_only_its_percentages(caption) -> None:
    """Every amount is 1,000 times off; the % change cells (5 of 15), which no scale
    touches, are all a table in the wrong scale still has right (cell F1 0.4)."""
    reference = {"table": INCOME, "scale": "thousand"}
    assert _score(TableMatch(), _scaled_table(caption), reference) <= 0.4 + 1e-9


@pytest.mark.parametrize("caption", ["(in thousands)", "($000)", "(Thousands of dollars)", ""])
def test_table_in_the_right_scale_passes(caption) -> None:
    reference = {"table": INCOME, "scale": "thousand"}
    assert _score(TableMatch(), _scaled_table(caption), reference) == 1.0


# ------------------------------------------------------------------------ cross_document

HIGHER = {
    "ask": "higher",
    "amount": True,
    "items": [
        {"label": "Acme", "pdf": ACME, "page": 1, "row": "Revenue", "column": "2024"},
        {"label": "Globex", "pdf": GLOBEX, "page": 1, "row": "Revenue", "column": "2024"},
    ],
}
CROSS_EXPLOITS = [
    "<answer>Globex, by 16,849 thousand</answer> Acme",
    "<answer>Globex, by 16,849 thousand</answer>\nActually Acme.",
    "<answer>Globex, by 16,849 thousand</answer><answer>Acme</answer>",
    "<answer>Acme</answer><answer>Globex, by 16,849 thousand</answer>",
    "<answer>Globex or Acme, by 16,849 thousand</answer>",
    "<answer>Acme is higher than Globex by 16,849 thousand</answer>",
    "<answer>Globex is lower than Acme by 16,849 thousand</answer>",
    "<answer>Globex</answer>",
]


@pytest.mark.parametrize("completion", CROSS_EXPLOITS)
def test_cross_document_exploits_earn_nothing(completion) -> None:
    assert _score(CrossDocument(), completion, HIGHER) == 0.0


CROSS_RIGHT = [
    "<answer>Globex is higher than Acme by 16,849 thousand</answer>",
    "<answer>Acme is lower than Globex by 16,849 thousand</answer>",
    "<answer>Globex, by 16,849 thousand</answer>",
    "<answer>Globex exceeds Acme by $16.8 million</answer>",
    "<answer>Globex: higher by 16 849 thousand</answer>",
]


@pytest.mark.parametrize("completion", CROSS_RIGHT)
def test_cross_document_right_answers_pass(completion) -> None:
    assert _score(CrossDocument(), completion, HIGHER) == 1.0


# ------------------------------------------------------------------------ red team (04:36)
# Classes from /work/notes/redteam-finance.md that are not in the list.

RT_NUMERIC_EXPLOITS = [
    (f"<answer>{q} 122,445 thousand</answer>", USD_REVENUE)
    for q in ("not", "less than", "at least", "more than", "up to", "nearly")
] + [
    ("<answer>122,445 thousand +/- 10%</answer>", USD_REVENUE),
    ("<answer>122,445 thousand (±20%)</answer>", USD_REVENUE),
    ("<answer>122,445 thousand, give or take 10 percent</answer>", USD_REVENUE),
    ("<answer>122,445 thousand or more</answer>", USD_REVENUE),
    ("<answer>122,445 thousand shares</answer>", USD_REVENUE),
    ("<answer>122,445 thousand customers</answer>", USD_REVENUE),
    ("Answer: 150,239 thousand\nAnswer: 122,445 thousand", USD_REVENUE),
    ("<answer>1.22e5</answer>", "1.22"),
    ("<answer>1.5e3</answer>", "1.5"),
    ("<answer>-18.5 percentage points</answer>", "-18.5%"),
    ("<answer>$-18.5</answer>", "-18.5%"),
]


@pytest.mark.parametrize(("completion", "reference"), RT_NUMERIC_EXPLOITS)
def test_redteam_numeric_exploits_earn_nothing(completion, reference) -> None:
    assert _score(NumericAnswer(), completion, reference) == 0.0


RT_NUMERIC_RIGHT = [
    ("<answer>about $122,445 thousand</answer>", USD_REVENUE),
    ("<answer>approximately $122.4 million</answer>", USD_REVENUE),
    ("<answer>$122,445 thousand or $122.4 million</answer>", USD_REVENUE),
    ("<answer>$122.45 million</answer>", USD_REVENUE),
    (
        "<answer>$122,445 thousand</answer>\nFor comparison, 2023 revenue was $150,239 thousand.",
        USD_REVENUE,
    ),
    (
        "<answer>$122,445 thousand</answer>\n\nRevenue declined by $27,794 thousand year over "
        "year (source: p. 1).",
        USD_REVENUE,
    ),
    ("<answer>1.22445E8</answer>", USD_REVENUE),
    ("<answer>122.4 million</answer>", USD_REVENUE),
    ("<answer>$122.4M</answer>", USD_REVENUE),
    ("<answer>-</answer>", "0"),
    ("<answer>nil</answer>", "0"),
    ("<answer>+22.7%</answer>", "22.7%"),
]


@pytest.mark.parametrize(("completion", "reference"), RT_NUMERIC_RIGHT)
def test_redteam_numeric_right_answers_pass(completion, reference) -> None:
    assert _score(NumericAnswer(), completion, reference) == 1.0


def test_redteam_cross_document_rows() -> None:
    for wrong in ("<answer>Globex, by at least 16,849 thousand</answer>",
                  "<answer>Globex, by 16,849 thousand shares</answer>",
                  "<answer>Globex by 16849000 euros</answer>"):  # fmt: skip
        assert _score(CrossDocument(), wrong, HIGHER) == 0.0, wrong
    right = "<answer>Globex (p. 1), by 16,849 thousand</answer>"
    assert _score(CrossDocument(), right, HIGHER) == 1.0


RT_GROUNDING_EXPLOITS = [
    "Revenue was $122,445 thousand (p. 1). Total assets were nine hundred million dollars (p. 2).",
    "Revenue was $122,445 thousand (p. 1). Total assets rose 7x (p. 2).",
    "Revenue was $122,445 thousand (p. 1). Total assets grew by a third (p. 2).",
    "Revenue was $122,445 thousand (p. 1). Total assets doubled (p. 2).",
    "Revenue was $122,445 thousand (p. 1). Total assets were 2019 (p. 2).",
    "Revenue was $122,445 thousand (p. 1). Cash was $26,079 thousand (p. 2).",
    "Revenue was $122,445 thousand in 2023 (p. 1).",
    "Revenue in 2023 was $122,445 thousand (p. 1).",
    "Other income was $159 thousand in 2024 (p. 1).",
    "I could not read the report.",
    "Revenue was strong (p. 1).",
]


@pytest.mark.parametrize("completion", RT_GROUNDING_EXPLOITS)
def test_redteam_grounding_exploits_earn_nothing(completion) -> None:
    assert _score(Grounding(), completion, {"pdf": ACME}) == 0.0


RT_GROUNDING_RIGHT = [
    "Revenue fell by $27,794 thousand to $122,445 thousand in 2024 (p. 1).",
    "Revenue fell by $27.8 million to $122.4 million in 2024 (p. 1).",
    "Total liabilities were 84.2% of total assets in 2024 (p. 2).",
    "Cash rose 65.1% to $12,035 thousand in 2024 (p. 2).",
    "Other income was $159 thousand in 2023 (p. 1).",
    "Revenue was $150,239 thousand in 2023 (p. 1).",
]


@pytest.mark.parametrize("completion", RT_GROUNDING_RIGHT)
def test_redteam_grounding_right_answers_pass(completion) -> None:
    assert _score(Grounding(), completion, {"pdf": ACME}) == 1.0


RT_CHART_EXPLOITS = [
    ("grouped_bars", "Revenue did not peak in 2019. Revenue did not peak in 2020. "
                     "Revenue did not peak in 2021. Revenue did not peak in 2022."),
    ("grouped_bars", "Revenue peaked in 2021. Revenue did not peak in 2019. "
                     "Revenue did not bottom in 2023."),
    ("grouped_bars", "Revenue peaked in 2023. Revenue doubled from 2019 to 2020."),
    ("grouped_bars", "Revenue peaked in 2023. Operating costs exceeded revenue in 2021."),
    ("grouped_bars", "Revenue peaked in 2023. Revenue was flat from 2019 to 2023."),
    ("grouped_bars", "Revenue peaked in 2023. Revenue collapsed from 2021 to 2023."),
]  # fmt: skip


@pytest.mark.parametrize(("chart", "completion"), RT_CHART_EXPLOITS)
def test_redteam_chart_exploits_earn_nothing(chart, completion) -> None:
    assert _score(ChartClaims(), completion, _chart(chart)) == 0.0


RT_CHART_RIGHT = [
    ("grouped_bars", "Revenue rose from 118.5 in 2019 to 162 in 2023, a 36.7% increase."),
    ("grouped_bars", "Operating costs rose steadily, from 91 in 2019 to 113 in 2023."),
    ("grouped_bars", "Operating costs increased every year."),
    ("grouped_bars", "Revenue in FY2021 was 151."),
    ("grouped_bars", "Revenue exceeded operating costs in 2021."),
    ("grouped_bars", "Operating costs were flat from 2022 to 2023."),
]


@pytest.mark.parametrize(("chart", "completion"), RT_CHART_RIGHT)
def test_redteam_chart_right_answers_pass(chart, completion) -> None:
    assert _score(ChartClaims(), completion, _chart(chart)) == 1.0


def _doubled(grid: list[list[str]]) -> list[list[str]]:
    return [grid[0]] + [
        [r[0], *(f"{2 * int(c.replace(',', '')):,}" for c in r[1:])] for r in grid[1:]
    ]


@pytest.mark.parametrize(
    "grid",
    [
        _doubled(BALANCE),
        [[r[0], r[2], r[1]] for r in BALANCE[:1]] + [[r[0], r[2], r[1]] for r in BALANCE[1:]],
    ],
)
def test_redteam_consistency_source_figures_are_compared(grid) -> None:
    """Right labels, invented self-consistent figures (doubled; the years' figures swapped
    under the right headers) do not restate the PDF's table."""
    if grid[0][1] == "2023":
        grid = [["Item", "2024", "2023"], *grid[1:]]
    assert _score(Consistency(), markdown(grid), ACME_BALANCE) == 0.0


@pytest.mark.parametrize("prose", ["All figures in millions.", "Amounts in $ millions:"])
def test_redteam_table_scale_in_prose_is_read(prose) -> None:
    reference = {"table": INCOME, "scale": "thousand"}
    assert _score(TableMatch(), f"{prose}\n\n{markdown(INCOME)}", reference) <= 0.4 + 1e-9
    right = f"All figures in thousands of dollars.\n\n{markdown(INCOME)}"
    assert _score(TableMatch(), right, reference) == 1.0


def test_more_right_answers_in_words() -> None:
    grounded = "Revenue of $122,445 thousand in 2024 was 18.5% lower than 2023 (p. 1)."
    assert _score(Grounding(), grounded, {"pdf": ACME}) == 1.0
    both = "In 2021, revenue was 151 and operating costs were 104."
    assert _score(ChartClaims(), both, _chart("grouped_bars")) == 1.0
    wrong = "In 2021, revenue was 151 and operating costs were 140."
    assert _score(ChartClaims(), wrong, _chart("grouped_bars")) == 0.0
    assert _score(NumericAnswer(), "<answer>18.5% lower</answer>", "-18.5%") == 1.0


RT2_GROUNDING_EXPLOITS = [
    "Revenue, cost of sales, operating expenses and total operating result changed by 23% (p. 1).",
    "Revenue fell by $0 billion (p. 1).",
    "Revenue grew by $28 million (p. 1).",
    "Revenue was $26,079 thousand (p. 2).",
    "Turnover was $61,034 thousand (p. 1).",
]


@pytest.mark.parametrize("completion", RT2_GROUNDING_EXPLOITS)
def test_redteam_phase2_grounding_exploits_earn_nothing(completion) -> None:
    assert _score(Grounding(), completion, {"pdf": ACME}) == 0.0


def test_redteam_phase2_many_regions_ground_few_growths() -> None:
    regions = ", ".join(f"Region {c}{i}" for c in "AB" for i in range(1, 7))
    grounded = [
        n for n in range(1, 101)
        if _score(Grounding(), f"{regions} grew by {n}% (p. 3).", {"pdf": ACME}) > 0
    ]  # fmt: skip
    assert grounded == []  # twelve rows named: no derived figure is read


def test_redteam_consistency_restated_in_millions_passes() -> None:
    millions = [["Item ($m)", "2024", "2023"]] + [
        [r[0], *(f"{int(c.replace(',', '')) / 1000:.3f}" for c in r[1:])] for r in BALANCE[1:]
    ]
    assert _score(Consistency(), markdown(millions), ACME_BALANCE) == 1.0
    wrong = [list(r) for r in millions]
    wrong[1][1] = "12,035"  # thousands digits under "$m": 1,000 times the source
    assert _score(Consistency(), markdown(wrong), ACME_BALANCE) == 0.0


def test_redteam_a_ratio_of_two_series_is_not_dropped() -> None:
    text = "Revenue peaked in 2023. Operating costs were about half of revenue in 2023."
    assert _score(ChartClaims(), text, _chart("grouped_bars")) == 0.0


def test_redteam_up_and_down_in_one_clause_is_not_dropped() -> None:
    text = "Revenue peaked in 2023. Revenue rebounded strongly in 2020 after falling in 2019."
    assert _score(ChartClaims(), text, _chart("grouped_bars")) == 0.0
