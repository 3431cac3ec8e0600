"""Test formats: turn a sample's `reference` into a validated `Suite`.

Reference shapes (a dict; ``format`` picks one):

- ``humaneval``: ``test`` (source defining ``check(candidate)``), ``entry_point``, and
  optionally ``prompt`` (trusted: run in the judge for helpers such as HumanEval/32's
  ``poly``, and put before a completion that does not define the entry point itself).
  A helper the check uses must come from the test or the prompt (or be listed in
  ``provides``): without one it is the reference's error, never the candidate's to define.
  A ``from <standard module> import *`` in the test, prompt or ``setup`` defines what that
  module exports (`names.stdlib_star_names`).
- ``asserts`` (MBPP): ``asserts`` (a list of assert statements), optional ``setup`` (trusted
  code run in the judge first) and ``entry_point``: given, every other free name the
  asserts use must come from ``setup`` or ``provides``; without it, the one name the
  asserts use and do not bind is the candidate's (several are a reference error).
  Standard modules used as ``math.isclose`` without an import are imported by the judge,
  never the candidate's.
- ``calls``: ``fn`` and ``cases``, each ``{"args": [...], "kwargs": {...}, "expected": v}``
  in JSON, or ``{"input": "(1, 2)", "output": "3"}`` as Python literals (tuples, sets).
  Optional ``rel_tol``/``abs_tol`` per case or for all. Compared outside every jail.
- ``stdio``: ``cases`` of ``{"input": str, "output": str}`` and a ``checker`` (see
  `stdio.CHECKERS`); ``checker_code`` for ``custom``. Any language.
- ``pytest``: ``files`` (name -> source of test files) and ``expected_tests`` (how many
  tests must be collected); the candidate's module is ``module`` (default ``solution``).
  A name a test star-imports from another module (``from math import *``) stays that
  module's beside ``from solution import *``, whatever the import order, unless
  ``provides`` names it as the candidate's.

Every format takes ``provides`` (names besides the entry point the candidate must define,
for tests that call several of its functions) and ``hide_expected`` (feedback never shows
an expected value: see `outcome.conceal`). The names a test may take from the candidate
are `Suite.candidate_names` (see `names`); a helper the test imported or defined keeps its
binding whatever the candidate defines.
"""

from __future__ import annotations

import ast
import builtins
import dataclasses
import functools
import threading
from dataclasses import dataclass, field
from typing import Any

from rewardsmith.verifiers.code import check_plan
from rewardsmith.verifiers.code import names as _names
from rewardsmith.verifiers.code.checker_policy import CheckerRefused, refuse_dynamic
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
    candidate_names: tuple[str, ...] = ()
    """The names the tests may take from the candidate (entry point, ``provides``, what a
    pytest file names from the candidate's module); nothing else of it reaches a test."""
    hide_expected: bool = False
    """Feedback never shows an expected value (`outcome.conceal`)."""
    shown: dict[str, str] = field(default_factory=dict)
    """Per record name, what hidden feedback shows as the input: the candidate's calls
    only (an assert's source has its expected value in it)."""
    batch: dict[str, Any] | None = None
    """A HumanEval check of literal calls only (`check_plan`): the calls, relayed in one
    batch with no judge; `planned` (trusted, kept here) judges the results."""
    planned: tuple[Any, ...] = ()


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
    suite = _PARSERS[fmt](ref)
    hide = ref.get("hide_expected", False)
    if not isinstance(hide, bool):
        raise ReferenceError_("reference `hide_expected` must be true or false")
    return dataclasses.replace(suite, hide_expected=hide)


def _provides(ref: dict[str, Any]) -> list[str]:
    value = ref.get("provides", [])
    if not isinstance(value, list) or not all(
        isinstance(n, str) and n.isidentifier() for n in value
    ):
        raise ReferenceError_("reference `provides` must be a list of identifiers")
    return value


def _runnable(prompt: str) -> str:
    """The prompt as the judge runs it: one that ends in a bare ``def f(...):`` line gets
    a body."""
    try:
        ast.parse(prompt)
    except SyntaxError:
        return prompt.rstrip() + "\n    pass\n"
    return prompt


def _own_helpers(names: list[str], fmt: str, where: str) -> ReferenceError_:
    listed = ", ".join(names)
    return ReferenceError_(
        f"the {fmt} tests use {listed}, which {where}: a helper the tests "
        "need comes from the reference, never from the candidate. Define it there, or list "
        "it in `provides` if the candidate must write it."
    )


def _calls_in(source: str, names: set[str]) -> str:
    """The calls to `names` in `source`, as text (what hidden feedback shows)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return ""
    calls = [
        ast.unparse(n)
        for n in ast.walk(tree)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in names
    ]
    return "; ".join(dict.fromkeys(calls))[:300]


def _text(ref: dict[str, Any], key: str, *, required: bool = True) -> str:
    value = ref.get(key, "")
    if not isinstance(value, str) or (required and not value.strip()):
        raise ReferenceError_(f"reference `{key}` must be a non-empty string")
    return value


def _humaneval(ref: dict[str, Any]) -> Suite:
    test, entry = _text(ref, "test"), _text(ref, "entry_point")
    prompt = _text(ref, "prompt", required=False)
    provides = tuple(_provides(ref))
    return _humaneval_suite(test, entry, prompt, provides, ref.get("hide_expected") is True)


@functools.lru_cache(maxsize=256)
def _humaneval_suite(
    test: str, entry: str, prompt: str, provides: tuple[str, ...], hidden: bool
) -> Suite:
    """The suite of one HumanEval reference, kept per reference: the samples of a group
    (and of every epoch) share their task's tests, and planning a check parses it. 256
    tasks cover the groups in flight in a scoring process (HumanEval's 164 hold 2 MB)."""
    try:
        tree = ast.parse(test)
    except SyntaxError as exc:
        raise ReferenceError_(f"reference `test` does not parse: {exc}") from None
    if not any(isinstance(n, ast.FunctionDef) and n.name == "check" for n in tree.body):
        raise ReferenceError_("reference `test` must define check(candidate)")
    try:
        prelude = _runnable(prompt)
        trusted = _names.bound_names(prelude) | {entry, *provides}
        trusted |= _names.stdlib_star_names(prelude) | _names.stdlib_star_names(test)
    except SyntaxError as exc:
        raise ReferenceError_(f"reference `prompt` does not parse: {exc}") from None
    batch = check_plan.plan(tree, test, entry, also_bound=trusted)
    modules: list[str] = []  # a planned check reads no name but builtins and `candidate`
    if batch is None:
        helpers = _names.free_names(test, also_bound=trusted)
        if helpers:
            raise _own_helpers(helpers, "humaneval", "neither the test nor the prompt defines")
        modules = _names.stdlib_modules_used(test, also_bound=trusted)
    candidate = (entry, *provides)
    spec = {
        "format": "check",
        "test": test,
        "entry_point": entry,
        "prelude": prelude,
        "candidate_names": list(candidate),
        "modules": modules,
    }
    shown: dict[str, str] = {}
    if hidden:  # read by `outcome.conceal` only
        shown = {
            f"line {node.lineno}": _calls_in(ast.unparse(node), {"candidate", *candidate})
            for node in ast.walk(tree)
            if isinstance(node, ast.stmt) and not isinstance(node, ast.FunctionDef)
        }
    return Suite(
        "humaneval",
        spec,
        prompt=prompt,
        entry_point=entry,
        candidate_names=candidate,
        shown=shown,
        batch=None if batch is None else {"calls": batch[0]},
        planned=() if batch is None else tuple(batch[1]),
    )


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
    entry = ref.get("entry_point")
    if entry is not None and not (isinstance(entry, str) and entry.isidentifier()):
        raise ReferenceError_("reference `entry_point` must be an identifier")
    provides = _provides(ref)
    try:
        trusted = _names.bound_names(setup) | _names.stdlib_star_names(setup)
    except SyntaxError as exc:
        raise ReferenceError_(f"reference `setup` does not parse: {exc}") from None
    free = _names.free_names(*asserts, also_bound=trusted)
    if entry:
        helpers = [n for n in free if n not in {entry, *provides}]
        if helpers:
            raise _own_helpers(helpers, "asserts", "`setup` does not define")
        candidate = (entry, *provides)
    else:
        modules = _names.attribute_bases(*asserts, also_bound=trusted)
        if modules:
            raise _own_helpers(modules, "asserts", "`setup` does not import")
        undeclared = [n for n in free if n not in provides]
        if len(undeclared) > 1:  # which is the candidate's and which a missing helper?
            raise ReferenceError_(
                f"the asserts use {', '.join(undeclared)}, which `setup` does not define: "
                "name the candidate's function with `entry_point` (and any others it must "
                "write in `provides`); a helper the tests need comes from `setup`, never "
                "from the candidate"
            )
        candidate = tuple(dict.fromkeys([*free, *provides]))
    spec = {
        "format": "asserts",
        "asserts": asserts,
        "prelude": setup,
        "candidate_names": list(candidate),
        "modules": _names.stdlib_modules_used(*asserts, also_bound=trusted),
    }
    shown = {f"assert {i}": _calls_in(a, set(candidate)) for i, a in enumerate(asserts)}
    return Suite("asserts", spec, entry_point=entry, candidate_names=candidate, shown=shown)


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
        trusted.append({"args": args, "expected": expected, **tol})
    spec = {"format": "calls", "calls": relayed}
    return Suite("calls", spec, cases=tuple(trusted), entry_point=fn, candidate_names=(fn,))


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
    if checker == "custom":
        try:
            refuse_dynamic(code)
        except CheckerRefused as exc:
            raise ReferenceError_(str(exc)) from None
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
    try:
        candidate, star = _pytest_names(module, files, _provides(ref))
    except SyntaxError as exc:
        raise ReferenceError_(f"a test file does not parse: {exc}") from None
    spec = {
        "format": "pytest",
        "files": files,
        "module": module,
        "expected_tests": expected,
        "candidate_names": list(candidate),
        "star_names": star,
        "star_modules": sorted(
            {m for src in files.values() for m in _names.star_imports_besides(module, src)}
        ),
        "provides": _provides(ref),
    }
    return Suite("pytest", spec, expected_tests=expected, candidate_names=candidate)


def _pytest_names(
    module: str, files: dict[str, str], provides: list[str]
) -> tuple[tuple[str, ...], list[str]]:
    """The candidate's names the files take (by name, or free beside `import *`), and
    those `import *` exports: never a builtin's name or one any test file binds itself."""
    taken = list(provides)
    own: set[str] = set()
    for source in files.values():
        taken += _names.imported_from(module, source)
        if _names.star_imports(module, source):
            modules = set(_names.attribute_bases(source))  # `np.x`: no function of its
            taken += [n for n in _names.free_names(source) if n not in modules]
        own |= _names.bound_names(source, skip_module=module)
    candidate = tuple(dict.fromkeys(taken))
    star = [n for n in candidate if n not in own and not hasattr(builtins, n)]
    return candidate, star


_PARSERS = {
    "humaneval": _humaneval,
    "asserts": _asserts,
    "calls": _calls,
    "stdio": _stdio,
    "pytest": _pytest,
}
