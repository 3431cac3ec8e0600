"""Mixed numbers wherever a value stands, in TeX and in plain text.

Before, only a whole answer in braced TeX (``4\\frac{2}{3}``) was read as a mixed number:
``x = 4\\frac{2}{3}``, ``(4\\frac{2}{3}, 1)``, ``4\\tfrac23`` and the plain ``4 2/3`` (how
GSM8K-style answers write it) scored 0 against the gold 14/3. `audit --search` found the
class on tests/cli/search_sets/math_forms (relation ``math/mixed_number``, budget 120, seed
0: ``\\boxed{4\\tfrac23}`` earned 0) before the reading was widened.

The reading stays a value's whole: a mixed number is an item (the whole answer, an item of
a tuple or interval, the value after a relation sign), never a product inside a term, and
a plain ``4 5/3`` (an improper fraction after a whole) is no mixed number."""

from __future__ import annotations

import random

import pytest

from rewardsmith.verifiers import Sample
from rewardsmith.verifiers.math import MathAnswer
from rewardsmith.verifiers.math.relations import relations

CHECK = MathAnswer()

RIGHT = [
    ("14/3", r"The answer is $4\frac{2}{3}$."),
    ("14/3", r"The answer is $4 \frac{2}{3}$."),
    ("14/3", r"The answer is $4\tfrac23$."),
    ("14/3", r"The answer is $4\dfrac{2}{3}$ cups."),
    ("14/3", r"The answer is $x = 4\frac{2}{3}$."),
    ("14/3", r"\boxed{4 2/3}"),
    ("14/3", "The answer is 4 2/3."),
    ("14/3", "He needs 4 2/3 cups of flour."),
    ("5/2", "The answer is 2 1/2 hours."),
    ("-14/3", r"The answer is $-4\frac{2}{3}$."),
    ("-7/2", r"\boxed{-3 1/2}"),
    ("(14/3, 1)", r"\boxed{(4\frac{2}{3}, 1)}"),
    ("(14/3, 1)", r"\boxed{(4 2/3, 1)}"),
    (r"[1, \frac{7}{2}]", r"\boxed{[1, 3\frac12]}"),
    (r"1 \le x \le \frac{7}{2}", r"\boxed{1 \le x \le 3\frac{1}{2}}"),
]

WRONG = [
    ("8/3", "The answer is 4 2/3."),  # a mixed number, not the product 4 * 2/3
    ("8/3", r"The answer is $4\frac{2}{3}$."),
    ("4", "The answer is 4 2/3."),
    ("2/3", "The answer is 4 2/3."),
    ("17/3", "The answer is 4 5/3."),  # not a mixed number: unread
    ("14/3", "The answer is 4 2/3 or 5."),
    ("14/3", r"\boxed{(4 2/3, 1)}"),  # a tuple for a number
    ("(14/3, 1)", r"\boxed{(4 2/3, 2)}"),
]


@pytest.mark.parametrize(("gold", "completion"), RIGHT)
def test_a_mixed_number_is_its_value(gold: str, completion: str) -> None:
    verdict = CHECK(Sample(id="m", completion=completion, reference=gold))
    assert verdict.score == 1.0, verdict


@pytest.mark.parametrize(("gold", "completion"), WRONG)
def test_a_mixed_number_is_no_other_value(gold: str, completion: str) -> None:
    verdict = CHECK(Sample(id="m", completion=completion, reference=gold))
    assert verdict.score == 0.0, verdict


MIXED = next(r for r in relations(None) if r.name == "math/mixed_number")


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("gold", [r"\frac{14}{3}", "-7/2", r"\frac{23}{12}", "29/8"])
def test_the_relation_keeps_a_right_answer_right(gold: str, seed: int) -> None:
    sample = Sample(id="m", completion=f"So \\boxed{{{gold}}}.", reference=gold)
    rewritten = MIXED.rewrite(sample, random.Random(seed))
    assert rewritten is not None and rewritten.completion != sample.completion
    assert CHECK(rewritten).score == 1.0, rewritten.completion


@pytest.mark.parametrize("gold", [r"\frac{1}{3}", r"\frac{10}{5}", "12", "(3, 5)"])
def test_the_relation_leaves_what_has_no_mixed_form(gold: str) -> None:
    sample = Sample(id="m", completion=f"So \\boxed{{{gold}}}.", reference=gold)
    assert MIXED.rewrite(sample, random.Random(0)) is None
