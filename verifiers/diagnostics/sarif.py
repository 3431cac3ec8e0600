"""SARIF 2.1.0 export and import: the OASIS format code-scanning tools exchange results in.

`to_sarif` writes one ``run`` per tool; each `Diagnostic` becomes a ``result`` with its
``ruleId`` (the code), ``level``, ``message``, a physical location (``artifactLocation`` +
``region``, with the quoted source as ``snippet``), ``relatedLocations``, ``fixes``, and the
fields SARIF has no slot for (stage, context, notes) in the result's ``properties`` bag.
`from_sarif` reads the same back, so also reads SARIF that gcc 13+ and clang emit.

Reference: Static Analysis Results Interchange Format (SARIF) Version 2.1.0, OASIS
Standard, 2020, https://docs.oasis-open.org/sarif/sarif/v2.1.0/sarif-v2.1.0.html

    >>> from rewardsmith.verifiers.diagnostics.record import Diagnostic, Severity
    >>> doc = to_sarif([Diagnostic("gcc", Severity.ERROR, "boom", file="a.c", line=2)])
    >>> doc["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]
    {'startLine': 2}
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any
from urllib.parse import unquote, urlsplit

from rewardsmith.verifiers.diagnostics.record import Diagnostic, Fix, Location, Severity, Stage

__all__ = ["SARIF_SCHEMA", "SARIF_VERSION", "from_sarif", "to_sarif"]

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"


def to_sarif(diagnostics: Iterable[Diagnostic]) -> dict[str, Any]:
    """A SARIF 2.1.0 log (a JSON-serialisable dict) with one run per tool."""
    runs: dict[str, list[dict[str, Any]]] = {}
    for d in diagnostics:
        runs.setdefault(d.tool, []).append(_result(d))
    return {
        "$schema": SARIF_SCHEMA,
        "version": SARIF_VERSION,
        "runs": [_run(tool, results) for tool, results in runs.items()],
    }


def _run(tool: str, results: list[dict[str, Any]]) -> dict[str, Any]:
    rules = sorted({r["ruleId"] for r in results if "ruleId" in r})
    driver: dict[str, Any] = {"name": tool, "rules": [{"id": rule} for rule in rules]}
    return {"tool": {"driver": driver}, "results": results}


def _result(d: Diagnostic) -> dict[str, Any]:
    result: dict[str, Any] = {"level": d.severity.value, "message": {"text": d.message or "-"}}
    if d.code:
        result["ruleId"] = d.code
    if d.file:
        result["locations"] = [{"physicalLocation": _physical(d, d.excerpt)}]
    related = [
        {"id": i, "physicalLocation": _physical(r), "message": {"text": r.message or "-"}}
        for i, r in enumerate(d.related)
        if r.file
    ]
    if related:
        result["relatedLocations"] = related
    fixes = [_fix(f) for f in d.fixes if f.file]
    if fixes:
        result["fixes"] = fixes
    result["properties"] = {"stage": d.stage.value, "context": d.context, "notes": list(d.notes)}
    return result


def _physical(loc: Location | Diagnostic | Fix, snippet: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"artifactLocation": {"uri": loc.file}}
    region = _region(loc)
    if snippet:
        region["snippet"] = {"text": snippet}
    if region:
        out["region"] = region
    return out


def _region(loc: Location | Diagnostic | Fix) -> dict[str, Any]:
    pairs = (
        ("startLine", loc.line),
        ("startColumn", loc.column),
        ("endLine", loc.end_line),
        ("endColumn", loc.end_column),
    )
    # SARIF lines and columns are 1-based; a 0 from a tool would make the log invalid.
    return {key: value for key, value in pairs if value is not None and value >= 1}


def _fix(fix: Fix) -> dict[str, Any]:
    region = _region(fix) or {"startLine": 1}
    change = {
        "artifactLocation": {"uri": fix.file},
        "replacements": [{"deletedRegion": region, "insertedContent": {"text": fix.replacement}}],
    }
    return {"description": {"text": fix.message or "suggested fix"}, "artifactChanges": [change]}


# --------------------------------------------------------------------------- import


def from_sarif(doc: Mapping[str, Any]) -> list[Diagnostic]:
    """Diagnostics from a SARIF 2.1.0 log (ours, gcc's or clang's). Skips malformed parts."""
    out: list[Diagnostic] = []
    for run in _list(doc.get("runs")):
        driver = _get(_get(run, "tool"), "driver")
        name = driver.get("name")
        tool = name.lower() if isinstance(name, str) else "sarif"
        out.extend(_from_result(result, tool) for result in _list(run.get("results")))
    return out


def _from_result(result: Mapping[str, Any], tool: str) -> Diagnostic:
    level = result.get("level")
    severity = Severity(level) if level in ("error", "warning", "note") else Severity.WARNING
    loc = _location(_get(_first(result.get("locations")), "physicalLocation"))
    props = _get(result, "properties")
    stage = props.get("stage") if props.get("stage") in {s.value for s in Stage} else "type"
    related = tuple(
        _location(_get(r, "physicalLocation"), _text(r.get("message")))
        for r in _list(result.get("relatedLocations"))
    )
    snippet = _get(
        _get(_get(_first(result.get("locations")), "physicalLocation"), "region"), "snippet"
    ).get("text")
    return Diagnostic(
        tool=tool,
        severity=severity,
        message=_text(result.get("message")),
        code=result.get("ruleId") if isinstance(result.get("ruleId"), str) else None,
        file=loc.file,
        line=loc.line,
        column=loc.column,
        end_line=loc.end_line,
        end_column=loc.end_column,
        stage=Stage(stage),
        context=props.get("context") if isinstance(props.get("context"), str) else None,
        notes=tuple(_strings(props.get("notes"))),
        related=related,
        fixes=tuple(_fixes(result)),
        excerpt=snippet if isinstance(snippet, str) else None,
        raw=_text(result.get("message")),
    )


def _fixes(result: Mapping[str, Any]) -> list[Fix]:
    out = []
    for fix in _list(result.get("fixes")):
        for change in _list(fix.get("artifactChanges")):
            uri = _get(change, "artifactLocation").get("uri")
            for rep in _list(change.get("replacements")):
                loc = _location({"region": _get(rep, "deletedRegion")})
                text = _get(rep, "insertedContent").get("text")
                out.append(
                    Fix(
                        text if isinstance(text, str) else "",
                        _path(uri),
                        loc.line,
                        loc.column,
                        loc.end_line,
                        loc.end_column,
                        _text(fix.get("description")),
                    )
                )
    return out


def _location(physical: Mapping[str, Any], message: str = "") -> Location:
    uri = _get(physical, "artifactLocation").get("uri")
    region = _get(physical, "region")

    def num(key: str) -> int | None:
        value = region.get(key)
        return value if isinstance(value, int) and not isinstance(value, bool) else None

    return Location(
        _path(uri), num("startLine"), num("startColumn"), num("endLine"), num("endColumn"), message
    )


def _path(uri: Any) -> str | None:
    """A file path from an artifact URI: clang writes ``file:///w/prog.c``."""
    if not isinstance(uri, str):
        return None
    if uri.startswith("file://"):
        return unquote(urlsplit(uri).path) or uri
    return uri


def _get(obj: Any, key: str) -> Mapping[str, Any]:
    value = obj.get(key) if isinstance(obj, Mapping) else None
    return value if isinstance(value, Mapping) else {}


def _list(value: Any) -> list[Any]:
    return [v for v in value if isinstance(v, Mapping)] if isinstance(value, list) else []


def _strings(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _first(value: Any) -> Mapping[str, Any]:
    items = _list(value)
    return items[0] if items else {}


def _text(message: Any) -> str:
    text = message.get("text") if isinstance(message, Mapping) else None
    return text if isinstance(text, str) else ""
