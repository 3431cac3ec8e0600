"""mypy on real broken modules (``-O json`` and text), and pyright from hand-written output
(pyright is not installed here; its format is from its documentation)."""

# ruff: noqa: E501  (tool output is quoted verbatim, long lines included)
from __future__ import annotations

import json
import shutil

import pytest

from rewardsmith.verifiers.diagnostics import Severity, Stage, parse_log

E, N = Severity.ERROR, Severity.NOTE
P, T = Stage.PARSE, Stage.TYPE

# name -> (module, (severity, stage, code, line, column, message fragment))
CASES: dict[str, tuple[str, tuple]] = {
    "assignment": (
        'x: int = "s"\n',
        (E, T, "assignment", 1, 10, "Incompatible types in assignment"),
    ),
    "arg_type": (
        'def f(a: int) -> None: ...\nf("s")\n',
        (E, T, "arg-type", 2, 3, 'Argument 1 to "f" has incompatible type "str"'),
    ),
    "return_value": (
        "def f() -> str:\n    return 1\n",
        (E, T, "return-value", 2, 12, "Incompatible return value type"),
    ),
    "name_defined": ("print(nope)\n", (E, T, "name-defined", 1, 7, 'Name "nope" is not defined')),
    "attr_defined": ("x = 1\nx.nope\n", (E, T, "attr-defined", 2, 1, 'has no attribute "nope"')),
    "call_arg": (
        "def f(a: int) -> None: ...\nf(1, 2)\n",
        (E, T, "call-arg", 2, 1, 'Too many arguments for "f"'),
    ),
    "index": ("x = 1\nx[0]\n", (E, T, "index", 2, 1, 'Value of type "int" is not indexable')),
    "operator": ('x = 1 + "s"\n', (E, T, "operator", 1, 9, "Unsupported operand types for +")),
    "union_attr": (
        "def f(x: int | None) -> int:\n    return x.real\n",
        (E, T, "union-attr", 2, 12, 'Item "None" of "int | None" has no attribute'),
    ),
    "override": (
        "class A:\n    def f(self, x: int) -> int: return x\nclass B(A):\n"
        "    def f(self, x: str) -> int: return 1\n",
        (E, T, "override", 4, 17, 'Argument 1 of "f" is incompatible with supertype "A"'),
    ),
    "no_untyped_def": (
        "# mypy: disallow-untyped-defs\ndef f(x):\n    return x\n",
        (E, T, "no-untyped-def", 2, 1, "missing a type annotation"),
    ),
    "missing_return": (
        "def f(x: int) -> int:\n    if x:\n        return 1\n",
        (E, T, "return", 1, 1, "Missing return statement"),
    ),
    "import_not_found": (
        "import no_such_module_xyz\n",
        (E, T, "import-not-found", 1, 1, "Cannot find implementation or library"),
    ),
    "var_annotated": ("x = []\n", (E, T, "var-annotated", 1, 1, 'Need type annotation for "x"')),
    "abstract": (
        "from abc import ABC, abstractmethod\nclass A(ABC):\n    @abstractmethod\n"
        "    def f(self) -> None: ...\nA()\n",
        (E, T, "abstract", 5, 1, 'Cannot instantiate abstract class "A"'),
    ),
    "list_item": (
        'x: list[int] = [1, "s"]\n',
        (E, T, "list-item", 1, 20, "List item 1 has incompatible type"),
    ),
    "dict_item": (
        'x: dict[str, int] = {"a": "b"}\n',
        (E, T, "dict-item", 1, 22, "Dict entry 0 has incompatible type"),
    ),
}
SYNTAX: dict[str, tuple[str, tuple]] = {
    "syntax_paren": ("x = (1,\n", (E, P, "syntax", 2, None, "Unexpected EOF while parsing")),
    "syntax_def": ("def f(:\n    pass\n", (E, P, "syntax", 1, None, "")),
}
MYPY = "mypy --no-incremental --cache-dir=/dev/null --no-error-summary"


def _files(cases):
    return {f"m_{name}.py": source for name, (source, _) in cases.items()}


def _first(records, name):
    mine = [d for d in records if d.file == f"m_{name}.py"]
    assert mine, records
    return mine[0]


@pytest.fixture(scope="module")
def json_records(build_together):
    run = build_together("mypy-json", _files(CASES), f"{MYPY} -O json m_*.py")
    return parse_log(run.log, "mypy")


@pytest.fixture(scope="module")
def text_records(build_together):
    run = build_together(
        "mypy-text", _files(CASES), f"{MYPY} --show-column-numbers --show-error-end m_*.py"
    )
    return parse_log(run.log)


@pytest.fixture(scope="module")
def syntax_records(build_all):
    # One run each: mypy stops at the first module that does not parse.
    runs = build_all(
        "mypy-syntax", "prog.py", {k: v[0] for k, v in SYNTAX.items()}, f"{MYPY} prog.py"
    )
    return {name: parse_log(run.log) for name, run in runs.items()}


def _check(record, expected, with_column=True):
    severity, stage, code, line, column, fragment = expected
    assert (record.tool, record.severity, record.stage, record.code) == (
        "mypy",
        severity,
        stage,
        code,
    )
    assert record.line == line
    if with_column and column is not None:
        assert record.column == column
    assert fragment in record.message


@pytest.mark.parametrize("name", sorted(CASES))
def test_mypy_json(json_records, name):
    _check(_first(json_records, name), CASES[name][1])


@pytest.mark.parametrize("name", sorted(CASES))
def test_mypy_text_agrees_with_json(json_records, text_records, name):
    """Text with --show-column-numbers gives the same 1-based columns as the converted JSON."""
    record = _first(text_records, name)
    _check(record, CASES[name][1])
    twin = _first(json_records, name)
    assert (record.end_line, record.end_column) == (twin.end_line, twin.end_column)


@pytest.mark.parametrize("name", sorted(SYNTAX))
def test_mypy_syntax_errors_from_text(syntax_records, name):
    _check(syntax_records[name][0], SYNTAX[name][1], with_column=False)


def test_notes_attach_to_their_error(json_records):
    record = _first(json_records, "import_not_found")
    assert record.notes  # "See https://mypy.readthedocs.io/..." is a hint of the error


# ------------------------------------------------------------------ pyright (hand-written)

PYRIGHT_JSON = {
    "version": "1.1.380",
    "generalDiagnostics": [
        {
            "file": "/w/a.py",
            "severity": "error",
            "message": 'Type "Literal[\'s\']" is not assignable to declared type "int"',
            "range": {"start": {"line": 0, "character": 9}, "end": {"line": 0, "character": 12}},
            "rule": "reportAssignmentType",
        },
        {
            "file": "/w/a.py",
            "severity": "error",
            "message": "Expected expression",
            "range": {"start": {"line": 3, "character": 4}, "end": {"line": 3, "character": 5}},
        },
        {
            "file": "/w/a.py",
            "severity": "warning",
            "message": 'Import "x" is not accessed',
            "range": {"start": {"line": 1, "character": 7}, "end": {"line": 1, "character": 8}},
            "rule": "reportUnusedImport",
        },
    ],
    "summary": {"filesAnalyzed": 1, "errorCount": 2, "warningCount": 1},
}
PYRIGHT_TEXT = """/w
  /w/a.py:1:10 - error: Type "Literal['s']" is not assignable to declared type "int" (reportAssignmentType)
  /w/a.py:4:5 - error: Expected expression
  /w/a.py:2:8 - warning: Import "x" is not accessed (reportUnusedImport)
2 errors, 1 warning, 0 informations
"""


def test_pyright_is_not_installed_here():
    """The hand-written outputs below are allowed only while pyright is absent."""
    if shutil.which("pyright"):
        pytest.fail("pyright is installed: replace the hand-written output with a real run")


@pytest.mark.parametrize("log", [json.dumps(PYRIGHT_JSON, indent=2), PYRIGHT_TEXT])
def test_pyright(log):
    records = parse_log(log)
    got = [(d.tool, d.severity.value, d.stage.value, d.code, d.line, d.column) for d in records]
    assert got == [
        ("pyright", "error", "type", "reportAssignmentType", 1, 10),
        ("pyright", "error", "parse", None, 4, 5),
        ("pyright", "warning", "type", "reportUnusedImport", 2, 8),
    ]
