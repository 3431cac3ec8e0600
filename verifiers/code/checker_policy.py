"""What a custom stdio checker may do: read the candidate's output as data, nothing more.

A checker is the reference's code, but the output it reads is the candidate's. A checker
that evaluates that output (``eval(output) == expected``) runs the candidate's code in the
checker's jail, where it can return an object whose ``__eq__`` is always true, or write
the checker's verdict file and exit. So a checker is refused when its reference loads
(a ``bad_reference`` naming the construct) if it uses any way to turn text into code or
to reach one dynamically:

- the builtins ``eval``, ``exec``, ``compile``, ``__import__``, ``breakpoint``, ``input``,
  ``globals``, ``locals``, ``vars``, and ``getattr``/``setattr``/``delattr`` with a name
  that is not a string literal (``getattr(builtins, "ev" + "al")``);
- any attribute of those names (``builtins.eval``, ``os.system``-style runners below);
- a dunder attribute (``().__class__.__subclasses__()``, ``f.__globals__``), and any
  dunder name but ``__name__`` (``__builtins__``, ``__loader__``, ``__spec__``);
- importing any module but ``math``, ``cmath``, ``re``, ``json``, ``ast``, ``fractions``,
  ``decimal``, ``itertools``, ``collections``, ``string``, ``functools``, ``statistics``,
  ``heapq``, ``bisect``, ``numbers``, ``typing``, ``unicodedata``, ``difflib``,
  ``textwrap`` (an allow-list: ``sympy.sympify``, ``pandas.eval``, ``timeit`` and
  ``pickle`` all evaluate text);
- ``exit`` and ``quit``.

``ast.literal_eval`` is allowed: it builds only literals (numbers, strings, tuples, lists,
dicts, sets, booleans, None) and never runs code, so the candidate's output stays data.
``json.loads``, ``float``, ``int``, ``str.split`` are the usual tools.

    >>> refuse_dynamic("import ast\\ndef check(i, o, e):\\n    return ast.literal_eval(o) == 1")
    >>> try:
    ...     refuse_dynamic("def check(i, o, e):\\n    return eval(o) == eval(e)")
    ... except CheckerRefused as exc:
    ...     print(str(exc)[:32])
    custom checker line 2: uses eval
"""

from __future__ import annotations

import ast

__all__ = ["CheckerRefused", "refuse_dynamic"]

_EVALUATORS = frozenset(
    {
        "eval",
        "exec",
        "compile",
        "__import__",
        "breakpoint",
        "input",
        "globals",
        "locals",
        "vars",
        "exit",
        "quit",
    }
)
_BY_NAME = frozenset({"getattr", "setattr", "delattr"})
_ALLOWED_MODULES = frozenset(
    {
        "math",
        "cmath",
        "re",
        "json",
        "ast",
        "fractions",
        "decimal",
        "itertools",
        "collections",
        "string",
        "functools",
        "statistics",
        "heapq",
        "bisect",
        "numbers",
        "typing",
        "unicodedata",
        "difflib",
        "textwrap",
        "__future__",
    }
)
"""The only modules a checker may import: none of them turns text into code. A deny-list
missed `sympy.sympify` and `parse_expr` (both call `eval` on the output), `pandas.eval`,
`numexpr`, `timeit`, `cProfile.run`, `doctest`, `numpy.load(allow_pickle=True)`."""
_RULE = (
    "a custom checker reads the candidate's output as data and must not evaluate it "
    "(use ast.literal_eval, json.loads, float or int; see docs/code.md, Custom checkers)"
)


class CheckerRefused(ValueError):
    """The checker could hand its verdict to the output it checks."""


def refuse_dynamic(source: str) -> None:
    """Raise `CheckerRefused` naming the first construct that could run the output."""
    try:
        tree = ast.parse(source)
    except SyntaxError as exc:
        raise CheckerRefused(f"custom checker does not parse: {exc}") from None
    called = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    for node in ast.walk(tree):
        why = _why(node)
        if (
            not why
            and isinstance(node, ast.Name)
            and node.id in _BY_NAME
            and id(node) not in called
        ):
            why = f"passes {node.id} around (call it with a literal name)"
        if why:
            line = getattr(node, "lineno", "?")
            raise CheckerRefused(f"custom checker line {line}: {why}: {_RULE}")


def _why(node: ast.AST) -> str:
    if isinstance(node, ast.Name) and node.id in _EVALUATORS:
        return f"uses {node.id}"
    if isinstance(node, ast.Attribute):
        if node.attr in _EVALUATORS:
            return f"uses .{node.attr}"
        if _dunder(node.attr):
            return f"reads the dunder attribute {node.attr}"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _BY_NAME:
        name = node.args[1] if len(node.args) > 1 else None
        if not (isinstance(name, ast.Constant) and isinstance(name.value, str)):
            return f"{node.func.id} with a computed name"
        if name.value in _EVALUATORS or name.value.startswith("__"):
            return f"{node.func.id} of {name.value}"
    modules: list[str] = []
    if isinstance(node, ast.Import):
        modules = [a.name for a in node.names]
    elif isinstance(node, ast.ImportFrom):
        modules = [node.module or ""]
    for module in modules:
        if module.split(".")[0] not in _ALLOWED_MODULES:
            allowed = ", ".join(sorted(_ALLOWED_MODULES - {"__future__"}))
            return f"imports {module} (a checker may import only {allowed})"
    if isinstance(node, ast.Name) and _dunder(node.id) and node.id != "__name__":
        return f"uses {node.id}"  # __builtins__, __loader__, __spec__: ways to the loaders
    return ""


def _dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__")
