"""Run model-written Blender scripts in the sandbox and read back the scene they built.

Two sandboxed runs per sample, both forked from one warm server that has imported `bpy`
and reset it to empty factory settings (`_inside`), so no child pays for either:

1. the model's scripts run in order (``run_steps``); each step's scene is saved;
2. a fresh child opens the saved files with scripts disabled and dumps them to JSON, with
   the truth render's statistics for the last (`_truth.py`: a 48 px, 4-sample seeded
   Cycles render from the scene's own camera, per-object coverage and luminance), and
   renders the preview when asked (``inspect_blends``).

The scoring process only ever reads JSON and PNG bytes that come back.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from rewardsmith.verifiers.sandbox import Limits, SandboxResult, run_python
from rewardsmith.verifiers.types import Failure

__all__ = ["BlenderRun", "describe_failure", "run_scripts"]

PRELOAD = ("rewardsmith.verifiers.blender._inside",)
EXIT_SCRIPT_ERROR = 3  # the same codes as in _inside (not imported here: it imports bpy)
EXIT_SYNTAX_ERROR = 4
_MAX_DUMP_BYTES = 16 << 20


@dataclass(frozen=True)
class BlenderRun:
    """What the two phases produced."""

    build: SandboxResult
    inspect: SandboxResult | None = None
    dumps: list[dict[str, Any] | None] | None = None
    preview: bytes | None = None
    views: tuple[bytes | None, ...] = ()
    """The renders from the spec's extra views, in order (None where none came back)."""


def run_scripts(
    scripts: list[str],
    limits: Limits,
    preview_size: int = 0,
    preview_samples: int = 16,
    views: list[dict[str, Any]] | None = None,
    truth_size: int = 48,
    asked: dict[str, Any] | None = None,
) -> BlenderRun:
    """Phase 1 then (when it succeeded) phase 2; see the module docstring. `truth_size` 0
    leaves the truth render out (for the benchmark that measures its cost only)."""
    n = len(scripts)
    files = {f"step_{k}.py": s.encode("utf-8", "replace") for k, s in enumerate(scripts)}
    blends = tuple(f"step_{k}.blend" for k in range(n))
    build = run_python(
        f"from rewardsmith.verifiers.blender._inside import run_steps\nrun_steps({n})",
        files=files,
        limits=limits,
        collect=blends,
        preload=PRELOAD,
    )
    if not build.ok or build.missing:
        return BlenderRun(build)
    views = list(views or [])
    view_files = tuple(f"view_{k}.png" for k in range(len(views)))
    inspect = run_python(
        "from rewardsmith.verifiers.blender._inside import inspect_blends\n"
        f"inspect_blends({n}, {int(preview_size)}, {int(preview_samples)}, "
        f"{json.dumps(views)!r}, {int(truth_size)}, asked={json.dumps(asked)!r})",
        readonly_files=dict(build.files),
        limits=limits,
        collect=("scene.json", "preview.png", *view_files) if preview_size else ("scene.json",),
        preload=PRELOAD,
    )
    raw = inspect.files.get("scene.json")
    if not inspect.ok or raw is None or len(raw) > _MAX_DUMP_BYTES:
        return BlenderRun(build, inspect)
    parsed = json.loads(raw)
    rendered = tuple(inspect.files.get(name) for name in view_files)
    return BlenderRun(build, inspect, parsed["steps"], inspect.files.get("preview.png"), rendered)


def describe_failure(build: SandboxResult) -> tuple[Failure, str]:
    """Why a sandboxed run of model code left no output: the model's failure or the sandbox's.

    Also used by `cad_code` for plain Python scripts (which exit 1 on an exception)."""
    stderr = build.stderr.decode("utf-8", "replace")[-1500:]
    if build.error:
        return Failure.SANDBOX_ERROR, build.error
    hit = build.limit_hit.value if build.limit_hit else None
    if hit in ("wall_time", "cpu_time"):
        return Failure.TIME_LIMIT, f"the script ran past the {hit.replace('_', ' ')} limit"
    if hit == "memory":
        return Failure.MEMORY_LIMIT, "the script ran out of memory"
    if hit == "output":
        return Failure.OUTPUT_LIMIT, "the script printed too much"
    if hit is not None:
        return Failure.RESOURCE_LIMIT, f"the script hit the {hit} limit"
    last = _last_line(stderr)
    if build.exit_code == EXIT_SYNTAX_ERROR or last.startswith(("SyntaxError", "IndentationError")):
        return Failure.COMPILE_ERROR, last
    if build.exit_code == 0:  # exited 0 without saving: os._exit() in the script
        return Failure.RUNTIME_ERROR, "the script ended the process before its output was saved"
    if build.exit_code is not None:  # EXIT_SCRIPT_ERROR from _inside, 1 from plain Python
        return Failure.RUNTIME_ERROR, last
    return Failure.RUNTIME_ERROR, f"{build.describe()}: {last}"


def _last_line(text: str) -> str:
    """The exception line of a traceback (the last non-empty line)."""
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1][:500] if lines else "the script failed"
