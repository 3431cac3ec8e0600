"""`parse_log` on odd input: empty, huge, interleaved, coloured, non-UTF-8, CRLF, hostile.

"Bounded time" is checked the only safe way, from outside: each hostile parse runs in a
killable worker with a generous limit, so a hang fails the test instead of hanging it.
No timing is asserted beyond that.
"""

from __future__ import annotations

import json
import os

import pytest

from rewardsmith.verifiers.diagnostics import (
    TOOLS,
    Diagnostic,
    Severity,
    Stage,
    UnknownToolError,
    detect_tools,
    parse_log,
)
from rewardsmith.verifiers.killable import call_with_limits

BROKEN_C = 'int main(void) {\n  int x = "a";\n  return y\n}\n'
TRACEBACK = (
    "Traceback (most recent call last):\n"
    '  File "/w/prog.py", line 2, in <module>\n'
    "    1 / 0\n"
    "ZeroDivisionError: division by zero\n"
)
GCC_TEXT = (
    "prog.c: In function 'main':\n"
    "prog.c:2:11: warning: initialization of 'int' from 'char *' makes integer from "
    "pointer without a cast [-Wint-conversion]\n"
    "prog.c:3:10: error: 'y' undeclared (first use in this function)\n"
    "prog.c:3:11: error: expected ';' before '}' token\n"
)


def _key(records: list[Diagnostic]) -> list[tuple]:
    return [(d.tool, d.severity, d.code, d.file, d.line, d.column, d.message) for d in records]


@pytest.fixture(scope="module")
def gcc_runs(build_all):
    """The same broken program with plain, coloured and hyperlinked diagnostics."""
    return build_all(
        "odd-gcc",
        "prog.c",
        {"prog": BROKEN_C},
        "( gcc -Wall -c prog.c -o /dev/null; echo ---; gcc -Wall -fdiagnostics-color=always "
        "-fdiagnostics-urls=always -c prog.c -o /dev/null ) 2>&1",
    )["prog"]


# ------------------------------------------------------------------ empty and unknown


@pytest.mark.parametrize("log", ["", b"", None, "\n\n", "   ", "\x00\x00", "\x1b[0m"])
@pytest.mark.parametrize("tool", [None, *TOOLS])
def test_empty_logs_give_no_records(log, tool):
    assert parse_log(log, tool) == []


@pytest.mark.parametrize("tool", ["python", "gcc", "g++", "rustc", "javac", "node"])
@pytest.mark.parametrize("log", [GCC_TEXT, TRACEBACK, "plain output\n"])
def test_entry_point_contract_for_the_code_runner(tool, log):
    """verifiers/code calls ``parse_log(text, tool=...)`` with these names on any failure
    output, then stores ``to_dict()`` in JSON evidence."""
    records = parse_log(log, tool=tool)
    assert all(isinstance(d, Diagnostic) for d in records)
    json.dumps([d.to_dict() for d in records])


def test_unknown_tool_name_is_a_clear_error():
    with pytest.raises(UnknownToolError, match="no parser for tool 'fortran'; known: "):
        parse_log("x", "fortran")


def test_unrecognised_text_gives_no_records():
    assert parse_log("hello\nworld\nall good: 3 passed\n") == []


def test_generic_parser_for_unknown_tools():
    log = "lint.cfg:12:3: warning[W101]: trailing space\nsrc/x.zig:4:1: error: bad thing\n"
    records = parse_log(log)
    assert _key(records) == [
        ("unknown", Severity.WARNING, "W101", "lint.cfg", 12, 3, "trailing space"),
        ("unknown", Severity.ERROR, None, "src/x.zig", 4, 1, "bad thing"),
    ]
    assert parse_log(log, "generic") == records


# ------------------------------------------------------------------ encodings and noise


def test_ansi_colours_and_hyperlinks_change_nothing(gcc_runs):
    plain, coloured = gcc_runs.log.split("---\n")
    assert "\x1b[" in coloured and "\x1b]8;;" in coloured  # real escapes, hyperlinks too
    assert _key(parse_log(coloured, "gcc")) == _key(parse_log(plain, "gcc"))
    assert any(d.is_error and d.line == 3 for d in parse_log(plain, "gcc"))


def test_windows_line_endings_change_nothing(gcc_runs):
    plain = gcc_runs.log.split("---\n")[0]
    assert _key(parse_log(plain.replace("\n", "\r\n"))) == _key(parse_log(plain))


def test_non_utf8_bytes_are_replaced_not_fatal():
    log = (
        GCC_TEXT.replace("'y'", "'\u00e9t\u00e9'").encode("latin-1", "replace")
        + b"\xff\xfe\x80 garbage\n"
    )
    records = parse_log(log, "gcc")
    assert [d.line for d in records] == [2, 3, 3]
    assert "\ufffd" in records[1].message


def test_random_bytes_never_crash():
    data = os.urandom(300_000)
    for tool in (None, *TOOLS):
        assert isinstance(parse_log(data, tool), list)


# ------------------------------------------------------------------ interleaving


def test_interleaved_gcc_and_python():
    log = GCC_TEXT.splitlines(keepends=True)
    mixed = "".join(log[:2]) + TRACEBACK + "".join(log[2:])
    records = parse_log(mixed)
    assert [(d.tool, d.line) for d in records] == [
        ("gcc", 2),
        ("python", 2),
        ("gcc", 3),
        ("gcc", 3),
    ]


def test_interleaved_json_lines_and_text():
    """rustc JSON lines between mypy text lines: each record from its own parser, in order."""
    rust = json.dumps(
        {
            "$message_type": "diagnostic",
            "message": "mismatched types",
            "code": {"code": "E0308"},
            "level": "error",
            "spans": [
                {
                    "file_name": "a.rs",
                    "line_start": 2,
                    "line_end": 2,
                    "column_start": 18,
                    "column_end": 21,
                    "is_primary": True,
                }
            ],
            "children": [],
        }
    )
    mixed = f"m.py:1:5: error: Bad  [misc]\n{rust}\nm.py:3:1: error: Worse  [misc]\n"
    assert [(d.tool, d.line) for d in parse_log(mixed)] == [("mypy", 1), ("rustc", 2), ("mypy", 3)]


def test_detection():
    assert detect_tools(GCC_TEXT) == ["gcc"]
    assert detect_tools(TRACEBACK) == ["python"]
    assert detect_tools(GCC_TEXT + TRACEBACK) == ["gcc", "python"]


# ------------------------------------------------------------------ size and hostility


def _count(log: str | bytes, tool: str | None) -> tuple[int, int | None]:
    records = parse_log(log, tool)
    return len(records), records[-1].line if records else None


def _count_repeated(chunk: str, times: int) -> tuple[int, int]:
    """Build the huge log inside the worker: shipping 50 MB through a pipe costs more than
    parsing it."""
    log = chunk * times
    return len(log), _count(log, None)[0]


def _bounded(log: str | bytes, tool: str | None = None) -> tuple[int, int | None]:
    outcome = call_with_limits(_count, log, tool, timeout_s=120)
    assert outcome.ok, outcome
    return outcome.value


@pytest.mark.slow
def test_fifty_megabyte_log_is_capped_and_bounded():
    chunk = GCC_TEXT + TRACEBACK
    outcome = call_with_limits(_count_repeated, chunk, 50_000_000 // len(chunk) + 1, timeout_s=120)
    assert outcome.ok, outcome
    size, count = outcome.value
    assert size > 50_000_000
    assert count == 1_000  # max_diagnostics; the head of the log is kept
    records = parse_log(chunk * 10, max_diagnostics=5)
    assert [d.tool for d in records] == ["gcc", "gcc", "gcc", "python", "gcc"]


@pytest.mark.slow
@pytest.mark.parametrize(
    "log",
    [
        "a" * 50_000_000,  # one 50 MB line
        "a.c:" * 5_000_000 + "1:1: error: x",  # a prefix that almost matches, repeated
        ("x.py:1: " * 500 + "\n") * 20_000,
        "{" * 1_000_000,  # JSON nesting bomb
        "[" * 1_000_000 + "]" * 1_000_000,
        "Traceback (most recent call last):\n" + '  File "a.py", line 1, in f\n' * 200_000,
        "\x1b[" * 5_000_000,
        "\x1b]8;;" * 2_000_000,
    ],
    ids=[
        "one-line",
        "near-miss",
        "many-prefixes",
        "open-braces",
        "nested-json",
        "endless-traceback",
        "broken-csi",
        "broken-osc",
    ],
)
def test_pathological_logs_finish(log):
    count, _ = _bounded(log)
    assert count <= 1_000


def test_records_are_capped():
    log = "a.c:1:1: error: " + "x" * 100_000 + "\n"
    [record] = parse_log(log, "gcc")
    assert len(record.message) <= 4_000 and len(record.raw) <= 4_000


def test_stage_of_generic_records_is_type():
    [record] = parse_log("f.txt:1:1: error: bad\n")
    assert record.stage is Stage.TYPE
