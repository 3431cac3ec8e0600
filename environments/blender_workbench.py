"""The sandboxed Blender work behind the `blender_scene` environment's tools.

An episode's scene lives in its own scratch folder on the host, as content-addressed
``<sha256>.blend`` files (the state after each turn) and ``<sha256>.json`` dumps (what the
trusted inspection read from it). The folder is never inside a jail: the model's code
sees only a copy of the current scene at ``/box/in.blend``, and no tool takes a path.

Three sandboxed programs, each forked from the verifier's warm Blender server
(`verifiers.blender.run.PRELOAD`: `bpy` imported and Cycles started once):

- `run_script`: open the scene (scripts disabled), run the model's code, save
  ``/box/out.blend``. Any error, limit or signal leaves the scene as it was.
- `inspect_blend`: in a fresh child, open a saved scene with scripts disabled and dump it
  (`verifiers.blender._inside.inspect_blends`, with its 48 px truth render): a script
  cannot forge what it is judged by, because it never runs in this process.
- `render_blend`: a small seeded Cycles render from the scene's camera; the frame's
  aspect is clamped to 4:1 whatever the scene says, so a huge render cannot be asked for.

`SandboxUnavailable` is raised when the jail itself cannot start: the environment's
failure, which ends the episode (`environment_error`), never an observation.
"""

from __future__ import annotations

import hashlib
import json
import re
import signal
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from rewardsmith.verifiers.blender.run import PRELOAD
from rewardsmith.verifiers.sandbox import Limits, SandboxResult, run_python

__all__ = [
    "MAX_SCENE_BYTES",
    "Outcome",
    "SandboxUnavailable",
    "empty_scene",
    "inspect_blend",
    "render_blend",
    "run_script",
    "store",
]

MAX_SCENE_BYTES = 32 << 20
"""The largest saved scene kept (a bigger one is refused, the scene unchanged)."""
_MEMORY = 2 << 30

_RUN = """
import os, sys, traceback, bpy
if os.path.exists("/box/in.blend"):
    bpy.ops.wm.open_mainfile(filepath="/box/in.blend", load_ui=False, use_scripts=False)
with open("/box/step.py", encoding="utf-8", errors="replace") as handle:
    source = handle.read()
try:
    code = compile(source, "step.py", "exec")
except (SyntaxError, ValueError) as exc:
    print("".join(traceback.format_exception_only(type(exc), exc)).strip(), file=sys.stderr)
    sys.exit(4)
try:
    exec(code, {"__name__": "__main__", "bpy": bpy})
except SystemExit as exc:
    if exc.code not in (None, 0):
        print(f"the script exited with {exc.code!r}", file=sys.stderr)
        sys.exit(3)
except BaseException as exc:
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == "step.py"]
    lines = [f"  line {f.lineno}: {(f.line or '').strip()}" for f in frames[-4:]]
    print("\\n".join(["Traceback (your script):", *lines,
                     f"{type(exc).__name__}: {exc}"[:500]]), file=sys.stderr)
    sys.exit(3)
bpy.ops.wm.save_as_mainfile(filepath="/box/out.blend", check_existing=False)
"""

_INSPECT = (
    "from rewardsmith.verifiers.blender._inside import inspect_blends\n"
    "inspect_blends(1, 0, 16, '[]', 48)\n"
)

_RENDER = """
import bpy
from rewardsmith.verifiers.blender._truth import truth_size
bpy.ops.wm.open_mainfile(filepath="/box/step_0.blend", load_ui=False, use_scripts=False)
scene = bpy.context.scene
camera = scene.camera
if camera is not None and camera.type == "CAMERA":
    r = scene.render
    r.resolution_x, r.resolution_y = truth_size(scene, {size})  # aspect clamped to 4:1
    r.resolution_percentage, r.use_border = 100, False
    r.pixel_aspect_x = r.pixel_aspect_y = 1.0
    r.engine = "CYCLES"
    scene.cycles.device, scene.cycles.samples, scene.cycles.seed = "CPU", {samples}, 0
    scene.cycles.use_denoising = False
    r.image_settings.file_format = "PNG"
    r.filepath = "/box/preview.png"
    bpy.ops.render.render(write_still=True)
"""


class SandboxUnavailable(RuntimeError):
    """The jail could not start: the environment failed, not the model."""


@dataclass(frozen=True)
class Outcome:
    """What one sandboxed program left: `data` (the file it was to write) or `problem`."""

    data: bytes | None
    problem: str = ""
    log: str = ""


def _limits(wall_s: float) -> Limits:
    wall = max(0.5, wall_s)
    return Limits(
        wall_s=wall,
        cpu_s=wall,
        memory_bytes=_MEMORY,
        disk_bytes=256 << 20,
        collect_bytes=MAX_SCENE_BYTES,
        output_bytes=64 << 10,
    )


_BLENDER_NOISE = re.compile(r"^(\d\d:\d\d\.\d+ +\w+ +\|.*|Info: Saved as .*|Blender quit)$")


def _model_log(output: bytes) -> str:
    """The run's output without Blender's own chatter (file read and saved lines)."""
    text = output.decode("utf-8", "replace")
    return "\n".join(ln for ln in text.splitlines() if not _BLENDER_NOISE.match(ln))[-1500:]


def _outcome(result: SandboxResult, wanted: str, what: str, wall_s: float) -> Outcome:
    """The collected file, or a sentence saying what happened to the program."""
    if result.error:
        raise SandboxUnavailable(result.error)
    log = _model_log(result.stdout + result.stderr)
    hit = result.limit_hit.value if result.limit_hit else None
    if hit in ("wall_time", "cpu_time"):
        return Outcome(None, f"{what} ran past its {wall_s:.1f} s limit and was killed", log)
    if hit is not None:
        return Outcome(None, f"{what} hit the sandbox's {hit.replace('_', ' ')} limit", log)
    if result.signal is not None:
        name = (
            signal.Signals(result.signal).name
            if result.signal in signal.valid_signals()
            else (str(result.signal))
        )
        return Outcome(None, f"Blender was killed by signal {name} during {what}", log)
    if result.exit_code != 0:
        return Outcome(None, f"{what} failed (exit code {result.exit_code})", log)
    data = result.files.get(wanted)
    if data is None:
        return Outcome(None, f"{what} ended without saving (os._exit or a removed file)", log)
    return Outcome(data, "", log)


def run_script(blend: bytes, code: str, wall_s: float) -> Outcome:
    """Run `code` on the scene `blend` (empty bytes: Blender's empty factory scene)."""
    files = {"step.py": code.encode("utf-8", "replace")}
    if blend:
        files["in.blend"] = blend
    result = run_python(
        _RUN, files=files, limits=_limits(wall_s), collect=("out.blend",), preload=PRELOAD
    )
    return _outcome(result, "out.blend", "the script", wall_s)


def inspect_blend(blend: bytes, wall_s: float) -> tuple[dict[str, Any] | None, str]:
    """The trusted dump of a saved scene (with its truth render), or why there is none."""
    outcome = _on_saved_scene(_INSPECT, blend, "scene.json", "inspecting the saved scene", wall_s)
    if outcome.data is None:
        return None, outcome.problem
    dumps = json.loads(outcome.data).get("steps") or [None]
    if dumps[0] is None:
        return None, "the saved scene does not open in Blender"
    return dumps[0], ""


def render_blend(blend: bytes, size: int, samples: int, wall_s: float) -> Outcome:
    """A PNG of the scene from its camera, `size` pixels wide (data None without a camera)."""
    program = _RENDER.format(size=int(size), samples=int(samples))
    outcome = _on_saved_scene(program, blend, "preview.png", "the render", wall_s)
    if outcome.problem.startswith("the render ended without saving"):
        return Outcome(None, "the scene has no camera to render from", outcome.log)
    return outcome


def _on_saved_scene(program: str, blend: bytes, output: str, what: str, wall_s: float) -> Outcome:
    """`program` run in the sandbox on the saved scene (read-only, as ``step_0.blend``),
    and the file `output` it writes."""
    result = run_python(
        program,
        readonly_files={"step_0.blend": blend},
        limits=_limits(wall_s),
        collect=(output,),
        preload=PRELOAD,
    )
    return _outcome(result, output, what, wall_s)


def store(folder: Path, blend: bytes, dump: dict[str, Any]) -> str:
    """Keep a scene and its dump under their hash in `folder`; the hash names the state."""
    sha = hashlib.sha256(blend).hexdigest()
    (folder / f"{sha}.blend").write_bytes(blend)
    (folder / f"{sha}.json").write_text(json.dumps(dump), encoding="utf-8")
    return sha


@lru_cache(maxsize=1)
def empty_scene() -> tuple[bytes, dict[str, Any]]:
    """Blender's empty factory scene, saved and dumped once per process: every episode's
    first state."""
    outcome = run_script(b"", "", 30.0)
    if outcome.data is None:
        raise SandboxUnavailable(f"the empty scene could not be made: {outcome.problem}")
    dump, problem = inspect_blend(outcome.data, 30.0)
    if dump is None:
        raise SandboxUnavailable(f"the empty scene could not be inspected: {problem}")
    return outcome.data, dump
