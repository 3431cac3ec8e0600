"""`parse_log`: one entry point from any build, run or test log to `Diagnostic` records.

    >>> log = "a.c: In function 'main':\\na.c:3:9: error: expected ';' before '}' token\\n"
    >>> [d] = parse_log(log, tool="gcc")
    >>> d.file, d.line, d.column, d.stage.value, d.context
    ('a.c', 3, 9, 'parse', "In function 'main'")

Machine-readable output is preferred wherever it appears: a whole-log JSON document (gcc's
JSON array, pyright's ``--outputjson``, SARIF) or JSON lines (rustc, cargo, mypy ``-O
json``, ``go vet -json``). The remaining lines go to the text parser of each tool that
`detect_tools` finds, or of the named `tool`; when nothing is recognised, the generic
``file:line:col: severity: message`` parser runs. Records from several parsers are merged
in log order, so the interleaved output of two tools parses into both tools' records.

Bounded work on hostile logs: the log is capped (`max_chars`, the head is kept), each line
is cut to a few thousand characters before any pattern sees it, every pattern runs in
linear time, and at most `max_diagnostics` records are returned.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from rewardsmith.verifiers.diagnostics.cleaning import DEFAULT_MAX_CHARS, Line, clean_log
from rewardsmith.verifiers.diagnostics.parsers import structured
from rewardsmith.verifiers.diagnostics.parsers.gcc import parse_gcc_text
from rewardsmith.verifiers.diagnostics.parsers.generic import parse_generic
from rewardsmith.verifiers.diagnostics.parsers.go import parse_go
from rewardsmith.verifiers.diagnostics.parsers.java import parse_javac
from rewardsmith.verifiers.diagnostics.parsers.junit import parse_junit
from rewardsmith.verifiers.diagnostics.parsers.native import SIGNATURE as NATIVE_SIGNATURE
from rewardsmith.verifiers.diagnostics.parsers.native import parse_native
from rewardsmith.verifiers.diagnostics.parsers.node import parse_node
from rewardsmith.verifiers.diagnostics.parsers.python import parse_python
from rewardsmith.verifiers.diagnostics.parsers.pytype import parse_mypy_text, parse_pyright_text
from rewardsmith.verifiers.diagnostics.parsers.rust import parse_rust_text
from rewardsmith.verifiers.diagnostics.parsers.typescript import parse_tsc
from rewardsmith.verifiers.diagnostics.record import Diagnostic

__all__ = ["TOOLS", "UnknownToolError", "detect_tools", "parse_log"]

DETECT_CHARS = 2_000_000
"""Detection looks at this much of the log: enough for any tool that took part in a build."""

TextParser = Callable[[list[Line], str], list[Diagnostic]]

# tool name -> (text parser, the name records carry)
_TEXT: dict[str, tuple[TextParser, str]] = {
    "gcc": (parse_gcc_text, "gcc"),
    "g++": (parse_gcc_text, "g++"),
    "clang": (parse_gcc_text, "clang"),
    "clang++": (parse_gcc_text, "clang++"),
    "rustc": (parse_rust_text, "rustc"),
    "cargo": (parse_rust_text, "rustc"),
    "javac": (parse_javac, "javac"),
    "java": (parse_javac, "java"),
    "tsc": (parse_tsc, "tsc"),
    "node": (parse_node, "node"),
    "python": (parse_python, "python"),
    "mypy": (parse_mypy_text, "mypy"),
    "pyright": (parse_pyright_text, "pyright"),
    "go": (parse_go, "go"),
    "go-vet": (parse_go, "go-vet"),
    "pytest-junit": (parse_junit, "pytest-junit"),
    "native": (parse_native, "native"),
    "generic": (parse_generic, "unknown"),
}
TOOLS: tuple[str, ...] = tuple(sorted(_TEXT))
"""Every tool name `parse_log` accepts (``None`` detects)."""

# Signatures for detection; each is searched once over the (capped) log.
_SIGNATURES: dict[str, re.Pattern[str]] = {
    "gcc": re.compile(
        r"^[^\s:][^:\n]*\.(?:c|h|cc|cpp|cxx|c\+\+|hh|hpp|hxx|ii?)"
        r":\d+:\d+: (?:fatal error|error|warning|note):"
        r"|^[^\s:][^:\n]*: (?:In function|At top level)|undefined reference to|^collect2: ",
        re.M,
    ),
    "rustc": re.compile(
        r"^(?:error|warning)\[E\d{4}\]: |^\s*--> [^\n]+\.rs:\d+:\d+$"
        r"|^thread '[^'\n]*'(?: \(\d+\))? panicked at ",
        re.M,
    ),
    "javac": re.compile(
        r"^[^\s:][^:\n]*\.java:\d+:(?:\d+:)? (?:error|warning|compiler\.)"
        r"|^Exception in thread \"|^\tat [\w$.]+\([\w$]+\.java:\d+\)$",
        re.M,
    ),
    "tsc": re.compile(r"^[^\s(][^(\n]*\.[cm]?tsx?\(\d+,\d+\): (?:error|warning) TS\d+:", re.M),
    "node": re.compile(r"^Node\.js v\d+|^\s+at .*\((?:node:|file:///|/)[^\n]*:\d+:\d+\)$", re.M),
    "python": re.compile(
        r"^Traceback \(most recent call last\):$"
        r"|^(?:SyntaxError|IndentationError|TabError): ",
        re.M,
    ),
    "mypy": re.compile(
        r"^[^\s:][^:\n]*\.pyi?:\d+:(?:\d+:){0,3} (?:error|note|warning): "
        r"|^Found \d+ errors? in \d+ files?|^Success: no issues found",
        re.M,
    ),
    "pyright": re.compile(r"^\s+\S[^\n]*\.pyi?:\d+:\d+ - (?:error|warning|information): ", re.M),
    "go": re.compile(
        r"^# [\w./-]+$|^(?:vet: )?\.?[^\s:]*\.go:\d+:\d+: "
        r"|^goroutine \d+ \[\w+",
        re.M,
    ),
    "pytest-junit": re.compile(r"<testsuites?[\s>]"),
    "native": NATIVE_SIGNATURE,
}
_RUNS_NATIVE = {"gcc", "g++", "clang", "clang++", "rustc", "cargo", "go"}
"""Tools whose programs fail at run time in the C runtime's words: a log named as theirs is
also read by the native parser (assertions, aborts, sanitizers) when those words appear."""


_CLANG = re.compile(r"^\d+ (?:errors?|warnings?)(?: and \d+ \w+)? generated\.$|^clang", re.M)


class UnknownToolError(ValueError):
    """`parse_log` was given a tool name it has no parser for."""


def detect_tools(text: str) -> list[str]:
    """The tools whose output appears in `text` (text signatures only)."""
    found = [tool for tool, sig in _SIGNATURES.items() if sig.search(text)]
    if "gcc" in found and _CLANG.search(text):
        found[found.index("gcc")] = "clang"
    if "pyright" in found and "mypy" in found:
        found.remove("mypy")  # pyright's lines also look like mypy's
    if "python" in found and "node" in found and not re.search(r"^Node\.js v", text, re.M):
        found.remove("node")
    return found


def parse_log(
    log: str | bytes | None,
    tool: str | None = None,
    *,
    max_chars: int = DEFAULT_MAX_CHARS,
    max_diagnostics: int = 1_000,
) -> list[Diagnostic]:
    """Parse a build, run or test log into diagnostics, in the order they appear.

    `tool` is one of `TOOLS` (``"gcc"``, ``"g++"``, ``"clang"``, ``"rustc"``, ``"cargo"``,
    ``"javac"``, ``"tsc"``, ``"node"``, ``"python"``, ``"mypy"``, ``"pyright"``, ``"go"``,
    ``"go-vet"``, ``"pytest-junit"``, ``"generic"``) or None to detect. Never raises on
    any log content; raises `UnknownToolError` for a tool name it does not know.
    """
    key = tool.lower() if tool is not None else None
    if key is not None and key not in _TEXT:
        raise UnknownToolError(f"no parser for tool {tool!r}; known: {', '.join(TOOLS)}")
    text, _ = clean_log(log, max_chars)
    if not text.strip():
        return []
    records, rest = structured.parse_structured(text, key)
    tools = [key] if key is not None else detect_tools(_joined(rest)[:DETECT_CHARS])
    if key in _RUNS_NATIVE and NATIVE_SIGNATURE.search(_joined(rest)[:DETECT_CHARS]):
        tools.append("native")
    for name in tools:
        parser, label = _TEXT[name]
        records.extend(parser(rest, label))
    if not records and key is None:
        records = parse_generic(rest, "unknown")
    return _dedupe(sorted(records, key=lambda d: d.offset))[:max_diagnostics]


def _joined(rest: list[Line]) -> str:
    out: list[str] = []
    size = 0
    for line in rest:  # stop joining once detection has enough
        out.append(line.text)
        size += len(line.text) + 1
        if size > DETECT_CHARS:
            break
    return "\n".join(out)


def _dedupe(records: list[Diagnostic]) -> list[Diagnostic]:
    """Drop a record that two parsers read from the same place in the log.

    A tool that repeats itself (the same error printed twice) keeps both: each is counted.
    """
    seen: set[tuple[Any, ...]] = set()
    out: list[Diagnostic] = []
    for d in records:
        key = (d.offset, d.file, d.line, d.column, d.message, d.severity)
        if key not in seen:
            seen.add(key)
            out.append(d)
    return out
