"""CPython on real broken scripts: syntax errors and tracebacks."""

from __future__ import annotations

import sys

import pytest

from rewardsmith.verifiers.diagnostics import Stage, parse_log

P, R = Stage.PARSE, Stage.RUN

# name -> (script, (stage, code, line, message fragment, context))
CASES: dict[str, tuple[str, tuple]] = {
    "invalid_syntax": ("def f(:\n    pass\n", (P, "SyntaxError", 1, "invalid syntax", None)),
    "indentation": (
        "def f():\nreturn 1\n",
        (P, "IndentationError", 2, "expected an indented block", None),
    ),
    "unclosed_paren": ("x = (1,\n", (P, "SyntaxError", 1, "'(' was never closed", None)),
    "tab_error": (
        "if True:\n        x = 1\n\ty = 2\n",
        (P, "TabError", 3, "inconsistent use of tabs and spaces", None),
    ),
    "name_error": (
        "def f():\n    return nope\nf()\n",
        (R, "NameError", 2, "'nope' is not defined", "f"),
    ),
    "type_error": ('x = 1 + "a"\n', (R, "TypeError", 1, "unsupported operand", "<module>")),
    "zero_division": (
        "def f(a):\n    return a / 0\nf(1)\n",
        (R, "ZeroDivisionError", 2, "division by zero", "f"),
    ),
    "key_error": ('d = {}\nd["k"]\n', (R, "KeyError", 2, "'k'", "<module>")),
    "index_error": ("a = []\na[3]\n", (R, "IndexError", 2, "list index out of range", "<module>")),
    "attribute_error": (
        "x = 1\nx.nope()\n",
        (R, "AttributeError", 2, "'int' object has no attribute 'nope'", "<module>"),
    ),
    "value_error": ('int("x")\n', (R, "ValueError", 1, "invalid literal for int()", "<module>")),
    "module_not_found": (
        "import no_such_module_here\n",
        (R, "ModuleNotFoundError", 1, "No module named 'no_such_module_here'", "<module>"),
    ),
    "recursion": (
        "def r():\n    return r()\nr()\n",
        (R, "RecursionError", 2, "maximum recursion depth exceeded", "r"),
    ),
    "assertion": ("assert 1 == 2\n", (R, "AssertionError", 1, "", "<module>")),
    "custom_exception": (
        "class Boom(Exception):\n    pass\nraise Boom('bang')\n",
        (R, "Boom", 3, "bang", "<module>"),
    ),
    "library_frame": (
        'import json\njson.loads("{")\n',
        (R, "json.decoder.JSONDecodeError", 2, "Expecting property name", "<module>"),
    ),
    "unbound_local": (
        "def f():\n    x += 1\nf()\n",
        (R, "UnboundLocalError", 2, "cannot access local variable 'x'", "f"),
    ),
    "chained": (
        'def f(d):\n    return d["k"]\ntry:\n    f({})\nexcept KeyError as e:\n'
        '    raise ValueError("bad") from e\n',
        (R, "ValueError", 6, "bad", "<module>"),
    ),
}


@pytest.fixture(scope="module")
def runs(build_all):
    return build_all(
        "python", "prog.py", {k: v[0] for k, v in CASES.items()}, f"{sys.executable} -I prog.py"
    )


@pytest.mark.parametrize("name", sorted(CASES))
def test_python(runs, name):
    stage, code, line, fragment, context = CASES[name][1]
    run = runs[name]
    assert run.returncode != 0
    [record] = parse_log(run.log, "python")
    assert (record.tool, record.stage, record.code) == ("python", stage, code)
    assert record.file.endswith("prog.py")
    assert (record.line, record.context, record.column) == (line, context, None)
    assert fragment in record.message


def test_chained_traceback_is_one_record_with_its_cause(runs):
    [record] = parse_log(runs["chained"].log)
    assert record.notes[0] == "KeyError: 'k'"


def test_library_frames_are_related_locations(runs):
    [record] = parse_log(runs["library_frame"].log)
    assert any("json" in (r.file or "") for r in record.related)
    assert record.excerpt is None  # the innermost frame is the library's, not ours


def test_innermost_own_frame_keeps_its_source_line(runs):
    [record] = parse_log(runs["zero_division"].log)
    assert record.excerpt is not None and "return a / 0" in record.excerpt
