"""A final answer is a value, not a computation left to the checker.

The worker evaluates what it parses, so an answer that writes the task's computation
instead of its result would be scored by sympy's arithmetic, not the model's:
``\\sum_{k=1}^{100} k`` for 5050, ``\\int_0^1 x^2\\,dx`` for 1/3, ``\\det`` of the matrix the
question gave, ``\\max(1, 5, 3)``. A policy under pressure learns to copy the question into
the box. `leftover_operation` names the first such operator in an answer whose gold does
not use it (a gold ``\\max(a, b)`` accepts ``\\max(b, a)``); the verifier fails the answer as
a ``format`` failure, problem ``unevaluated``. Closed forms stay answers: powers,
factorials, binomials, roots, logarithms and trigonometric values are how results are
written (``2^{100}``, ``\\binom{10}{3}``, ``\\log_2 3``).

    >>> leftover_operation(r"\\sum_{k=1}^{100} k", "5050")
    '\\\\sum'
    >>> leftover_operation(r"\\binom{10}{3}", "120") is None
    True
"""

from __future__ import annotations

import re

__all__ = ["leftover_operation"]

_OPERATION = re.compile(
    r"\\(?:sum|prod|int|iint|iiint|oint|lim|limsup|liminf|det|max|min|sup|inf|gcd|lcm|"
    r"argmax|argmin|bmod|mod)(?![A-Za-z])"
    r"|\\operatorname\s*\{\s*(?:lcm|gcd|max|min|det|tr|rank|rem)\s*\}"
    r"|\\[dt]?frac\s*\{\s*(?:d|\\partial)\b[^{}]*\}\s*\{\s*(?:d|\\partial)"  # d/dx, ∂/∂x
    r"|[∑∏∫]"
)


def _operations(text: str) -> set[str]:
    return {" ".join(m.group().split()) for m in _OPERATION.finditer(text)}


def leftover_operation(answer: str, gold: str) -> str | None:
    """The operator `answer` leaves unevaluated and `gold` does not use, if any."""
    allowed = _operations(gold)
    for match in _OPERATION.finditer(answer):
        name = " ".join(match.group().split())
        if name not in allowed:
            return name
    return None
