"""Python's arithmetic operators by AST node, for the evaluators that compute a literal
expression without running it: the code check plan's constant folding of test arguments
and the environments' `calc` tool. Each caller bounds the values it lets through (a huge
power or repetition); this table only says what each operator means."""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable
from typing import Any

__all__ = ["BINARY", "UNARY"]

BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {
    ast.UAdd: operator.pos,
    ast.USub: operator.neg,
}
