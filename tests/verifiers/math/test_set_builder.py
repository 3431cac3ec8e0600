"""Set-builder notation for a solution set of inequalities.

``\\{x \\mid x > 2\\}`` (or ``|``, ``:``, ``x \\in \\mathbb{R}``) is how textbooks write the
set ``(2, \\infty)``; it scored 0 against the interval gold. `audit --search` found the
class on tests/cli/search_sets/math_forms (relation ``math/set_builder``, budget 120, seed
0: ``\\boxed{\\{x \\mid 1 \\le x < 3\\}}`` earned 0 for ``[1, 3)``).

The set is its condition only where the condition is inequalities in the one variable
named before the bar: an equation (``x^2 = 4``) or another letter leaves it unread."""

from __future__ import annotations

import random

import pytest

from rewardsmith.verifiers import Sample
from rewardsmith.verifiers.math import MathAnswer
from rewardsmith.verifiers.math.relations import relations

CHECK = MathAnswer()
RAY = r"(2, \infty)"

RIGHT = [
    (RAY, r"The answer is $\{x \mid x > 2\}$."),
    (RAY, r"The answer is $\{x | x > 2\}$."),
    (RAY, r"The answer is $\{x : x > 2\}$."),
    (RAY, r"\boxed{\{x \in \mathbb{R} \mid x > 2\}}"),
    (RAY, r"\boxed{\{x \mid 2 < x\}}"),
    ("[1, 3)", r"\boxed{\{x \mid 1 \le x < 3\}}"),
    ("[1, 3)", r"\boxed{\{t \mid 1 \leq t < 3\}}"),
    (r"(-\infty, 4]", r"\boxed{\{x \vert x \le 4\}}"),
    (r"(-\infty, 1) \cup (1, \infty)", r"\boxed{\{x \mid x \neq 1\}}"),
]

WRONG = [
    (RAY, r"\boxed{\{x \mid x > 3\}}"),
    (RAY, r"\boxed{\{x \mid x \ge 2\}}"),  # the closed ray
    ("[1, 3)", r"\boxed{\{x \mid 1 < x < 3\}}"),
    (RAY, r"\boxed{\{x \mid y > 2\}}"),  # another variable's condition
    (RAY, r"\boxed{\{x \mid x > 2 + y\}}"),
    ("2, -2", r"\boxed{\{x \mid x^2 = 4\}}"),  # an equation: its set is not read
]


@pytest.mark.parametrize(("gold", "completion"), RIGHT)
def test_a_set_of_inequalities_is_its_interval(gold: str, completion: str) -> None:
    verdict = CHECK(Sample(id="s", completion=completion, reference=gold))
    assert verdict.score == 1.0, verdict


@pytest.mark.parametrize(("gold", "completion"), WRONG)
def test_another_set_is_no_answer(gold: str, completion: str) -> None:
    verdict = CHECK(Sample(id="s", completion=completion, reference=gold))
    assert verdict.score == 0.0, verdict


SET_BUILDER = next(r for r in relations(None) if r.name == "math/set_builder")


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("gold", ["[1, 3)", RAY, r"(-\infty, 4]", "[0, 1]"])
def test_the_relation_keeps_a_right_interval_right(gold: str, seed: int) -> None:
    sample = Sample(id="s", completion=f"So \\boxed{{{gold}}}.", reference=gold)
    rewritten = SET_BUILDER.rewrite(sample, random.Random(seed))
    assert rewritten is not None and "\\{x" in str(rewritten.completion)
    assert CHECK(rewritten).score == 1.0, rewritten.completion


@pytest.mark.parametrize("gold", ["(3, 5)", "12", r"(1, 2) \cup (3, 4)"])
def test_the_relation_leaves_what_may_be_a_tuple_or_no_interval(gold: str) -> None:
    sample = Sample(id="s", completion=f"So \\boxed{{{gold}}}.", reference=gold)
    assert SET_BUILDER.rewrite(sample, random.Random(0)) is None
