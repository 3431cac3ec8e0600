"""What a native program prints when it fails at run time: assertions, aborts, crashes.

Compilers are not the only authors of a build-and-test log: the test binary writes its
failures too, and the text parsers of gcc, g++ and rustc do not read them. Recognised:

- glibc ``assert``: ``prog: file.c:12: main: Assertion `x == 1' failed.`` (a failed
  test: stage ``test``, code ``assertion``), and the BSD/musl form ``Assertion failed:``;
- C++ ``terminate called after throwing an instance of 'T'`` with its ``what():`` line;
- a shell's report of a signal: ``Aborted (core dumped)``, ``Segmentation fault``, ...;
- glibc's heap and stack checks (``double free or corruption``, ``*** stack smashing
  detected ***``), AddressSanitizer and UndefinedBehaviorSanitizer reports.

Each is an error at stage ``run`` unless said otherwise.

    >>> from rewardsmith.verifiers.diagnostics.cleaning import lines
    >>> [d] = parse_native(lines("main: main.c:3: main: Assertion `sum(3) == 6' failed.\\n"))
    >>> d.stage.value, d.code, d.file, d.line, d.message
    ('test', 'assertion', 'main.c', 3, "Assertion `sum(3) == 6' failed")
"""

from __future__ import annotations

import re

from rewardsmith.verifiers.diagnostics.cleaning import Line
from rewardsmith.verifiers.diagnostics.record import Diagnostic, Severity, Stage

__all__ = ["SIGNATURE", "parse_native"]

_ASSERT = re.compile(
    r"^(?:[^:\n]{1,300}: )?(?P<file>[^:\n]{1,300}):(?P<line>\d+): (?P<func>[^:\n]{1,300}): "
    r"(?P<msg>Assertion `.*' failed)\.?$"
)
_BSD_ASSERT = re.compile(
    r"^(?P<msg>Assertion failed: .*?)(?:, function (?P<func>[^,]+))?, file (?P<file>[^,]+), "
    r"line (?P<line>\d+)\.?$"
)
_TERMINATE = re.compile(
    r"^terminate called (?:after throwing an instance of '(?P<type>[^']{1,300})'"
    r"|without an active exception)$"
)
_WHAT = re.compile(r"^\s+what\(\):\s+(?P<what>.*)$")
_SIGNAL = re.compile(
    r"^(?:.{0,300}: )?(?:line \d+: )?(?:\d+ )?(?P<msg>Aborted|Segmentation fault|Floating point "
    r"exception|Illegal instruction|Bus error|Killed|Trace/breakpoint trap)(?: \(core dumped\))?"
    r"(?: +.{0,300})?$"
)
_GLIBC = re.compile(
    r"^(?P<msg>\*\*\* stack smashing detected \*\*\*.*|double free or corruption.*"
    r"|free\(\): .*|malloc\(\): .*|realloc\(\): .*|munmap_chunk\(\): .*|corrupted .*)$"
)
_ASAN = re.compile(r"^==\d+==ERROR: (?P<tool>\w+Sanitizer): (?P<msg>.*)$")
_UBSAN = re.compile(
    r"^(?P<file>[^\s:][^:\n]{0,300}):(?P<line>\d+):(?P<col>\d+): runtime error: (?P<msg>.*)$"
)
SIGNATURE = re.compile(
    r"Assertion `.*' failed|^Assertion failed: |^terminate called |"
    r"(?:Aborted|Segmentation fault|Floating point exception|Illegal instruction|Bus error)"
    r"(?: \(core dumped\))?$|^\*\*\* stack smashing detected|^double free or corruption"
    r"|^==\d+==ERROR: \w+Sanitizer: |: runtime error: ",
    re.M,
)
"""Whether a log holds any of it (what `parse_log` detects)."""


def parse_native(lines: list[Line], tool: str = "native") -> list[Diagnostic]:
    out: list[Diagnostic] = []
    for i, line in enumerate(lines):
        record = _record(lines, i, line, tool)
        if record is not None:
            out.append(record)
    return out


def _record(lines: list[Line], i: int, line: Line, tool: str) -> Diagnostic | None:
    text = line.text
    m = _ASSERT.match(text) or _BSD_ASSERT.match(text)
    if m:
        return Diagnostic(
            tool,
            Severity.ERROR,
            m["msg"],
            code="assertion",
            file=m["file"],
            line=int(m["line"]),
            stage=Stage.TEST,
            context=m["func"],
            raw=text,
            offset=line.offset,
        )
    m = _TERMINATE.match(text)
    if m:
        what = _WHAT.match(lines[i + 1].text) if i + 1 < len(lines) else None
        message = text if what is None else f"{text}: {what['what']}"
        return _run_error(tool, message, m["type"] or "terminate", line)
    for pattern, code in ((_SIGNAL, "signal"), (_GLIBC, "glibc"), (_ASAN, "sanitizer")):
        m = pattern.match(text)
        if m:
            return _run_error(tool, m["msg"], code, line)
    m = _UBSAN.match(text)
    if m:
        return Diagnostic(
            tool,
            Severity.ERROR,
            m["msg"],
            code="ubsan",
            file=m["file"],
            line=int(m["line"]),
            column=int(m["col"]),
            stage=Stage.RUN,
            raw=text,
            offset=line.offset,
        )
    return None


def _run_error(tool: str, message: str, code: str, line: Line) -> Diagnostic:
    return Diagnostic(
        tool, Severity.ERROR, message, code=code, stage=Stage.RUN, raw=line.text, offset=line.offset
    )
