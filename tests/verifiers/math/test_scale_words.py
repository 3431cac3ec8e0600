"""A scale word after a number is part of it: "It is 3 thousand." answered the gold 3 (the
prose rules read the digits and dropped the word), and "The answer is 1 million." failed
the gold 1000000. In a box the word was already read (`\\boxed{3 \\text{ thousand}}`)."""

from __future__ import annotations

import random

import pytest

from rewardsmith.verifiers import Sample, Status
from rewardsmith.verifiers.math import MathAnswer
from rewardsmith.verifiers.math.relations import relations

CHECK = MathAnswer()

FORMS = [
    "The answer is {n} {word}.",
    "It is {n} {word}.",
    "So there are {n} {word} people.",
    "The total is {n} {word} dollars.",
    "Answer: {n} {word}",
]
SCALES = {"thousand": 10**3, "million": 10**6, "billion": 10**9}


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("word", list(SCALES))
def test_the_scale_word_counts(form: str, word: str) -> None:
    text = form.format(n="3", word=word)
    scaled = CHECK(Sample(id="s", completion=text, reference=str(3 * SCALES[word])))
    assert scaled.status is Status.PASS, (text, scaled.evidence)
    bare = CHECK(Sample(id="b", completion=text, reference="3"))
    assert bare.score == 0.0, (text, bare.evidence)


def test_the_scale_relation_writes_the_word_and_the_answer_loses() -> None:
    relation = {r.name: r for r in relations(CHECK)}["math/scale"]
    sample = Sample(id="r", prompt="1+2=", completion="The answer is 3.", reference="3")
    made = [relation.rewrite(sample, random.Random(seed)) for seed in range(8)]
    assert any(m is not None and "thousand" in m.completion_text for m in made) or any(
        m is not None and "illion" in m.completion_text for m in made
    )
    assert all(m is not None and CHECK(m).score == 0.0 for m in made), made


@pytest.mark.parametrize(
    "word",
    ["hundred", "dozen", "lakh", "crore", "mil", "millions", "tenths", "hundredths",
     "thousandths", "factorial"],
)  # fmt: skip
def test_no_size_or_fraction_word_leaves_the_bare_number(word: str) -> None:
    text = f"The answer is 3 {word}."
    assert CHECK(Sample(id="w", completion=text, reference="3")).score == 0.0


def test_a_hundred_and_a_dozen_are_their_values() -> None:
    for text, gold in [("So the total is 3 hundred dollars.", "300"), ("It is 3 dozen.", "36")]:
        assert CHECK(Sample(id="v", completion=text, reference=gold)).status is Status.PASS
