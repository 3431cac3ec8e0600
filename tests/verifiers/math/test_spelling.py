"""Escaped backslashes and decimal commas, rewritten before extraction and comparison."""

from __future__ import annotations

import pytest

from rewardsmith.verifiers.math.spelling import decimal_comma, repair_escapes

ESCAPES = [
    # (text as it arrives, text to read)
    (r"$\\left(\\frac{1}{5},\\frac{1}{6}\\right)$", r"$\left(\frac{1}{5},\frac{1}{6}\right)$"),
    (r"$-2 \\le x \\le 7$", r"$-2 \le x \le 7$"),
    (r"axis.\n\n$\\boxed{3}$", r"axis.\n\n$\boxed{3}$"),  # JSON's \n is not a command
    ("\x0crac{3}{4}", r"\frac{3}{4}"),  # "\frac" read by a JSON parser: form feed + "rac"
    ("\x08oxed{1}", r"\boxed{1}"),
    # Left alone: a single-backslash command shows the text is not escaped twice.
    (r"\begin{pmatrix} 1 \\ 2 \end{pmatrix}", r"\begin{pmatrix} 1 \\ 2 \end{pmatrix}"),
    (r"\frac{1}{2} \\ \\x", r"\frac{1}{2} \\ \\x"),
    (r"1 \\ 2", r"1 \\ 2"),  # a line break between numbers, no command
    ("plain 12", "plain 12"),
]


@pytest.mark.parametrize(("text", "expected"), ESCAPES)
def test_repair_escapes(text: str, expected: str) -> None:
    assert repair_escapes(text) == expected


COMMAS = [
    # (gold, answer, gold and answer as compared)
    ("2.74", "2,74", ("2.74", "2.74")),
    ("1000.99", "$1000,99$", ("1000.99", "1000.99")),
    ("0,111", "0.111", ("0.111", "0.111")),
    ("-1,5", "-1.5", ("-1.5", "-1.5")),
    # Left alone: a thousands separator, a list, or no decimal point on the other side.
    ("1.234", "1,234", ("1.234", "1,234")),
    ("1.5", "1, 5", ("1.5", "1, 5")),
    ("2.74", "2,74,3", ("2.74", "2,74,3")),
    ("274", "2,74", ("274", "2,74")),
    ("1,5", "15", ("1,5", "15")),
]


@pytest.mark.parametrize(("gold", "answer", "expected"), COMMAS)
def test_decimal_comma_only_beside_a_decimal_point(
    gold: str, answer: str, expected: tuple[str, str]
) -> None:
    assert decimal_comma(gold, answer) == expected


@pytest.mark.parametrize(
    "text", ["\\\\" * 500_000, "\\\\a" * 300_000 + "\\b", "\x0c\x08" * 500_000, "1," * 500_000]
)
def test_megabyte_inputs_end(text: str) -> None:
    # Linear scans and replaces: each returns (a hang would stall the test, not fail it).
    assert isinstance(repair_escapes(text), str)
    assert isinstance(decimal_comma("1.5", text), tuple)
