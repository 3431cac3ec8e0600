"""The fallback for tools we do not know: ``file:line[:col]: severity[code]: message``.

Many tools (and most linters) follow this GNU convention, so an unknown tool still yields
located records; lines that do not fit are ignored.
"""

from __future__ import annotations

import re

from rewardsmith.verifiers.diagnostics.cleaning import Line
from rewardsmith.verifiers.diagnostics.record import Diagnostic, Severity, Stage

__all__ = ["parse_generic"]

_GENERIC = re.compile(
    r"^(?P<file>[^\s:][^:]{0,1000}?):(?P<line>\d+)(?::(?P<col>\d+))?:? "
    r"(?P<sev>fatal error|error|warning|warn|note|info|hint|help)"
    r"(?:\[(?P<code>[\w.-]{1,64})\])?:? (?P<msg>.*)$",
    re.IGNORECASE,
)
_SEVERITY = {"fatal error": Severity.ERROR, "error": Severity.ERROR, "warning": Severity.WARNING}


def parse_generic(lines: list[Line], tool: str = "unknown") -> list[Diagnostic]:
    """One record per line that looks like a located diagnostic."""
    out: list[Diagnostic] = []
    for line in lines:
        m = _GENERIC.match(line.text)
        if m is None:
            continue
        sev = m["sev"].lower()
        out.append(
            Diagnostic(
                tool=tool,
                severity=_SEVERITY.get("warning" if sev == "warn" else sev, Severity.NOTE),
                message=m["msg"],
                code=m["code"],
                file=m["file"],
                line=int(m["line"]),
                column=int(m["col"]) if m["col"] else None,
                stage=Stage.TYPE,
                raw=line.text,
                offset=line.offset,
            )
        )
    return out
