"""Attach parsed compiler/interpreter diagnostics when the diagnostics package is present.

`rewardsmith.verifiers.diagnostics` (issue 6) is written in parallel; until it exposes
``parse_log(text, tool=...)`` the raw output stays in the evidence alone. A parser that
fails never costs the verdict: its error is recorded instead.
"""

from __future__ import annotations

import dataclasses
import importlib
from typing import Any

__all__ = ["parsed"]


def parsed(text: str, tool: str) -> dict[str, Any]:
    """``{"diagnostics": [...]}`` (dicts) or ``{}`` when no parser is available."""
    try:
        module = importlib.import_module("rewardsmith.verifiers.diagnostics")
    except ImportError:
        return {}
    parse_log = getattr(module, "parse_log", None)
    if parse_log is None or not text:
        return {}
    try:
        items = parse_log(text, tool=tool)
        return {"diagnostics": [_as_dict(d) for d in list(items)[:50]]}
    except Exception as exc:  # the parser is another team's code: never let it cost a verdict
        return {"diagnostics_error": f"{type(exc).__name__}: {exc}"[:300]}


def _as_dict(item: Any) -> Any:
    if hasattr(item, "to_dict"):
        return item.to_dict()
    if hasattr(item, "model_dump"):
        return item.model_dump(mode="json")
    if dataclasses.is_dataclass(item) and not isinstance(item, type):
        return dataclasses.asdict(item)
    return item if isinstance(item, dict) else {"text": str(item)}
