"""Equality of answer shapes, and `judge`, the function the killable worker runs.

Shapes must match: a set never equals a single number (so ``\\pm 2021`` is not ``2021``),
a tuple is ordered, an interval's ends must be of the same kind, a matrix has a shape.
Sets and bare lists ("2, 3") are unordered; a one-element set equals its element.
Relations:

* an answer written as ``x = 3`` (or ``x \\in [0, 1]``) equals the gold ``3``: the last
  side is compared when the first side is a bare variable or a number;
* a relation of constants states a fact, and a false one is a wrong answer whatever its
  last side: ``6 = 5``, ``2 + 2 = 5`` and ``13 \\approx 12`` never answer 5 or 12
  (``3 \\cdot 4 = 12`` and ``\\pi \\approx 3.14`` are true and answer 12 and 3.14; the
  sides of ``\\approx`` and of ``=`` agree by the same rules as an answer and its gold);
* two equations are equal when ``lhs - rhs`` of one is a nonzero constant multiple of the
  other's (``y = 3x + 13`` equals ``3x - y + 13 = 0``; ``3x-y+13=0`` is not ``3x+4y+14=0``);
* two inequalities also need a *positive* multiple; one-variable inequalities are first
  turned into intervals, so ``x > 3`` equals ``(3, \\infty)``.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import sympy
from sympy.core.cache import clear_cache

from rewardsmith.verifiers.math.budget import BudgetExceeded, cpu_budget
from rewardsmith.verifiers.math.equivalence import (
    Tolerance,
    exprs_equal,
    sample_points,
    to_complex,
)
from rewardsmith.verifiers.math.normalize import imaginary_units_agreed, normalise
from rewardsmith.verifiers.math.parser import ParseError, TooDeep
from rewardsmith.verifiers.math.structure import (
    Bracketed,
    Expr,
    Form,
    Items,
    Matrix,
    Relation,
    UnionOf,
    parse_form,
)

__all__ = ["forms_equal", "judge", "show"]

_FLIP = {"<": ">", ">": "<", "<=": ">=", ">=": "<="}
_MIRROR = {"[": "]", "(": ")", "]": "[", ")": "("}
# After `_differences` turns "a > b" into "b - a < 0", only strictness is left to match.
_KIND = {"=": "=", "!=": "!=", "<": "<", ">": "<", "<=": "<=", ">=": "<="}
Result = tuple[bool, str]


def show(form: Form) -> str:
    """A short readable rendering of a parsed form, for verdict evidence."""
    if isinstance(form, Expr):
        try:
            text = sympy.sstr(form.value)
        except ValueError:  # an integer past the interpreter's digit limit for str()
            text = "<a number too long to show>"
    elif isinstance(form, Items):
        text = "{" + ", ".join(show(i) for i in form.items) + "}"
    elif isinstance(form, Bracketed):
        text = form.left + ", ".join(show(i) for i in form.items) + form.right
    elif isinstance(form, UnionOf):
        text = " U ".join(show(p) for p in form.parts)
    elif isinstance(form, Matrix):
        text = "[" + "; ".join(", ".join(show(c) for c in row) for row in form.rows) + "]"
    else:
        parts = [show(form.sides[0])]
        for op, side in zip(form.ops, form.sides[1:], strict=True):
            parts += [op, show(side)]
        text = " ".join(parts)
    return text if len(text) <= 300 else text[:297] + "..."


def _unordered(gold: tuple[Form, ...], pred: tuple[Form, ...], tol: Tolerance) -> Result:
    if len(gold) != len(pred):
        return False, "count"
    left = list(pred)
    for item in gold:
        match = next((p for p in left if forms_equal(item, p, tol)[0]), None)
        if match is None:
            return False, "members"
        left.remove(match)
    return True, "members"


def _drop_repeated_tuples(gold: tuple[Form, ...], pred: tuple[Form, ...]) -> tuple[Form, ...]:
    """A solution set that lists the tuple (3, 17, 3, 7) twice is still the same set: exact
    repeats of a tuple are dropped from the prediction when the gold repeats nothing. Other
    repeats count (roots with multiplicity: "2, 2, 3" is not "2, 3")."""
    if len(pred) <= len(gold) or len({show(g) for g in gold}) < len(gold):
        return pred
    seen: set[str] = set()
    kept: list[Form] = []
    for form in pred:
        key = show(form).replace(" ", "")
        if key in seen and isinstance(form, Bracketed) and (form.left, form.right) == ("(", ")"):
            continue
        seen.add(key)
        kept.append(form)
    return tuple(kept)


def _pairwise(gold: tuple[Form, ...], pred: tuple[Form, ...], tol: Tolerance) -> Result:
    if len(gold) != len(pred):
        return False, "count"
    ok = all(forms_equal(g, p, tol)[0] for g, p in zip(gold, pred, strict=True))
    return ok, "elementwise"


def _name_like(value: sympy.Expr) -> bool:
    """``x``, ``AB``, ``f(x)``, ``|AB|``, ``NO/BO``: names only, no numbers but +-1."""
    atoms = value.atoms()
    return bool(value.free_symbols) and all(a.is_Symbol or a in (1, -1) for a in atoms)


def _bare(form: Form) -> bool:
    """A left side that names what the answer is (``x``, ``AB``, ``f(x)``) or is a number."""
    if isinstance(form, Expr):
        return _name_like(form.value) or not form.value.free_symbols
    return isinstance(form, Bracketed) and all(_bare(i) for i in form.items)


def _answer_side(rel: Relation) -> Form | None:
    """What ``x = 3`` or ``x \\in S`` asserts as the answer, if it is written that way."""
    if all(op in ("=", "in") for op in rel.ops) and _bare(rel.sides[0]):
        last, first = rel.sides[-1], rel.sides[0]
        computed = isinstance(first, Expr) and not first.value.free_symbols
        # "3 \cdot 4 = 12" answers 12; "7 = 11a + c" is an equation, not an answer 11a + c.
        if not computed or not (isinstance(last, Expr) and last.value.free_symbols):
            return _named_tuple(first, last)
        if len(rel.sides) == 2 and isinstance(last, Expr) and last.value.is_Symbol:
            return first  # "3 = x" answers 3, as "x = 3" does
        return None
    found = _as_interval(rel)
    return found[1] if found is not None else None


def _constant(form: Form) -> bool:
    """A form with no free variable anywhere: a number, or a tuple, set or interval of them."""
    if isinstance(form, Expr):
        return not form.value.free_symbols
    if isinstance(form, Matrix):
        return all(_constant(cell) for row in form.rows for cell in row)
    if isinstance(form, Relation):
        return False
    parts = form.parts if isinstance(form, UnionOf) else form.items
    return all(_constant(part) for part in parts)


def _false_statement(rel: Relation, tol: Tolerance) -> bool:
    """True for an equation of constants whose sides differ (``6 = 5``, ``W = W = R``,
    ``(2, 1) = (1, 2)``)."""
    if any(op != "=" for op in rel.ops) or not all(_constant(side) for side in rel.sides):
        return False
    return not all(forms_equal(a, b, tol)[0] for a, b in itertools.pairwise(rel.sides))


def _named_tuple(names: Form, values: Form) -> Form:
    """``(y, x) = (1, 2)`` answers ``(2, 1)``: a tuple of values in its names' order."""
    if not (isinstance(names, Bracketed) and isinstance(values, Bracketed)):
        return values
    symbols = [n.value for n in names.items if isinstance(n, Expr) and n.value.is_Symbol]
    if len(symbols) != len(names.items) or len(values.items) != len(symbols):
        return values
    ordered = _in_name_order(symbols, list(values.items))
    return Bracketed(ordered, values.left, values.right)


def _as_interval(rel: Relation) -> tuple[sympy.Expr, Bracketed] | None:
    """``x > 3`` -> ``(x, (3, oo))``; ``-2 < x <= 5`` -> ``(x, (-2, 5])``; else None."""
    sides, ops = list(rel.sides), list(rel.ops)
    if not all(isinstance(s, Expr) for s in sides) or not all(op in _FLIP for op in ops):
        return None
    if ops[0] in (">", ">="):  # read the chain from the other end
        sides, ops = sides[::-1], [_FLIP[op] for op in reversed(ops)]
    values = [s.value for s in sides if isinstance(s, Expr)]
    if any(op in (">", ">=") for op in ops):
        return None
    inf, oo = Expr(-sympy.oo, "-oo"), Expr(sympy.oo, "oo")
    symbol = [i for i, v in enumerate(values) if _name_like(v)]
    if len(symbol) != 1 or any(v.free_symbols for i, v in enumerate(values) if i != symbol[0]):
        return None
    at = symbol[0]
    low = sides[at - 1] if at > 0 else inf
    high = sides[at + 1] if at + 1 < len(sides) else oo
    left = "[" if at > 0 and ops[at - 1] == "<=" else "("
    right = "]" if at + 1 < len(sides) and ops[at] == "<=" else ")"
    assert isinstance(low, Expr) and isinstance(high, Expr)
    return values[at], Bracketed((low, high), left, right)


def _membership(rel: Relation) -> tuple[sympy.Expr, Form] | None:
    """``x \\in [-2, 7]`` -> ``(x, [-2, 7])``, to meet the chain ``-2 \\le x \\le 7``; a
    union of intervals too."""
    if tuple(rel.ops) != ("in",):
        return None
    name, interval = rel.sides
    if not (isinstance(name, Expr) and _name_like(name.value)):
        return None
    if isinstance(interval, Bracketed) and len(interval.items) == 2:
        return name.value, interval
    if isinstance(interval, UnionOf):
        return name.value, interval
    return None


def _negated(form: Expr) -> Expr:
    return Expr(-form.value, f"-({form.text})")


def _unfold_abs(found: tuple[sympy.Expr, Bracketed] | None) -> tuple[sympy.Expr, Form] | None:
    """``1 \\le |z| \\le 3/2`` is ``z`` in ``[-3/2, -1] \\cup [1, 3/2]``."""
    if found is None or not isinstance(found[0], sympy.Abs):
        return found
    variable, interval = found
    low, high = interval.items
    if not (isinstance(low, Expr) and isinstance(high, Expr) and low.value.is_number):
        return found
    left_of_negative = _MIRROR[interval.right]  # [1, 2) mirrors to (-2, -1]
    if bool(low.value < 0) or (low.value == 0 and interval.left == "["):
        whole = Bracketed((_negated(high), high), left_of_negative, interval.right)
        return variable.args[0], whole
    negative = Bracketed((_negated(high), _negated(low)), left_of_negative, _MIRROR[interval.left])
    return variable.args[0], UnionOf((negative, interval))


def _differences(rel: Relation) -> sympy.Expr | None:
    if len(rel.sides) != 2 or not all(isinstance(s, Expr) for s in rel.sides):
        return None
    lhs, rhs = rel.sides
    assert isinstance(lhs, Expr) and isinstance(rhs, Expr)
    if rel.ops[0] in (">", ">="):
        return rhs.value - lhs.value
    return lhs.value - rhs.value


def _proportional(a: sympy.Expr, b: sympy.Expr, positive: bool) -> Result:
    """Is `a` a nonzero (positive) constant multiple of `b`? Numbers first, then cancel."""
    symbols = sorted(a.free_symbols | b.free_symbols, key=str)
    ratios = []
    for point in sample_points(symbols):
        va, vb = to_complex(a, point), to_complex(b, point)
        if va is not None and vb is not None and abs(vb) > 1e-12:
            ratios.append(va / vb)
    if not ratios or any(abs(r - ratios[0]) > 1e-9 * max(1.0, abs(ratios[0])) for r in ratios):
        return False, "proportional"
    ratio = sympy.cancel(a / b)
    if ratio.is_number and ratio != 0:
        sign_ok = not positive or bool(sympy.re(ratio) > 0)
        return sign_ok, "proportional"
    return len(ratios) >= 3 and abs(ratios[0]) > 1e-12, "proportional_numeric"


def _relations_equal(gold: Relation, pred: Relation, tol: Tolerance) -> Result:
    # An inequality gold accepts the same interval written as membership, "x \\in [-2, 7]";
    # not the reverse: a gold that asks for the set wants the set (Math-Verify's default).
    g_interval = _unfold_abs(_as_interval(gold))
    p_interval = _unfold_abs(_as_interval(pred)) or _membership(pred)
    if g_interval is not None and p_interval is not None and g_interval[0] == p_interval[0]:
        return forms_equal(g_interval[1], p_interval[1], tol)  # same variable, same interval
    g_answer, p_answer = _answer_side(gold), _answer_side(pred)
    if g_answer is not None and p_answer is not None and gold.sides[0] == pred.sides[0]:
        return forms_equal(g_answer, p_answer, tol)
    g_diff, p_diff = _differences(gold), _differences(pred)
    if g_diff is None or p_diff is None:
        if gold.ops != pred.ops:
            return False, "relation"
        return _pairwise(gold.sides, pred.sides, tol)
    kind = _KIND.get(gold.ops[0])
    if kind is None or kind != _KIND.get(pred.ops[0]):
        return False, "relation"
    return _proportional(g_diff, p_diff, positive=kind in ("<", "<="))


def _mixed(gold: Form, pred: Form, tol: Tolerance) -> Result:
    """Different shapes that can still say the same thing."""
    if isinstance(pred, Relation) and not isinstance(gold, Relation):
        if _false_statement(pred, tol):
            return False, "false_statement"
        side = _answer_side(pred)
        return forms_equal(gold, side, tol) if side is not None else (False, "shape")
    if isinstance(gold, Relation) and not isinstance(pred, Relation):
        side = _answer_side(gold)
        return forms_equal(side, pred, tol) if side is not None else (False, "shape")
    if isinstance(gold, Items) and len(gold.items) == 1 and not isinstance(pred, Items):
        return forms_equal(gold.items[0], pred, tol)
    if isinstance(pred, Items) and len(pred.items) == 1 and not isinstance(gold, Items):
        return forms_equal(gold, pred.items[0], tol)
    if {type(gold), type(pred)} == {UnionOf, Items}:
        return _unordered(_members(gold), _members(pred), tol)
    ordered = _as_tuple(gold, pred)
    if ordered is not None:
        return _pairwise(*ordered, tol)
    vectors = [_vector(f) for f in (gold, pred)]
    if vectors[0] is not None and vectors[1] is not None:
        return _pairwise(vectors[0], vectors[1], tol)
    return False, "shape"


def _in_name_order(names: list[sympy.Symbol], values: list[Form]) -> tuple[Form, ...]:
    """`values` in the order a tuple lists its unknowns: alphabetical, when every name is one
    Latin letter (``y = 2, x = 1`` is ``(1, 2)``: x before y, a before b, p before q);
    otherwise as written (``\\rho, \\theta, \\phi`` have an order of their own)."""
    if all(len(str(name)) == 1 and str(name).isascii() for name in names):
        return tuple(value for _, value in sorted(zip(map(str, names), values, strict=True)))
    return tuple(values)


def _assigned_values(items: tuple[Form, ...]) -> tuple[Form, ...] | None:
    """``x = 1, y = 2`` -> ``(1, 2)``: values assigned to distinct names, in name order."""
    names, values = [], []
    for item in items:
        if not (isinstance(item, Relation) and item.ops == ("=",)):
            return None
        name, value = item.sides
        if not (isinstance(name, Expr) and name.value.is_Symbol):
            return None
        names.append(name.value)
        values.append(value)
    return _in_name_order(names, values) if len(set(names)) == len(names) else None


def _as_tuple(gold: Form, pred: Form) -> tuple[tuple[Form, ...], tuple[Form, ...]] | None:
    """A bare list (``1, 3``, ``{1,3}``, ``x = 1, y = 3``) against a tuple ``(1, 3)``: the
    list's values in the order written, as the tuple's."""
    for items, other in ((gold, pred), (pred, gold)):
        if not (isinstance(items, Items) and items.kind == "list"):
            continue
        if isinstance(other, Bracketed) and (other.left, other.right) == ("(", ")"):
            values = _assigned_values(items.items) or items.items
            return (values, other.items) if items is gold else (other.items, values)
    return None


def _members(form: Form) -> tuple[Form, ...]:
    if isinstance(form, UnionOf):
        return form.parts
    return form.items if isinstance(form, Items) else (form,)


def _vector(form: Form) -> tuple[Form, ...] | None:
    if isinstance(form, Matrix) and (len(form.rows) == 1 or all(len(r) == 1 for r in form.rows)):
        return tuple(c for row in form.rows for c in row)
    if isinstance(form, Bracketed) and form.left == "(" and form.right == ")":
        return form.items
    return None


def _real_set(form: Form) -> sympy.Set | None:
    """An interval or a union of intervals with real constant ends, as a sympy set."""
    if isinstance(form, UnionOf):
        parts = [_real_set(part) for part in form.parts]
        return None if any(p is None for p in parts) else sympy.Union(*parts)
    if not (isinstance(form, Bracketed) and len(form.items) == 2 and form.right in ")]"):
        return None
    ends = [item.value for item in form.items if isinstance(item, Expr)]
    if len(ends) != 2 or any(e.free_symbols or e.is_extended_real is not True for e in ends):
        return None
    return sympy.Interval(ends[0], ends[1], form.left == "(", form.right == ")")


def forms_equal(gold: Form, pred: Form, tol: Tolerance) -> Result:
    """Equality of two parsed answers, and the rule that decided it."""
    if isinstance(gold, UnionOf) or isinstance(pred, UnionOf):  # (-oo, 0) U [0, 2] is (-oo, 2]
        sets = _real_set(gold), _real_set(pred)
        if sets[0] is not None and sets[1] is not None:
            return bool(sets[0].symmetric_difference(sets[1]).is_empty), "set_of_reals"
    if isinstance(gold, Relation) and isinstance(pred, Relation):
        return _relations_equal(gold, pred, tol)
    if type(gold) is not type(pred):
        return _mixed(gold, pred, tol)
    if isinstance(gold, Expr) and isinstance(pred, Expr):
        return exprs_equal(gold.value, pred.value, (gold.text, pred.text), tol)
    if isinstance(gold, Items) and isinstance(pred, Items):
        return _unordered(gold.items, _drop_repeated_tuples(gold.items, pred.items), tol)
    if isinstance(gold, UnionOf) and isinstance(pred, UnionOf):
        return _unordered(gold.parts, pred.parts, tol)
    if isinstance(gold, Bracketed) and isinstance(pred, Bracketed):
        if (gold.left, gold.right) != (pred.left, pred.right):
            return False, "brackets"
        return _pairwise(gold.items, pred.items, tol)
    if isinstance(gold, Matrix) and isinstance(pred, Matrix):
        if [len(r) for r in gold.rows] != [len(r) for r in pred.rows]:
            return False, "matrix_shape"
        flat = tuple(c for r in gold.rows for c in r), tuple(c for r in pred.rows for c in r)
        return _pairwise(*flat, tol)
    return False, "shape"


def judge(
    gold: str, pred: str, rel_tol: float = 0.0, rounding_digits: int = 3, budget_s: float = 1.0
) -> dict[str, Any]:
    """Parse and compare two extracted answers. Runs in the killable worker.

    Returns ``{"outcome": "equal" | "different" | "bad_reference" | "unparsed" |
    "check_limit", ...}`` with the parsed forms and the deciding rule, all plain strings
    (cheap to send back). The whole call runs under a CPU-time budget of `budget_s`
    (`rewardsmith.verifiers.math.budget`): an answer that passes it, or nests too deeply,
    or exhausts the worker's memory is ``check_limit``; a gold that does so alone is
    ``bad_reference``.
    """
    stage = ["gold"]
    spent: Callable[[], float] = lambda: 0.0  # noqa: E731
    clear_cache()  # what an earlier comparison cached must not make this one cheaper
    try:
        with cpu_budget(budget_s) as spent:
            result = _judge(gold, pred, Tolerance(rel_tol, rounding_digits), stage)
    except (BudgetExceeded, MemoryError, TooDeep, RecursionError) as exc:
        limit = "cpu" if isinstance(exc, BudgetExceeded) else type(exc).__name__
        detail = {"limit": limit, "cpu_s": round(spent(), 4)}
        if stage[0] == "gold":
            return {"outcome": "bad_reference", "detail": f"the gold alone hit {limit}", **detail}
        return {"outcome": "check_limit", **detail}
    result["cpu_s"] = round(spent(), 4)
    return result


def _judge(gold: str, pred: str, tolerance: Tolerance, stage: list[str]) -> dict[str, Any]:
    gold_n, pred_n = normalise(gold), normalise(pred)
    gold_text, pred_text = imaginary_units_agreed(gold_n.text, pred_n.text)
    try:
        gold_form = parse_form(gold_text)
    except ParseError as exc:
        return {"outcome": "bad_reference", "detail": str(exc)[:300]}
    stage[0] = "answer"
    try:
        pred_form = parse_form(pred_text)
        equal, rule = forms_equal(gold_form, pred_form, tolerance)
    except TooDeep:
        raise
    except ParseError as exc:
        return {"outcome": "unparsed", "detail": str(exc)[:300], "gold_form": show(gold_form)}
    except Exception as exc:  # the gold parsed: what this answer made sympy raise is its own
        detail = f"{type(exc).__name__}: {exc}"[:300]
        return {"outcome": "unparsed", "detail": detail, "raised": True}
    return {
        "outcome": "equal" if equal else "different",
        "rule": rule,
        "gold_form": show(gold_form),
        "pred_form": show(pred_form),
        "percent": [gold_n.percent, pred_n.percent],
    }
