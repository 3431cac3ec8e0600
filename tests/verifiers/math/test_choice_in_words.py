"""A multiple-choice answer stated in words on the last line.

"The correct option is B.", "Option (B) is correct.", "(D) is the answer.", "I choose B."
scored 0 against a choice gold: only "The answer is B", an "Answer:" label and a letter
alone on the last line were read. `audit --search` found the class with the relation
``math/choice_in_words`` (tests/cli/search_sets/math_forms, row choice, budget 120, seed 0:
"So the best choice is (B)." earned 0).

Stating is what counts: a denial ("Option B is incorrect", "is not B"), a question, a
supposition, a disowning or a second letter ("B or C", "(B), not (C)") gives no answer."""

from __future__ import annotations

import pytest

from rewardsmith.verifiers import Sample
from rewardsmith.verifiers.math import MathAnswer

CHECK = MathAnswer()

STATED = [
    "The correct option is B.",
    "The correct choice is (B).",
    "The right answer is (B)",
    "Option B is correct.",
    "Choice (B) is the best.",
    "Therefore, (B) is the answer.",
    "So B is the correct option.",
    "I choose B.",
    "I pick option (B).",
    "Hence option (B).",
    "So the best choice is (B).",
    "A careful check shows the correct option is B.",
    "23 is prime.\nThe correct option is B.",
]

NOT_STATED = [
    "The correct option is not B.",
    "Option B is incorrect.",
    "Is option B correct?",
    "Suppose option B is correct.",
    "It is false that the correct option is B.",
    "The correct option is B. Just kidding.",
    "The correct option is B or C.",
    "The correct option is (B), not (C).",
    "I choose B or D.",
    "The correct option is C.",
]


@pytest.mark.parametrize("completion", STATED)
def test_a_choice_stated_in_words_is_the_answer(completion: str) -> None:
    verdict = CHECK(Sample(id="c", completion=completion, reference="B"))
    assert verdict.score == 1.0, verdict


@pytest.mark.parametrize("completion", NOT_STATED)
def test_a_choice_denied_offered_or_hedged_is_no_answer(completion: str) -> None:
    verdict = CHECK(Sample(id="c", completion=completion, reference="B"))
    assert verdict.score == 0.0, verdict


def test_a_number_gold_does_not_read_choice_sentences() -> None:
    verdict = CHECK(Sample(id="c", completion="The correct option is B.", reference="12"))
    assert verdict.score == 0.0
