"""Feedback a model can act on: the first errors, where they are, and the code there.

Short enough to put back in a prompt (`max_chars`), errors before warnings, each with its
``file:line:col``, code and message, then the source excerpt the tool quoted or, when it
quoted none and the sample carries its sources, the offending line from them.

    >>> from rewardsmith.verifiers.diagnostics.record import Diagnostic, Severity, Stage
    >>> d = Diagnostic("gcc", Severity.ERROR, "'y' undeclared", file="a.c", line=2, column=5)
    >>> print(format_feedback([d], sources={"a.c": "int main(void) {\\n  y = 1;\\n}"}))
    1 error (first failing stage: type).
    a.c:2:5: error: 'y' undeclared
        2 |   y = 1;
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from rewardsmith.verifiers.diagnostics.record import Diagnostic, Severity
from rewardsmith.verifiers.diagnostics.shaping import summarise

__all__ = ["format_feedback"]

_ORDER = {Severity.ERROR: 0, Severity.WARNING: 1, Severity.NOTE: 2}


def format_feedback(
    diagnostics: Sequence[Diagnostic],
    sources: Mapping[str, str] | None = None,
    max_items: int = 3,
    max_chars: int = 1_500,
) -> str:
    """A few lines naming the first `max_items` problems; at most `max_chars` characters."""
    summary = summarise(diagnostics)
    if summary.errors == 0 and summary.warnings == 0:
        return "No errors or warnings."
    head = _headline(summary.errors, summary.warnings, summary.stage)
    ranked = sorted(
        (d for d in diagnostics if d.severity is not Severity.NOTE),
        key=lambda d: (_ORDER[d.severity], d.offset),
    )
    parts = [head] + [_item(d, sources) for d in ranked[:max_items]]
    if len(ranked) > max_items:
        parts.append(f"... and {len(ranked) - max_items} more.")
    text = "\n".join(parts)
    return text if len(text) <= max_chars else text[: max_chars - 4] + " ..."


def _headline(errors: int, warnings: int, stage: object) -> str:
    if errors:
        noun = "error" if errors == 1 else "errors"
        return f"{errors} {noun} (first failing stage: {getattr(stage, 'value', stage)})."
    return f"No errors; {warnings} warning{'s' if warnings != 1 else ''}."


def _item(d: Diagnostic, sources: Mapping[str, str] | None) -> str:
    where = d.location_text or d.context or d.tool
    code = f" [{d.code}]" if d.code else ""
    lines = [f"{where}: {d.severity.value}: {d.message}{code}"]
    excerpt = d.excerpt or _source_line(d, sources)
    if excerpt:
        lines.extend(f"    {x}" for x in excerpt.splitlines()[:4])
    if d.notes:
        lines.append(f"    note: {d.notes[0][:200]}")
    return "\n".join(lines)


def _source_line(d: Diagnostic, sources: Mapping[str, str] | None) -> str | None:
    if not sources or d.file is None or d.line is None:
        return None
    text = sources.get(d.file)
    if text is None:  # tools print paths relative, absolute or with ./; match by suffix
        text = next((v for k, v in sources.items() if d.file.endswith("/" + k.lstrip("./"))), None)
    if not isinstance(text, str):
        return None
    source_lines = text.splitlines()
    if not 1 <= d.line <= len(source_lines):
        return None
    return f"{d.line} | {source_lines[d.line - 1][:200]}"
