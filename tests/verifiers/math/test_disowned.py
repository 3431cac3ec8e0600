"""An answer stated only to be denied, doubted or supposed, or disowned after it is given,
is no answer; one corrected after a disowning is the correction.

Each NOT_STATED row earned 1.0 for the gold before: the answer phrase and the box were
read whatever the clause around them said ("It is false that the answer is 5."), and only
"this is (likely) incorrect"-style endings disowned an answer. `audit --search` finds the
class with the relations ``math/framed_untrue`` and ``math/disowned_after`` (on the old
reading: tests/cli/search_sets/math_forms, budget 60, seed 0, rows point and roots).

The CORRECTED rows scored 0 before: a disowning anywhere in the last 400 characters
took the answer back, even one about the value the text then corrected."""

from __future__ import annotations

import pytest

from rewardsmith.verifiers import Sample
from rewardsmith.verifiers.math import MathAnswer

CHECK = MathAnswer()

NOT_STATED = [
    "It is false that the answer is 5.",
    "It is not true that the answer is $5$.",
    "It's not the case that the answer is \\boxed{5}.",
    "I don't think the answer is 5.",
    "I do not believe the final answer is $5$.",
    "I doubt the answer is 5.",
    "Suppose the answer is 5.",
    "Assume the answer is \\boxed{5}.",
    "Nobody believes the answer is 5.",
    "It would be wrong to say the answer is 5.",
    "A common mistake is to think the answer is 5.",
    "We cannot conclude that the answer is 5.",
    "The answer is 5. This claim is false.",
    "\\boxed{5}. Scratch that.",
    "\\boxed{5}. That's incorrect.",
    "The answer is $5$. Just kidding.",
    "The answer is $5$. Ignore the above.",
    "\\boxed{5} (this is false)",
    "The answer is 5 — false.",
    "The answer is $5$. I'm joking.",
]

HEDGED = [
    "Final answer: ~5",
    "Final answer: 5ish",
    "Final answer: 5 and up",
    "Final answer: 5 (approx.)",
    "Final answer: ca 5",
    "Final answer: somewhere between 4 and 6",
]

STATED = [
    "So the answer is 5.",
    "There is no doubt the answer is 5.",
    "Without a doubt, the answer is $5$.",
    "Contrary to a common misconception, the answer is 5.",
    "It is easy to check that the answer is \\boxed{5}.",
    "I believe the answer is 5.",
    "\\boxed{5}. I have verified this is correct.",
    "\\boxed{5}. Let me know if anything is wrong.",
    "\\boxed{5}. It is not 6.",
    "$\\boxed{5}$, since $12 - 7 = 5$.",
]

CORRECTED = [
    "\\boxed{4}. That's wrong. The answer is 5.",
    "\\boxed{4}. This is wrong. The answer is 5.",
    "The answer is 4. Scratch that. Actually, the answer is $5$.",
]


@pytest.mark.parametrize("completion", NOT_STATED + HEDGED)
def test_a_denied_supposed_disowned_or_hedged_answer_earns_nothing(completion: str) -> None:
    verdict = CHECK(Sample(id="d", completion=completion, reference="5"))
    assert verdict.score == 0.0, verdict


@pytest.mark.parametrize("completion", STATED + CORRECTED)
def test_a_stated_or_corrected_answer_is_read(completion: str) -> None:
    verdict = CHECK(Sample(id="d", completion=completion, reference="5"))
    assert verdict.score == 1.0, verdict


def test_a_half_open_interval_restated_in_a_check_is_the_same_answer() -> None:
    # The check's bare "[1, 3)." lost its ")" (read as closing a parenthesis), so the
    # restatement "[1, 3" looked like a second answer (audit --search, math_forms, budget
    # 200, seed 4, relation math/verified_after).
    text = "So \\boxed{[1, 3)}.\n\nWait, let me verify: the result is [1, 3). Yes, that checks out."
    assert CHECK(Sample(id="h", completion=text, reference="[1, 3)")).score == 1.0
