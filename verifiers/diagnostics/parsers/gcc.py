"""gcc, g++ and clang: ``-fdiagnostics-format=json`` and the default text, plus ld errors.

Text form (gcc 12; clang differs only in how it quotes source):

    a.c: In function 'main':
    a.c:3:9: error: expected ';' before '}' token
        3 |   x = 1
          |        ^
          |        ;
    a.c:2:7: note: 'x' declared here
    /usr/bin/ld: /tmp/cc1.o: in function `main':
    a.c:(.text+0x9): undefined reference to `foo'

A ``note:`` belongs to the error or warning before it (it becomes a related location); the
``In function`` line is the context of the records after it; the ``N | source`` and caret
lines are the excerpt, and a fix-it line below the caret becomes a `Fix`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from rewardsmith.verifiers.diagnostics.cleaning import Line
from rewardsmith.verifiers.diagnostics.record import Diagnostic, Fix, Location, Severity, Stage

__all__ = ["parse_gcc_json", "parse_gcc_text"]

_HEAD = re.compile(
    r"^(?P<file>[^\s:][^:]{0,1000}?):(?P<line>\d+):(?:(?P<col>\d+):)? "
    r"(?P<sev>fatal error|error|warning|note|remark): (?P<msg>.*)$"
)
_OPTION = re.compile(r" \[(-W[\w=+-]+|-f[\w-]+|-Werror=[\w-]+)\]$")
_CONTEXT = re.compile(r"^(?P<file>[^\s:][^:]{0,1000}?): (?P<ctx>(?:In|At) [^:].*):$")
_GUTTER = re.compile(r"^ *(\d+)? \| ?(.*)$")  # gcc's "  3 | code" and "    |   ^~"
_LD_UNDEFINED = re.compile(
    r"^(?P<file>[^\s:][^:]{0,1000}?):(?:\(\.[\w.]+\+0x[0-9a-f]+\)|(?P<line>\d+)):"
    r" (?P<msg>(?:undefined reference to|multiple definition of) .*)$"
)
_LD_OTHER = re.compile(
    r"^(?:/\S*/)?(?:ld|collect2|clang(?:\+\+)?|gcc|g\+\+)(?:\.\w+)?: (?:error: )?(?P<msg>.*)$"
)

_PARSE_HINTS = re.compile(
    r"^(?:expected |stray |missing terminating|unterminated|invalid preprocessing"
    r"|extra tokens|#\w+|unknown type name|.*: No such file or directory$"
    r"|.*file not found$|.*before numeric constant|.*at end of input)"
)

_SEVERITY = {
    "fatal error": Severity.ERROR,
    "error": Severity.ERROR,
    "warning": Severity.WARNING,
    "note": Severity.NOTE,
    "remark": Severity.NOTE,
}


def _stage(message: str) -> Stage:
    return Stage.PARSE if _PARSE_HINTS.match(message) else Stage.TYPE


def parse_gcc_text(lines: list[Line], tool: str = "gcc") -> list[Diagnostic]:
    """Parse gcc/clang text diagnostics and linker errors from `lines`."""
    out: list[Diagnostic] = []
    context: str | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        if ":" not in line.text:  # every form below has one; most log lines are source quotes
            i += 1
            continue
        m_ctx = _CONTEXT.match(line.text)
        if m_ctx:
            context = m_ctx["ctx"]
            i += 1
            continue
        m = _HEAD.match(line.text)
        if m:
            i = _read_record(lines, i, m, tool, context, out)
            continue
        linker = _linker(line, tool)
        if linker is not None:
            out.append(linker)
        i += 1
    return out


def _read_record(
    lines: list[Line],
    i: int,
    m: re.Match[str],
    tool: str,
    context: str | None,
    out: list[Diagnostic],
) -> int:
    """Read one header line and its excerpt; return the index of the next unread line."""
    message, code = _split_option(m["msg"])
    severity = _SEVERITY[m["sev"]]
    line_no, col = int(m["line"]), _int(m["col"])
    excerpt, fixes, j = _read_excerpt(lines, i + 1, m["file"], line_no, col)
    raw = "\n".join(x.text for x in lines[i:j])
    if severity is Severity.NOTE and out:
        parent = out[-1]
        note = Location(m["file"], line_no, col, message=message)
        out[-1] = parent.with_(related=(*parent.related, note), notes=(*parent.notes, message))
        return j
    out.append(
        Diagnostic(
            tool=tool,
            severity=severity,
            message=message,
            code=code,
            file=m["file"],
            line=line_no,
            column=col,
            stage=_stage(message),
            context=context,
            fixes=tuple(fixes),
            excerpt=excerpt,
            raw=raw,
            offset=lines[i].offset,
        )
    )
    return j


def _read_excerpt(
    lines: list[Line], j: int, file: str, line_no: int, col: int | None
) -> tuple[str | None, list[Fix], int]:
    """The quoted source and caret lines after a header, and a fix-it line if there is one."""
    quoted: list[str] = []
    if j < len(lines) and _GUTTER.match(lines[j].text):  # gcc: "  3 | code", "    | ^~"
        while j < len(lines) and len(quoted) < 8 and _GUTTER.match(lines[j].text):
            quoted.append(lines[j].text)
            j += 1
    elif j + 1 < len(lines) and _is_caret(lines[j + 1].text) and not _HEAD.match(lines[j].text):
        quoted = [lines[j].text, lines[j + 1].text]  # clang: the source line, then the caret
        j += 2
    fixes: list[Fix] = []
    # gcc prints a fix-it as a third gutter line under the caret: "    |   ;"
    if len(quoted) >= 3:
        g = _GUTTER.match(quoted[2])
        fix = (g.group(2) or "").strip() if g and not g.group(1) else ""
        if fix and not set(fix) <= set("^~-+ "):
            fixes.append(Fix(replacement=fix, file=file, line=line_no, column=col))
    return ("\n".join(quoted) or None), fixes, j


def _is_caret(text: str) -> bool:
    stripped = text.strip()
    return bool(stripped) and "^" in stripped and set(stripped) <= set("^~ ")


def _linker(line: Line, tool: str) -> Diagnostic | None:
    m = _LD_UNDEFINED.match(line.text)
    if m:
        return Diagnostic(
            tool=tool,
            severity=Severity.ERROR,
            message=m["msg"],
            code="undefined-reference" if "undefined" in m["msg"] else "multiple-definition",
            file=m["file"],
            line=_int(m["line"]),
            stage=Stage.LINK,
            raw=line.text,
            offset=line.offset,
        )
    m = _LD_OTHER.match(line.text)
    if m and any(
        k in m["msg"] for k in ("cannot find -l", "undefined reference to", "linker command failed")
    ):
        return Diagnostic(
            tool=tool,
            severity=Severity.ERROR,
            message=m["msg"],
            stage=Stage.LINK,
            raw=line.text,
            offset=line.offset,
        )
    return None


def _split_option(message: str) -> tuple[str, str | None]:
    m = _OPTION.search(message)
    if m:
        return message[: m.start()], m.group(1)
    return message, None


def _int(value: str | None) -> int | None:
    return int(value) if value else None


# --------------------------------------------------------------------------- JSON


def parse_gcc_json(doc: Iterable[Any], tool: str = "gcc", offset: int = 0) -> list[Diagnostic]:
    """Records from gcc's ``-fdiagnostics-format=json`` array (children become notes)."""
    out: list[Diagnostic] = []
    for item in doc:
        if isinstance(item, Mapping) and isinstance(item.get("message"), str):
            record = _from_json(item, tool, offset)
            if record.severity is Severity.NOTE and out:  # as in the text: a note explains
                parent = out[-1]  # the record before it
                note = Location(record.file, record.line, record.column, message=record.message)
                record = parent.with_(
                    related=(*parent.related, note), notes=(*parent.notes, record.message)
                )
                out[-1] = record
            else:
                out.append(record)
    return out


def _from_json(item: Mapping[str, Any], tool: str, offset: int) -> Diagnostic:
    severity = _SEVERITY.get(str(item.get("kind")), Severity.ERROR)
    message = str(item["message"])
    primary = _json_location(_first(item.get("locations")))
    related, notes = [], []
    for child in item.get("children") or []:
        if isinstance(child, Mapping) and isinstance(child.get("message"), str):
            loc = _json_location(_first(child.get("locations")))
            related.append(Location(loc.file, loc.line, loc.column, message=child["message"]))
            notes.append(child["message"])
    fixes = [_json_fix(f) for f in item.get("fixits") or [] if isinstance(f, Mapping)]
    option = item.get("option")
    return Diagnostic(
        tool=tool,
        severity=severity,
        message=message,
        code=option if isinstance(option, str) else None,
        file=primary.file,
        line=primary.line,
        column=primary.column,
        end_line=primary.end_line,
        end_column=primary.end_column,
        stage=_stage(message),
        notes=tuple(notes),
        related=tuple(related),
        fixes=tuple(fixes),
        raw=message,
        offset=offset,
    )


def _first(value: Any) -> Mapping[str, Any]:
    if isinstance(value, list) and value and isinstance(value[0], Mapping):
        return value[0]
    return {}


def _json_location(loc: Mapping[str, Any]) -> Location:
    caret = _sub(loc, "caret")
    finish = _sub(loc, "finish")
    return Location(
        file=_str(caret.get("file")),
        line=_num(caret.get("line")),
        column=_num(caret.get("column")),
        end_line=_num(finish.get("line")),
        end_column=_num(finish.get("column")),
    )


def _json_fix(fix: Mapping[str, Any]) -> Fix:
    start = _sub(fix, "start")
    nxt = _sub(fix, "next")
    return Fix(
        replacement=str(fix.get("string", "")),
        file=_str(start.get("file")),
        line=_num(start.get("line")),
        column=_num(start.get("column")),
        end_line=_num(nxt.get("line")),
        end_column=_num(nxt.get("column")),
    )


def _num(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _sub(obj: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    """``obj[key]`` when it is an object, else an empty one (hostile JSON has any shape)."""
    value = obj.get(key)
    return value if isinstance(value, Mapping) else {}
