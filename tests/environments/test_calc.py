"""The finance environment's `calc` tool: arithmetic only, every hostile expression a clear
ValueError, never a hang, never Python."""

from __future__ import annotations

import pytest

from rewardsmith.environments.calc import evaluate


@pytest.mark.parametrize(
    ("expression", "value"),
    [
        ("1 + 2 * 3", "7"),
        ("(122445 - 150239) / 150239 * 100", "-18.49985689"),
        ("round(2.5) + abs(-3)", "5"),
        ("2 ** 10", "1024"),
        ("7 // 2 + 7 % 2", "4"),
    ],
)
def test_arithmetic_is_evaluated(expression: str, value: str) -> None:
    assert evaluate(expression) == value


@pytest.mark.parametrize(
    "expression",
    [
        "__import__('os').system('id')",
        "open('/etc/passwd').read()",
        "(1).__class__.__mro__",
        "[x for x in range(10)]",
        "lambda: 1",
        "x",
        "'a' * 10",
        "10 ** 10 ** 10",
        "9 ** 9 ** 9",
        "2 ** 1000",
        "1 / 0",
        "(" * 400 + "1" + ")" * 400,
        "1 + " * 300 + "1",
        "round(1, 2, 3)",
        "min(1, 2)",
        "",
    ],
)
def test_anything_else_is_a_clear_error(expression: str) -> None:
    with pytest.raises(ValueError) as error:
        evaluate(expression)
    assert str(error.value)
