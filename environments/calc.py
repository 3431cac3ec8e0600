"""A safe arithmetic evaluator: an AST walk over numbers and operators, never `eval`.

>>> evaluate("(122445 - 150239) / 150239 * 100")
'-18.49985689'
>>> evaluate("__import__('os')")
Traceback (most recent call last):
...
ValueError: only numbers, + - * / // % **, parentheses, round() and abs() are allowed
"""

from __future__ import annotations

import ast
import math
from collections.abc import Callable
from typing import Any

from rewardsmith.verifiers.operators import BINARY, UNARY

__all__ = ["evaluate"]

MAX_CHARS = 500
MAX_MAGNITUDE = 1e30
_CALLS: dict[str, Callable[..., Any]] = {"round": round, "abs": abs}
_ALLOWED = "only numbers, + - * / // % **, parentheses, round() and abs() are allowed"


def evaluate(expression: str) -> str:
    """The value of `expression`, to 10 significant digits; ValueError says what is wrong."""
    if len(expression) > MAX_CHARS:
        raise ValueError(f"the expression has {len(expression)} characters; at most {MAX_CHARS}")
    try:
        tree = ast.parse(expression.replace(",", ""), mode="eval")
    except (SyntaxError, ValueError, RecursionError) as exc:
        raise ValueError(f"not an arithmetic expression ({type(exc).__name__})") from None
    try:
        value = _value(tree.body)
    except ZeroDivisionError:
        raise ValueError("division by zero") from None
    except RecursionError:
        raise ValueError("the expression is nested too deeply") from None
    return f"{value:.10g}"


def _value(node: ast.AST) -> float:
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        if isinstance(node.value, bool):
            raise ValueError(_ALLOWED)
        return _bounded(float(node.value))
    if isinstance(node, ast.BinOp) and type(node.op) in BINARY:
        left, right = _value(node.left), _value(node.right)
        if isinstance(node.op, ast.Pow) and abs(right) > 100:
            raise ValueError("exponents above 100 are not computed")
        return _bounded(BINARY[type(node.op)](left, right))
    if isinstance(node, ast.UnaryOp) and type(node.op) in UNARY:
        return UNARY[type(node.op)](_value(node.operand))
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in _CALLS
        and not node.keywords
        and 1 <= len(node.args) <= 2
    ):
        args = [_value(a) for a in node.args]
        if node.func.id == "round" and len(args) == 2:
            args[1] = int(args[1])
        return _bounded(float(_CALLS[node.func.id](*args)))
    raise ValueError(_ALLOWED)


def _bounded(value: Any) -> float:
    if isinstance(value, complex) or not math.isfinite(value) or abs(value) > MAX_MAGNITUDE:
        raise ValueError(f"the value is not a finite number below {MAX_MAGNITUDE:g}")
    return float(value)
