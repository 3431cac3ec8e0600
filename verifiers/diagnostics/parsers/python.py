"""Python tracebacks and ``SyntaxError`` reports.

    Traceback (most recent call last):
      File "/tmp/w/prog.py", line 5, in <module>
        f({})
      File "/tmp/w/prog.py", line 3, in f
        return d["k"]
    KeyError: 'k'

The record is the exception type (its `code`) and message, located at the innermost frame
that is not library code (the standard library and site-packages are where the error
surfaced, not where the candidate made it); every frame is kept as a related location. A
chained traceback (``The above exception was the direct cause ...``) becomes one record
for the last exception, with the earlier ones as notes. A ``SyntaxError`` (and
``IndentationError``, ``TabError``) is a parse-stage record; anything else ran and failed.

Python quotes the offending line without its indentation, so a ``SyntaxError``'s caret
cannot give the real column: `column` is left empty rather than guessed.
"""

from __future__ import annotations

import re

from rewardsmith.verifiers.diagnostics.cleaning import Line
from rewardsmith.verifiers.diagnostics.record import Diagnostic, Location, Severity, Stage

__all__ = ["parse_python"]

_HEADER = "Traceback (most recent call last):"
_FRAME = re.compile(
    r'^ {2}File "(?P<file>[^"]{1,1000})", line (?P<line>\d+)(?:, in (?P<func>.*))?$'
)
_EXC = re.compile(r"^(?P<type>[A-Za-z_][\w.]{0,200})(?:: (?P<msg>.*))?$")
_CHAIN = (
    "During handling of the above exception, another exception occurred:",
    "The above exception was the direct cause of the following exception:",
)
_PARSE_ERRORS = frozenset({"SyntaxError", "IndentationError", "TabError"})
_LIBRARY = re.compile(r"/lib/python\d|site-packages|dist-packages|^<frozen ")


def parse_python(lines: list[Line], tool: str = "python") -> list[Diagnostic]:
    """Every traceback and syntax error report in `lines`."""
    out: list[Diagnostic] = []
    chained = False
    i = 0
    while i < len(lines):
        text = lines[i].text
        if text in _CHAIN:
            chained = bool(out)
            i += 1
            continue
        if text == _HEADER or _FRAME.match(text):
            record, i = _read_block(lines, i, tool)
            if record is None:
                continue
            if chained:
                previous = out.pop()
                cause = f"{previous.code}: {previous.message}"
                record = record.with_(notes=(cause, *previous.notes, *record.notes))
            out.append(record)
            chained = False
            continue
        i += 1
    return out


def _read_block(lines: list[Line], i: int, tool: str) -> tuple[Diagnostic | None, int]:
    """Read one traceback (or bare SyntaxError report) starting at `i`."""
    start = i
    if lines[i].text == _HEADER:
        i += 1
    frames: list[Location] = []
    excerpt: list[str] = []
    while i < len(lines) and i - start < 2_000:
        text = lines[i].text
        f = _FRAME.match(text)
        if f:
            frames.append(Location(f["file"], int(f["line"]), message=f["func"] or ""))
            excerpt = []
        elif text.startswith("    "):
            excerpt.append(text[4:])
        elif text.startswith(" ") or not text:
            pass  # exception-group boxes, blank lines inside a block
        else:
            break
        i += 1
    m = _EXC.match(lines[i].text) if i < len(lines) else None
    if m is None or not frames:
        return None, max(i, start + 1)
    return _record(m, frames, excerpt, lines, start, i, tool), i + 1


def _record(
    m: re.Match[str],
    frames: list[Location],
    excerpt: list[str],
    lines: list[Line],
    start: int,
    end: int,
    tool: str,
) -> Diagnostic:
    exc_type = m["type"]
    short = exc_type.rsplit(".", 1)[-1]
    own = [f for f in frames if f.file and not _LIBRARY.search(f.file)]
    where = own[-1] if own else frames[-1]
    return Diagnostic(
        tool=tool,
        severity=Severity.ERROR,
        message=m["msg"] or "",
        code=exc_type,
        file=where.file,
        line=where.line,
        stage=Stage.PARSE if short in _PARSE_ERRORS else Stage.RUN,
        context=where.message or None,
        related=tuple(f for f in frames if f is not where),
        excerpt=("\n".join(excerpt) or None) if where is frames[-1] else None,
        raw="\n".join(x.text for x in lines[start : end + 1]),
        offset=lines[start].offset,
    )
