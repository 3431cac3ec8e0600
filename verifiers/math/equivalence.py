"""When two parsed expressions are equal: numbers exactly, then numerically, then symbolically.

Numbers (no free symbols):

* two rationals (integers, fractions, finite decimals) are equal only when exactly equal:
  ``1/2^99`` is not ``1/2^98`` and ``1.5`` is not ``1.5000004``;
* a decimal with d places and at least `rounding_digits` significant digits matches a value
  that no finite decimal can write (``1/3``, ``\\sqrt 2``, ``\\pi``) when the value rounds
  to it: ``|v - x| <= 0.5 * 10^-d`` (``0.333`` for 1/3, ``1.414`` for sqrt 2);
* otherwise both are evaluated to 60 digits (mpmath) and must agree to 45, for values below
  10^30 (above that a 45-digit agreement would not prove the units digit);
* a caller-given `rel_tol` accepts ``|a - b| <= rel_tol * max(|a|, |b|)``.

Numbers beyond 10^10000 (a gold like ``10^{10^{10}}``: the cost estimate lets an answer
be that large only when its gold is) are compared by that 45-digit agreement alone, since
their exact values do not fit in memory.

Expressions with free symbols are compared numerically first, at seeded random points
(Schwartz-Zippel style identity testing: two different expressions rarely agree at random
points): one disagreement settles "not equal" at once, and costs microseconds, where
``simplify`` costs milliseconds. The points are evaluated with 30 significant digits more
than the values' magnitude, so ``(x+1)^{3000} + 1`` does not agree with ``(x+1)^{3000}``.
Agreement is then confirmed symbolically (``expand``, then ``simplify`` of the difference);
a symbolic difference that is a nonzero constant means "not equal"; one that sympy cannot
reduce is accepted on agreement at 3 or more points. Each symbolic step is bounded: a
difference whose expansion would have more than 2,000 terms (``(x^2+2x+1)^{1500}``) is not
expanded, and one of more than 150 operations is not simplified; agreement at 3 or more
points decides those.
"""

from __future__ import annotations

import math
import random
import re
from dataclasses import dataclass

import sympy

__all__ = ["Tolerance", "exprs_equal", "sample_points", "to_complex"]

_DECIMAL = re.compile(r"[-+]?(\d*)\.(\d+)")
_POINTS = 16
_MIDDLE, _NEAR_ZERO, _FAR = (0.2, 2.9), (0.01, 0.2), (2.9, 60.0)
_MAGNITUDES = (_MIDDLE, _MIDDLE, _MIDDLE, _NEAR_ZERO, _FAR, _FAR, _NEAR_ZERO, _MIDDLE)
_POINT_TOL = 1e-10
_UNBOUNDED = (sympy.oo, -sympy.oo, sympy.zoo, sympy.nan)
_MAX_EXPANDED_TERMS = 2_000
_MAX_SIMPLIFY_OPS = 150
_MAX_EXACT_DIGITS = 10_000
_EXTRA_DIGITS = 30


@dataclass(frozen=True)
class Tolerance:
    """How close two numbers must be; see the module docstring."""

    rel_tol: float = 0.0
    rounding_digits: int = 3


def to_complex(expr: sympy.Expr, subs: dict | None = None) -> complex | None:
    """The value as a Python complex, or None when it is not a finite number there."""
    try:
        value = complex(expr.evalf(30, subs=subs) if subs else expr.evalf(30))
    except (TypeError, ValueError, ZeroDivisionError, OverflowError):
        return None
    finite = abs(value.real) < float("inf") and abs(value.imag) < float("inf")
    return value if finite and value == value else None


def sample_points(symbols: list[sympy.Symbol], count: int = _POINTS) -> list[dict]:
    """Seeded random points (the same every call, so verdicts are reproducible) of both
    signs: the first symbol alternates positive and negative, the others take a random
    sign. Most magnitudes lie in 0.2 to 2.9, one point in four near zero (0.01 to 0.2) and
    one in four far out (2.9 to 60). Points of one sign in a narrow band let any expression
    that keeps one sign there pass for another (``|x|`` for ``x``, ``\\sqrt{(3-x)^2}`` for
    ``3-x``)."""
    rng = random.Random(20_261_130)
    points = []
    for index in range(count):
        point = {}
        low, high = _MAGNITUDES[index % len(_MAGNITUDES)]
        for position, symbol in enumerate(symbols):
            size = rng.uniform(low, high)
            negative = index % 2 == 1 if position == 0 else rng.random() < 0.5
            point[symbol] = sympy.Float(-size if negative else size, 30)
        points.append(point)
    return points


def _in_real_domain(expr: sympy.Expr, point: dict) -> bool:
    """False where a real root or logarithm in `expr` has no real value: a fractional power
    of a negative number, the logarithm of one that is not positive. Such a point is outside
    the expression's real domain, and two answers are compared only where both are defined
    (``\\ln(x^2)`` equals ``2 \\ln x`` on ``x > 0``), never by their complex branches."""
    for sub in sympy.preorder_traversal(expr):
        if isinstance(sub, sympy.Pow) and sub.exp.is_number and not sub.exp.is_integer:
            inside = sub.base
        elif isinstance(sub, sympy.log):
            inside = sub.args[0]
        else:
            continue
        value = to_complex(inside, point)
        if value is None or value.imag != 0 or value.real < 0:
            return False
        if isinstance(sub, sympy.log) and value.real == 0:
            return False
    return True


def _significant_digits(whole: str, fraction: str) -> int:
    return len((whole + fraction).lstrip("0"))


def _terminates(value: sympy.Expr) -> bool:
    """True when a finite decimal can write the value exactly (denominator 2^a 5^b)."""
    if not isinstance(value, sympy.Rational):
        return False
    q = int(value.q)
    for p in (2, 5):
        while q % p == 0:
            q //= p
    return q == 1


def _rounds_to(literal: str, other: sympy.Expr, tolerance: Tolerance) -> bool:
    match = _DECIMAL.fullmatch(literal.replace(" ", ""))
    if not match or tolerance.rounding_digits <= 0 or _terminates(other):
        return False
    if not match.group(2).strip("0"):  # "12.0" (a float column) states 12 exactly
        return False
    if _significant_digits(*match.groups()) < tolerance.rounding_digits:
        return False
    places = len(match.group(2))
    gap = sympy.N(sympy.Abs(other - sympy.Rational(literal.replace(" ", ""))), 30)
    return bool(gap <= sympy.Rational(1, 2) * sympy.Rational(10) ** -places * (1 + 1e-12))


def _numbers_equal(
    a: sympy.Expr, b: sympy.Expr, texts: tuple[str, str], tolerance: Tolerance
) -> tuple[bool, str]:
    if _rounds_to(texts[1], a, tolerance) or _rounds_to(texts[0], b, tolerance):
        return True, "rounded"
    if isinstance(a, sympy.Rational) and isinstance(b, sympy.Rational):
        if a == b:
            return True, "exact"
        return _within_tolerance(sympy.N(a, 60), sympy.N(b, 60), tolerance), "exact"
    if a.has(*_UNBOUNDED) or b.has(*_UNBOUNDED):
        return bool(sympy.simplify(a) == sympy.simplify(b)), "infinity"
    va, vb = sympy.N(a, 60), sympy.N(b, 60)
    if _within_tolerance(va, vb, tolerance):
        return True, "tolerance"
    scale = max(abs(va), abs(vb))
    if abs(va - vb) > 1e-45 * max(scale, 1e-300):
        return False, "numeric"
    if scale < 1e30:
        return True, "numeric_45_digits"
    if sympy.log(scale, 10) > _MAX_EXACT_DIGITS:
        return True, "numeric_45_digits_huge"
    return bool(sympy.expand(a - b) == 0), "symbolic_huge"


def _within_tolerance(va: sympy.Expr, vb: sympy.Expr, tolerance: Tolerance) -> bool:
    if tolerance.rel_tol <= 0:
        return False
    return bool(abs(va - vb) <= tolerance.rel_tol * max(abs(va), abs(vb)))


def _value(expr: sympy.Expr, point: dict, digits: int) -> sympy.Expr | None:
    """The value at `point` to `digits` significant digits; None where it is not a finite
    number (outside a domain, at a pole). Huge magnitudes stay exact in their exponent."""
    try:
        value = expr.evalf(digits, subs=point)
    except (TypeError, ValueError, ZeroDivisionError, OverflowError):
        return None
    if not value.is_number or value.has(*_UNBOUNDED) or value.has(sympy.Symbol):
        return None
    return value


def _agree(a: sympy.Expr, b: sympy.Expr, point: dict) -> bool | None:
    """Whether `a` and `b` agree at `point` (None: not both defined there): to 1e-10 of the
    larger value, or of 1, whichever is larger (an absolute error of 1e-10 for values
    above 1). Evaluated with `_EXTRA_DIGITS` digits more than their magnitude, so a "+ 1"
    beside 10^1800 is still seen."""
    if not (_in_real_domain(a, point) and _in_real_domain(b, point)):
        return None
    rough = _value(a, point, 15)
    if rough is None or _value(b, point, 15) is None:
        return None
    size = abs(rough)
    magnitude = min(int(sympy.log(size, 10)) if size > 1 else 0, _MAX_EXACT_DIGITS)
    digits = _EXTRA_DIGITS + magnitude
    va, vb = _value(a, point, digits), _value(b, point, digits)
    if va is None or vb is None:
        return None
    scale = max(abs(va), abs(vb), sympy.Integer(1))
    tolerance = sympy.Float(_POINT_TOL, digits) * sympy.Integer(10) ** -magnitude
    return bool(abs(va - vb) <= tolerance * scale)


def _expanded_terms(expr: sympy.Expr, cap: int = _MAX_EXPANDED_TERMS) -> int:
    """An upper bound on the terms of ``expand(expr)``, counted up to `cap` (a tree walk)."""
    if expr.is_Add:
        return min(cap + 1, sum(_expanded_terms(arg, cap) for arg in expr.args))
    if expr.is_Mul:
        total = 1
        for arg in expr.args:
            total = min(cap + 1, total * _expanded_terms(arg, cap))
        return total
    if expr.is_Pow and expr.exp.is_Integer and expr.exp > 1 and expr.base.free_symbols:
        terms = _expanded_terms(expr.base, cap)
        if terms == 1:
            return 1
        exponent = int(expr.exp) if expr.exp < cap else cap
        return min(cap + 1, math.comb(exponent + terms - 1, terms - 1))
    return 1


def _functions_equal(a: sympy.Expr, b: sympy.Expr) -> tuple[bool, str]:
    symbols = sorted(a.free_symbols | b.free_symbols, key=str)
    agreed = 0
    for point in sample_points(symbols):
        agrees = _agree(a, b, point)
        if agrees is None:
            continue  # outside a domain (log of a negative, a pole): try the next point
        if not agrees:
            return False, "numeric_points"
        agreed += 1
    by_points = (agreed >= 3, "numeric_points_agree" if agreed >= 3 else "undecided")
    difference = a - b
    if _expanded_terms(difference) > _MAX_EXPANDED_TERMS:
        return by_points  # expanding would explode: the points decide
    difference = sympy.expand(difference)
    if difference == 0:
        return True, "symbolic"
    if sympy.count_ops(difference) > _MAX_SIMPLIFY_OPS:
        return by_points
    difference = sympy.simplify(difference)
    if difference == 0:
        return True, "symbolic"
    if difference.is_number:
        return False, "symbolic"
    return by_points


def exprs_equal(
    a: sympy.Expr, b: sympy.Expr, texts: tuple[str, str], tolerance: Tolerance
) -> tuple[bool, str]:
    """Equality of gold `a` and prediction `b` and the rule that decided it.

    `texts` are their normalised sources (for the decimal-rounding rule).
    """
    if a.has(sympy.zoo, sympy.nan) or b.has(sympy.zoo, sympy.nan):
        return False, "undefined"  # 1/0 is no value, so it equals nothing, not even 2/0
    if a == b:
        return True, "identical"
    if not a.free_symbols and not b.free_symbols:
        return _numbers_equal(a, b, texts, tolerance)
    return _functions_equal(a, b)
