"""One value stated twice, as a ratio and as a percentage ("The probability is 1/4, or
25%."): a common way to close a probability answer, and no hedge. It failed both ways: the
last-number rule dropped the "%" (so 1/4 and 25 were two answers), and a restatement was
compared in the form it came last in (25% is not the gold 1/4). The form that matches the
gold's is compared; a restatement of another value is still a hedge."""

from __future__ import annotations

import pytest

from rewardsmith.verifiers import Sample, Status
from rewardsmith.verifiers.math import MathAnswer

CHECK = MathAnswer()

RIGHT = [
    ("1/4", "The probability is 1/4, or 25%."),
    (r"25\%", "The probability is 1/4, or 25%."),
    ("0.25", "It is 0.25, or 25%."),
    ("1/4", r"The probability is $\frac{1}{4}$, or $25\%$."),
    ("1/4", "So 25% or 1/4."),
    ("1/4", "1/4, i.e. 25%."),
    ("0.375", r"The answer is $\frac{3}{8}$, that is, $37.5\%$."),
    ("1/4", r"\boxed{25\%}, or $\frac{1}{4}$ as a fraction"),
    ("25", "So 25% of them."),
]
WRONG = [
    ("1/4", "The probability is 1/4, or 30%."),  # another value: a hedge
    (r"25\%", "The probability is 1/4, or 30%."),
    ("1/4", "The probability is 1/3, or 25%."),
    ("0.25", "The probability is 25%."),  # a percentage alone is not the ratio
    ("0.3", "It is 0.25, or 25%."),
    ("1/4", "1/4, i.e. 30%."),
]


@pytest.mark.parametrize(("gold", "text"), RIGHT)
def test_a_ratio_restated_as_a_percentage_pays(gold: str, text: str) -> None:
    verdict = CHECK(Sample(id="r", completion=text, reference=gold))
    assert verdict.status is Status.PASS, verdict.evidence


@pytest.mark.parametrize(("gold", "text"), WRONG)
def test_another_value_or_a_lone_percentage_does_not(gold: str, text: str) -> None:
    assert CHECK(Sample(id="w", completion=text, reference=gold)).score == 0.0


def test_the_relation_restates_a_ratio_and_keeps_it_right() -> None:
    """`math/percent_restated` is how `audit --search` finds this class on its own."""
    import random

    from rewardsmith.verifiers.math.relations import relations

    relation = {r.name: r for r in relations(CHECK)}["math/percent_restated"]
    for text, gold in [
        ("1/4", "1/4"),
        (r"\boxed{\frac{3}{8}}", "3/8"),
        (r"$-\frac{1}{2}$", "-0.5"),
    ]:
        for seed in range(4):
            new = relation.rewrite(
                Sample(id="p", completion=text, reference=gold), random.Random(seed)
            )
            assert new is not None and "%" in new.completion_text
            assert CHECK(new).status is Status.PASS, new.completion_text
