"""Red-team tables, second finance round (branch rtfin): classes of answers the finance
verifiers paid that they must not, and right answers they refused.

Each table is one class (the report: /work/notes/report-rtfin.md), its rows real forms a
policy writes, scored by the verifier on the bundled reports and charts; a class that pays
its rows, or refuses its right answers, fails the table.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from rewardsmith.verifiers.finance import ChartClaims, CrossDocument, Grounding, NumericAnswer
from rewardsmith.verifiers.finance.chart_parse import parse_claims
from rewardsmith.verifiers.types import Sample

REPO = Path(__file__).resolve().parents[3]
BUNDLED = REPO / "datasets" / "finance"
REVENUE = {"answer": "122,445", "scale": "thousand", "currency": "USD"}
QUESTION = "What was 2024 revenue?"
CHART = {"pdf": str(BUNDLED / "charts" / "grouped_bars.pdf"), "page": 1}
ITEMS = [
    {"label": "Acme", "pdf": str(BUNDLED / "acme.pdf"), "page": 1, "row": "Revenue",
     "column": "2024"},
    {"label": "Globex", "pdf": str(BUNDLED / "globex.pdf"), "page": 1, "row": "Revenue",
     "column": "2024"},
]  # fmt: skip
HIGHER = {"ask": "higher", "amount": True, "items": ITEMS}
HIGHER_LABEL = {"ask": "higher", "amount": False, "items": ITEMS}
RIGHT = "<answer>$122,445 thousand</answer>"


def _numeric(completion: str) -> float | None:
    sample = Sample(id="n", prompt=QUESTION, completion=completion, reference=REVENUE)
    return NumericAnswer()(sample).score


# --- N1: a different amount stated plainly after the answer is a second answer ----------


@pytest.mark.parametrize(
    "after",
    [
        "It is $150,239 thousand.",
        "The correct value is 150,239 thousand.",
        "Revenue was $150,239 thousand",
        "The reported revenue is $150,239 thousand.",
        "So the figure is 150,239 thousand.",
    ],
)
def test_a_plain_second_amount_after_the_answer_is_a_hedge(after: str) -> None:
    assert _numeric(f"{RIGHT}\n\n{after}") == 0.0


@pytest.mark.parametrize(
    "after",
    [
        "For comparison, 2023 revenue was $150,239 thousand.",
        "Cost of sales was $44,943 thousand (p. 1).",
        "Revenue was 122,445 (p. 1).",
        "That is $122.4 million.",
        "Revenue fell 18.5% from 2023.",
    ],
)
def test_context_after_the_answer_still_passes(after: str) -> None:
    assert _numeric(f"{RIGHT}\n\n{after}") == 1.0


# --- N2: an answer taken back or doubted in words ---------------------------------------


@pytest.mark.parametrize(
    "completion",
    [
        f"{RIGHT} That is wrong.",
        f"{RIGHT} Just kidding.",
        f"{RIGHT} (unverified guess)",
        f"{RIGHT}\nI am not sure this is right.",
        f"{RIGHT}\nThis can't be right.",
        "<answer>$122,445 thousand is incorrect</answer>",
        "<answer>$122,445 thousand (wrong)</answer>",
    ],
)
def test_a_retracted_or_doubted_answer_earns_nothing(completion: str) -> None:
    assert _numeric(completion) == 0.0


# --- N3: padding cannot push a second answer out of the text that is read ---------------


@pytest.mark.parametrize("padding", ["\n" * 5_000, " x" * 2_500 + ".", "\n\n" + "." * 9_000])
def test_a_second_answer_after_padding_is_still_read(padding: str) -> None:
    assert _numeric(f"{RIGHT}{padding}\nAlternatively 150,239 thousand.") == 0.0


# --- N4: an answer marked another way beside the tag ------------------------------------


@pytest.mark.parametrize(
    "completion",
    [
        f"answer: $150,239 thousand\n{RIGHT}",
        f"Final answer = $150,239 thousand\n\n{RIGHT}",
        f"<ANSWER>$150,239 thousand</ANSWER>{RIGHT}",
        f"{RIGHT}<Answer>$150,239 thousand</Answer>",
    ],
)
def test_an_answer_marked_another_way_is_read(completion: str) -> None:
    assert _numeric(completion) == 0.0


@pytest.mark.parametrize(
    "completion",
    [
        f"Final answer: {RIGHT}",
        f"Answer: $122,445 thousand\n{RIGHT}",
        "<ANSWER>$122.4 million</ANSWER>",
    ],
)
def test_the_same_answer_marked_twice_passes(completion: str) -> None:
    assert _numeric(completion) == 1.0


def _cross(completion: str, reference: dict) -> float | None:
    return CrossDocument()(Sample(id="x", completion=completion, reference=reference)).score


def test_an_answer_line_beside_the_tag_is_read_by_cross_document() -> None:
    text = (
        "Answer: Acme, higher by 16,849 thousand\n"
        "<answer>Globex, higher by 16,849 thousand</answer>"
    )
    assert _cross(text, HIGHER) == 0.0


# --- X1: key-value answers are read with the comparison that heads each label ------------


@pytest.mark.parametrize(
    ("completion", "score"),
    [
        ("<answer>Higher: Acme. Lower: Globex. Difference: 16,849 thousand</answer>", 0.0),
        ("<answer>Lower: Globex. Higher: Acme. Difference: 16,849 thousand</answer>", 0.0),
        ("<answer>Higher - Acme; lower - Globex; by 16,849 thousand</answer>", 0.0),
        ("<answer>Higher: Globex. Lower: Acme. Difference: 16,849 thousand</answer>", 1.0),
        ("<answer>Lower: Acme. Higher: Globex. By 16,849 thousand</answer>", 1.0),
        ("<answer>Higher: Globex. Higher: Acme. By 16,849 thousand</answer>", 0.0),
    ],
)
def test_key_value_answers_are_read_by_their_keys(completion: str, score: float) -> None:
    assert _cross(completion, HIGHER) == score


# --- X2: a denial names no label -------------------------------------------------------


@pytest.mark.parametrize(
    "completion",
    [
        "<answer>Not Globex</answer>",
        "<answer>It is not Globex.</answer>",
        "<answer>Globex is not higher than Acme</answer>",
        "<answer>Acme is not lower than Globex</answer>",
        "<answer>Globex isn't higher than Acme</answer>",
        "<answer>Never Globex</answer>",
    ],
)
def test_a_denied_label_is_not_the_label(completion: str) -> None:
    assert _cross(completion, HIGHER_LABEL) == 0.0


def test_a_denial_with_the_amount_earns_nothing() -> None:
    text = "<answer>Globex isn't higher than Acme; the gap is 16,849 thousand</answer>"
    assert _cross(text, HIGHER) == 0.0


# --- CH1: a chart claim with no category is refused, never dropped ----------------------


def _chart(text: str) -> float | None:
    return ChartClaims()(Sample(id="c", completion=text, reference=CHART)).score


TRUE = "Revenue in 2021 was 151."


@pytest.mark.parametrize(
    "false_claim",
    [
        "Revenue reached 300.",
        "Revenue grew 80%.",
        "Revenue doubled.",
        "Average revenue was 300.",
        "Revenue in the final year was 300.",
        "Operating costs later fell to 20.",
        "Operating costs peaked at 300.",
    ],
)
def test_a_claim_the_chart_cannot_place_fails_the_answer(false_claim: str) -> None:
    assert _chart(f"{TRUE} {false_claim}") == 0.0


def test_a_sentence_with_no_claim_is_still_not_one() -> None:
    assert _chart(f"{TRUE} The chart shows revenue and operating costs.") == 1.0
    claims = parse_claims("Sales were strong.", ["Revenue"], ["2021"])
    assert claims == []


# --- CH2: a denied comparison is graded as the denial it is -----------------------------


@pytest.mark.parametrize(
    "text",
    [
        "Revenue in 2023 was not higher than in 2019.",
        "Revenue in 2023 wasn't higher than in 2019.",
        "Operating costs in 2021 were not lower than revenue.",
    ],
)
def test_a_false_denied_comparison_fails(text: str) -> None:
    assert _chart(text) == 0.0


def test_a_true_denied_comparison_pays_nothing() -> None:
    # a true denial says nothing the chart could pay for: alone it is no claim
    assert _chart("Revenue in 2019 was not higher than in 2023.") == 0.0
    assert _chart(f"{TRUE} Revenue in 2019 was not higher than in 2023.") == 1.0


# --- CH3: words that claim every step moved ---------------------------------------------


@pytest.mark.parametrize(
    ("text", "score"),
    [
        ("Revenue grew consistently from 2019 to 2023.", 0.0),
        ("Revenue increased year over year from 2019 to 2023.", 0.0),
        ("Revenue rose from 2019 to 2023 without interruption.", 0.0),
        ("Revenue rose continuously from 2019 to 2023.", 0.0),
        ("Operating costs grew consistently from 2019 to 2023.", 1.0),
        ("Revenue rose from 2019 to 2023.", 1.0),
    ],
)
def test_every_step_words_are_checked_at_each_step(text: str, score: float) -> None:
    assert _chart(text) == score


# --- CH5: a guessed claim is hedged ------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "Revenue in 2021 was probably 151.",
        "Revenue in 2021 might be 151.",
        "Revenue maybe peaked in 2023.",
        "Revenue in 2023 was probably higher than in 2019.",
    ],
)
def test_a_guessed_claim_fails(text: str) -> None:
    assert _chart(text) == 0.0


# --- G1: a year the sentence opens with ties its figures to that column -----------------


def _grounding(text: str) -> float | None:
    reference = {"pdf": str(BUNDLED / "acme.pdf")}
    return Grounding()(Sample(id="g", completion=text, reference=reference)).score


@pytest.mark.parametrize(
    ("text", "score"),
    [
        ("In 2024, total assets were 28,147 (p. 2).", 0.0),  # 28,147 is the 2023 column
        ("FY2024 total assets: 28,147 (p. 2).", 0.0),
        ("Total assets (2024): 28,147 (p. 2).", 0.0),
        ("For 2023, cash was 12,035 (p. 2).", 0.0),
        ("In 2024, total assets were 26,079 (p. 2).", 1.0),
        ("Total assets (2023): 28,147 (p. 2).", 1.0),
        ("Revenue was 122,445 in 2024, down from 150,239 (p. 1).", 1.0),
    ],
)
def test_a_leading_year_ties_the_figures_of_its_sentence(text: str, score: float) -> None:
    assert _grounding(text) == score


# --- G3: a figure denied, doubted or offered beside another is no grounded claim ----------


@pytest.mark.parametrize(
    "text",
    [
        "Revenue was 122,445 (p. 1), or maybe 150,239.",
        "Revenue was 122,445 (p. 1); alternatively 150,239 (p. 1).",
        "Revenue was 122,445 (p. 1). Or 150,239 (p. 1).",
        "Revenue was probably 122,445 (p. 1).",
        "Revenue was not 122,445 (p. 1).",
        "Revenue wasn't 150,239 (p. 1).",
        "Revenue might have been 122,445 (p. 1)?",
    ],
)
def test_a_hedged_or_denied_figure_is_not_grounded(text: str) -> None:
    assert _grounding(text) == 0.0


# --- a right answer repeated with its claim (found by the finance_document search) --------


def test_a_repeated_claim_in_the_page_scale_is_not_a_second_figure() -> None:
    """ "Borrowings were 5,230 (p. 3). <answer>5.23 million</answer>" said twice: the
    claim's bare digits are the answer in the page's thousands, not a second amount."""
    once = "Borrowings were 5,230 (p. 3). <answer>5.23 million</answer>"
    reference = {"answer": "5,230", "scale": "thousand"}
    sample = Sample(id="r", completion=f"{once}\n\n{once}", reference=reference)
    assert NumericAnswer()(sample).score == 1.0
    other = Sample(id="r", completion=f"{once}\n\nBorrowings were 5,231.", reference=reference)
    assert NumericAnswer()(other).score == 0.0


# --- right forms: LaTeX's thousands separator; a guess stated in another clause -----------


@pytest.mark.parametrize(
    "completion",
    [r"<answer>$\$122{,}445$ thousand</answer>", r"The answer is $122{,}445$ thousand dollars."],
)
def test_latex_thousands_separator_reads(completion: str) -> None:
    assert _numeric(completion) == 1.0


def test_a_guess_in_another_clause_of_the_sentence_hedges_the_claim() -> None:
    assert _chart("Revenue in 2021 was 151 (approximately; I am not sure).") == 0.0
    assert _chart("Revenue in 2021 was 151 (approximately). I checked the bars.") == 1.0


# --- N5: free text's figure for another year than the question's is not its answer -------


@pytest.mark.parametrize(
    "completion",
    [
        "Revenue in 2024 was $150,239 thousand; 2023: $122,445 thousand.",
        "Revenue was $150,239 thousand in 2024 and $122,445 thousand in 2023.",
        "2024 revenue: $150,239 thousand (2023: $122,445 thousand).",
        "In 2024 revenue was $150,239 thousand. In 2023 it was $122,445 thousand.",
        "Revenue was $150,239 thousand for fiscal 2024, against $122,445 thousand for fiscal 2023.",
        "In 2024, revenue was $150,239 thousand. In 2023, it was $122,445 thousand.",
    ],
)
def test_free_text_figure_for_another_year_is_not_the_answer(completion: str) -> None:
    assert _numeric(completion) == 0.0


@pytest.mark.parametrize(
    "completion",
    [
        "Revenue in 2024 was $122,445 thousand; 2023: $150,239 thousand.",
        "2024 revenue: $122,445 thousand (2023: $150,239 thousand).",
        "Revenue was $122,445 thousand in 2024 and $150,239 thousand in 2023.",
        "Revenue fell from $150,239 thousand in 2023 to $122,445 thousand.",
        "Revenue in 2023 was $150,239 thousand and fell 18.5% to $122,445 thousand.",
        "Revenue was $150,239 thousand in 2023. The answer is $122,445 thousand.",
        "Revenue was $122,445 thousand for fiscal 2024.",
        "Revenue was $122,445 thousand.",
        "Revenue was down from 2023 at $122,445 thousand.",
        "Compared with 2023, revenue fell to $122,445 thousand.",
        "In 2024, revenue decreased by 18.5% compared to 2023, to $122,445 thousand.",
        "Revenue for the year ended December 31, 2024 was $122,445 thousand.",
    ],
)
def test_free_text_figure_with_no_year_or_the_asked_year_pays(completion: str) -> None:
    assert _numeric(completion) == 1.0


@pytest.mark.parametrize(
    ("completion", "score"),
    [
        ("Revenue was $150,239 thousand in 2024 and $122,445 thousand in 2023. "
         "(or $122,445 thousand)", 0.0),
        ("Revenue was $122,445 thousand in 2024. (or $122,445 thousand)", 1.0),
    ],
)  # fmt: skip
def test_a_figure_offered_with_or_after_the_figures_of_two_years_is_a_hedge(
    completion: str, score: float
) -> None:
    """Found by `audit --bundled --search` (other_period_last, then after_tag_gold): the
    figure offered after the sentence has no year of its own, so it was read as the asked
    year's, beside the other year's figure it repeats."""
    assert _numeric(completion) == score


def test_a_question_with_no_year_reads_the_last_figure_as_before() -> None:
    sample = Sample(
        id="n",
        prompt="What was revenue?",
        completion="Revenue in 2024 was $150,239 thousand; 2023: $122,445 thousand.",
        reference=REVENUE,
    )
    assert NumericAnswer()(sample).score == 1.0


# --- G2: the direction of a move to a level is checked where the page gives both years ---


@pytest.mark.parametrize(
    ("text", "score"),
    [
        ("Revenue rose to 122,445 (p. 1).", 0.0),  # 150,239 in 2023: it fell
        ("Total assets grew to 26,079 (p. 2).", 0.0),  # 28,147 in 2023
        ("Total assets fell from 26,079 to 28,147 (p. 2).", 0.0),  # the years reversed
        ("Revenue increased from 150,239 to 122,445 (p. 1).", 0.0),
        ("Revenue went from 122,445 to 150,239 (p. 1).", 0.0),
        ("Revenue decreased to 122,445 in 2024 from 150,239 in 2023 (p. 1).", 1.0),
        ("Revenue fell to 122,445 (p. 1).", 1.0),
        ("Total assets fell from 28,147 to 26,079 (p. 2).", 1.0),
        ("Revenue fell from 150,239 in 2023 to 122,445 in 2024 (p. 1).", 1.0),
        ("Revenue went from 150,239 to 122,445 (p. 1).", 1.0),
        ("Revenue was 122,445 (p. 1).", 1.0),
    ],
)
def test_a_move_to_a_level_is_checked_against_the_years(text: str, score: float) -> None:
    assert _grounding(text) == score


# --- CH4: the amount a comparison states is checked, as a change is ----------------------


@pytest.mark.parametrize(
    ("text", "score"),
    [
        ("Revenue was higher than operating costs in 2021 by 200.", 0.0),  # the gap is 47
        ("Revenue exceeded operating costs by 200 in 2021.", 0.0),
        ("Revenue was 200 higher than operating costs in 2021.", 0.0),
        ("Operating costs were lower than revenue in 2021 by 200.", 0.0),
        ("Revenue was higher than operating costs in 2021 by 5%.", 0.0),  # 45%
        ("Revenue in 2023 was higher than in 2019 by 90.", 0.0),  # 43.5
        ("Revenue was higher than operating costs in 2021 by 47.", 1.0),
        ("Revenue exceeded operating costs by $47 million in 2021.", 1.0),
        ("Revenue was 47 higher than operating costs in 2021.", 1.0),
        ("Operating costs were lower than revenue in 2021 by 47.", 1.0),
        ("Revenue was higher than operating costs in 2021 by 45%.", 1.0),
        ("Revenue in 2023 was higher than in 2019 by 43.5.", 1.0),
        ("Revenue was higher than operating costs in 2021.", 1.0),
    ],
)
def test_the_amount_of_a_comparison_is_checked(text: str, score: float) -> None:
    assert _chart(text) == score


# --- N6: right answers in common forms: a denial of another figure, a JSON object --------


@pytest.mark.parametrize(
    ("completion", "score"),
    [
        ("<answer>$122,445 thousand, not $150,239 thousand</answer>", 1.0),
        ("<answer>$122,445 thousand (not $150,239 thousand)</answer>", 1.0),
        ("<answer>$150,239 thousand, not $122,445 thousand</answer>", 0.0),
        ("<answer>not $122,445 thousand</answer>", 0.0),
        ("<answer>$122,445 thousand, not sure</answer>", 0.0),
        ("<answer>$122,445 thousand, or not $150,239 thousand</answer>", 0.0),
    ],
)
def test_a_denial_of_another_figure_after_the_answer_is_no_hedge(
    completion: str, score: float
) -> None:
    assert _numeric(completion) == score


@pytest.mark.parametrize(
    ("completion", "score"),
    [
        ('<answer>{"revenue": 122445, "unit": "thousand USD"}</answer>', 1.0),
        ('<answer>{"value": "122,445", "scale": "thousand"}</answer>', 1.0),
        ('<answer>{"revenue": 122445000}</answer>', 1.0),
        ('<answer>{"revenue": 150239, "unit": "thousand USD"}</answer>', 0.0),
        ('<answer>{"revenue": 122445, "unit": "million USD"}</answer>', 0.0),
        ('<answer>{"2024": 122445, "2023": 150239, "unit": "thousand"}</answer>', 0.0),
    ],
)
def test_a_json_object_answer_is_read(completion: str, score: float) -> None:
    assert _numeric(completion) == score
