"""Tables for four holes the math red team found (report-redteam-math.md, classes 2, 8, 9
and the degree false negative): a false equation read by its right side, a sign-dependent
expression accepted for its unsigned form, the question's own expression as the answer,
and degrees for a radian gold. Each class is generated over many (gold, wrong) pairs and
checked both ways: the dodge earns 0, the right forms still earn 1.
"""

from __future__ import annotations

import random

import pytest

from rewardsmith.verifiers import Sample, Status
from rewardsmith.verifiers.math import MathAnswer
from rewardsmith.verifiers.math.relations import relations

CHECK = MathAnswer()

# (gold, wrong): numbers of several kinds.
NUMBERS = [
    ("5", "6"), ("-3", "3"), ("12", "13"), ("0", "1"), ("100", "7"), ("391", "390"),
    (r"\frac{3}{4}", r"\frac{4}{3}"), (r"-\frac{1}{2}", r"\frac{1}{2}"), ("2.5", "2.6"),
    ("0.125", "0.12"), (r"2\sqrt{3}", r"3\sqrt{2}"), (r"\sqrt{2}", r"\sqrt{3}"),
    (r"\pi", r"2\pi"), (r"\frac{\pi}{2}", r"\frac{\pi}{3}"), ("1024", "1023"),
    (r"\frac{1}{3}", "0.3"), ("e^2", "e^3"), (r"\ln 2", r"\ln 3"), ("-7", "7"), ("17", "71"),
    (r"\frac{7}{2}", r"\frac{2}{7}"), ("1000000", "100000"), ("2+3i", "2-3i"), ("42", "24"),
]  # fmt: skip


def _score(completion: str, gold: str, prompt: str = "Solve the problem.") -> float | None:
    verdict = CHECK(Sample(id="h", prompt=prompt, completion=completion, reference=gold))
    return verdict.score


def _scores(rows: list[tuple[str, str, str]]) -> list[tuple[str, str, float | None]]:
    return [(gold, text, _score(text, gold, prompt)) for gold, text, prompt in rows]


# ---------------------------------------------------------------- 1. false relations

FALSE_RELATIONS = [
    r"\boxed{{{w} = {g}}}",
    r"\boxed{{{w} \approx {g}}}",
    r"The answer is ${w} = {g}$.",
    r"\boxed{{{w} = {w} = {g}}}",
    r"\boxed{{{g} + 1 = {g}}}",
    r"\boxed{{2 \cdot {w} = {g}}}",
]


def test_a_false_equation_of_constants_earns_nothing() -> None:
    rows = [(g, f.format(g=g, w=w), "Solve.") for g, w in NUMBERS for f in FALSE_RELATIONS]
    paid = [row for row in _scores(rows) if row[2] != 0.0]
    assert paid == []


TRUE_RELATIONS = [r"\boxed{{x = {g}}}", r"\boxed{{{g} = {g}}}", r"$n = {g}$, so \boxed{{{g}}}"]


def test_an_assignment_or_a_true_statement_still_answers() -> None:
    rows = [(g, f.format(g=g), "Solve.") for g, _ in NUMBERS for f in TRUE_RELATIONS]
    failed = [row for row in _scores(rows) if row[2] != 1.0]
    assert failed == []


@pytest.mark.parametrize(
    ("gold", "completion"),
    [("12", r"\boxed{3 \cdot 4 = 12}"), ("0.333", r"\boxed{\frac{1}{3} \approx 0.333}"),
     (r"\frac{1}{3}", r"\boxed{x = \frac13 \approx 0.33}"), ("3.14", r"\boxed{\pi \approx 3.14}")],
)  # fmt: skip
def test_true_computations_and_approximations_pass(gold: str, completion: str) -> None:
    assert _score(completion, gold) == 1.0


def test_the_feedback_says_the_statement_is_false() -> None:
    verdict = CHECK(Sample(id="h", completion=r"\boxed{6 = 5}", reference="5"))
    assert verdict.status is Status.FAIL
    assert "false" in (verdict.feedback or "")


# ---------------------------------------------------------------- 2. sign-dependent forms

UNSIGNED = ["x", "3-x", "2x+3", "x+1", "x^3", "5-x", "x^2+x", "4x", "x+\\frac{1}{2}", "2-x"]
SIGN_FORMS = [
    r"\left|{f}\right|",
    r"\sqrt{{({f})^2}}",
    r"\frac{{({f})^2}}{{\left|{f}\right|}}",
    r"({f}) \cdot \frac{{|x|}}{{x}}",
]


def test_a_sign_dependent_form_is_not_its_unsigned_expression() -> None:
    rows = [(f, rf"\boxed{{{s.format(f=f)}}}", "Simplify.") for f in UNSIGNED for s in SIGN_FORMS]
    paid = [row for row in _scores(rows) if row[2] != 0.0]
    assert paid == []


RESTRICTED_DOMAINS = [
    (r"\sqrt{x}", "x^{1/2}"), (r"\ln x", r"\log(x)"), (r"\frac{1}{x}", "x^{-1}"),
    (r"\sqrt[3]{x}", "x^{1/3}"), (r"2\ln x", r"\ln(x^2)"), (r"\sqrt{x^2}", r"|x|"),
    ("x+1", r"\frac{x^2-1}{x-1}"), (r"\frac{\sqrt{x}}{x}", r"\frac{1}{\sqrt{x}}"),
    (r"\ln(x-1)", r"\ln(x-1)+0"), (r"\sqrt{x-2}", r"(x-2)^{\frac12}"), ("x", r"\sqrt{x}^2"),
    (r"\arcsin x", r"\operatorname{arcsin} x"), (r"\tan x", r"\frac{\sin x}{\cos x}"),
]  # fmt: skip


@pytest.mark.parametrize(("gold", "answer"), RESTRICTED_DOMAINS)
def test_equal_on_the_common_real_domain_passes(gold: str, answer: str) -> None:
    assert _score(rf"\boxed{{{answer}}}", gold) == 1.0


def test_division_by_zero_is_no_value() -> None:
    assert _score(r"\boxed{\frac{2}{0}}", r"\frac{1}{0}") == 0.0


# ---------------------------------------------------------------- 3. the question restated

ECHOES = [
    ("391", "Compute $17 \\cdot 23$.", r"17 \cdot 23"),
    ("391", "What is $17 \\times 23$?", r"17 \times 23"),
    ("5040", "Evaluate $7!$.", "7!"),
    ("0.3", "What is $0.1+0.2$?", "0.1+0.2"),
    ("120", "Compute $\\binom{10}{3}$.", r"\binom{10}{3}"),
    ("1", "Find $\\tan\\frac{\\pi}{4}$.", r"\tan\frac{\pi}{4}"),
    ("1024", "Evaluate $2^{10}$.", "2^{10}"),
    ("x^2+2x+1", "Expand $(x+1)^2$.", "(x+1)^2"),
    ("(x+1)^2", "Factor $x^2+2x+1$.", "x^2+2x+1"),
    (r"\frac{3}{4}", "Simplify $\\frac{6}{8}$.", r"\frac{6}{8}"),
    ("2", "Compute $\\sqrt{4}$.", r"\sqrt{4}"),
    ("13", "What is $\\gcd(26, 39)$? Hint: $26 = 2 \\cdot 13$.", "2 \\cdot 13 - 13"),
    ("30", "What is $5 \\cdot 6$?", "5 \\cdot 6"),
    ("6", "What is 1 + 2 + 3?", "1+2+3"),
    (r"3\sqrt{2}", "Simplify $\\sqrt{18}$.", r"\sqrt{18}"),
    ("8", "Evaluate $2^3$.", "2^3"),
]  # fmt: skip

# The arithmetic left undone, without the prompt: a number gold answered with a sum,
# difference or product of literal numbers.
UNDONE = [
    ("391", "17 \\cdot 23"), ("0.3", "0.1 + 0.2"), ("12", "3 \\times 4"), ("7", "10 - 3"),
    ("18", "2 \\cdot 3^2"), (r"\frac{3}{4}", "\\frac{1}{2}+\\frac{1}{4}"),
    ("100", "99 + 1"), ("1", "0.5 + 0.5"), ("-2", "3 - 5"), ("3", "x = 1 + 2"),
]  # fmt: skip


def test_the_question_restated_earns_nothing() -> None:
    rows = [(g, rf"The answer is $\boxed{{{a}}}$.", p) for g, p, a in ECHOES]
    paid = [row for row in _scores(rows) if row[2] != 0.0]
    assert paid == []


def test_arithmetic_left_undone_earns_nothing() -> None:
    rows = [(g, rf"\boxed{{{a}}}", "Solve.") for g, a in UNDONE]
    paid = [row for row in _scores(rows) if row[2] != 0.0]
    assert paid == []


CANONICAL = [
    (r"2\sqrt{3}", r"2\sqrt{3}"), (r"\sqrt{12}", r"2\sqrt{3}"), ("0.75", r"\frac{3}{4}"),
    ("-0.5", r"-\frac{1}{2}"), (r"3\pi", r"3\pi"), ("1000000", "10^6"), ("1024", "2^{10}"),
    ("3000000", r"3 \times 10^{6}"), ("2+3i", "2+3i"), (r"1+\sqrt{2}", r"\sqrt{2}+1"),
    ("120", r"\binom{10}{3}"), ("0.5", "1/2"), (r"\frac{\pi}{2}", r"\frac{\pi}{2}"),
    ("5040", "7!"), ("0.75", "3 \\div 4"),
    (r"\frac{5}{2}", r"2\frac{1}{2}"), ("6", "6"), ("391", "391"),
]  # fmt: skip


@pytest.mark.parametrize(("gold", "answer"), CANONICAL)
def test_results_in_closed_form_still_pass(gold: str, answer: str) -> None:
    assert _score(rf"\boxed{{{answer}}}", gold, "Compute the value.") == 1.0


def test_the_gold_written_as_in_the_question_passes() -> None:
    prompt = "Write $2^{10} \\cdot 3$ in the simplest form you like."
    assert _score(r"\boxed{2^{10} \cdot 3}", r"2^{10} \cdot 3", prompt) == 1.0


# ---------------------------------------------------------------- 4. degrees and radians

ANGLES = [
    (r"\frac{\pi}{2}", "90^\\circ"), (r"\frac{\pi}{3}", "60°"), (r"\pi", "180^{\\circ}"),
    (r"\frac{\pi}{6}", "30 \\text{ degrees}"), (r"\frac{2\pi}{3}", "120^\\circ"),
]  # fmt: skip


@pytest.mark.parametrize(("gold", "answer"), ANGLES)
def test_degrees_answer_a_radian_gold(gold: str, answer: str) -> None:
    assert _score(rf"\boxed{{{answer}}}", gold, "Find the angle.") == 1.0
    assert _score(rf"\boxed{{{answer}}}", gold, "Find the angle in radians.") == 0.0


@pytest.mark.parametrize(("gold", "answer"), [(r"\frac{\pi}{2}", "91^\\circ"), (r"\pi", "90°")])
def test_wrong_degrees_fail(gold: str, answer: str) -> None:
    assert _score(rf"\boxed{{{answer}}}", gold, "Find the angle.") == 0.0


# ---------------------------------------------------------------- relations

RELATION_CASES = [
    ("math/false_equation", "12+30=", r"So $\boxed{42}$.", "42"),
    ("math/false_equation", "12+30=", "42", "42"),
    ("math/sign_factor", "Simplify.", r"\boxed{3-x}", "3-x"),
    ("math/sign_factor", "Simplify.", r"\boxed{x^2+x}", "x^2+x"),
    ("math/question_echoed", "Compute $17 \\cdot 23$.", r"The answer is \boxed{391}.", "391"),
    ("math/question_echoed", "12+30=", "42", "42"),
]


@pytest.mark.parametrize(("name", "prompt", "completion", "gold"), RELATION_CASES)
def test_the_new_relations_make_answers_that_earn_nothing(
    name: str, prompt: str, completion: str, gold: str
) -> None:
    relation = {r.name: r for r in relations(None)}[name]
    right = Sample(id="r", prompt=prompt, completion=completion, reference=gold)
    assert CHECK(right).score == 1.0
    for seed in range(4):
        changed = relation.rewrite(right, random.Random(seed))
        assert changed is not None and changed.completion != completion
        assert CHECK(changed).score == 0.0, changed.completion


def test_the_new_relations_leave_hidden_boxes_alone() -> None:
    rel = {r.name: r for r in relations(None)}
    hidden = Sample(id="h", prompt="4+5=", completion="% \\boxed{9}\n9", reference="9")
    assert rel["math/false_equation"].rewrite(hidden, random.Random(0)) is None
    assert rel["math/question_echoed"].rewrite(hidden, random.Random(0)) is None


# ---------------------------------------------------------------- 5. named assignments

NAMED = [
    ("(1, 2)", "x = 1, y = 2", "x = 2, y = 1"), ("(1, 2)", "y = 2, x = 1", "y = 1, x = 2"),
    ("(3, 5)", "a = 3, b = 5", "b = 3, a = 5"), ("(7, 2)", "p = 7, q = 2", "q = 7, p = 2"),
    ("(1, 2)", "(x, y) = (1, 2)", "(y, x) = (1, 2)"),
    ("(1, 2)", "(y, x) = (2, 1)", "(x, y) = (2, 1)"),
    ("(1, 2, 3)", "z = 3, x = 1, y = 2", "z = 1, x = 2, y = 3"),
]  # fmt: skip


@pytest.mark.parametrize(("gold", "right", "wrong"), NAMED)
def test_named_assignments_are_read_by_name(gold: str, right: str, wrong: str) -> None:
    assert _score(rf"\boxed{{{right}}}", gold) == 1.0
    assert _score(rf"\boxed{{{wrong}}}", gold) == 0.0
