"""Go: ``go build``, ``go vet`` and runtime panics.

    # command-line-arguments
    ./a.go:5:2: "os" imported and not used
    ./a.go:11:2: undefined: y

Build errors are errors. ``go vet -json`` findings are warnings with the analyzer as their
code (`parse_go_vet_json`; vet exits 0 with findings in that mode). Text ``go vet``
findings are warnings when the tool is named ``go-vet``, but a ``vet:`` prefixed line is a
type error vet hit while loading. Tab-indented lines after a
record (``have (int)`` / ``want (string)``) are its notes. A panic
(``panic: runtime error: index out of range [3] with length 0`` then ``goroutine 1
[running]:``) is a run-stage record at the innermost frame outside the Go installation.
Go prints no error codes, so `code` is empty except ``panic`` and ``fatal error``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from rewardsmith.verifiers.diagnostics.cleaning import Line
from rewardsmith.verifiers.diagnostics.record import Diagnostic, Location, Severity, Stage

__all__ = ["is_go_vet_json", "parse_go", "parse_go_vet_json"]

_RECORD = re.compile(
    r"^(?P<vet>vet: )?(?P<file>[^\s:][^:]{0,1000}?\.go):(?P<line>\d+):(?P<col>\d+): (?P<msg>.*)$"
)
_PANIC = re.compile(r"^(?P<kind>panic|fatal error): (?P<msg>.*)$")
_GOROUTINE = re.compile(r"^goroutine \d+ \[")
_FRAME_FILE = re.compile(r"^\t(?P<file>\S{1,1000}?\.go):(?P<line>\d+)(?: \+0x[0-9a-f]+)?$")
_PARSE_HINTS = re.compile(
    r"^(?:syntax error|expected |invalid character|newline in string|string literal not "
    r"terminated|rune literal not terminated|non-declaration statement|unexpected |illegal)"
)
_GOROOT = re.compile(r"^(?:/usr/lib/go|/usr/local/go|/usr/share/go)|/src/runtime/")


def parse_go(lines: list[Line], tool: str = "go") -> list[Diagnostic]:
    """Build and vet records, and panics, in `lines`."""
    out: list[Diagnostic] = []
    i = 0
    while i < len(lines):
        text = lines[i].text
        if (m := _RECORD.match(text)) is not None:
            out.append(_record(lines[i], m, tool))
        elif (p := _PANIC.match(text)) is not None:
            record, i = _panic(lines, i, p, tool)
            out.append(record)
            continue
        i += 1
    return _attach_notes(lines, out)


def _ends_panic(text: str) -> bool:
    """The end of a panic's goroutine dump: the exit line or the next tool's output."""
    if text.startswith(("exit status", "Traceback")) or _RECORD.match(text):
        return True
    # Function lines ("main.main()"), goroutine headers and "[signal ...]" are the dump.
    return bool(text) and not text.startswith(("\t", "[", "goroutine ")) and "(" not in text


def _record(line: Line, m: re.Match[str], tool: str) -> Diagnostic:
    message = m["msg"]
    vet_finding = tool == "go-vet" and not m["vet"]
    return Diagnostic(
        tool=tool,
        severity=Severity.WARNING if vet_finding else Severity.ERROR,
        message=message,
        file=m["file"],
        line=int(m["line"]),
        column=int(m["col"]),
        stage=Stage.PARSE if _PARSE_HINTS.match(message) else Stage.TYPE,
        raw=line.text,
        offset=line.offset,
    )


def _attach_notes(lines: list[Line], records: list[Diagnostic]) -> list[Diagnostic]:
    """Tab-indented lines right after a build record are its notes (``have``/``want``)."""
    index = {line.offset: n for n, line in enumerate(lines)}
    out = []
    for d in records:
        n = index.get(d.offset, -1) + 1
        notes = []
        while d.stage is not Stage.RUN and 0 < n < len(lines) and lines[n].text.startswith("\t"):
            notes.append(lines[n].text.strip())
            n += 1
        out.append(d.with_(notes=tuple(notes)) if notes else d)
    return out


def _panic(lines: list[Line], i: int, p: re.Match[str], tool: str) -> tuple[Diagnostic, int]:
    frames: list[Location] = []
    j = i + 1
    func = ""
    while j < len(lines) and j - i < 500 and not _ends_panic(lines[j].text):
        text = lines[j].text
        if (f := _FRAME_FILE.match(text)) is not None:
            frames.append(Location(f["file"], int(f["line"]), message=func))
        elif text and not text.startswith("\t"):
            func = text.strip()  # "main.main()" above its file line
        j += 1
    own = [f for f in frames if f.file and not _GOROOT.search(f.file)]
    where = own[0] if own else (frames[0] if frames else Location())
    record = Diagnostic(
        tool=tool,
        severity=Severity.ERROR,
        message=p["msg"],
        code=p["kind"],
        file=where.file,
        line=where.line,
        stage=Stage.RUN,
        context=where.message or None,
        related=tuple(f for f in frames if f is not where),
        raw="\n".join(x.text for x in lines[i : min(j, i + 60)]),
        offset=lines[i].offset,
    )
    return record, j


# --------------------------------------------------------------------------- go vet -json

_POSN = re.compile(r"^(?P<file>.{1,1000}?):(?P<line>\d+)(?::(?P<col>\d+))?$")


def is_go_vet_json(doc: Mapping[str, Any]) -> bool:
    """``{package: {analyzer: [{"posn": ..., "message": ...}]}}``."""
    return bool(doc) and all(
        isinstance(analyzers, Mapping)
        and all(isinstance(found, list) for found in analyzers.values())
        for analyzers in doc.values()
    )


def parse_go_vet_json(doc: Mapping[str, Any], offset: int = 0) -> list[Diagnostic]:
    """One warning per finding; the analyzer's name (``printf``, ``assign``) is the code."""
    out: list[Diagnostic] = []
    for analyzers in doc.values():
        for analyzer, findings in analyzers.items():
            for finding in findings:
                if isinstance(finding, Mapping) and isinstance(finding.get("message"), str):
                    out.append(_vet_record(str(analyzer), finding, offset))
    return out


def _vet_record(analyzer: str, finding: Mapping[str, Any], offset: int) -> Diagnostic:
    posn = _POSN.match(str(finding.get("posn", "")))
    return Diagnostic(
        tool="go-vet",
        severity=Severity.WARNING,
        message=finding["message"],
        code=analyzer,
        file=posn["file"] if posn else None,
        line=int(posn["line"]) if posn else None,
        column=int(posn["col"]) if posn and posn["col"] else None,
        stage=Stage.TYPE,
        raw=finding["message"],
        offset=offset,
    )
