"""Red team 2026-12-04, class 1 and the box spellings: an answer that is not delimited
(the content of ``<answer>`` tags, a GSM8K ``#### X`` line, a final bare line that is an
expression) is read whole, never by its last number; a redundant brace group, ``\\mathbf``,
an "Answer:" label, ``\\over`` and ``\\lbrace`` inside a box keep a right answer right.

Generated over (gold, wrong) pairs of many kinds, in both directions."""

from __future__ import annotations

import pytest

from rewardsmith.verifiers import Sample, Status
from rewardsmith.verifiers.math import MathAnswer
from rewardsmith.verifiers.math.relations import relations

CHECK = MathAnswer()

# (gold, a wrong answer of the same kind)
PAIRS = [
    ("5", "6"), ("-3", "3"), ("12", "13"), ("0", "1"), ("100", "101"), ("42", "24"),
    (r"\frac{3}{4}", r"\frac{4}{3}"), (r"-\frac{1}{2}", r"\frac{1}{2}"), ("2.5", "2.6"),
    ("0.125", "0.12"), (r"2\sqrt{3}", r"3\sqrt{2}"), (r"\sqrt{2}", r"\sqrt{3}"),
    (r"\pi", r"2\pi"), (r"\frac{\pi}{2}", r"\frac{\pi}{3}"), ("[1, 3)", "(1, 3]"),
    (r"(-\infty, 2]", r"(-\infty, 2)"), ("(1, 2)", "(2, 1)"), (r"\{1, 2\}", r"\{1, 3\}"),
    ("x^2+2x+1", "x^2+1"), ("2x+3", "3x+2"), ("2+3i", "2-3i"), ("B", "C"),
    ("1024", "1023"), (r"e^2", r"e^3"), (r"\frac{7}{2}", r"\frac{2}{7}"), ("-7", "7"),
    ("17", "71"), ("3.14159", "3.14"), (r"\ln 2", r"\ln 3"), ("64", "46"),
]  # fmt: skip
NUMBERS = ["5", "12", "7", "100", "3", "42", "9", "2", "1", "64", "17", "1024"]

# Where an undelimited answer stands.
WRAPPERS = {
    "answer_tag": "<answer>{a}</answer>",
    "think_then_tag": "<think>I work it out.</think>\n<answer>{a}</answer>",
    "gsm8k": "Adding them up.\n#### {a}",
    "bare_last_line": "So the result is\n\n{a}",
}
# Expressions whose last number is the gold but whose value is not.
ENDING_IN_GOLD = ["({o}, {g})", "x^2 + {g}", "{o}x + {g}", "{o} - {g}", "[{o}, {g}]",
                  "{o}^{g}", "{o} \\cdot {g}", "10^{g}"]  # fmt: skip
# Right answers in a box, spelled with something that carries no meaning.
BOX_SPELLINGS = {
    "double_brace": r"The answer is $\boxed{{{{{g}}}}}$.",
    "mathbf": r"The answer is $\boxed{{\mathbf{{{g}}}}}$.",
    "answer_label": r"$\boxed{{\text{{Answer: }} {g}}}$",
    "final_answer_label": r"$\boxed{{\text{{Final answer: }} {g}}}$",
}


def _verdict(completion: str, gold: str) -> tuple[Status, float | None, str]:
    verdict = CHECK(Sample(id="case", completion=completion, reference=gold))
    detail = f"{verdict.status} {verdict.failure} {dict(verdict.evidence)}"
    return verdict.status, verdict.score, detail


def _wrong(completion: str, gold: str) -> None:
    status, score, detail = _verdict(completion, gold)
    assert status is Status.FAIL and score == 0.0, detail


def _right(completion: str, gold: str) -> None:
    status, _, detail = _verdict(completion, gold)
    assert status is Status.PASS, detail


@pytest.mark.parametrize("wrapper", WRAPPERS)
def test_an_expression_ending_in_the_gold_is_not_the_gold(wrapper: str) -> None:
    for gold in NUMBERS:
        other = str(2 * int(gold) + 13)  # neither o - g nor o^g is g
        for form in ENDING_IN_GOLD:
            answer = form.format(o=other, g=gold)
            _wrong(WRAPPERS[wrapper].format(a=answer), gold)


@pytest.mark.parametrize("wrapper", WRAPPERS)
def test_a_wrong_undelimited_answer_is_wrong(wrapper: str) -> None:
    for gold, wrong in PAIRS:
        _wrong(WRAPPERS[wrapper].format(a=wrong), gold)


@pytest.mark.parametrize("wrapper", WRAPPERS)
def test_a_right_undelimited_answer_is_read_whole(wrapper: str) -> None:
    for gold, _ in PAIRS:
        _right(WRAPPERS[wrapper].format(a=gold), gold)


def test_prose_whose_last_number_sits_in_an_expression_is_not_read_by_it() -> None:
    for gold in NUMBERS:
        other = str(2 * int(gold) + 13)  # neither o - g nor o^g is g
        _wrong(f"So the total is {other} - {gold}.", gold)
        _wrong(f"Hence the value is {other}^{gold}.", gold)
        _wrong(f"So the area is {other}ab + {gold}.", gold)  # the run stops at a word
        _wrong(f"So the total is abc + {gold}.", gold)
        _right(f"So the total is {gold}.", gold)  # the last number of prose still concludes


@pytest.mark.parametrize("spelling", BOX_SPELLINGS)
def test_a_box_spelling_keeps_a_right_answer_right(spelling: str) -> None:
    for gold, wrong in PAIRS:
        _right(BOX_SPELLINGS[spelling].format(g=gold), gold)
        _wrong(BOX_SPELLINGS[spelling].format(g=wrong), gold)


@pytest.mark.parametrize(
    ("gold", "right", "wrong"),
    [
        (r"\frac{3}{4}", r"\boxed{{3 \over 4}}", r"\boxed{{4 \over 3}}"),
        ("0.75", r"\boxed{3 \over 4}", r"\boxed{3 \over 5}"),
        (r"\frac{1}{2}", r"$\boxed{1\over 2}$", r"$\boxed{2\over 1}$"),
        (r"\{1, 2\}", r"\boxed{\lbrace 1, 2 \rbrace}", r"\boxed{\lbrace 1, 3 \rbrace}"),
        (r"\{1, 2, 3\}", r"\boxed{\lbrace 3,2,1 \rbrace}", r"\boxed{\lbrace 1,2 \rbrace}"),
    ],
)
def test_over_and_lbrace_spellings(gold: str, right: str, wrong: str) -> None:
    _right(right, gold)
    _wrong(wrong, gold)


@pytest.mark.parametrize(
    ("gold", "completion"),
    [
        ("42", "So we count them.\n\n**42**"),
        ("42", "So we count them.\n\n= 42"),
        ("C", "So we compare the options.\n\n**C**"),
        (r"\begin{pmatrix}1&2\\3&4\end{pmatrix}", r"#### \begin{pmatrix}1&2\\3&4\end{pmatrix}"),
        (
            r"\begin{pmatrix}1&2\\3&4\end{pmatrix}",
            r"<answer>\begin{pmatrix}1&2\\3&4\end{pmatrix}</answer>",
        ),
        ("5", "<answer>5</answer>"),
        ("B", "<answer>(B)</answer>"),
        ("B", "#### B"),
    ],
)
def test_markup_around_a_bare_answer_is_not_an_operator(gold: str, completion: str) -> None:
    _right(completion, gold)


RELATIONS = {r.name: r for r in relations(None)}


@pytest.mark.parametrize("seed", range(3))
def test_relation_undelimited_keeps_a_right_boxed_answer_right(seed: int) -> None:
    for gold, wrong in PAIRS:
        for answer, right in ((gold, True), (wrong, False)):
            sample = Sample(id="q", completion=f"So we get $\\boxed{{{answer}}}$.", reference=gold)
            moved = RELATIONS["math/undelimited"](sample, seed)
            assert moved is not None and "boxed" not in str(moved.completion)
            (_right if right else _wrong)(str(moved.completion), gold)


@pytest.mark.parametrize("seed", range(6))
def test_relation_gold_as_last_number_makes_a_right_answer_wrong(seed: int) -> None:
    for gold in [*NUMBERS, "-3", "0"]:
        sample = Sample(id="q", completion=f"\\boxed{{{gold}}}", reference=gold)
        changed = RELATIONS["math/gold_as_last_number"](sample, seed)
        assert changed is not None
        _wrong(str(changed.completion), gold)
