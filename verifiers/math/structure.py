"""The shape of an answer: a single expression, or a set, tuple, interval, union, matrix,
relation, or ``a \\pm b``; each part parsed by `rewardsmith.verifiers.math.parser`.

Shapes are found by scanning for separators at bracket depth 0 (one linear pass), in this
order: matrices joined by ``+``, ``-`` or products (evaluated), a matrix environment,
solutions as ``;``-separated groups of assignments (``p=5,q=2;p=7,q=2``), top-level commas
(an unordered list of answers, "2, 3"), relation operators (``=``, ``<``, ``\\le``,
``\\in`` ...), ``\\cup`` (a union), ``\\pm``,
``\\{...\\}`` (a set), a bracketed pair or tuple (``(1, 2]``: the bracket kinds are kept, so
an open end never equals a closed one), and finally a plain expression.

    >>> parse_form(r"x = \\pm 3")
    Relation(sides=(Expr(value=x, text='x'), Items(kind='set', items=(...))), ops=('=',))
"""

from __future__ import annotations

import itertools
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Union

import sympy

from rewardsmith.verifiers.math.parser import MAX_DEPTH, ParseError, TooDeep, parse

__all__ = ["Bracketed", "Expr", "Form", "Items", "Matrix", "Relation", "UnionOf", "parse_form"]

_RELATIONS = {
    "=": "=", "<": "<", ">": ">", "<=": "<=", ">=": ">=", "!=": "!=",
    r"\le": "<=", r"\leq": "<=", r"\leqslant": "<=", r"\ge": ">=", r"\geq": ">=",
    r"\geqslant": ">=", r"\lt": "<", r"\gt": ">", r"\ne": "!=", r"\neq": "!=", r"\in": "in",
    r"\approx": "~",
}  # fmt: skip
_SCAN = re.compile(r"\\[{}]|\\[A-Za-z]+|<=|>=|!=|[()\[\]{}=<>,:;]")
_ITEM_SEPARATORS = {",", ";"}
_OPEN = {"(", "[", "{", r"\{"}
_CLOSE = {")", "]", "}", r"\}"}
_MATRIX = re.compile(r"\\begin\{([pbBvV]?matrix|array)\}(?:\{[^{}]*\})?(.*)\\end\{\1\}", re.DOTALL)
# "\\left[\\begin{array}{cc} ... \\end{array}\\right]": an array with its brackets is a matrix,
# and so is "(\\begin{pmatrix} ... \\end{pmatrix})", a matrix in redundant parentheses.
_BRACKETED_ARRAY = re.compile(
    r"\[\s*(\\begin\{array\}.*\\end\{array\})\s*\]|\(\s*(\\begin\{(\w*matrix)\}.*\\end\{\3\})\s*\)",
    re.DOTALL,
)
# Matrices joined by +, - or a product ("A + B", "A \\cdot B", "AB"): evaluated.
_MATRIX_ENV = re.compile(r"\\begin\{([pbBvV]?matrix)\}(.*?)\\end\{\1\}", re.DOTALL)
# A scalar written before a matrix, and the product sign after it ("2 \cdot A").
_SCALAR_PRODUCT = re.compile(r"\\(?:cdot|times)\s*$")
_MATRIX_OPS = {"+": "+", "-": "-", "": "*", r"\cdot": "*", r"\times": "*"}
_EMPTY_SET = {r"\emptyset", r"\varnothing", r"\{\}", "{}"}
_MAX_ITEMS = 64
_MAX_PLUS_MINUS = 3
_MAX_FALLBACK_CHARS = 120


@dataclass(frozen=True)
class Expr:
    value: sympy.Expr
    text: str
    """The normalised source, kept to recognise decimal literals (rounding rule)."""


@dataclass(frozen=True)
class Items:
    kind: str
    """"set" for ``\\{...\\}`` and ``\\pm``; "list" for bare top-level commas. Unordered."""
    items: tuple[Form, ...]


@dataclass(frozen=True)
class Bracketed:
    """``(a, b)``, ``[a, b)``, ``(a, b, c)``: a tuple or an interval; ends are kept."""

    items: tuple[Form, ...]
    left: str
    right: str


@dataclass(frozen=True)
class UnionOf:
    parts: tuple[Form, ...]


@dataclass(frozen=True)
class Matrix:
    rows: tuple[tuple[Form, ...], ...]


@dataclass(frozen=True)
class Relation:
    sides: tuple[Form, ...]
    ops: tuple[str, ...]
    """Normalised operators between consecutive sides: = < > <= >= != in."""


Form = Union[Expr, Items, Bracketed, UnionOf, Matrix, Relation]  # noqa: UP007


def _split(text: str, separators: set[str]) -> tuple[list[str], list[str]]:
    """Split at depth-0 separators; returns the pieces and the separators found."""
    pieces: list[str] = []
    found: list[str] = []
    depth = last = 0
    for match in _SCAN.finditer(text):
        token = match.group()
        if token in _OPEN:
            depth += 1
        elif token in _CLOSE:
            depth -= 1
        elif depth == 0 and token in separators:
            pieces.append(text[last : match.start()])
            found.append(token)
            last = match.end()
    pieces.append(text[last:])
    return [p.strip() for p in pieces], found


def _wrapped(text: str) -> bool:
    """True when the bracket that opens `text` closes at its very end."""
    depth = 0
    for match in _SCAN.finditer(text):
        token = match.group()
        if token in _OPEN:
            depth += 1
        elif token in _CLOSE:
            depth -= 1
            if depth == 0:
                return match.end() == len(text)
    return False


def _many(pieces: list[str], depth: int) -> tuple[Form, ...]:
    if len(pieces) > _MAX_ITEMS:
        raise ParseError(f"more than {_MAX_ITEMS} items")
    return tuple(parse_form(piece, depth + 1) for piece in pieces)


def _matrix(body: str, depth: int) -> Matrix:
    rows = [row for row in re.split(r"\\\\", body) if row.strip()]
    if not rows or len(rows) > _MAX_ITEMS:
        raise ParseError("a matrix needs 1 to 64 rows")
    return Matrix(tuple(_many([c.strip() for c in row.split("&")], depth) for row in rows))


def _matrix_arithmetic(text: str, depth: int) -> Matrix | None:
    """The value of matrices joined by ``+``, ``-`` or products, or None if `text` is not
    that. Products bind first; shapes that do not fit are a `ParseError`."""
    found = list(_MATRIX_ENV.finditer(text))
    prefix = _SCALAR_PRODUCT.sub("", text[: found[0].start()]).strip() if found else ""
    if not found or (len(found) < 2 and not prefix) or text[found[-1].end() :].strip():
        return None
    ops = [text[a.end() : b.start()].strip() for a, b in itertools.pairwise(found)]
    if any(op not in _MATRIX_OPS for op in ops):
        return None
    values = [_sympy_matrix(_matrix(m.group(2), depth)) for m in found]
    if prefix:  # "2 \begin{pmatrix}...": a scalar times the first term
        scalar = sympy.Integer(-1) if prefix == "-" else _expression(prefix).value
        if scalar.free_symbols or isinstance(scalar, sympy.MatrixBase):
            return None
        values[0] = scalar * values[0]
    terms, signs = [values[0]], [1]
    for op, value in zip(ops, values[1:], strict=True):
        if _MATRIX_OPS[op] == "*":
            terms[-1] = _checked(operator.mul, terms[-1], value)
        else:
            terms.append(value)
            signs.append(1 if op == "+" else -1)
    total = terms[0]
    for sign, term in zip(signs[1:], terms[1:], strict=True):
        total = _checked(operator.add, total, sign * term)
    rows = tuple(tuple(Expr(total[i, j], sympy.sstr(total[i, j])) for j in range(total.cols))
                 for i in range(total.rows))  # fmt: skip
    return Matrix(rows)


def _sympy_matrix(matrix: Matrix) -> sympy.Matrix:
    if len({len(row) for row in matrix.rows}) != 1 or not all(
        isinstance(cell, Expr) for row in matrix.rows for cell in row
    ):
        raise ParseError("a matrix in a sum or product needs equal rows of numbers")
    return sympy.Matrix([[cell.value for cell in row] for row in matrix.rows])  # type: ignore[union-attr]


def _checked(
    operation: Callable[[sympy.Matrix, sympy.Matrix], sympy.Matrix],
    left: sympy.Matrix,
    right: sympy.Matrix,
) -> sympy.Matrix:
    try:
        return operation(left, right)
    except sympy.ShapeError as exc:
        raise ParseError(f"matrix shapes do not fit: {exc}") from exc


def _assignment_groups(text: str, depth: int) -> Items | None:
    """``p=5,q=2;p=7,q=2``: solutions as groups of assignments, one group per ``;``."""
    groups, _ = _split(text, {";"})
    if len(groups) < 2 or not all("=" in group for group in groups):
        return None
    return Items("list", _many(groups, depth))


def _plus_minus(text: str, depth: int) -> Items:
    if text.count(r"\pm") + text.count(r"\mp") > _MAX_PLUS_MINUS:
        raise ParseError("too many \\pm signs")
    variants = [text]
    while any(r"\pm" in v or r"\mp" in v for v in variants):
        variants = [choice for v in variants for choice in _expand_first_sign(v)]
    return Items("set", _many(variants, depth))


def _relation(pieces: list[str], ops: list[str], depth: int) -> Form:
    """A chain of relations; ``\\approx`` ends an exact chain (``x = 1/3 \\approx 0.3`` is
    ``x = 1/3``) and otherwise reads as ``=`` (``x \\approx 11``)."""
    if "~" in ops:
        cut = ops.index("~")
        if "=" in ops[:cut]:
            pieces, ops = pieces[: cut + 1], ops[:cut]
        ops = ["=" if op == "~" else op for op in ops]
    if len(pieces) == 1:
        return parse_form(pieces[0], depth + 1)
    return Relation(_many(pieces, depth), tuple(ops))


def _expand_first_sign(text: str) -> tuple[str, str]:
    """``a \\pm b`` -> (``a + b``, ``a - b``); ``\\mp`` gives the other order."""
    at = min(i for i in (text.find(r"\pm"), text.find(r"\mp")) if i >= 0)
    first, second = ("+", "-") if text.startswith(r"\pm", at) else ("-", "+")
    head, tail = text[:at], text[at + 3 :]
    return head + first + tail, head + second + tail


def _expression(text: str) -> Expr:
    try:
        return Expr(parse(text), text)
    except TooDeep:
        raise
    except ParseError:
        # lark's Earley parser is slow on long or nested input: only short LaTeX gets it.
        if "\\" not in text or len(text) > _MAX_FALLBACK_CHARS:
            raise
    from sympy.parsing.latex import parse_latex  # slow (~50 ms): the last resort but one

    try:
        value = parse_latex(text, backend="lark")
    except Exception as exc:  # lark raises many types; all mean "not readable"
        return _opaque(text, exc)
    if not isinstance(value, sympy.Expr):  # a relation or a boolean hidden in the text
        raise ParseError(f"LaTeX read as {type(value).__name__}, not an expression")
    return Expr(value, text)


def _opaque(text: str, lark_error: Exception) -> Expr:
    """Unknown commands as symbols of their names (``1 = \\zzz = x = 0``): what neither
    parser reads is a name, never a number, so it cannot make a wrong answer equal."""
    try:
        return Expr(parse(text, opaque=True), text)
    except ParseError:
        raise ParseError(f"unreadable LaTeX: {type(lark_error).__name__}") from lark_error


def parse_form(text: str, depth: int = 0) -> Form:
    """The shape of a normalised answer; raises `ParseError` when it cannot be read."""
    text = text.strip()
    if depth > MAX_DEPTH // 4:
        raise TooDeep("structures nested too deeply")
    if not text:
        raise ParseError("empty answer")
    if text in _EMPTY_SET:
        return Items("set", ())
    arithmetic = _matrix_arithmetic(text, depth)
    if arithmetic is not None:
        return arithmetic
    array = _BRACKETED_ARRAY.fullmatch(text)
    matrix = _MATRIX.fullmatch((array.group(1) or array.group(2)) if array else text)
    if matrix:
        return _matrix(matrix.group(2), depth)
    groups = _assignment_groups(text, depth)
    if groups is not None:
        return groups
    pieces, _ = _split(text, _ITEM_SEPARATORS)
    if len(pieces) > 1:  # "19, 46, and 82" leaves an empty piece where "and" was
        return Items("list", _many([p for p in pieces if p], depth))
    pieces, found = _split(text, set(_RELATIONS))  # before unions: "z \in A \cup B"
    if len(pieces) > 1:
        return _relation(pieces, [_RELATIONS[op] for op in found], depth)
    pieces, _ = _split(text, {r"\cup"})
    if len(pieces) > 1:
        return UnionOf(_many(pieces, depth))
    if r"\pm" in text or r"\mp" in text:
        return _plus_minus(text, depth)
    if text.startswith(r"\{") and text.endswith(r"\}") and _wrapped(text):
        body = text[2:-2].strip()
        return Items("set", _many(_split(body, _ITEM_SEPARATORS)[0], depth) if body else ())
    pieces, _ = _split(text, {":"})
    if len(pieces) > 1:  # a ratio or a time, 12:00: ordered
        return Bracketed(_many(pieces, depth), ":", ":")
    if text[0] == "{" and text[-1] == "}" and _wrapped(text):
        parts, _ = _split(text[1:-1], _ITEM_SEPARATORS)
        if len(parts) > 1:  # {1, 2, 3}: braces that group, and print as the list 1, 2, 3
            return Items("list", _many(parts, depth))
    if text[0] in "([" and text[-1] in ")]" and _wrapped(text):
        parts, _ = _split(text[1:-1], _ITEM_SEPARATORS)
        if len(parts) > 1:
            return Bracketed(_many(parts, depth), text[0], text[-1])
    return _expression(text)
