"""Two readings a right or wrong answer met in plain text (2026-12-05):

* the engineers' imaginary unit: ``3+4j`` for ``3+4i`` scored 0 (j read as a variable);
* letters glued to the last number of a line: a bare ``5x``, ``5j`` or ``5k`` was read as
  5 (and paid a gold of 5) while ``2x`` failed a gold of ``2x``; the boxed and "the answer
  is" forms already read the term whole.
"""

from __future__ import annotations

import random

import pytest

from rewardsmith.verifiers.math import MathAnswer
from rewardsmith.verifiers.math.relations import relations
from rewardsmith.verifiers.types import Sample

CHECK = MathAnswer()

RIGHT = [
    ("3+4i", "3+4j"),
    ("3+4i", r"\boxed{3+4j}"),
    ("3+4i", "$3 + 4j$"),
    ("-2i", "The root is $-2j$."),
    ("3+4j", "3+4i"),  # a gold written with j
    ("2x", "2x"),
    ("5", "It takes 5s."),  # a one-letter unit glued on in prose
    ("5", "5cm"),
    ("3", "She finished 3rd."),
    ("5", "We meet at 5pm."),
    ("2", r"\boxed{j = 2}"),  # j named, not imaginary
]

WRONG = [
    ("5", "5j"),
    ("5", "5i"),
    ("5", "5x"),
    ("5", "5k"),  # 5000 in prose, never 5
    ("5", "The answer is 5n."),
    ("3+4i", "3-4j"),
    ("3+4i", "3+4j and 5"),
    ("(1, 2)", "i + 2j"),  # both letters: no unit is swapped
    ("11", "11x or 11"),  # audit --search --seed 22: glued_letter, then hedge_gold
    ("11", "11j, or 11"),
]


@pytest.mark.parametrize(("gold", "completion"), RIGHT)
def test_a_right_answer_in_these_forms_keeps_full_marks(gold: str, completion: str) -> None:
    verdict = CHECK(Sample(id="r", completion=completion, reference=gold))
    assert verdict.score == 1.0, verdict


@pytest.mark.parametrize(("gold", "completion"), WRONG)
def test_a_glued_letter_or_another_number_earns_nothing(gold: str, completion: str) -> None:
    verdict = CHECK(Sample(id="w", completion=completion, reference=gold))
    assert verdict.score == 0.0, verdict


def _relation(name: str):  # type: ignore[no-untyped-def]
    return next(r for r in relations(None) if r.name == name)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("gold", ["3+4i", "-2i", r"\frac{1}{2} - i"])
def test_imaginary_j_keeps_a_right_complex_answer_right(gold: str, seed: int) -> None:
    sample = Sample(id="j", completion=f"So \\boxed{{{gold}}}.", reference=gold)
    rewritten = _relation("math/imaginary_j").rewrite(sample, random.Random(seed))
    assert rewritten is not None and "j" in str(rewritten.completion)
    assert CHECK(rewritten).score == 1.0, rewritten.completion


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("gold", ["5", "12", "0.5"])
def test_glued_letter_makes_a_right_number_wrong_in_every_position(gold: str, seed: int) -> None:
    for completion in (gold, f"The answer is {gold}.", f"\\boxed{{{gold}}}"):
        sample = Sample(id="g", completion=completion, reference=gold)
        rewritten = _relation("math/glued_letter").rewrite(sample, random.Random(seed))
        assert rewritten is not None, completion
        assert CHECK(rewritten).score == 0.0, rewritten.completion


@pytest.mark.parametrize("gold", ["0", "0.0", "-0"])
def test_glued_letter_leaves_zero_alone(gold: str) -> None:
    # 0x is 0, as -0 and 0 thousand are: the relation called a right answer wrong (episode
    # search, retry_arithmetic, task add-0-0: glued_letter then hedge_gold, "0x or 0",
    # earned 0.8 against a limit of 0), and the reading is right to pay it.
    sample = Sample(id="z", completion=gold, reference=gold)
    assert _relation("math/glued_letter").rewrite(sample, random.Random(0)) is None
    assert CHECK(Sample(id="z", completion="0x", reference="0")).score == 1.0
