"""A question with several answers (the roots of a quadratic, ``x = \\pm 2``) is answered in
prose as "x = 2 or x = 3": that is the list of answers, not a hedge between two of them,
exactly as two boxes are (`reading._parts`). A hedge is still a hedge: where the gold is one
value, or where the values offered are not the gold's values."""

from __future__ import annotations

import random

import pytest

from rewardsmith.verifiers import Sample, Status
from rewardsmith.verifiers.math import MathAnswer
from rewardsmith.verifiers.math.relations import relations

CHECK = MathAnswer()

# (gold, its values in the order a completion states them)
LISTS = [
    ("2, 3", ("2", "3")),
    (r"\{2, 3\}", ("3", "2")),
    (r"\pm 2", ("2", "-2")),
    (r"-\frac{1}{2}, 4", (r"-\frac{1}{2}", "4")),
    ("1, 2, 5", ("1", "2", "5")),
]

FORMS = [
    "x = {a} or x = {b}",
    "${a}$ or ${b}$",
    "$x = {a}$ or $x = {b}$",
    "The roots are $x={a}$ or $x={b}$.",
    "Therefore x = {a} or x = {b}.",
    "So $x = {a}$, or $x = {b}$.",
]


def _say(form: str, values: tuple[str, ...]) -> str:
    """`form` for two values; a third and more are joined with more "or"s."""
    text = form.format(a=values[0], b=values[1])
    for value in values[2:]:
        text = text.rstrip(".") + (f" or ${value}$" if "$" in form else f" or x = {value}")
    return text


def _verdicts(rows: list[tuple[str, str]]) -> list[tuple[str, str, str, float | None]]:
    out = []
    for gold, text in rows:
        verdict = CHECK(Sample(id="l", completion=text, reference=gold))
        out.append((gold, text, verdict.status.value, verdict.score))
    return out


@pytest.mark.parametrize("form", FORMS)
def test_the_gold_values_joined_by_or_are_the_answer(form: str) -> None:
    rows = [(gold, _say(form, values)) for gold, values in LISTS]
    failed = [v for v in _verdicts(rows) if v[2] != Status.PASS.value]
    assert not failed, failed


@pytest.mark.parametrize("form", FORMS)
def test_a_hedge_is_still_a_hedge(form: str) -> None:
    rows = [
        ("2", _say(form, ("2", "3"))),  # one gold value: the second is another answer
        ("3", _say(form, ("2", "3"))),
        ("2, 3", _say(form, ("2", "4"))),  # a wrong member
        ("2, 3", _say(form, ("2", "3", "4"))),  # a value too many
        (r"\pm 2", _say(form, ("2", "2"))),  # a member missing
        ("1, 2, 5", _say(form, ("1", "2"))),
    ]
    paid = [v for v in _verdicts(rows) if v[3] != 0.0]
    assert not paid, paid


def test_a_doubtful_second_value_is_not_a_list() -> None:
    """ "2, or maybe 3" is one answer and a doubt about it, whatever the gold."""
    for text in ("The answer is 2, or maybe 3.", "$x = 2$, or perhaps $x = 3$."):
        verdict = CHECK(Sample(id="d", completion=text, reference="2, 3"))
        assert verdict.score == 0.0, (text, verdict.evidence)


@pytest.mark.parametrize(
    ("gold", "completion"),
    [
        ("2, 3", r"\boxed{2, 3}"),
        (r"\{-1, 4\}", r"So $\boxed{\{-1, 4\}}$."),
        (r"\pm 2", r"\boxed{\pm 2}"),
        (r"(-\infty, 1) \cup (3, \infty)", r"\boxed{(-\infty, 1) \cup (3, \infty)}"),
        (r"(-\infty, -2] \cup [5, \infty)", r"$\boxed{(-\infty, -2] \cup [5, \infty)}$"),
    ],
)
def test_the_relation_states_a_list_answer_in_prose_and_keeps_it_right(
    gold: str, completion: str
) -> None:
    """`math/solutions_in_prose` is how `audit --search` finds this class on its own."""
    relation = {r.name: r for r in relations(CHECK)}["math/solutions_in_prose"]
    sample = Sample(id="p", completion=completion, reference=gold)
    for seed in range(3):
        rewritten = relation.rewrite(sample, random.Random(seed))
        assert rewritten is not None and "x " in rewritten.completion_text
        assert CHECK(rewritten).status is Status.PASS, rewritten.completion_text
    wrong = Sample(id="w", completion=r"\boxed{2, 4}", reference="2, 3")
    assert CHECK(relation.rewrite(wrong, random.Random(0))).score == 0.0


def test_a_value_joined_before_the_list_keeps_it_a_hedge() -> None:
    """The list is all that is joined: a word value before it, or more values than the
    reader's window holds, are still offered."""
    many = " or ".join(f"$x = {n}$" for n in range(100, 160)) + " or $x = 2$ or $x = 3$"
    for text in ("x = seven or x = 2 or x = 3", many):
        verdict = CHECK(Sample(id="b", completion=text, reference="2, 3"))
        assert verdict.score == 0.0, (text[-80:], verdict.evidence)


UNION = r"(-\infty, 1) \cup (3, \infty)"


@pytest.mark.parametrize(
    ("completion", "right"),
    [
        ("$x < 1$ or $x > 3$", True),
        ("The solution is $x < 1$ or $x > 3$.", True),
        ("So $x > 3$ or $x < 1$.", True),
        ("$x < 1$ or $x > 4$", False),  # another interval
        (r"$x < 1$ or $x \geq 3$", False),  # 3 included
        ("$x < 1$ or maybe $x > 3$", False),  # a doubt, not a union
    ],
)
def test_inequalities_joined_by_or_are_a_union_of_intervals(completion: str, right: bool) -> None:
    verdict = CHECK(Sample(id="u", completion=completion, reference=UNION))
    assert (verdict.status is Status.PASS) is right, verdict.evidence
    single = CHECK(Sample(id="s", completion=completion, reference=r"(3, \infty)"))
    assert single.score == 0.0  # one interval asked: the other is a hedge
