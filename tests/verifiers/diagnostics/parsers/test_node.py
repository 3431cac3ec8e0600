"""Node.js on real broken scripts: load-time syntax errors and runtime errors."""

from __future__ import annotations

import pytest

from rewardsmith.verifiers.diagnostics import Stage, parse_log

P, R = Stage.PARSE, Stage.RUN

# name -> (script, (stage, code, line, column, message fragment, context))
CASES: dict[str, tuple[str, tuple]] = {
    "reference_error": (
        "function f() {\n  return nope + 1;\n}\nf();\n",
        (R, "ReferenceError", 2, 3, "nope is not defined", "f"),
    ),
    "call_undefined": (
        "const o = {};\no.method();\n",
        (R, "TypeError", 2, 3, "o.method is not a function", "Object.<anonymous>"),
    ),
    "unexpected_token": ("let x = ;\n", (P, "SyntaxError", 1, 9, "Unexpected token ';'", None)),
    "missing_paren": (
        "console.log((1 + 2);\n",
        (P, "SyntaxError", 1, 19, "missing ) after argument list", None),
    ),
    "invalid_array_length": (
        "const a = new Array(-1);\n",
        (R, "RangeError", 1, 11, "Invalid array length", "Object.<anonymous>"),
    ),
    "thrown_string": ('throw "boom";\n', (R, "uncaught", 1, 1, "boom", None)),
    "custom_error": (
        "class MyError extends Error {\n  constructor(m) { super(m); this.name = "
        "'MyError'; }\n}\nthrow new MyError('custom');\n",
        (R, "MyError", 4, 7, "custom", "Object.<anonymous>"),
    ),
    "module_not_found": (
        'require("./missing-module");\n',
        (
            R,
            "MODULE_NOT_FOUND",
            1,
            1,
            "Cannot find module './missing-module'",
            "Object.<anonymous>",
        ),
    ),
    "assertion": (
        'const assert = require("assert");\nassert.strictEqual(1, 2);\n',
        (R, "ERR_ASSERTION", 2, 8, "Expected values to be strictly equal", "Object.<anonymous>"),
    ),
    "json_parse": (
        'JSON.parse("{bad");\n',
        (R, "SyntaxError", 1, 6, "Expected property name", "Object.<anonymous>"),
    ),
    "stack_overflow": (
        "function r() { return r(); }\nr();\n",
        (R, "RangeError", 1, 16, "Maximum call stack size exceeded", "r"),
    ),
    "const_assign": (
        "const c = 1;\nc = 2;\n",
        (R, "TypeError", 2, 3, "Assignment to constant variable.", "Object.<anonymous>"),
    ),
    "redeclared": (
        "let x = 1;\nlet x = 2;\n",
        (P, "SyntaxError", 2, 5, "Identifier 'x' has already been declared", None),
    ),
    "invalid_arg_type": (
        "Buffer.from(5);\n",
        (R, "ERR_INVALID_ARG_TYPE", 1, 8, "must be of type string", "Object.<anonymous>"),
    ),
    "temporal_dead_zone": (
        "console.log(t);\nlet t = 1;\n",
        (
            R,
            "ReferenceError",
            1,
            13,
            "Cannot access 't' before initialization",
            "Object.<anonymous>",
        ),
    ),
    "null_property": (
        "const n = null;\nn.field;\n",
        (R, "TypeError", 2, 3, "Cannot read properties of null", "Object.<anonymous>"),
    ),
    "unterminated_string": (
        'const s = "abc;\n',
        (P, "SyntaxError", 1, 11, "Invalid or unexpected token", None),
    ),
}


@pytest.fixture(scope="module")
def runs(build_all):
    return build_all("node", "prog.js", {k: v[0] for k, v in CASES.items()}, "node prog.js")


@pytest.mark.parametrize("name", sorted(CASES))
def test_node(runs, name):
    stage, code, line, column, fragment, context = CASES[name][1]
    run = runs[name]
    assert run.returncode != 0
    [record] = parse_log(run.log, "node")
    assert (record.tool, record.stage, record.code) == ("node", stage, code)
    assert record.file.endswith("prog.js")
    assert (record.line, record.column, record.context) == (line, column, context)
    assert fragment in record.message


def test_detected_without_a_tool_name(runs):
    assert [d.tool for d in parse_log(runs["reference_error"].log)] == ["node"]


def test_internal_frames_are_related_not_primary(runs):
    [record] = parse_log(runs["module_not_found"].log)
    assert any(r.file and r.file.startswith("node:") for r in record.related)


def test_syntax_error_keeps_the_quoted_line(runs):
    [record] = parse_log(runs["unexpected_token"].log)
    assert record.excerpt == "let x = ;"
