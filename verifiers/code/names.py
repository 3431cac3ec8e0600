"""Which names a test takes from the candidate, and which it keeps for itself.

A test file sees the candidate only through the names the task declares: the entry point,
the reference's ``provides`` list, and (pytest) what a test file names from the
candidate's module (``from solution import f``, ``solution.f``, ``s.f`` after
``import solution as s``) or uses without binding it beside a ``from solution import *``.
Every other name (a helper the test imported, defined or took from the prompt) keeps its
binding whatever the candidate defines: a candidate's ``approx``, ``Counter`` or ``math``
never reaches a test.

    >>> sorted(free_names("import math\\nassert math.isclose(area(2), 12.56) and helper(1)"))
    ['area', 'helper']
    >>> stdlib_modules_used("assert math.isclose(area(2), 12.56)")
    ['math']
"""

from __future__ import annotations

import ast
import builtins
import sys
from collections.abc import Iterable

__all__ = [
    "attribute_bases",
    "bound_names",
    "free_names",
    "imported_from",
    "module_names",
    "star_imports",
    "star_imports_besides",
    "stdlib_modules_used",
    "stdlib_star_names",
]

_STDLIB = frozenset(sys.stdlib_module_names)


def bound_names(source: str, *, skip_module: str | None = None) -> set[str]:
    """Every name `source` binds anywhere (assignments, parameters, definitions, imports,
    loop and `except` targets), except what it imports from `skip_module`."""
    bound: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store | ast.Del):
            bound.add(node.id)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.ExceptHandler | ast.MatchAs | ast.MatchStar) and node.name:
            bound.add(node.name)
        elif isinstance(node, ast.Global | ast.Nonlocal):
            bound.update(node.names)
        elif isinstance(node, ast.Import):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and not (skip_module and node.module == skip_module):
            bound.update(a.asname or a.name for a in node.names if a.name != "*")
    return bound


def module_names(source: str) -> list[str]:
    """The names `source` binds at its top level (imports, definitions, assignments)."""
    found: list[str] = []
    for stmt in ast.parse(source).body:
        found += sorted(bound_names(ast.unparse(_shallow(stmt))))
    return list(dict.fromkeys(found))


def _shallow(stmt: ast.stmt) -> ast.stmt:
    """`stmt` without the body of a definition (whose locals are not module names)."""
    if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return ast.Assign(
            targets=[ast.Name(stmt.name, ast.Store())], value=ast.Constant(0), lineno=0
        )
    return stmt


def _loaded(sources: Iterable[str]) -> tuple[list[str], set[str]]:
    """Names read, in order, and those read anywhere other than as ``name.attribute``."""
    names, other = [], set()
    for source in sources:
        tree = ast.parse(source)
        bases = {
            id(n.value)
            for n in ast.walk(tree)
            if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
        }
        for n in ast.walk(tree):
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
                names.append(n.id)
                if id(n) not in bases:
                    other.add(n.id)
    return list(dict.fromkeys(names)), other


def _unbound(sources: tuple[str, ...], also_bound: Iterable[str]) -> tuple[list[str], set[str]]:
    bound = set(also_bound).union(*(bound_names(s) for s in sources))
    names, other = _loaded(sources)
    return [n for n in names if n not in bound and not hasattr(builtins, n)], other


def stdlib_modules_used(*sources: str, also_bound: Iterable[str] = ()) -> list[str]:
    """Standard modules `sources` read without importing them, only ever as
    ``module.attribute`` (``math.isclose`` with no ``import math``): the judge imports them
    itself, so a test never takes them from the candidate and a correct program is not
    failed by a NameError in the test."""
    names, other = _unbound(sources, also_bound)
    return [n for n in names if n in _STDLIB and n not in other]


def attribute_bases(*sources: str, also_bound: Iterable[str] = ()) -> list[str]:
    """Unbound names `sources` read only as ``name.attribute``, other than standard
    modules (``np.allclose`` with no import): never a candidate's function, so never the
    candidate's to define."""
    names, other = _unbound(sources, also_bound)
    return [n for n in names if n not in _STDLIB and n not in other]


def free_names(*sources: str, also_bound: Iterable[str] = ()) -> list[str]:
    """Names `sources` read but never bind (nor `also_bound`);
    builtins and the standard modules of `stdlib_modules_used` left out."""
    modules = set(stdlib_modules_used(*sources, also_bound=also_bound))
    names, _ = _unbound(sources, also_bound)
    return [n for n in names if n not in modules]


def star_imports(module: str, source: str) -> bool:
    """Whether `source` has ``from <module> import *``."""
    return any(
        isinstance(n, ast.ImportFrom) and n.module == module and any(a.name == "*" for a in n.names)
        for n in ast.walk(ast.parse(source))
    )


def star_imports_besides(module: str, source: str) -> list[str]:
    """The other modules `source` takes everything from (``from math import *``): a name
    one of them exports is the test's (``isclose``), never the candidate's to shadow."""
    return [
        n.module
        for n in ast.walk(ast.parse(source))
        if isinstance(n, ast.ImportFrom)
        and n.module
        and not n.level
        and n.module != module
        and any(a.name == "*" for a in n.names)
    ]


_IMPORT_EFFECTS = frozenset({"antigravity", "this", "__hello__", "__phello__", "idlelib"})
"""Standard modules whose import does something (opens a browser, prints)."""


def stdlib_star_names(source: str) -> set[str]:
    """What the ``from <standard module> import *`` lines of `source` bind (``isclose``
    after ``from math import *``): the test's names, never the candidate's. Standard
    modules only, imported here to read their exports; another module's star import is
    resolved by the judge, in its jail."""
    import importlib

    names: set[str] = set()
    for module in star_imports_besides("", source):
        if module.split(".")[0] not in _STDLIB or module.split(".")[0] in _IMPORT_EFFECTS:
            continue
        try:
            found = importlib.import_module(module)
        except Exception:
            continue
        public = [n for n in vars(found) if not n.startswith("_")]
        names.update(getattr(found, "__all__", public))
    return names


def imported_from(module: str, source: str) -> list[str]:
    """The names `source` takes from `module` by name: ``from module import a`` and
    ``module.a`` or ``alias.a`` after ``import module as alias``."""
    tree = ast.parse(source)
    aliases = {module}
    names: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            aliases.update(a.asname or a.name for a in node.names if a.name == module)
        elif isinstance(node, ast.ImportFrom) and node.module == module:
            names += [a.name for a in node.names if a.name != "*"]
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in aliases
        ):
            names.append(node.attr)
    return list(dict.fromkeys(names))
