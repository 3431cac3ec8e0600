"""Build a CAD script in the warm CAD sandbox and describe the part, or why it failed.

`build_part(script)` runs two jailed children of the CAD venv's warm server (cadquery and
build123d imported once, see `verifiers.cad.run`): phase 1 runs the model's script and
saves what it showed as a B-rep; phase 2 (trusted code, no model code in the process)
measures that B-rep: bounding box, volume, solids, shells, faces and genus (through-holes,
from the B-rep's Euler-Poincare formula). Only the model's own part is measured: no
reference is ever sent into either phase.

A failed build is described by the traceback lines of the model's own script
(``main.py``) and the exception, never the library's or the harness's frames; a script
killed by a limit or a signal says so. A sandbox that cannot run at all raises
`CadUnavailable` (the episode ends as an environment error, never as feedback).

`reference_files(script)` builds a reference script once into a private cache outside the
repository and every jail (``$REWARDSMITH_CAD_CACHE``, default ``~/.cache/rewardsmith/
cad_part``, mode 0700) and gives the paths `cad_code` reads.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from pathlib import Path
from typing import Any

from rewardsmith.verifiers.cad.run import PRELOAD, cad_python, program_source, run_cad, venv_of
from rewardsmith.verifiers.sandbox import Limits, Program, SandboxResult, fork_server

__all__ = ["CadUnavailable", "build_part", "describe", "own_traceback", "reference_files"]

LIMITS = Limits(wall_s=40.0, cpu_s=15.0, memory_bytes=2 << 30)
"""CPU time bounds the work; the wall limit is looser so a loaded machine is not a failure."""
_FACTS = """
def facts():
    from OCP.TopAbs import TopAbs_EDGE, TopAbs_VERTEX, TopAbs_WIRE
    from OCP.TopExp import TopExp
    from OCP.TopTools import TopTools_IndexedMapOfShape

    def unique(shape, kind):
        found = TopTools_IndexedMapOfShape()
        TopExp.MapShapes_s(shape, kind, found)
        return found.Extent()

    shape = _read("result.brep")
    report = _describe(shape)
    v, e, w = (unique(shape, k) for k in (TopAbs_VERTEX, TopAbs_EDGE, TopAbs_WIRE))
    # Euler-Poincare for a B-rep: V - E + F - (W - F) = 2 (shells - genus)
    report["genus"] = report["shells"] - (v - e + 2 * report["faces"] - w) // 2
    with open("facts.json", "w", encoding="utf-8") as handle:
        json.dump(report, handle)

facts()
"""
_FRAME = re.compile(r'^\s*File "([^"]*)", line (\d+)')


class CadUnavailable(RuntimeError):
    """The CAD sandbox could not run (not installed, or the jail failed): not the model's."""


def _execute(program: Program) -> SandboxResult:
    python = cad_python()
    if python is None:
        raise CadUnavailable("the CAD runtime is not installed (make .venv-cad/.installed)")
    with fork_server(PRELOAD, binds=(venv_of(python),), python=python) as server:
        result = server.run_programs([program])[0]
    if result.error:
        raise CadUnavailable(f"the CAD sandbox failed: {result.error}")
    return result


def own_traceback(stderr: str, limit: int = 1500) -> str:
    """The frames of ``main.py`` (with their source lines) and the exception lines.

    The outermost frame is the harness's own ``exec`` of the script and is dropped, as are
    the library's frames and their source lines."""
    kept: list[str] = []
    frames = 0
    inside: bool | None = None  # None: not in a frame; else whether the frame is the model's
    for line in stderr.splitlines():
        frame = _FRAME.match(line)
        if frame:
            frames += 1
            inside = frame.group(1) == "main.py" and frames > 1
            if inside:
                kept.append(f"  main.py, line {frame.group(2)}")
        elif line.startswith("  ") and inside is not None:
            if inside:
                kept.append(line)
        elif line.strip() and not line.startswith("Traceback"):
            inside = None
            kept.append(line)
    return "\n".join(kept)[-limit:]


def _failure(result: SandboxResult, phase: str) -> str:
    if result.limit_hit is not None:
        return f"build failed: the {phase} ran past its {result.limit_hit.value} limit"
    if result.signal is not None:
        return f"build failed: the {phase} was killed by signal {result.signal}"
    stderr = result.stderr.decode("utf-8", "replace")
    if phase != "script":  # trusted code on the model's shape: say what, never our frames
        last = [ln for ln in stderr.splitlines() if ln.strip()][-1:] or ["no message"]
        return f"build failed: the part could not be measured: {last[0][:300]}"
    return "build failed:\n" + (own_traceback(stderr) or f"exit status {result.exit_code}")


def describe(report: dict[str, Any]) -> str:
    """The measured facts as the observation shows them."""
    low, high = report["bbox_min"], report["bbox_max"]
    size = [h - lo for h, lo in zip(high, low, strict=True)]

    def fmt(values: list[float]) -> str:
        return "(" + ", ".join(f"{x:.3f}" for x in values) + ")"

    return (
        f"built: valid={report['valid']} solids={report['solids']} shells={report['shells']} "
        f"faces={report['faces']} genus={report.get('genus')}\n"
        f"bbox min={fmt(low)} max={fmt(high)} size={fmt(size)}\n"
        f"volume={report['volume']:.4f}"
    )


def build_part(script: str, kind: str = "cadquery") -> str:
    """Build `script` (phase 1) and measure its part (phase 2); the observation text."""
    files = {"main.py": script.encode("utf-8", "replace")}
    build = _execute(
        Program(
            python=program_source(f"build({kind!r})"),
            limits=LIMITS,
            trusted_code=True,
            files=files,
            collect=("result.brep",),
        )
    )
    brep = build.files.get("result.brep")
    if not build.ok or brep is None:
        return _failure(build, "script")
    measure = _execute(
        Program(
            python=program_source(_FACTS),
            limits=LIMITS,
            trusted_code=True,
            readonly_files={"result.brep": brep},
            collect=("facts.json",),
        )
    )
    raw = measure.files.get("facts.json")
    if not measure.ok or raw is None or len(raw) > 1 << 16:
        return _failure(measure, "measurement")
    return describe(json.loads(raw))


def cache_dir() -> Path:
    named = os.environ.get("REWARDSMITH_CAD_CACHE")
    return Path(named) if named else Path.home() / ".cache" / "rewardsmith" / "cad_part"


def reference_files(script: str) -> dict[str, str]:
    """``{"mesh": stl, "brep": brep}`` of a reference script, built once (see the module)."""
    folder = cache_dir() / hashlib.sha256(script.encode()).hexdigest()[:20]
    mesh, brep = folder / "reference.stl", folder / "reference.brep"
    if not (mesh.is_file() and brep.is_file()):
        run = run_cad(script, kind="cadquery", limits=Limits(wall_s=60.0, cpu_s=60.0))
        if run.build.error or run.brep is None or run.mesh is None:
            detail = run.build.error or run.build.stderr.decode("utf-8", "replace")[-500:]
            raise CadUnavailable(f"the reference part could not be built: {detail}")
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        os.chmod(folder.parent, 0o700)
        for path, data in ((brep, run.brep), (mesh, run.mesh)):
            partial = path.with_suffix(f".{os.getpid()}.part")
            partial.write_bytes(data)
            partial.replace(path)
    return {"mesh": str(mesh), "brep": str(brep)}
