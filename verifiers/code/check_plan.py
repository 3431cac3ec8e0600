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
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rewardsmith.verifiers.code.values import DecodeError, EncodeError, decode, encode

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


def plan(test: str, entry_point: str) -> tuple[list[dict[str, Any]], list[Planned]] | None:
    """The calls to relay (each ``{"fn", "args", "kwargs"}``, encoded) and the planned
    tests, or None when the check is not only literal calls compared with literals."""
    try:
        tree = ast.parse(test)
    except (SyntaxError, ValueError):
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
    if not isinstance(stmt, ast.Assert) or not _literal_message(stmt.msg):
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
    message = ast.literal_eval(stmt.msg) if stmt.msg is not None else ""
    source = lines[stmt.lineno - 1].strip()[:300]
    return call, Planned(stmt.lineno, source, index, test, str(message))


def _shape(node: ast.expr) -> tuple[ast.Call, Callable[[Any], bool]] | None:
    """``c == E``, ``E == c``, ``c != E``, ``c is True``, ``c``, ``not c`` and
    ``abs(c - E) < T`` (or ``<=``), where c is a call of the candidate."""
    if _is_candidate_call(node):
        assert isinstance(node, ast.Call)
        return node, bool
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        if _is_candidate_call(node.operand):
            assert isinstance(node.operand, ast.Call)
            return node.operand, operator.not_
        return None
    if not isinstance(node, ast.Compare) or len(node.ops) != 1:
        return None
    left, op, right = node.left, type(node.ops[0]), node.comparators[0]
    if op in _COMPARE:
        compare = _COMPARE[op]
        if _is_candidate_call(left) and _is_literal(right):
            want = ast.literal_eval(right)
            if op in (ast.Is, ast.IsNot) and not any(want is s for s in _SINGLETONS):
                return None
            assert isinstance(left, ast.Call)
            return left, lambda got: compare(got, want)
        if _is_candidate_call(right) and _is_literal(left) and op in (ast.Eq, ast.NotEq):
            want = ast.literal_eval(left)
            assert isinstance(right, ast.Call)
            return right, lambda got: compare(want, got)
        return None
    if op in _BOUND and _is_literal(right):
        return _closeness(left, _BOUND[op], ast.literal_eval(right))
    return None


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
    if not (_is_candidate_call(inner.left) and _is_literal(inner.right)):
        return None
    want = ast.literal_eval(inner.right)
    assert isinstance(inner.left, ast.Call)
    return inner.left, lambda got: bound(abs(got - want), tol)


def _is_candidate_call(node: ast.expr) -> bool:
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == "candidate"
        and _literal_call(node) is not None
    )


def _literal_call(node: ast.Call) -> tuple[list[Any], dict[str, Any]] | None:
    if not all(_is_literal(a) for a in node.args) or any(
        k.arg is None or not _is_literal(k.value) for k in node.keywords
    ):
        return None
    args = [ast.literal_eval(a) for a in node.args]
    return args, {str(k.arg): ast.literal_eval(k.value) for k in node.keywords}


def _is_literal(node: ast.expr) -> bool:
    if isinstance(node, ast.Starred):
        return False
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
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
