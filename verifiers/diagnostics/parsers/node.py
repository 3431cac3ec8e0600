"""Node.js uncaught errors: syntax errors at load time and exceptions at run time.

    /tmp/w/a.js:2
      return undefinedVar + 1;
      ^

    ReferenceError: undefinedVar is not defined
        at f (/tmp/w/a.js:2:3)
        at Module._compile (node:internal/modules/cjs/loader:1521:14)

    Node.js v20.20.2

The record is located at the innermost stack frame in a user file (not ``node:``
internals); without one (a ``SyntaxError`` is thrown before any user frame exists), at the
``file:line`` header with the caret's column. The code is Node's ``[ERR_*]`` or ``code:``
property when it has one (``MODULE_NOT_FOUND``), else the error's type. A thrown non-Error
value (``throw "boom"``) is reported with code ``uncaught``.
"""

from __future__ import annotations

import re

from rewardsmith.verifiers.diagnostics.cleaning import Line
from rewardsmith.verifiers.diagnostics.record import Diagnostic, Location, Severity, Stage

__all__ = ["parse_node"]

_HEADER = re.compile(r"^(?P<file>[^\s]{1,1000}?):(?P<line>\d+)$")  # then source, caret
_ERROR = re.compile(
    r"^(?:Uncaught )?(?P<type>[A-Z][\w$]{0,100})(?: \[(?P<code>[A-Z][A-Z0-9_]{0,100})\])?"
    r"(?:: (?P<msg>.*))?$"
)
_FRAME = re.compile(
    r"^\s+at (?:(?P<func>.{0,500}?) \()?(?P<file>[^\s()]{1,1000}?):(?P<line>\d+):(?P<col>\d+)\)?"
    r"(?: \{)?$"
)
_PROP_CODE = re.compile(r"^\s+code: '(?P<code>[\w-]{1,100})',?$")
_TRACE_HINT = "(Use `node --trace-uncaught"


def parse_node(lines: list[Line], tool: str = "node") -> list[Diagnostic]:
    """Every uncaught error report in `lines`."""
    out: list[Diagnostic] = []
    i = 0
    while i < len(lines):
        header = _read_header(lines, i)
        start = i
        if header is not None:
            i += 3
            while i < len(lines) and not lines[i].text:
                i += 1
        if i < len(lines) and _is_error_start(lines, i, header is not None):
            record, i = _read_error(lines, start, i, header)
            out.append(record)
            continue
        i = start + 1
    return out


def _read_header(lines: list[Line], i: int) -> tuple[Location, str] | None:
    """A ``file:line`` header, the quoted source line and its caret."""
    m = _HEADER.match(lines[i].text)
    if m is None or i + 2 >= len(lines):
        return None
    caret = lines[i + 2].text
    if not caret.strip() or set(caret.strip()) - {"^"}:
        return None
    where = Location(m["file"], int(m["line"]), caret.index("^") + 1)
    return where, lines[i + 1].text


def _is_error_start(lines: list[Line], i: int, after_header: bool) -> bool:
    nxt = lines[i + 1].text if i + 1 < len(lines) else ""
    if _ERROR.match(lines[i].text):
        return after_header or nxt.startswith("    at ")
    return after_header and nxt.startswith(_TRACE_HINT)


def _read_error(
    lines: list[Line], start: int, i: int, header: tuple[Location, str] | None
) -> tuple[Diagnostic, int]:
    m = _ERROR.match(lines[i].text)
    err_type = m["type"] if m else None
    message = (m["msg"] or "") if m else lines[i].text
    code = m["code"] if m else None
    frames: list[Location] = []
    j = i + 1
    while j < len(lines) and j - i < 500 and not lines[j].text.startswith("Node.js v"):
        text = lines[j].text
        if (f := _FRAME.match(text)) is not None:
            frames.append(
                Location(f["file"], int(f["line"]), int(f["col"]), message=f["func"] or "")
            )
        elif (c := _PROP_CODE.match(text)) is not None and code is None:
            code = c["code"]
        j += 1
    stage = _run_or_parse(err_type, frames)
    where, excerpt = _where(frames, header)
    if stage is Stage.PARSE and header is not None:
        where, excerpt = header  # the file that failed to compile, not the one requiring it
    record = Diagnostic(
        tool="node",
        severity=Severity.ERROR,
        message=message,
        code=code or err_type or "uncaught",
        file=where.file,
        line=where.line,
        column=where.column,
        stage=stage,
        context=where.message or None,
        related=tuple(f for f in frames if f is not where),
        excerpt=excerpt,
        raw="\n".join(x.text for x in lines[start : min(j, start + 60)]),
        offset=lines[start].offset,
    )
    return record, j + 1


def _run_or_parse(err_type: str | None, frames: list[Location]) -> Stage:
    # A SyntaxError whose every frame is Node's loader was thrown while compiling the file;
    # one whose innermost frames are the compiler's came from a require()d file that does
    # not parse (a JSON.parse SyntaxError has a user frame on top: a runtime error).
    if err_type != "SyntaxError":
        return Stage.RUN
    if all(_internal(f.file) for f in frames) or (frames and frames[0].message in _COMPILING):
        return Stage.PARSE
    return Stage.RUN


_COMPILING = frozenset({"internalCompileFunction", "wrapSafe", "compileFunction"})


def _where(
    frames: list[Location], header: tuple[Location, str] | None
) -> tuple[Location, str | None]:
    own = [f for f in frames if not _internal(f.file)]
    if own:
        same = header is not None and (header[0].file, header[0].line) == (own[0].file, own[0].line)
        return own[0], header[1] if header is not None and same else None
    if header is not None and not _internal(header[0].file):
        return header[0], header[1]
    return (frames[0] if frames else Location()), None


def _internal(file: str | None) -> bool:
    return file is None or file.startswith(("node:", "internal/", "<"))
