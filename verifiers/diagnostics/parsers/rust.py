"""rustc and cargo: ``--error-format=json`` / ``--message-format=json``, text, and panics.

rustc's JSON (one object per line, ``"$message_type": "diagnostic"``) is the reference:
spans give exact ranges, the primary span is the location, the others are related
locations with their labels, ``children`` are the notes and help, and a child span with a
``suggested_replacement`` is a fix. cargo wraps the same object in
``{"reason": "compiler-message", "message": {...}}``. The summary lines (``aborting due
to``, ``For more information``, ``N warnings emitted``, cargo's ``generated N warnings`` and
``could not compile``) are not diagnostics and are dropped.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from rewardsmith.verifiers.diagnostics.cleaning import Line
from rewardsmith.verifiers.diagnostics.record import Diagnostic, Fix, Location, Severity, Stage

__all__ = ["parse_rust_json", "parse_rust_text"]

_LEVEL = {
    "error": Severity.ERROR,
    "error: internal compiler error": Severity.ERROR,
    "warning": Severity.WARNING,
}
_SUMMARY = re.compile(
    r"^(?:aborting due to|For more information|Some errors have detailed|\d+ warnings? emitted"
    r"|`[^`]+` \([^)]*\) generated \d+ warnings?|could not compile `)"
)
"""rustc's and cargo's tallies of what they already reported (``warning: 2 warnings
emitted``, ``error: could not compile `x` ... due to 1 previous error``): not diagnostics."""
_PARSE_HINTS = re.compile(
    r"^(?:expected |unexpected |mismatched closing delimiter|this file contains an unclosed"
    r"|unterminated |unknown start of token|missing `?\w|prefix `|character literal may only)"
)
_HEAD = re.compile(r"^(?P<sev>error|warning)(?:\[(?P<code>\w{1,16})\])?: (?P<msg>.*)$")
_ARROW = re.compile(r"^\s*--> (?P<file>.+?):(?P<line>\d+):(?P<col>\d+)$")
_NOTE = re.compile(r"^\s*= (?:note|help): (?P<msg>.*)$")
_LINT = re.compile(r"#\[(?:warn|deny)\((\w+)\)\]")
_PANIC = re.compile(r"^thread '(?P<thread>[^']*)'(?: \(\d+\))? panicked at (?P<where>.*?):?$")
_PANIC_AT = re.compile(r"^(?P<file>.+?):(?P<line>\d+):(?P<col>\d+)$")


def _stage(message: str, code: str | None) -> Stage:
    if message.startswith("linking with"):
        return Stage.LINK
    if code is None and _PARSE_HINTS.match(message):
        return Stage.PARSE
    return Stage.TYPE


def parse_rust_json(obj: Mapping[str, Any], offset: int = 0) -> Diagnostic | None:
    """One record from a rustc diagnostic object or a cargo ``compiler-message``."""
    if obj.get("reason") == "compiler-message" and isinstance(obj.get("message"), Mapping):
        return parse_rust_json(obj["message"], offset)
    message = obj.get("message")
    severity = _LEVEL.get(str(obj.get("level")))
    if not isinstance(message, str) or severity is None or _SUMMARY.match(message):
        return None
    code_obj = obj.get("code")
    code = code_obj.get("code") if isinstance(code_obj, Mapping) else None
    spans = [s for s in obj.get("spans") or [] if isinstance(s, Mapping)]
    primary = _primary(spans)
    notes, related, fixes = _children(obj.get("children") or [])
    related = [_location(s, s.get("label") or "") for s in spans if s is not primary] + related
    rendered = obj.get("rendered")
    loc = _location(primary, "")
    return Diagnostic(
        tool="rustc",
        severity=severity,
        message=message,
        code=code if isinstance(code, str) else None,
        file=loc.file,
        line=loc.line,
        column=loc.column,
        end_line=loc.end_line,
        end_column=loc.end_column,
        stage=_stage(message, code if isinstance(code, str) else None),
        notes=tuple(notes),
        related=tuple(related),
        fixes=tuple(fixes),
        excerpt=_excerpt(primary),
        raw=rendered if isinstance(rendered, str) else message,
        offset=offset,
    )


def _primary(spans: list[Mapping[str, Any]]) -> Mapping[str, Any]:
    """The earliest primary span: where rustc's own ``-->`` line points."""
    primaries = [s for s in spans if s.get("is_primary")] or spans
    if not primaries:
        return {}

    def position(span: Mapping[str, Any]) -> tuple[int, int]:
        line, col = span.get("line_start"), span.get("column_start")
        return (line if isinstance(line, int) else 0, col if isinstance(col, int) else 0)

    return min(primaries, key=position)


def _children(children: list[Any]) -> tuple[list[str], list[Location], list[Fix]]:
    notes: list[str] = []
    related: list[Location] = []
    fixes: list[Fix] = []
    for child in children[:50]:
        if not isinstance(child, Mapping) or not isinstance(child.get("message"), str):
            continue
        notes.append(f"{child.get('level', 'note')}: {child['message']}")
        for span in child.get("spans") or []:
            if not isinstance(span, Mapping):
                continue
            replacement = span.get("suggested_replacement")
            if isinstance(replacement, str):
                loc = _location(span, child["message"])
                fixes.append(
                    Fix(
                        replacement,
                        loc.file,
                        loc.line,
                        loc.column,
                        loc.end_line,
                        loc.end_column,
                        child["message"],
                    )
                )
            else:
                related.append(_location(span, child["message"]))
    return notes, related, fixes


def _location(span: Mapping[str, Any], label: str) -> Location:
    def num(key: str) -> int | None:
        value = span.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    file = span.get("file_name")
    return Location(
        file if isinstance(file, str) else None,
        num("line_start"),
        num("column_start"),
        num("line_end"),
        num("column_end"),
        label if isinstance(label, str) else "",
    )


def _excerpt(span: Mapping[str, Any]) -> str | None:
    text = span.get("text")
    if isinstance(text, list):
        quoted = [t.get("text") for t in text[:8] if isinstance(t, Mapping)]
        joined = "\n".join(q for q in quoted if isinstance(q, str))
        return joined or None
    return None


# --------------------------------------------------------------------------- text


def parse_rust_text(lines: list[Line], tool: str = "rustc") -> list[Diagnostic]:
    """rustc's human output (``error[E0308]: ...`` then `` --> file:line:col``) and panics.

    A lint's name appears in text only in the note of its first warning
    (``#[warn(unused_variables)]``), so later warnings of that lint have no code here.
    """
    out: list[Diagnostic] = []
    for i, line in enumerate(lines):
        m = _HEAD.match(line.text)
        if m and not _SUMMARY.match(m["msg"]):
            out.append(_text_record(lines, i, m, tool))
            continue
        p = _PANIC.match(line.text)
        if p:
            out.append(_panic(lines, i, p, tool))
    return out


def _text_record(lines: list[Line], i: int, m: re.Match[str], tool: str) -> Diagnostic:
    file = line_no = col = None
    code = m["code"]
    notes: list[str] = []
    for nxt in lines[i + 1 : i + 40]:
        if _HEAD.match(nxt.text) or nxt.text.startswith(("error", "warning")):
            break
        a = _ARROW.match(nxt.text)
        if a and file is None:
            file, line_no, col = a["file"], int(a["line"]), int(a["col"])
        n = _NOTE.match(nxt.text)
        if n:
            notes.append(n["msg"])
            lint = _LINT.search(n["msg"])
            code = code or (lint.group(1) if lint else None)
    return Diagnostic(
        tool=tool,
        severity=_LEVEL[m["sev"]],
        message=m["msg"],
        code=code,
        file=file,
        line=line_no,
        column=col,
        stage=_stage(m["msg"], m["code"]),
        notes=tuple(notes),
        raw=lines[i].text,
        offset=lines[i].offset,
    )


def _panic(lines: list[Line], i: int, p: re.Match[str], tool: str) -> Diagnostic:
    where = _PANIC_AT.match(p["where"])
    # Since Rust 1.73 the message is on the next line; before, it was quoted on this one.
    message = lines[i + 1].text if i + 1 < len(lines) else ""
    return Diagnostic(
        tool=tool,
        severity=Severity.ERROR,
        message=message or p["where"],
        code="panic",
        file=where["file"] if where else None,
        line=int(where["line"]) if where else None,
        column=int(where["col"]) if where else None,
        stage=Stage.RUN,
        context=f"thread '{p['thread']}'",
        raw="\n".join(x.text for x in lines[i : i + 2]),
        offset=lines[i].offset,
    )
