"""TypeScript's tsc from hand-written output (tsc is not installed here): the documented
``--pretty false`` format with real tsc messages and codes."""

# ruff: noqa: E501  (tool output is quoted verbatim, long lines included)
from __future__ import annotations

import shutil

import pytest

from rewardsmith.verifiers.diagnostics import Severity, Stage, parse_log

TSC_LOG = """\
src/index.ts(3,7): error TS2322: Type 'string' is not assignable to type 'number'.
src/index.ts(5,1): error TS1005: ';' expected.
src/index.ts(8,14): error TS2345: Argument of type 'number' is not assignable to parameter of type 'string'.
src/index.ts(10,5): error TS2339: Property 'foo' does not exist on type '{}'.
src/util.ts(2,10): error TS2304: Cannot find name 'undefinedThing'.
src/util.ts(12,3): error TS2322: Type '{ a: number; }' is not assignable to type 'B'.
  Object literal may only specify known properties, and 'a' does not exist in type 'B'.
src/util.ts(14,1): error TS1128: Declaration or statement expected.
src/util.ts(20,7): error TS2554: Expected 2 arguments, but got 1.
src/util.ts(22,9): error TS7006: Parameter 'x' implicitly has an 'any' type.
src/util.ts(25,1): error TS2307: Cannot find module './missing' or its corresponding type declarations.
src/util.ts(30,5): error TS2531: Object is possibly 'null'.
src/util.ts(31,3): error TS1002: Unterminated string literal.
error TS5023: Unknown compiler option 'strictest'.
"""

EXPECTED = [
    ("src/index.ts", 3, 7, "TS2322", Stage.TYPE),
    ("src/index.ts", 5, 1, "TS1005", Stage.PARSE),
    ("src/index.ts", 8, 14, "TS2345", Stage.TYPE),
    ("src/index.ts", 10, 5, "TS2339", Stage.TYPE),
    ("src/util.ts", 2, 10, "TS2304", Stage.TYPE),
    ("src/util.ts", 12, 3, "TS2322", Stage.TYPE),
    ("src/util.ts", 14, 1, "TS1128", Stage.PARSE),
    ("src/util.ts", 20, 7, "TS2554", Stage.TYPE),
    ("src/util.ts", 22, 9, "TS7006", Stage.TYPE),
    ("src/util.ts", 25, 1, "TS2307", Stage.TYPE),
    ("src/util.ts", 30, 5, "TS2531", Stage.TYPE),
    ("src/util.ts", 31, 3, "TS1002", Stage.PARSE),
    (None, None, None, "TS5023", Stage.TYPE),
]


def test_tsc_is_not_installed_here():
    if shutil.which("tsc"):
        pytest.fail("tsc is installed: replace the hand-written output with a real run")


@pytest.mark.parametrize("tool", ["tsc", None])
def test_tsc(tool):
    records = parse_log(TSC_LOG, tool)
    assert [(d.file, d.line, d.column, d.code, d.stage) for d in records] == EXPECTED
    assert all(d.tool == "tsc" and d.severity is Severity.ERROR for d in records)
    assert records[5].notes == (
        "Object literal may only specify known properties, and 'a' does not exist in type 'B'.",
    )
    assert records[0].message == "Type 'string' is not assignable to type 'number'."
