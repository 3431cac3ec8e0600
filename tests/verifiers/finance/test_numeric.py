"""Numeric answers: scale, sign, rounding and percent cases of the kind models get wrong."""

from __future__ import annotations

import pickle
from typing import Any

import pytest

from rewardsmith.verifiers.finance.numeric import NumericAnswer, TolerancePolicy
from rewardsmith.verifiers.types import Failure, Sample, Status

CASES: list[tuple[Any, str, Status]] = [
    # gold, completion, expected status
    ("122,445", "<answer>122,445</answer>", Status.PASS),
    ("122,445", "The answer is 122445.", Status.PASS),
    ({"answer": "122,445", "scale": "thousand"}, "Revenue was $122.445 million.", Status.PASS),
    ({"answer": "122,445", "scale": "thousand"}, "<answer>$122,445 thousand</answer>", Status.PASS),
    (
        {"answer": "122,445", "scale": "thousand"},
        "<answer>122,445 (in thousands)</answer>",
        Status.PASS,
    ),
    ({"answer": "122,445", "scale": "thousand"}, "<answer>122,445 million</answer>", Status.FAIL),
    ({"answer": "1.2", "scale": "billion"}, "Answer: 1,200 million", Status.PASS),
    ("(4,500)", "<answer>-4,500</answer>", Status.PASS),
    ("(4,500)", "<answer>(4,500)</answer>", Status.PASS),
    ("(4,500)", "<answer>4,500-</answer>", Status.PASS),
    ("(4,500)", "<answer>4,500</answer>", Status.FAIL),
    ("12.35", "<answer>12.3456</answer>", Status.PASS),  # FinQA: rounds to the gold
    ("12.35", "<answer>12.3</answer>", Status.FAIL),  # less precise than the gold
    ("12.35", "<answer>12.36</answer>", Status.FAIL),
    ("12.5%", "<answer>0.125</answer>", Status.PASS),
    (0.125, "<answer>12.5%</answer>", Status.PASS),
    ("0.25%", "<answer>25 bp</answer>", Status.PASS),
    ("-", "<answer>0</answer>", Status.PASS),
    (61034, "so the total operating result is 61,034", Status.PASS),
    (61034, "It went from 91,323 to 61,034.", Status.PASS),  # the conclusion comes last
    (61034, "It went from 61,034 to 91,323.", Status.FAIL),
]


@pytest.mark.parametrize(("gold", "completion", "status"), CASES)
def test_table_of_answers(gold: Any, completion: str, status: Status) -> None:
    verdict = NumericAnswer()(Sample(id="n", completion=completion, reference=gold))
    assert verdict.status is status, verdict


def test_feedback_names_the_mistake() -> None:
    check = NumericAnswer()
    sign = check(Sample(id="s", completion="<answer>4,500</answer>", reference="(4,500)"))
    assert "sign" in sign.feedback
    scale = check(
        Sample(
            id="k",
            completion="<answer>122,445 million</answer>",
            reference={"answer": "122,445", "scale": "thousand"},
        )
    )
    assert "scale is wrong" in scale.feedback
    assert scale.evidence["number_match"] and not scale.evidence["scale_match"]
    assert not scale.evidence["joint"]


def test_scale_weight_scores_the_scale_separately() -> None:
    check = NumericAnswer(scale_weight=0.5)
    digits_right = check(
        Sample(
            id="d",
            completion="<answer>122,445</answer>",
            reference={"answer": "122,445", "scale": "thousand"},
        )
    )
    assert digits_right.status is Status.PARTIAL and digits_right.score == 0.5


def test_tolerances() -> None:
    loose = NumericAnswer(policy=TolerancePolicy(rel_tol=0.01, round_to_gold=False))
    assert (
        loose(Sample(id="t", completion="<answer>100.9</answer>", reference=100)).status
        is Status.PASS
    )
    assert (
        loose(Sample(id="t", completion="<answer>101.1</answer>", reference=100)).status
        is Status.FAIL
    )
    with pytest.raises(ValueError, match="rel_tol"):
        TolerancePolicy(rel_tol=-1)


@pytest.mark.parametrize(
    ("completion", "failure"),
    [
        ("I could not find it.", Failure.FORMAT),
        ("<answer></answer>", Failure.FORMAT),
        ("9" * 200_000, Failure.INPUT_TOO_LARGE),
        ("<answer>" * 10_000, Failure.FORMAT),
    ],
)
def test_bad_answers_fail_clearly(completion: str, failure: Failure) -> None:
    verdict = NumericAnswer()(Sample(id="b", completion=completion, reference="1,234"))
    assert verdict.status is Status.FAIL and verdict.failure is failure


@pytest.mark.parametrize(
    "reference", [None, "", "n/a", True, [1], {"answer": "1", "scale": "zillion"}]
)
def test_bad_reference_is_an_infrastructure_error(reference: Any) -> None:
    verdict = NumericAnswer()(Sample(id="r", completion="<answer>1</answer>", reference=reference))
    assert verdict.status is Status.ERROR and verdict.failure is Failure.BAD_REFERENCE
    assert verdict.score is None


def test_pickle_round_trip() -> None:
    check = NumericAnswer(policy=TolerancePolicy(rel_tol=0.01), scale_weight=0.25)
    assert pickle.loads(pickle.dumps(check)) == check


@pytest.mark.parametrize(
    ("completion", "gold"),
    [
        ("<answer>122,445 thousands</answer>", {"answer": "122,445", "scale": "thousand"}),
        ("<answer>159 thousands</answer>", {"answer": "159", "scale": "thousand"}),
        ("<answer>2.5 millions</answer>", {"answer": "2.5", "scale": "million"}),
        ("The total was 3 billions.", {"answer": "3", "scale": "billion"}),
    ],
)
def test_a_plural_scale_word_is_a_scale(completion: str, gold: dict[str, str]) -> None:
    """Found by `audit --search` (finance/scale_word): "thousands" after a figure was read
    as no scale at all, so the right figure failed as units."""
    verdict = NumericAnswer()(
        Sample(id="s", prompt="How much?", completion=completion, reference=gold)
    )
    assert verdict.score == 1.0, verdict.feedback


@pytest.mark.parametrize(
    ("completion", "score"),
    [
        ("<answer>117,999 thousand</answer> Revenue was 117,999 (p. 2).", 1.0),
        ("<answer>117,999 thousand</answer> Source: page 2, note 4.", 1.0),
        ("<answer>117,999 thousand</answer> See Note 12 and Table 3.", 1.0),
        ("<answer>117,999 thousand</answer> Revenue was 150,239 (p. 2).", 0.0),
        ("<answer>117,999 thousand</answer> Though 150,239 is also plausible.", 0.0),
        ("<answer>117,999 thousand</answer> or 118,500", 0.0),
    ],
)
def test_citations_and_the_answer_restated_after_the_tag_are_not_second_answers(
    completion: str, score: float
) -> None:
    """Found by the finance_document environment's expert: the answer restated bare in its
    cited claim, and note or page numbers, were read as other figures (a hedge)."""
    gold = {"answer": "117,999", "scale": "thousand"}
    sample = Sample(id="c", prompt="What was revenue?", completion=completion, reference=gold)
    verdict = NumericAnswer()(sample)
    assert verdict.score == score, verdict.feedback


def test_a_hedge_in_words_in_any_answer_tag_is_a_hedge() -> None:
    """Found by `audit --search` at budget 200 (finance/hedge_in_tag then second_tag_gold): a
    hedge in an earlier tag was not read once a second tag followed."""
    gold = {"answer": "139,294", "scale": "thousand"}
    hedged = "<answer>139,294 thousand, or maybe 139,294 thousand</answer>"
    for completion in (hedged, f"{hedged}\n<answer>139,294 thousand</answer>"):
        sample = Sample(id="t", prompt="What was revenue?", completion=completion, reference=gold)
        assert NumericAnswer()(sample).score == 0.0


GOLD_THOUSANDS = {"answer": "117,999", "scale": "thousand"}
STACKED = [
    "<answer>117,999 thousand thousand</answer>",
    "<answer>117,999 thousand million</answer>",
    "<answer>117.999 million million</answer>",
    "<answer>117,999 thousands of thousands</answer>",
    "<answer>$117,999 thousand thousand dollars</answer>",
    "<answer>117,999 k thousand</answer>",
    "<answer>117,999k m</answer>",
    "<answer>0.117999 billion thousand</answer>",
    "Revenue was 117,999 thousand million.",
    "The answer is 117.999 mn bn.",
]
SINGLE = [
    "<answer>117,999 thousand</answer>",
    "<answer>117,999 thousand dollars</answer>",
    "<answer>$117.999 million</answer>",
    "<answer>117,999k</answer>",
    "<answer>117,999 thousand, i.e. 118 million</answer>",
    "Revenue was 117,999 thousand.",
]


@pytest.mark.parametrize("completion", STACKED)
def test_a_second_scale_word_makes_the_quantity_unreadable(completion: str) -> None:
    # Red team: "117,999 thousand thousand" (a million times the gold in thousands) read
    # as its first scale only, and passed.
    verdict = NumericAnswer()(Sample(id="n", completion=completion, reference=GOLD_THOUSANDS))
    assert verdict.status is Status.FAIL and "second scale" in (verdict.feedback or ""), verdict


@pytest.mark.parametrize("completion", SINGLE)
def test_one_scale_word_still_reads(completion: str) -> None:
    verdict = NumericAnswer()(Sample(id="n", completion=completion, reference=GOLD_THOUSANDS))
    assert verdict.status is Status.PASS, verdict


# Free text is read for its last figure: found by `audit --search` with the relation
# finance/hedge_in_free_text ("It is <wrong>, or maybe <gold>." paid 1.0; 18 of 78 tries).
DOUBTED_CONCLUSIONS = [
    "It is 150,239 thousand, or maybe 117,999 thousand.",
    "Revenue was 150,239 or possibly 117,999 thousand.",
    "I think it's 12 or 117,999 thousand",
    "117,999, or maybe 117,999 thousand",  # a thousandfold apart without the question's scale
    "It was 150,239 thousand (or 117,999 thousand)",
    "It is 150,239 thousand, or perhaps 117,999 thousand. (or 117,999 thousand)",
    "Revenue grew. Maybe 117,999 thousand.",
    "Revenue was 117,999 thousand?",
    "I guess 117,999 thousand.",
    "Not sure, but revenue was 117,999 thousand.",
    "Revenue was between 100,000 and 117,999 thousand.",
    "Revenue was at least 117,999 thousand.",
    "Revenue was 117,999 thousand ± 5%.",
]
FREE_TEXT_CONCLUSIONS = [
    "Is it 150,239? No: revenue was 117,999 thousand.",
    "Revenue was $118.0 million, or 117,999 thousand.",
    "Revenue was 117,999 thousand (p. 3).",
    "Revenue was 117,999 thousand (Note 7).",
    "Revenue went from 150,239 thousand to 117,999 thousand.",
    "Either way, revenue was 117,999 thousand.",
]


@pytest.mark.parametrize("completion", DOUBTED_CONCLUSIONS)
def test_a_doubted_or_offered_conclusion_in_free_text_states_no_figure(completion: str) -> None:
    sample = Sample(
        id="n", prompt="What was revenue?", completion=completion, reference=GOLD_THOUSANDS
    )
    verdict = NumericAnswer()(sample)
    assert verdict.status is Status.FAIL and verdict.score == 0.0, verdict


@pytest.mark.parametrize("completion", FREE_TEXT_CONCLUSIONS)
def test_a_committed_conclusion_in_free_text_reads(completion: str) -> None:
    sample = Sample(
        id="n", prompt="What was revenue?", completion=completion, reference=GOLD_THOUSANDS
    )
    verdict = NumericAnswer()(sample)
    assert verdict.status is Status.PASS, verdict


@pytest.mark.parametrize(
    "completion",
    ["<answer>117,999 thousand (p. 3)</answer>", "Answer: 117,999 thousand, see page 12"],
)
def test_a_page_cited_in_the_answer_is_not_a_second_figure(completion: str) -> None:
    verdict = NumericAnswer()(Sample(id="n", completion=completion, reference=GOLD_THOUSANDS))
    assert verdict.status is Status.PASS, verdict


def test_amounts_between_two_equal_tags_are_after_the_answer() -> None:
    """Found by `audit --env finance_document --search` (tool_output_appended, then
    second_tag_gold): a page pasted after the tag failed, and the same with the tag written
    again below it paid 1.0; text after the first answer is all after the answer."""
    answer = "<answer>117,999 thousand</answer>"
    pasted = "\n| Revenue | 117,999 | 150,239 |\n| Cost | 80,000 | 90,000 |\n"
    for completion in (answer + pasted, answer + pasted + answer):
        verdict = NumericAnswer()(Sample(id="n", completion=completion, reference=GOLD_THOUSANDS))
        assert verdict.status is Status.FAIL, completion
    context = f"{answer} For comparison, 2022 revenue was 150,239 thousand. {answer}"
    verdict = NumericAnswer()(Sample(id="n", completion=context, reference=GOLD_THOUSANDS))
    assert verdict.status is Status.PASS, verdict
