"""The in-process fast path, and that it decides exactly as the worker path would."""

from __future__ import annotations

from fractions import Fraction

import pytest

from rewardsmith.verifiers.math.fast import as_number, choice_letter, numbers_equal
from rewardsmith.verifiers.math.forms import judge

NUMBERS = [
    ("42", Fraction(42), None),
    ("-3", Fraction(-3), None),
    ("3.50", Fraction(7, 2), 2),
    (".125", Fraction(1, 8), 3),
    ("1,234,567", Fraction(1234567), None),
    ("1/3", Fraction(1, 3), None),
    (r"\frac{3}{4}", Fraction(3, 4), None),
    (r"-\dfrac{3}{4}", Fraction(-3, 4), None),
    ("$7$", Fraction(7), None),
    ("7.", Fraction(7), None),
]


@pytest.mark.parametrize(("text", "value", "decimals"), NUMBERS)
def test_as_number(text: str, value: Fraction, decimals: int | None) -> None:
    number = as_number(text)
    assert number is not None and (number.value, number.decimals) == (value, decimals)


@pytest.mark.parametrize(
    "text", ["x", "2x", r"\sqrt{2}", "1/0", "1" * 41, "1,23", "(1, 2)", r"\frac{1}{x}", "1e5"]
)
def test_not_a_simple_number(text: str) -> None:
    assert as_number(text) is None


PAIRS = [
    ("1/2", "0.5"), ("0.5", "0.50"), ("1/3", "0.333"), ("1/3", "0.33"), ("2/3", "0.667"),
    ("2/3", "0.666"), ("1.5", "1.5000004"), ("5", "500"), ("1000", "1,000"), ("7", "7.0"),
    ("-3", "3"), ("1/7", "0.1429"), ("1/7", "0.143"), ("0.1", "1/10"), ("12", "12.01"),
]  # fmt: skip


@pytest.mark.parametrize(("gold", "pred"), PAIRS)
@pytest.mark.parametrize("rel_tol", [0.0, 1e-3])
def test_fast_path_agrees_with_worker_path(gold: str, pred: str, rel_tol: float) -> None:
    g, p = as_number(gold), as_number(pred)
    assert g is not None and p is not None
    fast, _ = numbers_equal(g, p, rel_tol, 3)
    slow = judge(gold, pred, rel_tol, 3)["outcome"] == "equal"  # our own inputs: in process
    assert fast == slow


@pytest.mark.parametrize(
    ("text", "letter"),
    [("B", "B"), ("(B)", "B"), ("B.", "B"), ("(D) 24", "D"), (r"\text{(C)}", "C"),
     (r"\textbf{(E)}", "E"), ("$A$", "A"), ("b", None), ("12", None), ("AB", None)],
)  # fmt: skip
def test_choice_letter(text: str, letter: str | None) -> None:
    assert choice_letter(text) == letter
