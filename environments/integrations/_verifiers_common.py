"""What the two willccbb/verifiers adapters share: finding their package past ours, and
reading an assistant message as the action our environments parse.

`verifiers_env` (0.3.x, ``MultiTurnEnv``) and `verifiers_v1` (0.4.0, the ``v1`` stack) both
import willccbb/verifiers under its own top-level name, ``verifiers``, which is also the
name of this repo's ``verifiers/`` folder (``rewardsmith.verifiers``) wherever the repo root
is on sys.path (pytest, the docs runs, scripts started from a checkout).
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import json
import os
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

__all__ = ["action_text", "import_their_verifiers"]


def import_their_verifiers() -> ModuleType:
    """willccbb/verifiers' top-level package: the one already imported, else the first
    ``verifiers`` on sys.path that is not our folder, registered in sys.modules so that
    their own ``import verifiers`` finds it. ImportError where there is none."""
    import rewardsmith.verifiers as ours

    ours_dir = Path(ours.__file__).resolve().parent
    module = sys.modules.get("verifiers")
    if module is None:
        return _import_past(ours_dir)
    if Path(module.__file__ or "").resolve().parent == ours_dir:
        raise ImportError("`verifiers` is rewardsmith's own folder here")
    return module


def _import_past(ours_dir: Path) -> ModuleType:
    """Import the top-level ``verifiers`` found on sys.path without `ours_dir`."""
    search = [p for p in sys.path if (Path(p or os.getcwd()) / "verifiers").resolve() != ours_dir]
    spec = importlib.machinery.PathFinder.find_spec("verifiers", search)
    if spec is None or spec.loader is None:
        raise ImportError("no verifiers package installed")
    module = importlib.util.module_from_spec(spec)
    sys.modules["verifiers"] = module  # their own `import verifiers` must find this one
    try:
        spec.loader.exec_module(module)
    except BaseException:
        del sys.modules["verifiers"]
        raise
    return module


def action_text(message: Any) -> str:
    """The action an assistant message is to our environments: its text, then each native
    tool call (a server that parses tool calls moves them out of the text) written back
    as the ``<tool_call>`` block our tool parser reads."""
    content = message.content
    if isinstance(content, list):  # content parts: the text ones, in order
        content = "".join(str(getattr(part, "text", "") or "") for part in content)
    calls = [
        f'<tool_call>{{"name": {json.dumps(call.name)}, "arguments": {call.arguments}}}</tool_call>'
        for call in message.tool_calls or ()
    ]
    return "".join([content or "", *calls])
