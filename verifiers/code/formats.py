"""Test formats: turn a sample's `reference` into a validated `Suite`.

Reference shapes (a dict; ``format`` picks one):

- ``humaneval``: ``test`` (source defining ``check(candidate)``), ``entry_point``, and
  optionally ``prompt`` (trusted: run in the judge for helpers such as HumanEval/32's
  ``poly``, and put before a completion that does not define the entry point itself).
- ``asserts`` (MBPP): ``asserts`` (a list of assert statements), optional ``setup`` (trusted
  code run in the judge first).
- ``calls``: ``fn`` and ``cases``, each ``{"args": [...], "kwargs": {...}, "expected": v}``
  in JSON, or ``{"input": "(1, 2)", "output": "3"}`` as Python literals (tuples, sets).
  Optional ``rel_tol``/``abs_tol`` per case or for all. Compared outside every jail.
- ``stdio``: ``cases`` of ``{"input": str, "output": str}`` and a ``checker`` (see
  `stdio.CHECKERS`); ``checker_code`` for ``custom``. Any language.
- ``pytest``: ``files`` (name -> source of test files) and ``expected_tests`` (how many
  tests must be collected); the candidate's module is ``module`` (default ``solution``).
"""

from __future__ import annotations

import ast
import threading
from dataclasses import dataclass, field
from typing import Any

from rewardsmith.verifiers.code.values import EncodeError, encode

__all__ = ["FORMATS", "ReferenceError_", "Suite", "parse_reference"]

FORMATS = ("humaneval", "asserts", "calls", "stdio", "pytest")
_MAX_LITERAL = 1_000_000


class ReferenceError_(ValueError):
    """The sample's reference is not a usable test suite (a data problem, not the model's)."""


@dataclass(frozen=True)
class Suite:
    format: str
    judge_spec: dict[str, Any] = field(default_factory=dict)
    """What the judge's jail receives: never an expected value of a `calls` case."""
    cases: tuple[dict[str, Any], ...] = ()
    """Trusted data kept in the scoring process (expected values, stdio outputs)."""
    prompt: str = ""
    entry_point: str | None = None
    checker: str = "tokens"
    checker_code: str = ""
    expected_tests: int = 0


_AST_LOCK = threading.Lock()
"""CPython 3.11's `ast` is not thread-safe (gh-106905: two threads building trees at once
raise "AST constructor recursion depth mismatch"), and verifiers are called from threads
(server lanes, benchmarks): references are parsed one at a time."""


def parse_reference(ref: Any) -> Suite:
    """Validate `ref`; raises ReferenceError_ saying what is wrong."""
    with _AST_LOCK:
        return _parse_reference(ref)


def _parse_reference(ref: Any) -> Suite:
    if not isinstance(ref, dict):
        raise ReferenceError_("code_tests needs `reference` to be a dict with a `format` key")
    fmt = ref.get("format")
    if fmt not in FORMATS:
        raise ReferenceError_(f"reference format {fmt!r} is not one of {', '.join(FORMATS)}")
    return _PARSERS[fmt](ref)


def _text(ref: dict[str, Any], key: str, *, required: bool = True) -> str:
    value = ref.get(key, "")
    if not isinstance(value, str) or (required and not value.strip()):
        raise ReferenceError_(f"reference `{key}` must be a non-empty string")
    return value


def _humaneval(ref: dict[str, Any]) -> Suite:
    test, entry = _text(ref, "test"), _text(ref, "entry_point")
    prompt = _text(ref, "prompt", required=False)
    try:
        tree = ast.parse(test)
    except SyntaxError as exc:
        raise ReferenceError_(f"reference `test` does not parse: {exc}") from None
    if not any(isinstance(n, ast.FunctionDef) and n.name == "check" for n in tree.body):
        raise ReferenceError_("reference `test` must define check(candidate)")
    spec = {"format": "check", "test": test, "entry_point": entry, "prelude": prompt}
    return Suite("humaneval", spec, prompt=prompt, entry_point=entry)


def _asserts(ref: dict[str, Any]) -> Suite:
    asserts = ref.get("asserts")
    if not isinstance(asserts, list) or not asserts or not all(isinstance(a, str) for a in asserts):
        raise ReferenceError_("reference `asserts` must be a non-empty list of strings")
    for a in asserts:
        try:
            ast.parse(a)
        except SyntaxError as exc:
            raise ReferenceError_(f"assert does not parse: {a[:80]!r}: {exc}") from None
    setup = _text(ref, "setup", required=False)
    spec = {"format": "asserts", "asserts": asserts, "prelude": setup}
    return Suite("asserts", spec, entry_point=ref.get("entry_point"))


def _literal(text: Any, what: str) -> Any:
    if not isinstance(text, str) or len(text) > _MAX_LITERAL:
        raise ReferenceError_(f"{what} must be a Python literal string")
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError) as exc:
        raise ReferenceError_(f"{what} is not a Python literal: {exc}") from None


def _calls(ref: dict[str, Any]) -> Suite:
    fn = _text(ref, "fn")
    cases = ref.get("cases")
    if not isinstance(cases, list) or not cases:
        raise ReferenceError_("reference `cases` must be a non-empty list")
    trusted, relayed = [], []
    for i, case in enumerate(cases):
        if not isinstance(case, dict):
            raise ReferenceError_(f"case {i} must be a dict")
        if "input" in case:
            args = _literal(case["input"], f"case {i} input")
            args = list(args) if isinstance(args, tuple) else [args]
        else:
            args = case.get("args", [])
        if "output" in case:
            expected = _literal(case["output"], f"case {i} output")
        elif "expected" in case:
            expected = case["expected"]
        else:
            raise ReferenceError_(f"case {i} has no expected value: a missing one never passes")
        kwargs = case.get("kwargs", {})
        if not isinstance(args, list) or not isinstance(kwargs, dict):
            raise ReferenceError_(f"case {i}: args must be a list and kwargs a dict")
        try:
            relayed.append({"fn": fn, "args": encode(args), "kwargs": encode(kwargs)})
            encode(expected)
        except EncodeError as exc:
            raise ReferenceError_(f"case {i}: {exc}") from None
        tol = {k: float(case.get(k, ref.get(k, 0.0))) for k in ("rel_tol", "abs_tol")}
        trusted.append(
            {
                "args": args,
                "expected": expected,
                **tol,
                "hide_expected": bool(ref.get("hide_expected", False)),
            }
        )
    spec = {"format": "calls", "calls": relayed}
    return Suite("calls", spec, cases=tuple(trusted), entry_point=fn)


def _stdio(ref: dict[str, Any]) -> Suite:
    from rewardsmith.verifiers.code.stdio import CHECKERS

    cases = ref.get("cases")
    if not isinstance(cases, list) or not cases:
        raise ReferenceError_("reference `cases` must be a non-empty list")
    out = []
    for i, case in enumerate(cases):
        if not isinstance(case, dict) or not isinstance(case.get("input", ""), str):
            raise ReferenceError_(f"case {i} must be a dict with a string `input`")
        if not isinstance(case.get("output"), str):
            raise ReferenceError_(f"case {i} has no expected `output`: a missing one never passes")
        out.append({"input": case.get("input", ""), "output": case["output"]})
    checker = ref.get("checker", "tokens")
    if checker not in CHECKERS:
        raise ReferenceError_(f"checker {checker!r} is not one of {', '.join(CHECKERS)}")
    code = _text(ref, "checker_code", required=checker == "custom")
    return Suite(
        "stdio",
        cases=tuple(out),
        checker=checker,
        checker_code=code,
        judge_spec={"float_tol": float(ref.get("float_tol", 1e-6))},
    )


def _pytest(ref: dict[str, Any]) -> Suite:
    files = ref.get("files")
    if not isinstance(files, dict) or not files:
        raise ReferenceError_("reference `files` must map test file names to sources")
    for name, src in files.items():
        if not (
            isinstance(name, str)
            and name.startswith("test_")
            and name.endswith(".py")
            and "/" not in name
            and isinstance(src, str)
        ):
            raise ReferenceError_(f"test file {name!r}: a name test_*.py with source text")
    expected = ref.get("expected_tests")
    if not isinstance(expected, int) or isinstance(expected, bool) or expected < 1:
        raise ReferenceError_("reference `expected_tests` must be a positive integer")
    module = ref.get("module", "solution")
    if not isinstance(module, str) or not module.isidentifier():
        raise ReferenceError_("reference `module` must be a Python identifier")
    spec = {"format": "pytest", "files": files, "module": module, "expected_tests": expected}
    return Suite("pytest", spec, expected_tests=expected)


_PARSERS = {
    "humaneval": _humaneval,
    "asserts": _asserts,
    "calls": _calls,
    "stdio": _stdio,
    "pytest": _pytest,
}
