"""TypeScript's ``tsc --pretty false``: ``src/a.ts(3,7): error TS2322: message``.

Indented lines after a record elaborate it (``Type 'x' is not assignable to ...``) and
become its notes. Codes TS1000-TS1999 are the parser's (syntax) errors; the rest are the
checker's. A record without a file (``error TS5023: Unknown compiler option``) is a
configuration error.

tsc is not installed on the machines this project is tested on, so its tests use outputs
written by hand in the documented format.
"""

from __future__ import annotations

import re

from rewardsmith.verifiers.diagnostics.cleaning import Line
from rewardsmith.verifiers.diagnostics.record import Diagnostic, Severity, Stage

__all__ = ["parse_tsc"]

_LOCATED = re.compile(
    r"^(?P<file>[^\s(][^(]{0,1000}?)\((?P<line>\d+),(?P<col>\d+)\): "
    r"(?P<sev>error|warning|message) (?P<code>TS\d{1,6}): (?P<msg>.*)$"
)
_BARE = re.compile(r"^(?P<sev>error|warning) (?P<code>TS\d{1,6}): (?P<msg>.*)$")
_SEVERITY = {"error": Severity.ERROR, "warning": Severity.WARNING}


def parse_tsc(lines: list[Line], tool: str = "tsc") -> list[Diagnostic]:
    """Every ``TSnnnn`` record in `lines`, with its indented elaboration as notes."""
    out: list[Diagnostic] = []
    in_record = False  # only the indented lines right after a record belong to it
    for line in lines:
        m = _LOCATED.match(line.text) or _BARE.match(line.text)
        if m is not None:
            out.append(_record(line, m))
            in_record = True
        elif in_record and line.text.startswith("  "):
            last = out[-1]
            out[-1] = last.with_(notes=(*last.notes, line.text.strip()))
        else:
            in_record = False
    return out


def _record(line: Line, m: re.Match[str]) -> Diagnostic:
    groups = m.groupdict()
    code = m["code"]
    return Diagnostic(
        tool="tsc",
        severity=_SEVERITY.get(m["sev"], Severity.NOTE),
        message=m["msg"],
        code=code,
        file=groups.get("file"),
        line=int(groups["line"]) if groups.get("line") else None,
        column=int(groups["col"]) if groups.get("col") else None,
        stage=Stage.PARSE if 1000 <= int(code[2:]) < 2000 else Stage.TYPE,
        raw=line.text,
        offset=line.offset,
    )
