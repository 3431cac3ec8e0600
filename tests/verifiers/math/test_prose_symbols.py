"""A prose answer whose one number stands in a formula (π·4, 2×4, 4^2) answers the formula,
not the number. Before, the one-number reading of prose skipped the line's math symbols, so
"The answer is That gives π·4." paid a gold of 4 (found by the bundled search, seed 0:
`math/gold_in_a_term` then `math/answer_phrase`)."""

from __future__ import annotations

import pytest

from rewardsmith.verifiers import Sample, create

CHECK = create("math")

ROWS = [
    ("The answer is That gives π·4.", "4", 0.0),  # before: 1.0
    ("The answer is That gives π*4.", "4", 0.0),  # before: 1.0
    ("The answer is: that gives 4·π.", "4", 0.0),
    ("The answer is that it comes to 4^2.", "4", 0.0),
    ("The answer is the root √4 here.", "4", 0.0),
    ("The answer is what 8÷4 makes.", "4", 0.0),
    ("The answer is then 2×4 apples.", "4", 0.0),
    ("The answer is That gives 4.", "4", 1.0),
    ("The answer is Jane's 12 apples.", "12", 1.0),
    ("The answer is 4π.", "4\\pi", 1.0),
    ("The answer is 5 μm.", "5 μm", 1.0),  # a Greek letter in a unit is no formula
    ("It is 5 apples/day.", "5", 1.0),
]


@pytest.mark.parametrize(("completion", "gold", "score"), ROWS)
def test_a_number_in_a_prose_formula_is_not_the_answer(
    completion: str, gold: str, score: float
) -> None:
    assert CHECK(Sample(id="p", completion=completion, reference=gold)).score == score
