"""Parse one normalised expression (LaTeX or plain text) into a sympy object.

A small recursive-descent parser builds sympy objects directly from tokens: nothing of the
model's text is ever passed to ``eval`` (sympy's own ``parse_expr`` evaluates generated
code). It reads the forms answers use: ``\\frac``, ``\\sqrt[n]{}``, powers, ``\\cdot``,
``\\times``, implicit products (``2\\pi r``), ``\\pi``, ``e``, ``i``, ``\\infty``, trig and log
functions, Greek letters (``\\theta``), ``|x|``, ``n!`` and ``\\binom``. What it does not
know, it rejects (`ParseError`), and the caller may fall back to
``sympy.parsing.latex.parse_latex``, and last to ``parse(text, opaque=True)``, which reads
an unknown command without arguments (``\\ell``, ``\\zzz``) as a symbol of that name.

Guards against hostile input: nesting deeper than `MAX_DEPTH` is an error, not a
RecursionError, and a power or factorial whose exact value would have thousands of digits
(``10^{10^{10}}``, ``9^{9^9}``, ``100000!``) is kept unevaluated, so later numeric
comparison works on floats instead of computing the integer.

    >>> parse(r"\\frac{1}{2} + \\sqrt{4}")
    5/2
    >>> parse("2x^2 - 3x")
    2*x**2 - 3*x
"""

from __future__ import annotations

import math
from collections.abc import Callable

import sympy

from rewardsmith.verifiers.math.tokens import (
    CONSTANTS,
    FUNCTIONS,
    GREEK,
    MAX_DEPTH,
    TokenError,
    is_number,
    tokenize,
)

__all__ = ["MAX_DEPTH", "ParseError", "TooDeep", "parse"]

_MAX_DIGITS = 2_000
_MAX_ROOT_DIGITS = 200
_FUNCTIONS: dict[str, Callable[..., sympy.Expr]] = {
    "sin": sympy.sin, "cos": sympy.cos, "tan": sympy.tan, "cot": sympy.cot,
    "sec": sympy.sec, "csc": sympy.csc, "arcsin": sympy.asin, "arccos": sympy.acos,
    "arctan": sympy.atan, "asin": sympy.asin, "acos": sympy.acos, "atan": sympy.atan,
    "sinh": sympy.sinh, "cosh": sympy.cosh, "tanh": sympy.tanh, "exp": sympy.exp,
    "ln": sympy.log, "log": sympy.log, "sqrt": sympy.sqrt, "abs": sympy.Abs,
}  # fmt: skip
_CONSTANTS = {"pi": sympy.pi, "infty": sympy.oo, "infinity": sympy.oo, "inf": sympy.oo}
assert set(_FUNCTIONS) == FUNCTIONS and set(_CONSTANTS) == CONSTANTS
_PRODUCT_COMMANDS = {"cdot", "times", "ast"}
_OPENERS = {"(": ")", "{": "}", "[": "]"}


class ParseError(ValueError):
    """The text is not an expression this parser reads."""


class TooDeep(ParseError):
    """Nesting beyond `MAX_DEPTH`: no parser should try harder (lark's takes seconds)."""


def _digits(value: sympy.Expr) -> float:
    """log10 of the size of a rational, for the huge-number guard."""
    if isinstance(value, sympy.Rational) and value != 0:
        return math.log10(max(abs(int(value.p)), abs(int(value.q)), 2))
    return 1.0


def _power(base: sympy.Expr, exponent: sympy.Expr) -> sympy.Expr:
    # Evaluate exactly only when the result stays small; else keep the tree (floats later).
    # A root of a big integer is kept too: sympy looks for its square factors, which costs
    # about a second at 2,000 digits and grows with the cube of the length.
    if base.is_number and exponent.is_number:
        if isinstance(exponent, sympy.Rational) and not exponent.is_Integer:
            huge = _digits(base) > _MAX_ROOT_DIGITS
        elif isinstance(exponent, sympy.Rational):
            huge = abs(float(exponent)) * _digits(base) > _MAX_DIGITS
        else:
            size = abs(complex(exponent.evalf(15)))
            huge = not math.isfinite(size) or size > 10_000
        if huge:
            return sympy.Pow(base, exponent, evaluate=False)
    return sympy.Pow(base, exponent)


def _factorial(value: sympy.Expr) -> sympy.Expr:
    if value.is_Integer and int(value) > 500:
        return sympy.factorial(value, evaluate=False)
    return sympy.factorial(value)


class _Parser:
    def __init__(self, text: str, opaque: bool = False) -> None:
        try:
            self.tokens = tokenize(text)
        except TokenError as exc:
            raise ParseError(str(exc)) from exc
        self.opaque = opaque
        self.pos = 0
        self.depth = 0
        self.bars = 0  # open |...| pairs: inside one, a bar closes rather than opens

    # ------------------------------------------------------------------ helpers

    def peek(self) -> str | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self, expected: str | None = None) -> str:
        token = self.peek()
        if token is None or (expected is not None and token != expected):
            raise ParseError(f"expected {expected or 'more input'}, found {token!r}")
        self.pos += 1
        return token

    def nested(self, rule: Callable[[], sympy.Expr]) -> sympy.Expr:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise TooDeep(f"nested deeper than {MAX_DEPTH} levels")
        try:
            return rule()
        finally:
            self.depth -= 1

    # ------------------------------------------------------------------ grammar

    def parse(self) -> sympy.Expr:
        if not self.tokens:
            raise ParseError("empty expression")
        value = self.expression()
        if self.peek() is not None:
            raise ParseError(f"unexpected {self.peek()!r}")
        return value

    def expression(self) -> sympy.Expr:
        value = self.term()
        while self.peek() in ("+", "-"):
            sign = self.take()
            right = self.term()
            value = value + right if sign == "+" else value - right
        return value

    def term(self) -> sympy.Expr:
        value = self.signed()
        while True:
            token = self.peek()
            if token in ("*", "/", r"\div") or token in {f"\\{c}" for c in _PRODUCT_COMMANDS}:
                self.take()
                right = self.signed()
                value = value / right if token in ("/", r"\div") else value * right
            elif self.starts_atom(token):
                if is_number(token) and is_number(self.tokens[self.pos - 1]):
                    raise ParseError("two numbers side by side (is '1 000' a thousand?)")
                value = value * self.power()
            else:
                return value

    def signed(self) -> sympy.Expr:
        if self.peek() in ("-", "+"):
            sign = self.take()
            operand = self.nested(self.signed)
            return -operand if sign == "-" else operand
        return self.power()

    def power(self) -> sympy.Expr:
        base = self.postfix()
        if self.peek() in ("^", "**"):
            self.take()
            exponent = self.nested(self.exponent)
            return _power(base, exponent)
        return base

    def exponent(self) -> sympy.Expr:
        if self.peek() in ("-", "+"):
            sign = self.take()
            value = self.exponent()
            return -value if sign == "-" else value
        return self.power()

    def postfix(self) -> sympy.Expr:
        value = self.nested(self.atom)
        while self.peek() == "!":
            self.take()
            value = _factorial(value)
        return value

    def starts_atom(self, token: str | None) -> bool:
        if token is None:
            return False
        if token == "|":
            return self.bars == 0
        if token[0].isalnum() or token[0] == "." or token in ("(", "{"):
            return True
        name = token[1:]
        return token.startswith("\\") and (
            name in _FUNCTIONS or name in _CONSTANTS or name in GREEK
            or name in {"frac", "sqrt", "binom"}
        )  # fmt: skip

    def atom(self) -> sympy.Expr:
        token = self.take()
        if token[0].isdigit() or token[0] == ".":
            return sympy.Rational(token) if "." in token else sympy.Integer(token)
        if token in _OPENERS:
            value = self.expression()
            self.take(_OPENERS[token])
            return value
        if token == "|":
            self.bars += 1
            value = self.expression()
            self.bars -= 1
            self.take("|")
            return sympy.Abs(value)
        if token.startswith("\\"):
            return self.command(token[1:])
        if token in _FUNCTIONS:
            return self.function(token)
        if token in _CONSTANTS:
            return _CONSTANTS[token]
        if token.isalpha():
            return self.symbol(token)
        raise ParseError(f"unexpected {token!r}")

    def symbol(self, letter: str) -> sympy.Expr:
        if self.peek() == "_":
            self.take()
            return sympy.Symbol(f"{letter}_{self.subscript()}")
        if letter == "e":
            return sympy.E
        if letter == "i":
            return sympy.I
        return sympy.Symbol(letter)

    def subscript(self) -> str:
        token = self.take()
        if token != "{":
            return token
        parts: list[str] = []
        while self.peek() != "}":
            parts.append(self.take())
        self.take("}")
        return "".join(parts)

    def argument(self) -> sympy.Expr:
        """A LaTeX argument: ``{...}`` or one token (``\\frac12`` reads 1 then 2)."""
        token = self.peek()
        if token == "{":
            self.take()
            value = self.expression()
            self.take("}")
            return value
        if token is not None and token.isdigit() and len(token) > 1:
            self.tokens[self.pos] = token[1:]
            return sympy.Integer(token[0])
        return self.nested(self.atom)

    def command(self, name: str) -> sympy.Expr:
        if name == "frac":
            numerator = self.nested(self.argument)
            return numerator / self.nested(self.argument)
        if name == "binom":
            top = self.nested(self.argument)
            return sympy.binomial(top, self.nested(self.argument))
        if name == "sqrt":
            return self.root()
        if name in _CONSTANTS:
            return _CONSTANTS[name]
        if name in _FUNCTIONS:
            return self.function(name)
        if name in GREEK:
            return sympy.Symbol(GREEK[name])
        if name in ("{", "lvert", "vert", "|"):
            raise ParseError("a set or absolute value inside an expression")
        if self.opaque and name.isalpha() and self.peek() != "{":  # \ell, \hbar; not \foo{x}
            return sympy.Symbol(name)
        raise ParseError(f"unknown command \\{name}")

    def root(self) -> sympy.Expr:
        index: sympy.Expr = sympy.Integer(2)
        if self.peek() == "[":
            self.take()
            index = self.expression()
            self.take("]")
        radicand = self.nested(self.argument)
        return _power(radicand, sympy.Rational(1, 2) if index == 2 else 1 / index)

    def function(self, name: str) -> sympy.Expr:
        base: sympy.Expr | None = None
        power: sympy.Expr | None = None
        if name == "log" and self.peek() == "_":
            self.take()
            base = self.nested(self.argument)
        if self.peek() in ("^", "**"):  # \sin^2 x
            self.take()
            power = self.nested(self.argument)
        argument = self.nested(self.power if self.peek() not in ("(", "{") else self.atom)
        while (
            self.peek() not in ("(", "{")
            and self.starts_atom(self.peek())
            and ((self.peek() or "")[1:] in GREEK or not (self.peek() or "").startswith("\\"))
        ):  # \sin 2x and \sin 2\theta are sin(2x), sin(2 theta); \sin x \cos x stops at \cos
            argument = argument * self.nested(self.power)
        if name == "sqrt":  # through the big-root guard of `_power`, like \sqrt{}
            value = _power(argument, sympy.Rational(1, 2))
        else:
            value = _FUNCTIONS[name](argument)
        if base is not None:
            value = sympy.log(argument, base)
        return _power(value, power) if power is not None else value


def parse(text: str, *, opaque: bool = False) -> sympy.Expr:
    """Parse one expression; raises `ParseError` on anything it does not read. With
    `opaque`, an unknown command is a symbol of its name (a last resort for golds)."""
    return _Parser(text, opaque).parse()
