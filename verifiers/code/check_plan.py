"""HumanEval checks made only of literal calls compared with literals, run as one batch.

Most HumanEval tests are lines like ``assert candidate(3, [1, 2]) == [2, 3]``: the inputs
and the expected value are literals, and nothing else of the test is used. Such a check
needs no judge process and no round trip per call: the calls (their inputs are not
secret) go to the candidate's jail in one file, the candidate's process makes them all and
writes back plain data (`function_tests.run_calls`), and the comparisons run here, in the
scoring process, on values rebuilt by `values.decode` (builtins only: no candidate object,
no candidate ``__eq__``). The expected values and the test's helpers never enter the
candidate's jail, as with the judge; a check with any other statement (a loop, a helper, a
computed argument, a message that is not a literal) is left to the judge (`plan` is None).

The comparisons are the test's own (``==`` with Python's meaning, not `values.exact_equal`):
a check that passes under the judge passes here, and fails here only where it fails there.
"""

from __future__ import annotations

import ast
import builtins
import operator
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from rewardsmith.verifiers.code.values import (
    DecodeError,
    EncodeError,
    decode,
    encode,
    refuse_hash_flood,
)
from rewardsmith.verifiers.operators import BINARY

__all__ = ["Planned", "plan", "verdicts"]

_COMPARE: dict[type[ast.cmpop], Callable[[Any, Any], bool]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Is: operator.is_,
    ast.IsNot: operator.is_not,
}
_BOUND: dict[type[ast.cmpop], Callable[[Any, Any], bool]] = {
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
}
_NOT = object()


def _set(items: Any) -> set[Any]:
    """``set(items)`` for a value the candidate sent: a list of distinct ints of one hash
    (``set(candidate(x))``) would cost its square here (red team rtcode8), so a flood is
    refused first (an error on that line)."""
    members = list(items)
    refuse_hash_flood(members)
    return set(members)


_WRAPPERS: dict[str, Callable[[Any], Any]] = {
    "tuple": tuple,
    "list": list,
    "sorted": sorted,
    "set": _set,
    "len": len,
}
"""Builtins a test may apply to the candidate's value or to a literal before comparing
(``tuple(candidate(x)) == tuple([1, 2])``): on plain data they run no candidate code."""
_RESERVED = {"candidate", "check", *dir(builtins)}
"""Names an inert assignment may not bind (the plan reads ``abs`` and ``candidate``)."""
_SINGLETONS = (True, False, None)
"""The only literals an ``is`` test may name (identity with a decoded value is defined
for these alone)."""


@dataclass(frozen=True)
class Planned:
    """One test line: which call it reads and how its value is judged."""

    line: int
    source: str
    call: int
    test: Callable[[Any], bool]
    message: str


def plan(
    tree: ast.Module, test: str, entry_point: str, also_bound: Iterable[str] = ()
) -> tuple[list[dict[str, Any]], list[Planned]] | None:
    """The calls to relay (each ``{"fn", "args", "kwargs"}``, encoded) and the planned
    tests, or None when the check (`test`, parsed as `tree`) is not only literal calls
    compared with literals. `also_bound`: names the judge binds before the test (the
    prompt's): a check where one of them rebinds a builtin the plan reads is not planned."""
    if set(also_bound) & {"abs", *_WRAPPERS}:
        return None
    checks = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "check"]
    if len(checks) != 1 or not all(_inert(n) for n in tree.body if n is not checks[0]):
        return None
    check = checks[0]
    if check.decorator_list or not _one_parameter(check.args, "candidate"):
        return None
    lines = test.splitlines()
    calls: list[dict[str, Any]] = []
    planned: list[Planned] = []
    for stmt in check.body:
        if _inert(stmt) or _always_true(stmt):
            continue
        step = _planned(stmt, entry_point, len(calls), lines)
        if step is None:
            return None
        call, one = step
        calls.append(call)
        planned.append(one)
    return (calls, planned) if planned else None


def verdicts(records: list[dict[str, Any]], planned: list[Planned]) -> list[dict[str, Any]]:
    """The judge's records (``line N``) from the candidate's relayed results (`records`,
    one per call, from `function_tests.run_calls`)."""
    out = []
    for step in planned:
        record = records[step.call] if step.call < len(records) else None
        base = {"name": f"line {step.line}", "input": step.source}
        if record is None or record.get("status") != "returned":
            message = "no result" if record is None else str(record.get("message", ""))
            status = "error" if record is None else str(record.get("status", "error"))
            out.append({**base, "status": status, "message": message[:500]})
            continue
        out.append({**base, **_judged(step, record.get("got"))})
    return out


def _judged(step: Planned, got: Any) -> dict[str, str]:
    try:
        value = decode(got)
    except DecodeError as exc:
        return {"status": "error", "message": f"returned a value that is not plain data: {exc}"}
    try:
        ok = bool(step.test(value))
    except Exception as exc:  # what the test line raises on this value (a TypeError, say)
        return {"status": "error", "message": f"{type(exc).__name__}: {exc}"[:500]}
    if ok:
        return {"status": "pass"}
    return {"status": "fail", "message": ("assertion failed " + step.message)[:500].strip()}


# ----------------------------------------------------------------------------- shapes


def _planned(
    stmt: ast.stmt, entry: str, index: int, lines: list[str]
) -> tuple[dict[str, Any], Planned] | None:
    if not isinstance(stmt, ast.Assert):
        return None
    shape = _shape(stmt.test)
    if shape is None:
        return None
    call_node, test = shape
    args = _literal_call(call_node)
    if args is None:
        return None
    try:
        call = {"fn": entry, "args": encode(args[0]), "kwargs": encode(args[1])}
    except EncodeError:
        return None
    # A message is evaluated only when its line fails; a literal one is shown, any other
    # (``'error: ' + str(candidate(x))``) is left out: the line fails either way.
    message = stmt.msg.value if isinstance(stmt.msg, ast.Constant) else ""
    source = lines[stmt.lineno - 1].strip()[:300]
    return call, Planned(stmt.lineno, source, index, test, str(message))


def _shape(node: ast.expr) -> tuple[ast.Call, Callable[[Any], bool]] | None:
    """``c == E``, ``E == c``, ``c != E``, ``c is True``, ``c``, ``not c`` and
    ``abs(c - E) < T`` (or ``<=``), where c is a call of the candidate, maybe inside
    `_WRAPPERS` (``tuple(candidate(x))``), and E and T are literals."""
    got = _candidate_value(node)
    if got is not None:
        call, read = got
        return call, lambda value: bool(read(value))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        got = _candidate_value(node.operand)
        if got is None:
            return None
        call, read = got
        return call, lambda value: not read(value)
    if not isinstance(node, ast.Compare) or len(node.ops) != 1:
        return None
    left, op, right = node.left, type(node.ops[0]), node.comparators[0]
    if op in _BOUND:
        bound = _value(right)
        return None if bound is _NOT else _closeness(left, _BOUND[op], bound)
    if op not in _COMPARE:
        return None
    compare = _COMPARE[op]
    got = _candidate_value(left)
    if got is None and op in (ast.Eq, ast.NotEq):
        left, right = right, left  # ``E == c``: equality is the test's either way round
        got = _candidate_value(left)
    want = _value(right)
    if got is None or want is _NOT:
        return None
    if op in (ast.Is, ast.IsNot) and not any(want is s for s in _SINGLETONS):
        return None
    call, read = got
    return call, lambda value: compare(read(value), want)


def _candidate_value(node: ast.expr) -> tuple[ast.Call, Callable[[Any], Any]] | None:
    """A call of the candidate with literal arguments, maybe wrapped in `_WRAPPERS`: the
    call and how the test reads its value."""
    if _is_candidate_call(node):
        assert isinstance(node, ast.Call)
        return node, lambda value: value
    if not (_wrapper(node) and isinstance(node, ast.Call)):
        return None
    inner = _candidate_value(node.args[0])
    if inner is None:
        return None
    call, read = inner
    assert isinstance(node.func, ast.Name)
    wrap = _WRAPPERS[node.func.id]
    return call, lambda value: wrap(read(value))


def _wrapper(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in _WRAPPERS
        and len(node.args) == 1
        and not isinstance(node.args[0], ast.Starred)
        and not node.keywords
    )


def _closeness(
    node: ast.expr, bound: Callable[[Any, Any], bool], tol: Any
) -> tuple[ast.Call, Callable[[Any], bool]] | None:
    """``abs(c - E)`` compared with a literal bound."""
    if not (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "abs"
        and len(node.args) == 1
        and not node.keywords
    ):
        return None
    inner = node.args[0]
    if not isinstance(inner, ast.BinOp) or not isinstance(inner.op, ast.Sub):
        return None
    got = _candidate_value(inner.left)
    want = _value(inner.right)
    if got is None or want is _NOT:
        return None
    call, read = got
    return call, lambda value: bound(abs(read(value) - want), tol)


def _is_candidate_call(node: ast.expr) -> bool:
    """A call of the candidate; `_planned` checks that its arguments are literals."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "candidate"
    )


def _literal_call(node: ast.Call) -> tuple[list[Any], dict[str, Any]] | None:
    args = [_value(a) for a in node.args]
    kwargs = {k.arg: _value(k.value) for k in node.keywords if k.arg is not None}
    if len(kwargs) != len(node.keywords) or any(v is _NOT for v in (*args, *kwargs.values())):
        return None
    return args, kwargs


def _is_literal(node: ast.expr) -> bool:
    return _value(node) is not _NOT


def _value(node: ast.expr) -> Any:
    """The value of a literal, or of arithmetic on literals (``2.0 / 3.0``, ``3 * 19``,
    ``'ab' + 'c'``), as the test computes it; `_NOT` for anything else."""
    if isinstance(node, ast.Starred):
        return _NOT
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        pass
    if isinstance(node, ast.Tuple | ast.List | ast.Set):  # ``(3 + 5, 3 * 5)``
        items = [_value(e) for e in node.elts]
        if any(i is _NOT for i in items):
            return _NOT
        kind = {ast.Tuple: tuple, ast.List: list, ast.Set: set}[type(node)]
        try:
            return kind(items)
        except TypeError:  # an unhashable item in a set
            return _NOT
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        inner = _value(node.operand)
        if not isinstance(inner, int | float) or isinstance(inner, bool):
            return _NOT
        return -inner if isinstance(node.op, ast.USub) else +inner
    if _wrapper(node) and isinstance(node, ast.Call):  # ``tuple([1, 2])``
        assert isinstance(node.func, ast.Name)
        inner = _value(node.args[0])
        return _NOT if inner is _NOT else _WRAPPERS[node.func.id](inner)
    if isinstance(node, ast.BinOp) and type(node.op) in BINARY:
        left, right = _value(node.left), _value(node.right)
        if left is _NOT or right is _NOT or not _small(node.op, left, right):
            return _NOT
        try:
            return BINARY[type(node.op)](left, right)
        except Exception:  # 1 / 0 in a test: the judge shows that error
            return _NOT
    return _NOT


def _small(op: ast.operator, left: Any, right: Any) -> bool:
    """No power or repetition that would build a huge value here."""
    if isinstance(op, ast.Pow):
        return isinstance(right, int | float) and abs(right) <= 64
    if isinstance(op, ast.Mult):
        sized = [x for x in (left, right) if isinstance(x, str | bytes | list | tuple)]
        return not sized or all(not isinstance(x, int) or x <= 10_000 for x in (left, right))
    return True


def _literal_message(node: ast.expr | None) -> bool:
    return node is None or (isinstance(node, ast.Constant) and isinstance(node.value, str))


def _inert(stmt: ast.stmt) -> bool:
    """A statement that neither tests nor can fail: ``pass``, a docstring, an import-free
    assignment of a literal (HumanEval's ``METADATA = {...}``)."""
    if isinstance(stmt, ast.Pass):
        return True
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
        return True
    return (
        isinstance(stmt, ast.Assign)
        and all(isinstance(t, ast.Name) and t.id not in _RESERVED for t in stmt.targets)
        and _is_literal(stmt.value)
    )


def _always_true(stmt: ast.stmt) -> bool:
    """``assert True, "..."``: HumanEval's filler line, which never fails."""
    return (
        isinstance(stmt, ast.Assert)
        and isinstance(stmt.test, ast.Constant)
        and bool(stmt.test.value)
        and _literal_message(stmt.msg)
    )


def _one_parameter(args: ast.arguments, name: str) -> bool:
    return (
        not args.posonlyargs
        and [a.arg for a in args.args] == [name]
        and not args.vararg
        and not args.kwonlyargs
        and not args.kwarg
        and not args.defaults
    )
