"""What checking an answer would cost, estimated from its tokens before any parse.

A policy that cannot find the answer may still find one that the checker cannot finish:
``10^{10^{10^{10}}}``, ``100000000!``, 2,000 nested parentheses. Such an answer is the
model's fault and must cost the scorer microseconds, not a worker held until its time
limit. `estimate` reads the answer's tokens (the parser's own, see
`rewardsmith.verifiers.math.tokens`) once, in the scoring process, with the parser's
precedence but none of its sympy work, and bounds two things:

* **depth**: nesting of brackets, arguments and exponents; deeper than
  `~rewardsmith.verifiers.math.tokens.MAX_DEPTH` (60) is refused;
* **digits**: an upper bound on log10 of the largest number that evaluating the answer at
  the comparison's sample points involves (symbols stand for values up to 5, the largest
  of ``|x|`` and ``1/|x|`` there). Per node, with ``A``, ``B`` the bounds of its parts:
  a literal its own log10; a sum ``max(A, B) + log10 2``; a product or quotient ``A + B``;
  a power ``A * 10^B``; ``n!`` ``10^A * A``; ``\\binom{n}{k}`` ``0.31 * 10^A``; ``e^x``
  ``0.43 * 10^A``; a root ``A / 2``; a trigonometric function 1 (its argument's bound
  still counts: reducing ``\\sin(10^{5000})`` needs 5,000 digits).

`over_budget` compares the answer's bound with the gold's: an answer may need as many
digits as the gold, twice over, and at least `FLOOR_DIGITS` (10,000; exact integers and
60-digit floats of that size cost milliseconds). Past that it is `Failure.CHECK_LIMIT`,
decided here, before any worker is asked.

    >>> estimate(r"10^{10^{10}}").digits
    10000000000.0
    >>> over_budget(estimate("5"), estimate(r"9^{9^{9^{9}}}"))
    'its numbers would have about 10^inf digits (the limit is 10^4)'
    >>> over_budget(estimate(r"2^{100}"), estimate(r"\\frac{2^{101}}{2}")) is None
    True
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from rewardsmith.verifiers.math.tokens import (
    CONSTANTS,
    FUNCTIONS,
    GREEK,
    MAX_DEPTH,
    is_number,
    tokenize,
)

__all__ = ["FLOOR_DIGITS", "Cost", "estimate", "over_budget"]

FLOOR_DIGITS = 10_000
_LOG2 = math.log10(2)
_SYMBOL = math.log10(5)  # sample points lie in [0.2, 2.9]: |x| and 1/|x| stay below 5
_CLOSERS = {")", "}", "]", r"\}"}
_OPENERS = {"(", "{", "[", r"\{"}
_PRODUCTS = {"*", "/", r"\cdot", r"\times", r"\div", r"\ast"}
_GROWING = {"exp", "sinh", "cosh"}
_TRIG = {"sin", "cos", "tan", "cot", "sec", "csc", "tanh", "arcsin", "arccos", "arctan",
         "asin", "acos", "atan"}  # fmt: skip


@dataclass(frozen=True, slots=True)
class Cost:
    """The estimate for one answer."""

    digits: float
    """Upper bound on log10 of the largest number involved (inf when it overflows)."""
    depth: int
    """Deepest nesting reached (stops counting past the limit)."""
    too_deep: bool = False


class _TooDeep(Exception):
    pass


def _power(base: float, exponent: float) -> float:
    if base == 0.0:  # 0 or 1 to any power
        return 0.0
    return base * 10**exponent if exponent < 300 else math.inf


def _grow(bound: float, scale: float) -> float:
    """``scale * 10^bound``: the digits of something exponential in a number of `bound`."""
    return scale * 10**bound if bound < 300 else math.inf


def _literal(token: str) -> float:
    digits = token.replace(".", "").lstrip("0")
    if len(digits) > 15:
        return float(len(token))
    value = float(token)
    return abs(math.log10(value)) if value > 0 else 0.0


class _Estimator:
    def __init__(self, text: str) -> None:
        self.tokens = tokenize(text, strict=False)
        self.pos = 0
        self.depth = 0
        self.deepest = 0
        self.worst = 0.0
        self.bars = 0

    def peek(self) -> str | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self) -> str | None:
        token = self.peek()
        self.pos += token is not None
        return token

    def seen(self, digits: float) -> float:
        self.worst = max(self.worst, digits)
        return digits

    def nested(self, rule: Callable[[], float]) -> float:
        self.depth += 1
        self.deepest = max(self.deepest, self.depth)
        if self.depth > MAX_DEPTH:
            raise _TooDeep
        try:
            return rule()
        finally:
            self.depth -= 1

    # ------------------------------------------------------------------ grammar

    def expression(self) -> float:
        value = self.term()
        while (token := self.peek()) is not None and token not in _CLOSERS:
            if token == "|" and self.bars:
                break
            self.take()  # + and -, or a separator (",", "=", "\le", ...): the larger side
            value = self.seen(max(value, self.term()) + (_LOG2 if token in "+-" else 0.0))
        return value

    def term(self) -> float:
        value = self.signed()
        while (token := self.peek()) is not None:
            if token in _PRODUCTS:
                self.take()
                value = self.seen(value + self.signed())
            elif self.starts_atom(token):
                value = self.seen(value + self.power())
            else:
                break
        return value

    def signed(self) -> float:
        if self.peek() in ("-", "+"):
            self.take()
            return self.nested(self.signed)
        return self.power()

    def power(self) -> float:
        base = self.postfix()
        if self.peek() in ("^", "**"):
            self.take()
            return self.seen(_power(base, self.nested(self.exponent)))
        return base

    def exponent(self) -> float:
        if self.peek() in ("-", "+"):
            self.take()
            return self.exponent()
        return self.power()

    def postfix(self) -> float:
        value = self.nested(self.atom)
        while (token := self.peek()) in ("!", "'", "_"):
            self.take()
            if token == "_":  # a subscript is a label: its depth counts, its size does not
                self.nested(self.argument)
            elif token == "!":
                value = self.seen(_grow(value, max(value, 1.0)))
        return value

    def starts_atom(self, token: str) -> bool:
        if token == "|":
            return self.bars == 0
        if token[0].isalnum() or token[0] == "." or token in _OPENERS:
            return True
        return token.startswith("\\") and token not in _PRODUCTS and token not in _CLOSERS

    def atom(self) -> float:
        token = self.take()
        if token is None or token in _CLOSERS:
            return 0.0
        if is_number(token):
            return self.seen(_literal(token))
        if token in _OPENERS:
            value = self.expression()
            if self.peek() in _CLOSERS:
                self.take()
            return value
        if token == "|":
            self.bars += 1
            value = self.expression()
            self.bars -= 1
            self.take()
            return value
        name = token[1:] if token.startswith("\\") else token
        if name in FUNCTIONS:
            return self.function(name)
        return self.command(name) if token.startswith("\\") else self.letter(name)

    def letter(self, name: str) -> float:
        if name in CONSTANTS:
            return 0.5
        return {"e": math.log10(math.e), "i": 0.0}.get(name, _SYMBOL)

    def command(self, name: str) -> float:
        if name == "frac":
            top = self.nested(self.argument)
            return self.seen(top + self.nested(self.argument))
        if name == "binom":
            top = self.nested(self.argument)
            self.nested(self.argument)
            return self.seen(_grow(top, _LOG2))
        if name == "sqrt":
            if self.peek() == "[":
                self.take()
                self.expression()
                self.take()
            return self.nested(self.argument) / 2
        if name in CONSTANTS:
            return 0.5
        return _SYMBOL if name in GREEK else self.opaque()

    def opaque(self) -> float:
        """An unknown command (``\\text``, ``\\begin``): its braced arguments still nest."""
        while self.peek() == "{":
            self.nested(self.argument)
        return _SYMBOL

    def argument(self) -> float:
        token = self.peek()
        if token == "{":
            self.take()
            value = self.expression()
            if self.peek() == "}":
                self.take()
            return value
        if token is not None and token.isdigit() and len(token) > 1:  # \frac12
            self.tokens[self.pos] = token[1:]
            return _literal(token[0])
        return self.nested(self.atom)

    def function(self, name: str) -> float:
        if name == "log" and self.peek() == "_":
            self.take()
            self.nested(self.argument)
        power = None
        if self.peek() in ("^", "**"):  # \sin^2 x
            self.take()
            power = self.nested(self.argument)
        argument = self.nested(self.power if self.peek() not in ("(", "{") else self.atom)
        if name in _GROWING:
            value = _grow(argument, math.log10(math.e))
        elif name in ("ln", "log"):
            value = math.log10(max(argument * 2.31, 1.0)) + 0.5
        elif name == "sqrt":
            value = argument / 2
        else:
            value = 1.0 if name in _TRIG else argument
        value = self.seen(value)
        return self.seen(_power(value, power)) if power is not None else value


def estimate(text: str) -> Cost:
    """The cost bound of one normalised answer; linear in its length, no sympy."""
    estimator = _Estimator(text)
    try:
        while estimator.peek() is not None:  # stray closers end an expression: go on
            estimator.expression()
            estimator.take()
    except _TooDeep:
        return Cost(estimator.worst, estimator.deepest, too_deep=True)
    return Cost(estimator.worst, estimator.deepest)


def _magnitude(digits: float) -> str:
    return "inf" if digits == math.inf else f"{math.log10(max(digits, 1.0)):.3g}"


def over_budget(gold: Cost, answer: Cost) -> str | None:
    """Why checking `answer` against `gold` is refused, or None when it is within budget."""
    if answer.too_deep:
        return f"it is nested deeper than {MAX_DEPTH} levels"
    limit = max(FLOOR_DIGITS, 2 * gold.digits + 10)
    if answer.digits > limit:
        return (
            f"its numbers would have about 10^{_magnitude(answer.digits)} digits "
            f"(the limit is 10^{_magnitude(limit)})"
        )
    return None
