"""javac (``-XDrawDiagnostics`` and the default text) and Java runtime exceptions.

With ``-XDrawDiagnostics`` each line is ``A.java:3:17: compiler.err.cant.resolve.location:
args``: the key is the code and the column is given. The default text gives only the line
(``A.java:3: error: cannot find symbol``), then the source line and a caret: the column is
the caret's position, and the indented lines after it (``symbol:``, ``location:``) are
notes. An uncaught exception (``Exception in thread "main" java.lang.X: msg`` and its
``at`` frames) is a run-stage record at the innermost frame outside ``java.*``/``jdk.*``.
"""

from __future__ import annotations

import re

from rewardsmith.verifiers.diagnostics.cleaning import Line
from rewardsmith.verifiers.diagnostics.record import Diagnostic, Location, Severity, Stage

__all__ = ["parse_javac"]

_RAW = re.compile(
    r"^(?P<file>[^\s:][^:]{0,1000}?\.java):(?P<line>\d+):(?P<col>\d+): "
    r"(?P<code>compiler\.(?P<kind>err|warn|note|misc)\.[\w.-]{1,200}):? ?(?P<msg>.*)$"
)
_TEXT = re.compile(
    r"^(?P<file>[^\s:][^:]{0,1000}?\.java):(?P<line>\d+): (?P<sev>error|warning|Note): "
    r"(?:\[(?P<lint>[\w-]{1,64})\] )?(?P<msg>.*)$"
)
_EXCEPTION = re.compile(
    r'^Exception in thread "(?P<thread>[^"]{0,200})" (?P<type>[\w.$]+)(?:: (?P<msg>.*))?$'
)
_FRAME = re.compile(r"^\s+at (?P<method>[\w$.<>/]+)\((?P<file>[\w$]+\.java):(?P<line>\d+)\)$")
_CAUSE = re.compile(r"^Caused by: (?P<type>[\w.$]+)(?:: (?P<msg>.*))?$")

_PARSE_CODES = re.compile(
    r"compiler\.err\.(?:expected\d?|illegal\.start\.of|premature\.eof|unclosed|not\.stmt"
    r"|else\.without\.if|illegal\.char|int\.number\.too\.large|malformed|empty\.char\.lit"
    r"|orphaned|illegal\.esc\.char|illegal\.line\.end)"
)
_PARSE_TEXT = re.compile(
    r"^(?:.* expected$|illegal start of|reached end of file while parsing|unclosed "
    r"|not a statement|'else' without 'if'|illegal character|integer number too large"
    r"|malformed |empty character literal|orphaned |illegal escape character"
    r"|illegal line end)"
)
_SEVERITY = {
    "err": Severity.ERROR,
    "error": Severity.ERROR,
    "warn": Severity.WARNING,
    "warning": Severity.WARNING,
}


def parse_javac(lines: list[Line], tool: str = "javac") -> list[Diagnostic]:
    """javac raw and text diagnostics, and uncaught exceptions from ``java``."""
    out: list[Diagnostic] = []
    i = 0
    while i < len(lines):
        text = lines[i].text
        if (m := _RAW.match(text)) is not None:
            out.append(_raw(lines[i], m))
        elif (m := _TEXT.match(text)) is not None:
            record, i = _text(lines, i, m)
            out.append(record)
            continue
        elif (m := _EXCEPTION.match(text)) is not None:
            record, i = _exception(lines, i, m)
            out.append(record)
            continue
        i += 1
    return out


def _raw(line: Line, m: re.Match[str]) -> Diagnostic:
    code = m["code"]
    return Diagnostic(
        tool="javac",
        severity=_SEVERITY.get(m["kind"], Severity.NOTE),
        message=m["msg"],
        code=code,
        file=m["file"],
        line=int(m["line"]),
        column=int(m["col"]),
        stage=Stage.PARSE if _PARSE_CODES.match(code) else Stage.TYPE,
        raw=line.text,
        offset=line.offset,
    )


def _text(lines: list[Line], i: int, m: re.Match[str]) -> tuple[Diagnostic, int]:
    j = i + 1
    excerpt: str | None = None
    column: int | None = None
    if j + 1 < len(lines) and lines[j + 1].text.strip() == "^":
        excerpt = lines[j].text
        column = lines[j + 1].text.index("^") + 1
        j += 2
    notes: list[str] = []
    while j < len(lines) and lines[j].text.startswith("  ") and len(notes) < 20:
        notes.append(lines[j].text.strip())
        j += 1
    message = m["msg"]
    record = Diagnostic(
        tool="javac",
        severity=_SEVERITY.get(m["sev"], Severity.NOTE),
        message=message,
        code=m["lint"],
        file=m["file"],
        line=int(m["line"]),
        column=column,
        stage=Stage.PARSE if _PARSE_TEXT.match(message) else Stage.TYPE,
        notes=tuple(notes),
        excerpt=excerpt,
        raw="\n".join(x.text for x in lines[i:j]),
        offset=lines[i].offset,
    )
    return record, j


def _exception(lines: list[Line], i: int, m: re.Match[str]) -> tuple[Diagnostic, int]:
    frames: list[Location] = []
    causes: list[str] = []
    j = i + 1
    while j < len(lines) and j - i < 500:
        text = lines[j].text
        if (f := _FRAME.match(text)) is not None:
            frames.append(Location(f["file"], int(f["line"]), message=f["method"]))
        elif (c := _CAUSE.match(text)) is not None:
            causes.append(f"Caused by: {c['type']}: {c['msg'] or ''}")
        elif not text.lstrip().startswith(("at ", "...")):
            break
        j += 1
    own = [f for f in frames if not f.message.startswith(("java.", "jdk.", "sun."))]
    where = own[0] if own else (frames[0] if frames else Location())
    record = Diagnostic(
        tool="java",
        severity=Severity.ERROR,
        message=m["msg"] or "",
        code=m["type"],
        file=where.file,
        line=where.line,
        stage=Stage.RUN,
        context=where.message or None,
        notes=tuple(causes),
        related=tuple(f for f in frames if f is not where),
        raw="\n".join(x.text for x in lines[i:j]),
        offset=lines[i].offset,
    )
    return record, j
