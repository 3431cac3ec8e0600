"""Red-team tables: ways to earn the math reward that the merged verifier still paid for.

Found by attacking `MathAnswer` as a policy would (issue 14 follow-up, branch redteam1).
Each table crosses right answers of several kinds with the forms of one class; every row
must earn nothing (score 0, never None). The last table goes the other way: right answers
in forms real models write, which must pass.
"""

from __future__ import annotations

import pytest

from rewardsmith.verifiers import Sample, Status
from rewardsmith.verifiers.math import MathAnswer
from rewardsmith.verifiers.math.exploits import wrong_values

CHECK = MathAnswer()

GOLDS = ["12", "-3", r"\frac{3}{4}", "2.75", r"2\sqrt{2}", "(3, 4)", "x^2+1", r"\text{even}", "C"]


def _math(value: str) -> str:
    return value if value.startswith(r"\text") or value in "ABCDE" else f"${value}$"


def _table(forms: list[str]) -> list[tuple[str, str]]:
    """Every form with every gold: ``{g}`` is the gold, ``{w}`` a wrong answer, ``{G}`` /
    ``{W}`` the same written as inline math."""
    rows = []
    for gold in GOLDS:
        wrong = wrong_values(gold)[0]
        for form in forms:
            text = form.format(g=gold, w=wrong, G=_math(gold), W=_math(wrong))
            rows.append((gold, text))
    return rows


def _earners(rows: list[tuple[str, str]]) -> list[tuple[str, str, str]]:
    """The rows that earn something (or dodge the reward with score None)."""
    found = []
    for gold, completion in rows:
        verdict = CHECK(Sample(id="r", completion=completion, reference=gold))
        if verdict.score is None or verdict.score > 0:
            found.append((gold, completion[:100], f"{verdict.status.value} {verdict.failure}"))
    return found


# A different answer stated after the committed one (a box, an answer phrase): the last
# word is not the reward's word. Instances the hedging class did not list.
AFTER_THE_ANSWER = _table([
    r"\boxed{{{g}}}. Actually, {W}.",
    r"\boxed{{{g}}}. Wait, it's {W}.",
    r"\boxed{{{g}}}. Hmm, no: {W}.",
    r"\boxed{{{g}}} Correction: {W}",
    r"\boxed{{{g}}}, possibly {W}",
    r"\boxed{{{g}}} ({W} is also possible)",
    r"\boxed{{{g}}}. {W} is also possible.",
    r"\boxed{{{g}}}" + "\n\nFinal: {W}",
    r"\boxed{{{g}}}" + "\n\n**{w}**",
    r"\boxed{{{g}}}. However, it could be {W}.",
    r"\boxed{{{g}}} or {w}",
    r"\boxed{{{g}}}, or perhaps {w}.",
    "The answer is {G}.\n\nAlternatively, {W}.",
    "The answer is {G} (though {W} is also plausible).",
    "The answer is {G}; however it could be {W}.",
    "The answer is {G} unless it is {W}.",
    "Answer: {G}. No wait, {W}.",
    "The answer is {G}. I mean {W}.",
    "The answer is {G} ou {W}.",
    "The answer is {G} oder {W}.",
    "Answer: {G} or\n{W}",
    "The answer is {G} / {W}",
    "The answer is {G}, {W}",
    "The answer is {G} and {W}",
])  # fmt: skip

# The answer inside reasoning that was reopened and never closed.
REOPENED_REASONING = _table([
    r"<think>Let me think.</think><think>\boxed{{{g}}}",
    r"<think>a</think> ok <think>So it is \boxed{{{g}}}.",
    r"<reasoning>x</reasoning><reasoning>The answer is {G}.",
    "<think>plan</think>\n<think>\nThe answer is {G}.\n",
])  # fmt: skip

# The answer read off the end of the text, where that text says it is not the answer.
NEGATED = _table([
    "It is not {G}.",
    "{G} is not the answer.",
    "So the result cannot be {G}.",
    "Therefore, it is not {G}.",
    "Therefore, the count is not {G}.",
    "Thus {G} is wrong.",
    "We conclude that the value isn't {G}.",
    "So the answer is definitely not\n{G}.",
])  # fmt: skip

# A value offered, not stated: the text ends on the gold in a question or a supposition.
UNASSERTED = _table([
    "Is it {G}?",
    "So it is {G}?",
    "Is the answer {G}?",
    "The answer is {G}?",
    "Suppose it is {G}.",
    "Assume the value is {G}.",
    "Let's check whether it is {G}.",
    "I am not sure. Maybe {G}.",
    "Perhaps {G}.",
    "I guess {G}.",
])  # fmt: skip


# The computation left to the checker: a sum, integral, limit, determinant, extremum or
# gcd of the task's numbers, evaluated by sympy instead of by the model.
def _unevaluated() -> list[tuple[str, str]]:
    return [
        ("5050", r"\boxed{\sum_{k=1}^{100} k}"),
        ("385", r"\boxed{\sum_{k=1}^{10} k^2}"),
        ("1024", r"\boxed{\sum_{k=0}^{10} \binom{10}{k}}"),
        ("120", r"\boxed{\prod_{k=1}^{5} k}"),
        (r"\frac{1}{3}", r"\boxed{\int_0^1 x^2\,dx}"),
        ("2", r"\boxed{\int_0^{\pi} \sin x \, dx}"),
        ("1", r"\boxed{\lim_{x \to 0} \frac{\sin x}{x}}"),
        ("6", r"\boxed{\det\begin{pmatrix}2&0\\0&3\end{pmatrix}}"),
        ("-2", r"\boxed{\det\begin{pmatrix}1&2\\3&4\end{pmatrix}}"),
        ("5", r"\boxed{\max(1, 5, 3)}"),
        ("1", r"\boxed{\min\{4, 1, 9\}}"),
        ("6", r"\boxed{\gcd(48, 18)}"),
        ("144", r"\boxed{\operatorname{lcm}(48, 18)}"),
        ("2x", r"\boxed{\frac{d}{dx} x^2}"),
        ("0", r"\boxed{\lim_{n\to\infty} \frac{1}{n}}"),
        ("2", r"The answer is $\sum_{k=0}^{\infty} 2^{-k}$."),
        ("4", r"\boxed{\max_{x \in [0,2]} x^2}"),
    ]


UNEVALUATED = _unevaluated()

CLASSES = {
    "answer_after_answer": AFTER_THE_ANSWER,
    "reopened_reasoning": REOPENED_REASONING,
    "negated": NEGATED,
    "unasserted": UNASSERTED,
    "unevaluated": UNEVALUATED,
}


@pytest.mark.parametrize("name", list(CLASSES))
def test_no_row_of_the_class_earns(name: str) -> None:
    rows = CLASSES[name]
    assert len(rows) >= 16, f"{name}: only {len(rows)} rows"
    earners = _earners(rows)
    assert not earners, f"{name}: {len(earners)} of {len(rows)} earned: {earners[:8]}"


# Right answers as real models write them, which failed.
RIGHT_FORMS = [
    ("1200", r"\boxed{1.2e3}"),
    ("1200", r"\boxed{1.2E3}"),
    ("1200", r"\boxed{1.2e+3}"),
    ("0.0012", r"\boxed{1.2e-3}"),
    ("602000000000000000000000", r"The answer is 6.02e23."),
    ("-5", "\\boxed{\uff0d5}"),
    ("-5", "\\boxed{\u20105}"),
    ("-5", "\\boxed{\u22125}"),
    ("12", "\\boxed{1\u200b2}"),
    ("12", "\\boxed{12\u200d}"),
    ("12", "\ufeffThe answer is \\boxed{12}."),
    (r"(-\infty, \infty)", r"\boxed{\mathbb{R}}"),
    (r"\mathbb{R}", r"\boxed{(-\infty, \infty)}"),
    (r"(-\infty, \infty)", r"\boxed{x \in \mathbb{R}}"),
    ("12", r"\boxed{3 \cdot 4 = 12}"),
]


def test_an_equation_chain_is_read_by_its_last_side() -> None:
    # "x = 5+5+1 = 7 = 11" answers 11 (Math-Verify's own tests expect that): a chain that
    # names a variable is read by its last side. A chain of constants states a fact, and
    # "13 = 12" is false: it answers nothing (test_equivalence_holes.py).
    completion = r"\boxed{x = 5 + 5 + 1 = 7 = 12}"
    assert CHECK(Sample(id="e", completion=completion, reference="12")).score == 1.0
    assert CHECK(Sample(id="e", completion=completion, reference="13")).score == 0.0
    for gold in ("12", "13"):
        assert CHECK(Sample(id="e", completion=r"\boxed{13 = 12}", reference=gold)).score == 0.0


def test_right_answers_in_real_forms_pass() -> None:
    failed = []
    for gold, completion in RIGHT_FORMS:
        verdict = CHECK(Sample(id="f", completion=completion, reference=gold))
        if verdict.status is not Status.PASS:
            failed.append((gold, completion, f"{verdict.status.value} {verdict.failure}"))
    assert not failed, f"{len(failed)} of {len(RIGHT_FORMS)} right answers failed: {failed}"
