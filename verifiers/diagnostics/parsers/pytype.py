"""Python type checkers: mypy (``-O json`` and text) and pyright (``--outputjson`` and text).

mypy's JSON columns are 0-based and its end columns 1-based (checked against its own text
output with ``--show-column-numbers --show-error-end``); pyright's ranges are 0-based LSP
positions. Both are converted to the 1-based lines and columns every record uses. A mypy
``note`` on the same line as the error before it is that error's note, not a record.
A mypy ``[syntax]`` error is parse-stage; everything else is type-stage.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from rewardsmith.verifiers.diagnostics.cleaning import Line
from rewardsmith.verifiers.diagnostics.record import Diagnostic, Location, Severity, Stage

__all__ = ["parse_mypy_json", "parse_mypy_text", "parse_pyright_json", "parse_pyright_text"]

_SEVERITY = {"error": Severity.ERROR, "warning": Severity.WARNING}
_MYPY = re.compile(
    r"^(?P<file>[^\s:][^:]{0,1000}?\.pyi?):(?P<line>\d+):(?:(?P<col>\d+):)?"
    r"(?:(?P<eline>\d+):(?P<ecol>\d+):)? (?P<sev>error|note|warning): (?P<msg>.*?)"
    r"(?:  \[(?P<code>[\w-]{1,64})\])?$"
)
_PYRIGHT = re.compile(
    r"^\s+(?P<file>\S[^:]{0,1000}?\.pyi?):(?P<line>\d+):(?P<col>\d+) - "
    r"(?P<sev>error|warning|information): (?P<msg>.*?)(?: \((?P<code>report\w{1,64})\))?$"
)


def _num(value: Any, shift: int = 0) -> int | None:
    if isinstance(value, int) and not isinstance(value, bool):
        return value + shift
    return None


def _mypy_record(**kw: Any) -> Diagnostic:
    stage = Stage.PARSE if kw.get("code") == "syntax" else Stage.TYPE
    return Diagnostic(tool="mypy", stage=stage, **kw)


def _attach_or_add(out: list[Diagnostic], record: Diagnostic) -> None:
    """A note on the line of the record before it becomes that record's note."""
    if record.severity is Severity.NOTE and out:
        last = out[-1]
        if last.file == record.file and last.line == record.line:
            related = Location(record.file, record.line, record.column, message=record.message)
            out[-1] = last.with_(
                notes=(*last.notes, record.message), related=(*last.related, related)
            )
            return
    out.append(record)


def parse_mypy_json(obj: Mapping[str, Any], offset: int = 0) -> Diagnostic | None:
    """One record from a line of ``mypy -O json``."""
    message = obj.get("message")
    if not isinstance(message, str) or not isinstance(obj.get("file"), str):
        return None
    code = obj.get("code")
    hint = obj.get("hint")
    return _mypy_record(
        severity=_SEVERITY.get(str(obj.get("severity")), Severity.NOTE),
        message=message,
        code=code if isinstance(code, str) else None,
        file=obj["file"],
        line=_num(obj.get("line")),
        column=_num(obj.get("column"), 1),
        end_line=_num(obj.get("end_line")),
        end_column=_num(obj.get("end_column")),
        notes=(hint,) if isinstance(hint, str) and hint else (),
        raw=message,
        offset=offset,
    )


def parse_mypy_text(lines: list[Line], tool: str = "mypy") -> list[Diagnostic]:
    """mypy's text lines, with or without columns and end positions."""
    out: list[Diagnostic] = []
    for line in lines:
        m = _MYPY.match(line.text)
        if m is None:
            continue
        record = _mypy_record(
            severity=_SEVERITY.get(m["sev"], Severity.NOTE),
            message=m["msg"],
            code=m["code"],
            file=m["file"],
            line=int(m["line"]),
            column=int(m["col"]) if m["col"] else None,
            end_line=int(m["eline"]) if m["eline"] else None,
            end_column=int(m["ecol"]) if m["ecol"] else None,
            raw=line.text,
            offset=line.offset,
        )
        _attach_or_add(out, record)
    return out


# --------------------------------------------------------------------------- pyright


def parse_pyright_json(doc: Mapping[str, Any], offset: int = 0) -> list[Diagnostic]:
    """Records from pyright's ``--outputjson`` document (``generalDiagnostics``)."""
    out: list[Diagnostic] = []
    items = doc.get("generalDiagnostics")
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, Mapping) or not isinstance(item.get("message"), str):
            continue
        rng = _sub(item, "range")
        start = _sub(rng, "start")
        end = _sub(rng, "end")
        rule = item.get("rule")
        message = item["message"]
        out.append(
            Diagnostic(
                tool="pyright",
                severity=_SEVERITY.get(str(item.get("severity")), Severity.NOTE),
                message=message,
                code=rule if isinstance(rule, str) else None,
                file=item.get("file") if isinstance(item.get("file"), str) else None,
                line=_num(start.get("line"), 1),
                column=_num(start.get("character"), 1),
                end_line=_num(end.get("line"), 1),
                end_column=_num(end.get("character"), 1),
                stage=_pyright_stage(message, rule),
                raw=message,
                offset=offset,
            )
        )
    return out


def parse_pyright_text(lines: list[Line], tool: str = "pyright") -> list[Diagnostic]:
    """pyright's text: ``  /path/a.py:3:5 - error: message (reportRule)``."""
    out: list[Diagnostic] = []
    for line in lines:
        m = _PYRIGHT.match(line.text)
        if m is None:
            continue
        out.append(
            Diagnostic(
                tool="pyright",
                severity=_SEVERITY.get(m["sev"], Severity.NOTE),
                message=m["msg"],
                code=m["code"],
                file=m["file"],
                line=int(m["line"]),
                column=int(m["col"]),
                stage=_pyright_stage(m["msg"], m["code"]),
                raw=line.text,
                offset=line.offset,
            )
        )
    return out


def _pyright_stage(message: str, rule: Any) -> Stage:
    # pyright gives syntax errors no rule; their messages name what the parser expected.
    if rule is None and re.match(
        r"(?:Expected |Unexpected |Unindent|Unclosed|.* not closed)", message
    ):
        return Stage.PARSE
    return Stage.TYPE


def _sub(obj: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    """``obj[key]`` when it is an object, else an empty one (hostile JSON has any shape)."""
    value = obj.get(key)
    return value if isinstance(value, Mapping) else {}
