"""Red-team tables, sixth finance round (branch rtfin6).

S1. grounding: a year written before a figure with a colon ("2023: 150,239") was cut off
    by the clause split at ":", so the figure took the sentence's opening year and a true
    prior-year figure was "not in the PDF"; a year also carried over a full stop into the
    answer tag ("... 150,239 in 2023 (p. 1). <answer>122,445 ...").
S2. figures: a digit run read apart from the well-formed forms ("9,9%", "1,5 million",
    "-1,22,445", "(1,22,445)") lost its decimal comma, its sign or its unit: an invented
    "up 9,9%" beside a right claim was never checked, and "-1,22,445" paid a positive gold.
    A figure in square brackets ("[122,445]", a negative in some reports) states no sign,
    so it answers and grounds nothing.
S3. numeric_answer: a footnote marker after the figure ("122,445 (1) thousand") was read
    as a second figure, a hedge.
S4. cross_document: a label corrected in passing ("Globex (not Acme), higher by ...") was
    read as a denial of the whole answer.
S5. chart_claims: a figure denied after the claimed one ("was 151, not 190") made the whole
    claim a denial.

The report: /work/notes/report-rtfin6.md (every before score measured on the base commit).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from rewardsmith.verifiers.finance import ChartClaims, CrossDocument, Grounding, NumericAnswer
from rewardsmith.verifiers.finance.figures import find_figures
from rewardsmith.verifiers.types import Sample

REPO = Path(__file__).resolve().parents[3]
BUNDLED = REPO / "datasets" / "finance"
ACME = {"pdf": str(BUNDLED / "acme.pdf")}
REVENUE = {"answer": "122,445", "scale": "thousand", "currency": "USD"}


def _grounding(text: str) -> float | None:
    return Grounding()(Sample(id="g", completion=text, reference=ACME)).score


def _numeric(
    text: str, reference: dict[str, str], prompt: str = "What was 2024 revenue?"
) -> float | None:
    sample = Sample(id="n", prompt=prompt, completion=text, reference=reference)
    return NumericAnswer()(sample).score


# --- S1: a year written before a figure with a colon ----------------------------------------
#
# Before (measured): every RIGHT_YEAR_LABELS row earned 0.0; the WRONG_YEAR_LABELS rows 0.0.

RIGHT_YEAR_LABELS = [
    "2024: 122,445 (2023: 150,239 thousand).",
    "2024: 122,445 (2023: 150,239).",
    "Revenue 2024: 122,445 (p. 1); 2023: 150,239 (p. 1).",
    "In 2024, revenue was 122,445 (FY2023: 150,239) (p. 1).",
    "Revenue was 122,445 (p. 1), 150,239 in 2023 (p. 1). <answer>122,445 thousand</answer>",
    "In 2023, revenue was 150,239 (p. 1). <answer>122,445 thousand</answer>",
]
WRONG_YEAR_LABELS = [
    "2024: 122,445 (2023: 122,445 thousand).",  # the 2024 figure given for 2023
    "2024: 150,239 (2023: 122,445).",  # the years swapped
    "2024: 122,445 (2023: 150,238 thousand).",  # a figure the page does not print
    "Revenue 2023: 122,445 (p. 1).",
    "In 2023, revenue was 150,239 (p. 1). <answer>2023: 122,445 thousand</answer>",
]


@pytest.mark.parametrize("text", RIGHT_YEAR_LABELS)
def test_a_true_figure_labelled_with_its_year_is_grounded(text: str) -> None:
    assert _grounding(text) == 1.0


@pytest.mark.parametrize("text", WRONG_YEAR_LABELS)
def test_a_figure_labelled_with_another_year_is_not_grounded(text: str) -> None:
    assert _grounding(text) == 0.0


def test_the_environment_task_grounds_the_prior_year_figure() -> None:
    """The open item of envhole: on northwind-revenue the true 2023 figure was refused."""
    from rewardsmith.environments import FinanceDocument
    from rewardsmith.environments.episode_exploits import play
    from rewardsmith.environments.finance_document import FINANCE_TASKS

    task = json.loads(FINANCE_TASKS.read_text().splitlines()[0])
    assert task["id"] == "northwind-revenue"
    read = (
        '<tool_call>{"name": "page_text", "arguments": {"doc": "northwind", "page": 2}}</tool_call>'
    )
    env = FinanceDocument()
    try:
        assert play(env, task, [read, "2024: 117,999 (2023: 120,205 thousand)."]) == 1.0
        assert play(env, task, [read, "2024: 117,999 (2023: 120,206 thousand)."]) == 0.0
        assert play(env, task, [read, "2024: 117,999 (2023: 117,999 thousand)."]) == 0.0
    finally:
        env.close()


def test_the_relation_labels_the_prior_year_and_keeps_the_grounding() -> None:
    """`finance/grounding_year_labels` (preserving) is how `audit --search` finds S1."""
    from rewardsmith.verifiers.finance.claim_relations import grounding_relations

    relation = next(
        r for r in grounding_relations(Grounding()) if r.name == "finance/grounding_year_labels"
    )
    right = Sample(
        id="r", prompt="What was 2024 revenue?", completion="Revenue was 122,445 (p. 1).",
        reference=ACME,
    )  # fmt: skip
    assert Grounding()(right).score == 1.0
    for seed in range(4):
        new = relation.rewrite(right, random.Random(seed))
        assert new is not None and Grounding()(new).score == 1.0, new.completion


# --- S2: a digit run that loses its decimal comma, sign or unit; square brackets -----------
#
# Before (measured): INVENTED_DECIMAL_COMMA rows 1.0, SIGNED_RUNS 1.0, BRACKETED 1.0;
# RIGHT_DECIMAL_COMMA 0.0.

INVENTED_DECIMAL_COMMA = [
    "Revenue was 122,445 (p. 1), up 9,9%.",
    "Revenue was 122,445 (p. 1), down 18,4%.",
    "Revenue was 122,445 (p. 1) and the margin 1,5 million.",
]


@pytest.mark.parametrize("text", INVENTED_DECIMAL_COMMA)
def test_an_invented_decimal_comma_figure_is_checked(text: str) -> None:
    assert _grounding(text) == 0.0


def test_a_true_decimal_comma_percentage_is_grounded() -> None:
    assert _grounding("Revenue was 122,445 (p. 1), down 18,5% on 2023.") == 1.0


RIGHT_DECIMAL_COMMA = [("<answer>3,5%</answer>", 1.0), ("<answer>3,6%</answer>", 0.0),
                       ("<answer>35%</answer>", 0.0), ("<answer>-3,5%</answer>", 0.0)]  # fmt: skip


@pytest.mark.parametrize(("text", "score"), RIGHT_DECIMAL_COMMA)
def test_a_decimal_comma_answer_reads_as_its_decimal(text: str, score: float) -> None:
    assert _numeric(text, {"answer": "3.5%"}, "What was the 2024 margin?") == score


SIGNED_RUNS = [
    "<answer>-1,22,445 thousand</answer>",
    "<answer>(1,22,445) thousand</answer>",
    "<answer>–1,22,445 thousand</answer>",
]


@pytest.mark.parametrize("text", SIGNED_RUNS)
def test_a_negative_digit_run_is_negative(text: str) -> None:
    assert _numeric(text, REVENUE) == 0.0
    loss = {"answer": "-122,445", "scale": "thousand"}
    assert _numeric(text, loss, "What was the 2024 net loss?") == 1.0


def test_find_figures_keeps_the_sign_and_unit_of_a_run() -> None:
    assert [f.value for f in find_figures("-1,22,445 and (1224,45)")] == [-122445.0, -1224.45]
    assert [(f.value, f.unit) for f in find_figures("up 3,5% and 1224,45%")] == [
        (3.5, "%"),
        (1224.45, "%"),
    ]


BRACKETED = [
    ("<answer>[122,445] thousand</answer>", REVENUE),
    ("<answer>[122,445]</answer>", {"answer": "122,445"}),
    ("<answer>[-122,445]</answer>", {"answer": "-122,445"}),
]


@pytest.mark.parametrize(("text", "reference"), BRACKETED)
def test_a_figure_in_square_brackets_states_no_answer(text: str, reference: dict[str, str]) -> None:
    assert _numeric(text, reference) == 0.0


@pytest.mark.parametrize(
    "text", ["Revenue was [122,445] (p. 1).", "Cost of sales was [44,943] (p. 1)."]
)
def test_a_figure_in_square_brackets_grounds_nothing(text: str) -> None:
    assert _grounding(text) == 0.0


def test_a_bracketed_citation_or_footnote_is_still_no_figure() -> None:
    assert _grounding("Revenue was 122,445 [p. 1].") == 1.0
    assert _grounding("Revenue was 122,445 (p. 1) [1].") == 1.0


def test_the_relation_adds_a_decimal_comma_figure_and_the_claim_earns_nothing() -> None:
    """`finance/grounding_decimal_comma` is how `audit --search` finds S2."""
    from rewardsmith.verifiers.finance.claim_relations import grounding_relations

    relation = next(
        r for r in grounding_relations(Grounding()) if r.name == "finance/grounding_decimal_comma"
    )
    right = Sample(id="r", completion="Revenue was 122,445 (p. 1).", reference=ACME)
    for seed in range(4):
        new = relation.rewrite(right, random.Random(seed))
        assert new is not None and Grounding()(new).score == 0.0, new.completion


# --- S3: a footnote marker after the answer's figure ----------------------------------------
#
# Before (measured): FOOTNOTED rows 0.0 ("the answer offers several different figures").

FOOTNOTED = [
    ("<answer>122,445 (1) thousand</answer>", 1.0),
    ("<answer>122,445 thousand (1)</answer>", 1.0),
    ("<answer>$122,445 (2) thousand</answer>", 1.0),
    ("Revenue was 122,445 (1) thousand.", 1.0),
    ("<answer>150,239 (1) thousand</answer>", 0.0),
    ("<answer>122,445 (150,239) thousand</answer>", 0.0),
    ("<answer>122,445 (12) thousand</answer>", 0.0),  # two digits: a figure, not a marker
    ("<answer>(1) thousand</answer>", 0.0),
]


@pytest.mark.parametrize(("text", "score"), FOOTNOTED)
def test_a_footnote_marker_is_no_second_figure(text: str, score: float) -> None:
    assert _numeric(text, REVENUE) == score


def test_the_relation_adds_a_footnote_marker_and_keeps_the_score() -> None:
    """`finance/footnote_marker` (preserving) is how `audit --search` finds S3."""
    from rewardsmith.verifiers.finance.relations import numeric_relations

    relation = next(r for r in numeric_relations(None) if r.name == "finance/footnote_marker")
    right = Sample(
        id="r", prompt="What was 2024 revenue?", completion="<answer>122,445 thousand</answer>",
        reference=REVENUE,
    )  # fmt: skip
    for seed in range(4):
        new = relation.rewrite(right, random.Random(seed))
        assert new is not None and NumericAnswer()(new).score == 1.0, new.completion


# --- S4: a label corrected in passing --------------------------------------------------------
#
# Before (measured): every row 0.0 ("the answer names no one label").

ITEMS = [
    {"label": "Acme", "pdf": str(BUNDLED / "acme.pdf"), "page": 1, "row": "Revenue",
     "column": "2024"},
    {"label": "Globex", "pdf": str(BUNDLED / "globex.pdf"), "page": 1, "row": "Revenue",
     "column": "2024"},
]  # fmt: skip
HIGHER = {"ask": "higher", "amount": True, "items": ITEMS}


def _cross(text: str) -> float | None:
    return CrossDocument()(Sample(id="x", completion=text, reference=HIGHER)).score


CORRECTED = [
    ("<answer>Globex (not Acme), higher by 16,849 thousand</answer>", 1.0),
    ("<answer>Globex, not Acme, is higher by 16,849 thousand</answer>", 1.0),
    ("<answer>Globex (not Acme) is higher than Acme by 16,849 thousand</answer>", 1.0),
    ("<answer>Acme (not Globex), higher by 16,849 thousand</answer>", 0.0),
    ("<answer>Acme, not Globex, is higher by 16,849 thousand</answer>", 0.0),
    ("<answer>Globex (not Acme), higher by 150,239 thousand</answer>", 0.0),
    ("<answer>Globex (not Globex), higher by 16,849 thousand</answer>", 0.0),
    ("<answer>Not Acme (not Globex), higher by 16,849 thousand</answer>", 0.0),
]


@pytest.mark.parametrize(("text", "score"), CORRECTED)
def test_a_label_corrected_in_passing_is_read_as_the_one_affirmed(text: str, score: float) -> None:
    assert _cross(text) == score


def test_the_relation_corrects_the_other_label_and_keeps_the_score() -> None:
    """`finance/cross_not_other` (preserving) is how `audit --search` finds S4."""
    from rewardsmith.verifiers.finance.claim_relations import cross_document_relations

    relation = next(
        r for r in cross_document_relations(None) if r.name == "finance/cross_not_other"
    )
    right = Sample(id="r", completion="<answer>Globex, higher by 16,849 thousand</answer>",
                   reference=HIGHER)  # fmt: skip
    for seed in range(4):
        new = relation.rewrite(right, random.Random(seed))
        assert new is not None and CrossDocument()(new).score == 1.0, new.completion


# --- S5: a chart value with another denied after it ------------------------------------------
#
# Before (measured): every row 0.0 ("every claim denies a figure the chart does not show").

CHART = {"pdf": str(BUNDLED / "charts" / "grouped_bars.pdf"), "page": 1}


def _chart(text: str) -> float | None:
    return ChartClaims()(Sample(id="c", completion=text, reference=CHART)).score


DENIED_AFTER = [
    ("Revenue in 2021 was 151, not 190.", 1.0),
    ("Revenue in 2021 was 151 (not 190).", 1.0),
    ("Revenue in 2021 was 151; not 190.", 1.0),
    ("Revenue in 2021 was 190, not 151.", 0.0),
    ("Revenue in 2021 was 190 (not 151).", 0.0),
    ("Revenue in 2021 was not 190.", 0.0),  # a true denial alone pays nothing
]


@pytest.mark.parametrize(("text", "score"), DENIED_AFTER)
def test_a_value_with_another_denied_after_it_is_the_claim(text: str, score: float) -> None:
    assert _chart(text) == score


def test_the_relation_denies_a_wrong_value_after_the_claim_and_keeps_the_score() -> None:
    """`finance/chart_denied_after` (preserving) is how `audit --search` finds S5."""
    from rewardsmith.verifiers.finance.claim_relations import chart_relations

    check = ChartClaims()
    relation = next(r for r in chart_relations(check) if r.name == "finance/chart_denied_after")
    right = Sample(id="r", completion="Revenue in 2021 was 151.", reference=CHART)
    assert check(right).score == 1.0
    for seed in range(4):
        new = relation.rewrite(right, random.Random(seed))
        assert new is not None and check(new).score == 1.0, new.completion


# --- S6: a sign written in a form the reader took for none --------------------------------
#
# Before (measured): TRIANGLES and SIGN_IN_WORDS_AFTER paid the positive gold 1.0 (and the
# negative gold 0.0); the grounding rows earned 1.0.

LOSS = {"answer": "-122,445", "scale": "thousand"}
TRIANGLES = [
    "<answer>△122,445 thousand</answer>",
    "<answer>▲122,445 thousand</answer>",
    "<answer>▲ 122,445 thousand</answer>",
    "<answer>▼122,445 thousand</answer>",
]


@pytest.mark.parametrize("text", TRIANGLES)
def test_a_triangle_marked_figure_states_no_sign(text: str) -> None:
    """Japanese reports print a negative as △ or ▲; elsewhere ▲ is a rise and ▼ a fall:
    the sign cannot be read, so the figure answers neither gold."""
    assert (_numeric(text, REVENUE), _numeric(text, LOSS, "What was the 2024 loss?")) == (
        0.0,
        0.0,
    )


@pytest.mark.parametrize("text", ["Revenue was △122,445 (p. 1).", "Revenue was ▲ 122,445 (p. 1)."])
def test_a_triangle_marked_figure_grounds_nothing(text: str) -> None:
    assert _grounding(text) == 0.0


SIGN_IN_WORDS_AFTER = [
    "<answer>122,445 thousand (negative)</answer>",
    "<answer>122,445 thousand, negative</answer>",
    "<answer>122,445 thousand negative</answer>",
]


@pytest.mark.parametrize("text", SIGN_IN_WORDS_AFTER)
def test_a_sign_in_words_after_the_figure_is_its_sign(text: str) -> None:
    assert _numeric(text, REVENUE) == 0.0
    assert _numeric(text, LOSS, "What was the 2024 net result?") == 1.0


def test_a_claim_said_negative_after_is_not_grounded_by_a_positive_row() -> None:
    assert _grounding("Revenue was 122,445 (negative) (p. 1).") == 0.0
    assert _grounding("Revenue was 122,445 (p. 1).") == 1.0


MORE_MARKERS = [
    ("<answer>122,445 (a) thousand</answer>", 1.0),
    ("<answer>122,445* thousand</answer>", 1.0),
    ("<answer>122,445 [1] thousand</answer>", 1.0),
    ("<answer>122,445 thousand [1]</answer>", 1.0),
    ("<answer>150,239* thousand</answer>", 0.0),
    ("<answer>150,239 (a) thousand</answer>", 0.0),
]


@pytest.mark.parametrize(("text", "score"), MORE_MARKERS)
def test_a_letter_star_or_bracketed_marker_is_no_second_figure(text: str, score: float) -> None:
    assert _numeric(text, REVENUE) == score


@pytest.mark.parametrize("name", ["finance/triangle_sign", "finance/negative_after"])
def test_the_relation_writes_a_sign_mark_and_the_answer_earns_nothing(name: str) -> None:
    """`finance/triangle_sign` and `finance/negative_after` (changing) find S6."""
    from rewardsmith.verifiers.finance.relations import numeric_relations

    relation = next(r for r in numeric_relations(None) if r.name == name)
    right = Sample(
        id="r", prompt="What was 2024 revenue?", completion="<answer>122,445 thousand</answer>",
        reference=REVENUE,
    )  # fmt: skip
    for seed in range(4):
        new = relation.rewrite(right, random.Random(seed))
        assert new is not None and NumericAnswer()(new).score == 0.0, new.completion


# --- S7: a scale word before the figure, or in parentheses after it (grounding) ---------
#
# Before (measured): WRONG_SCALE_PLACED rows earned 1.0 (the digits were matched and the
# scale word never read); RIGHT_SCALE_PLACED 1.0, except "USD m 122.4" (0.0).

WRONG_SCALE_PLACED = [
    "Revenue was million 122,445 (p. 1).",
    "Revenue was 122,445 ($ million) (p. 1).",
    "Revenue was $ millions 122,445 (p. 1).",
    "Revenue, in $ millions, was 122,445 (p. 1).",
    "Revenue was 122,445 (in billions) (p. 1).",
]
RIGHT_SCALE_PLACED = [
    "Revenue (in thousands) was 122,445 (p. 1).",
    "Revenue was $ thousands 122,445 (p. 1).",
    "Revenue was 122,445 ($ thousand) (p. 1).",
    "Revenue was USD m 122.4 (p. 1).",
    "Revenue was 122,445 (p. 1). Cost of sales was 44,943 (p. 1).",
]


@pytest.mark.parametrize("text", WRONG_SCALE_PLACED)
def test_a_scale_word_placed_apart_from_the_figure_is_its_scale(text: str) -> None:
    assert _grounding(text) == 0.0


@pytest.mark.parametrize("text", RIGHT_SCALE_PLACED)
def test_a_right_scale_placed_apart_from_the_figure_is_grounded(text: str) -> None:
    assert _grounding(text) == 1.0


def test_the_relation_puts_a_wrong_scale_before_the_figure_and_it_earns_nothing() -> None:
    """`finance/grounding_scale_before` (changing) is how `audit --search` finds S7."""
    from rewardsmith.verifiers.finance.claim_relations import grounding_relations

    relation = next(
        r for r in grounding_relations(Grounding()) if r.name == "finance/grounding_scale_before"
    )
    right = Sample(id="r", completion="Revenue was 122,445 (p. 1).", reference=ACME)
    for seed in range(4):
        new = relation.rewrite(right, random.Random(seed))
        assert new is not None and Grounding()(new).score == 0.0, new.completion


# --- S8: a prior-year figure labelled in words ("PY:", "prior year:", "2023A:") -----------
#
# Before (measured): WRONG_PRIOR rows earned 1.0 (the label was not read, so the current
# year's figure given as the prior year's was grounded); RIGHT_PRIOR rows 1.0.

WRONG_PRIOR = [
    "Revenue was 122,445 (PY: 122,445) (p. 1).",
    "Revenue was 122,445 (prior year: 122,445) (p. 1).",
    "Revenue was 122,445 (last year 122,445) (p. 1).",
    "Revenue was 122,445 (previous year: $122,445) (p. 1).",
    "Revenue was 122,445 (2023A: 122,445) (p. 1).",
    "In 2024, revenue was 122,445 (PY: 122,445) (p. 1).",
]
RIGHT_PRIOR = [
    "Revenue was 122,445 (PY: 150,239) (p. 1).",
    "Revenue was 122,445 (prior year: 150,239) (p. 1).",
    "Revenue was 122,445 (last year 150,239) (p. 1).",
    "Revenue was 122,445 (previous year: $150,239) (p. 1).",
    "Revenue was 122,445 (2023A: 150,239) (p. 1).",
    "In 2024, revenue was 122,445 (PY: 150,239) (p. 1).",
]


@pytest.mark.parametrize("text", WRONG_PRIOR)
def test_a_figure_labelled_prior_year_must_be_the_prior_years(text: str) -> None:
    assert _grounding(text) == 0.0


@pytest.mark.parametrize("text", RIGHT_PRIOR)
def test_a_true_prior_year_figure_labelled_in_words_is_grounded(text: str) -> None:
    assert _grounding(text) == 1.0


def test_the_relation_gives_the_current_figure_as_the_prior_years() -> None:
    """`finance/grounding_prior_is_current` (changing) is how `audit --search` finds S8."""
    from rewardsmith.verifiers.finance.claim_relations import grounding_relations

    relation = next(
        r
        for r in grounding_relations(Grounding())
        if r.name == "finance/grounding_prior_is_current"
    )
    right = Sample(id="r", completion="Revenue was 122,445 (p. 1).", reference=ACME)
    for seed in range(4):
        new = relation.rewrite(right, random.Random(seed))
        assert new is not None and Grounding()(new).score == 0.0, new.completion


@pytest.mark.parametrize(
    "text",
    [
        "<answer>△122,445 thousand</answer> <answer>122,445 thousand</answer>",
        "<answer>[122,445] thousand</answer> <answer>122,445 thousand</answer>",
        "<answer>122,445 thousand (△122,445 thousand)</answer>",
    ],
)
def test_a_figure_of_no_known_sign_restates_no_other(text: str) -> None:
    """`audit --search` (tests/cli, seed 4): `triangle_sign` then `second_tag_gold` earned
    1.0 (the tags were read as one quantity stated twice)."""
    assert _numeric(text, REVENUE) == 0.0


# --- S9: a comparison written with a symbol or "beats" (cross_document) ------------------
#
# Before (measured): the right rows earned 0.0 ("the answer names no one label"); the
# swapped rows 0.0.

SYMBOLS = [
    ("<answer>Globex > Acme by 16,849 thousand</answer>", 1.0),
    ("<answer>Acme < Globex by 16,849 thousand</answer>", 1.0),
    ("<answer>Globex beats Acme by 16,849 thousand</answer>", 1.0),
    ("<answer>Globex > Acme, 16,849 thousand</answer>", 1.0),
    ("<answer>Acme > Globex by 16,849 thousand</answer>", 0.0),
    ("<answer>Globex < Acme by 16,849 thousand</answer>", 0.0),
    ("<answer>Acme beats Globex by 16,849 thousand</answer>", 0.0),
    ("<answer>Globex > Acme by 150,239 thousand</answer>", 0.0),
]


@pytest.mark.parametrize(("text", "score"), SYMBOLS)
def test_a_comparison_symbol_is_read_as_its_comparison(text: str, score: float) -> None:
    assert _cross(text) == score


def test_the_relation_writes_the_comparison_as_a_symbol_and_keeps_the_score() -> None:
    """`finance/cross_symbol` (preserving) is how `audit --search` finds S9."""
    from rewardsmith.verifiers.finance.claim_relations import cross_document_relations

    relation = next(r for r in cross_document_relations(None) if r.name == "finance/cross_symbol")
    right = Sample(id="r", completion="<answer>Globex, higher by 16,849 thousand</answer>",
                   reference=HIGHER)  # fmt: skip
    for seed in range(4):
        new = relation.rewrite(right, random.Random(seed))
        assert new is not None and CrossDocument()(new).score == 1.0, new.completion


# S6 in chart_claims. Before (measured): each row earned 1.0 (the chart shows +151).
@pytest.mark.parametrize(
    "text",
    [
        "Revenue in 2021 was [151].",
        "Revenue in 2021 was △151.",
        "Revenue in 2021 was ▲ 151.",
        "Revenue in 2021 was 151 (negative).",
        "Revenue in 2021 was 151, negative.",
    ],
)
def test_a_chart_value_of_no_known_or_a_negative_sign_is_not_the_positive_bar(text: str) -> None:
    assert _chart(text) == 0.0


def test_the_relation_marks_a_chart_value_and_the_claim_earns_nothing() -> None:
    """`finance/chart_sign_mark` (changing) is how `audit --search` finds S6 in charts."""
    from rewardsmith.verifiers.finance.claim_relations import chart_relations

    check = ChartClaims()
    relation = next(r for r in chart_relations(check) if r.name == "finance/chart_sign_mark")
    for said in ("Revenue in 2021 was 151.", "Revenue in 2021 was 151, not 886."):
        right = Sample(id="r", completion=said, reference=CHART)
        for seed in range(16):  # "[151,] not 886" marked "151," and earned 1.0 (seed 20)
            new = relation.rewrite(right, random.Random(seed))
            assert new is not None and check(new).score == 0.0, new.completion


# --- S10: numeric_answer's free text, a figure labelled another year in words ------------
#
# Before (measured): the WRONG rows paid 1.0 (the last figure was taken though labelled the
# prior year's, or "2024A"/"2023A" named no year); the RIGHT rows: PY 0.0, the others 1.0.

PRIOR_WRONG = [
    "Revenue: 150,239 thousand (PY: 122,445 thousand).",
    "Revenue was 150,239 thousand (prior year: 122,445 thousand).",
    "2024A: 150,239 thousand; 2023A: 122,445 thousand.",
    "FY2024E: 150,239 thousand; FY2023A: 122,445 thousand.",
]
PRIOR_RIGHT = [
    "Revenue: 122,445 thousand (PY: 150,239 thousand).",
    "Revenue was 122,445 thousand (last year 150,239 thousand).",
    "2023A: 150,239 thousand; 2024A: 122,445 thousand.",
    "2024A: 122,445 thousand (2023A: 150,239 thousand).",
]


@pytest.mark.parametrize("text", PRIOR_WRONG)
def test_free_text_labelled_prior_year_is_not_the_conclusion(text: str) -> None:
    assert _numeric(text, REVENUE) == 0.0


@pytest.mark.parametrize("text", PRIOR_RIGHT)
def test_free_text_with_its_prior_year_labelled_keeps_full_marks(text: str) -> None:
    assert _numeric(text, REVENUE) == 1.0


def test_the_relation_adds_the_gold_as_the_prior_years_and_the_answer_earns_nothing() -> None:
    """`finance/prior_year_last` (changing) is how `audit --search` finds S10."""
    from rewardsmith.verifiers.finance.relations import numeric_relations

    relation = next(r for r in numeric_relations(None) if r.name == "finance/prior_year_last")
    right = Sample(
        id="r", prompt="What was 2024 revenue?", completion="<answer>122,445 thousand</answer>",
        reference=REVENUE,
    )  # fmt: skip
    for seed in range(4):
        new = relation.rewrite(right, random.Random(seed))
        assert new is not None and NumericAnswer()(new).score == 0.0, new.completion


def test_the_preserving_relations_keep_what_else_an_answer_says() -> None:
    """`audit --bundled --search` seeds 1-3 chained a changing relation, then one of these,
    and the rewrite dropped what the first had added (a wrong "(99.9%)", a triangle, a
    reversed move): each now declines to rewrite such an answer."""
    from rewardsmith.verifiers.finance.claim_relations import (
        cross_document_relations,
        grounding_relations,
    )
    from rewardsmith.verifiers.finance.relations import numeric_relations

    symbol = next(r for r in cross_document_relations(None) if r.name == "finance/cross_symbol")
    gap = "<answer>Globex, higher by 16,849 thousand (99.9%)</answer>"
    assert symbol(Sample(id="x", completion=gap, reference=HIGHER), 0) is None
    json_object = next(r for r in numeric_relations(None) if r.name == "finance/json_object")
    marked = Sample(id="n", completion="<answer>△122,445 thousand</answer>", reference=REVENUE)
    assert json_object(marked, 0) is None
    labels = next(
        r for r in grounding_relations(Grounding()) if r.name == "finance/grounding_year_labels"
    )
    moved = Sample(id="g", completion="Revenue rose to 122,445 (p. 1).", reference=ACME)
    assert labels(moved, 0) is None
