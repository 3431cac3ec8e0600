"""Feedback text: errors first, located, with code, short enough for a prompt."""

from __future__ import annotations

from rewardsmith.verifiers.diagnostics import (
    Diagnostic,
    Severity,
    Stage,
    format_feedback,
    parse_log,
)

GCC = (
    "prog.c:2:7: warning: unused variable 'x' [-Wunused-variable]\n"
    "    2 |   int x = 1;\n"
    "      |       ^\n"
    "prog.c:3:10: error: 'y' undeclared (first use in this function)\n"
    "    3 |   return y;\n"
    "      |          ^\n"
    "prog.c:3:10: note: each undeclared identifier is reported only once\n"
)


def test_errors_come_first_with_location_code_and_excerpt():
    text = format_feedback(parse_log(GCC, "gcc"))
    assert text.splitlines() == [
        "1 error (first failing stage: type).",
        "prog.c:3:10: error: 'y' undeclared (first use in this function)",
        "        3 |   return y;",
        "          |          ^",
        "    note: each undeclared identifier is reported only once",
        "prog.c:2:7: warning: unused variable 'x' [-Wunused-variable]",
        "        2 |   int x = 1;",
        "          |       ^",
    ]


def test_source_line_when_the_tool_quoted_none():
    [d] = parse_log('m.py:2:5: error: Name "z" is not defined  [name-defined]\n', "mypy")
    text = format_feedback([d], sources={"m.py": "import os\nprint(z)\n"})
    assert "    2 | print(z)" in text.splitlines()


def test_bounded_in_items_and_characters():
    many = [Diagnostic("t", Severity.ERROR, "e" * 500, file="f", line=i) for i in range(1, 50)]
    text = format_feedback(many, max_items=3, max_chars=800)
    assert len(text) <= 800
    assert text.startswith("49 errors")
    assert "... and 46 more." in format_feedback(many, max_items=3, max_chars=10_000)


def test_clean():
    assert format_feedback([]) == "No errors or warnings."
    warning = Diagnostic("t", Severity.WARNING, "w", stage=Stage.TYPE)
    assert format_feedback([warning]).startswith("No errors; 1 warning.")
