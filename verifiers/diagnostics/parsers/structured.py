"""Machine-readable output, found anywhere in a log: a whole JSON document, or JSON lines.

Recognised by shape, not by the tool name, so a cargo log with a stray gcc JSON line still
parses: a list of objects with ``kind`` is gcc's JSON; an object with ``runs`` is SARIF;
``generalDiagnostics`` is pyright; ``$message_type`` or ``reason`` is rustc or cargo;
``{package: {analyzer: [{posn, message}]}}`` is ``go vet -json`` (pretty-printed over many
lines, so a ``{`` line is read up to its ``}`` line); an object with ``file``, ``line`` and
``severity`` is a mypy JSON line. Lines that are not
JSON, or JSON of no known shape, are handed back for the text parsers.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from rewardsmith.verifiers.diagnostics.cleaning import MAX_LINE, Line, lines
from rewardsmith.verifiers.diagnostics.parsers.gcc import parse_gcc_json
from rewardsmith.verifiers.diagnostics.parsers.go import is_go_vet_json, parse_go_vet_json
from rewardsmith.verifiers.diagnostics.parsers.pytype import parse_mypy_json, parse_pyright_json
from rewardsmith.verifiers.diagnostics.parsers.rust import parse_rust_json
from rewardsmith.verifiers.diagnostics.record import Diagnostic
from rewardsmith.verifiers.diagnostics.sarif import from_sarif

__all__ = ["parse_structured"]

_GCC_NAMES = ("gcc", "g++", "clang", "clang++")
MAX_JSON_LINE = 2_000_000
_MAX_BLOCK_LINES = 100_000
_JSON_START = re.compile(r"^[ \t]*[\[{]", re.M)
"""A longer line is not tried as JSON (it is text to the other parsers, cut)."""


def parse_structured(text: str, tool: str | None) -> tuple[list[Diagnostic], list[Line]]:
    """Records from the JSON in `text`, and the lines that were not consumed."""
    stripped = text.lstrip()
    if stripped[:1] in ("[", "{"):
        doc = _loads(stripped)
        if doc is not None:
            whole = _from_document(doc, tool, text.index(stripped[:1]))
            if whole is not None:
                return whole, []
    if not _JSON_START.search(text):  # the common case: plain text, nothing to try
        return [], lines(text)
    records: list[Diagnostic] = []
    rest: list[Line] = []
    raw_lines = _raw_lines(text)
    i = 0
    while i < len(raw_lines):
        line = raw_lines[i]
        if line.text == "{":  # a pretty-printed object: go vet -json prints one per package
            block = _block(raw_lines, i)
            found = _from_line(block, tool) if block is not None else None
            if found is not None and block is not None:
                records.extend(found)
                i += block.text.count("\n") + 1
                continue
        found = None
        # Whole lines here: rustc's JSON carries long explanations; text parsers get cut lines.
        if line.text.lstrip()[:1] in ("[", "{") and len(line.text) <= MAX_JSON_LINE:
            found = _from_line(line, tool)
        if found is None:
            rest.append(Line(line.offset, line.text[:MAX_LINE]))
        else:
            records.extend(found)
        i += 1
    return records, rest


def _raw_lines(text: str) -> list[Line]:
    out = []
    offset = 0
    for raw in text.split("\n"):
        out.append(Line(offset, raw))
        offset += len(raw) + 1
    return out


def _block(raw_lines: list[Line], start: int) -> Line | None:
    """The lines from a ``{`` line to the next ``}`` line, joined; None if there is none."""
    for end in range(start + 1, min(len(raw_lines), start + _MAX_BLOCK_LINES)):
        if raw_lines[end].text == "}":
            joined = "\n".join(x.text for x in raw_lines[start : end + 1])
            return Line(raw_lines[start].offset, joined)
    return None


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def _from_line(line: Line, tool: str | None) -> list[Diagnostic] | None:
    doc = _loads(line.text)
    if doc is None:
        return None
    return _from_document(doc, tool, line.offset)


def _from_document(doc: Any, tool: str | None, offset: int) -> list[Diagnostic] | None:
    """Records for one JSON value, or None when its shape is not one we know."""
    if isinstance(doc, list):
        if doc and all(isinstance(x, Mapping) and "kind" in x for x in doc):
            return parse_gcc_json(doc, tool if tool in _GCC_NAMES else "gcc", offset)
        return [] if doc == [] and tool in _GCC_NAMES else None
    if not isinstance(doc, Mapping):
        return None
    if isinstance(doc.get("runs"), list):
        return [d.with_(offset=offset) for d in from_sarif(doc)]
    if "generalDiagnostics" in doc:
        return parse_pyright_json(doc, offset)
    if "$message_type" in doc or "reason" in doc:
        record = parse_rust_json(doc, offset)
        return [record] if record is not None else []
    if is_go_vet_json(doc):
        return parse_go_vet_json(doc, offset)
    if {"file", "line", "severity", "message"} <= doc.keys():
        record = parse_mypy_json(doc, offset)
        return [record] if record is not None else []
    return None
