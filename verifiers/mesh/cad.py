"""`cad_code`: run model-written geometry code in the sandbox, compare the mesh it makes.

Two kinds of script, both hostile code run only in the sandbox (`verifiers/sandbox/`) with
time and memory limits, from a warm server that has pre-imported the heavy library:

- ``kind="python"``: a Python script (trimesh and numpy available) that writes the mesh
  file `output` (default ``out.stl``) in its working directory;
- ``kind="blender"``: a bpy script that builds the part in an empty scene; a second,
  trusted sandboxed run opens the saved scene (scripts disabled) and exports every mesh
  object to STL, modifiers applied.

The mesh that comes back is compared with the reference exactly as `mesh_compare` does
(same reference format, same thresholds; `compare` holds those settings). A syntax error,
an exception, a timeout, running out of memory, or no output file each give a verdict
naming it, never an exception.

    >>> CadCode(kind="python").name
    'cad_code'
"""

from __future__ import annotations

import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar, Literal

from rewardsmith.verifiers.blender.run import describe_failure
from rewardsmith.verifiers.mesh.compare import MeshCompare, _reference, compare_files
from rewardsmith.verifiers.mesh.load import FORMATS
from rewardsmith.verifiers.protocol import Cost
from rewardsmith.verifiers.sandbox import Limits, SandboxResult, run_python
from rewardsmith.verifiers.types import Failure, Sample, Verdict

__all__ = ["CadCode"]

_FENCE = re.compile(r"```(?:python|py)?[ \t]*\n(.*?)```", re.DOTALL)
_BLENDER = ("rewardsmith.verifiers.blender._inside",)


@dataclass(frozen=True)
class CadCode:
    """Run a geometry script in the sandbox and score the mesh it produces."""

    name: ClassVar[str] = "cad_code"
    version: ClassVar[str] = "1"
    cost: ClassVar[Cost] = Cost.SANDBOX
    takes_structured_reference: ClassVar[bool] = True  # JSON-text references are decoded

    kind: Literal["python", "blender"] = "python"
    output: str = "out.stl"
    """The file a Python script must write (in its working directory)."""
    compare: MeshCompare = field(default_factory=MeshCompare)
    """How the produced mesh is compared with the reference (see `mesh_compare`)."""
    wall_s: float = 30.0
    memory_bytes: int = 2 << 30
    max_script_chars: int = 200_000

    def __post_init__(self) -> None:
        if isinstance(self.compare, dict):  # from a YAML spec
            object.__setattr__(self, "compare", MeshCompare(**self.compare))
        if self.kind not in ("python", "blender"):
            raise ValueError(f"kind must be 'python' or 'blender', not {self.kind!r}")
        if Path(self.output).suffix.lower().lstrip(".") not in FORMATS or "/" in self.output:
            raise ValueError(f"output must be a plain file name ending in one of {sorted(FORMATS)}")

    def __call__(self, sample: Sample) -> Verdict:
        ref = _reference(sample.reference)
        if ref is None:
            return Verdict.errored(
                self.name,
                self.version,
                Failure.BAD_REFERENCE,
                "cad_code needs `reference`: a mesh path or {'mesh': path, ...}",
            )
        text = sample.completion_text
        match = _FENCE.search(text)
        script = match.group(1) if match else text
        if len(script) > self.max_script_chars:
            return Verdict.failed(
                self.name,
                self.version,
                Failure.INPUT_TOO_LARGE,
                feedback=f"script has {len(script)} characters; limit {self.max_script_chars}",
            )
        result, output = self._run(script)
        if output is None:
            return self._no_mesh(result)
        with tempfile.TemporaryDirectory(prefix="cad_code_") as scratch:
            path = Path(scratch) / ("out" + Path(self.output).suffix)
            path.write_bytes(output)
            verdict = compare_files(self.compare, str(path), ref)
        return Verdict(
            self.name,
            self.version,
            verdict.status,
            verdict.score,
            verdict.failure,
            verdict.evidence,
            verdict.feedback,
        )

    def _run(self, script: str) -> tuple[SandboxResult, bytes | None]:
        limits = Limits(wall_s=self.wall_s, cpu_s=self.wall_s, memory_bytes=self.memory_bytes)
        if self.kind == "python":
            result = run_python(script, limits=limits, collect=(self.output,), preload=("trimesh",))
            return result, result.files.get(self.output) if result.ok else None
        build = run_python(
            "from rewardsmith.verifiers.blender._inside import run_steps\nrun_steps(1)",
            files={"step_0.py": script.encode("utf-8", "replace")},
            limits=limits,
            collect=("step_0.blend",),
            preload=_BLENDER,
        )
        if not build.ok or build.missing:
            return build, None
        export = run_python(
            "from rewardsmith.verifiers.blender._inside import export_mesh\nexport_mesh()",
            readonly_files=dict(build.files),
            limits=limits,
            collect=("out.stl",),
            preload=_BLENDER,
        )
        return export, export.files.get("out.stl") if export.ok else None

    def _no_mesh(self, result: SandboxResult) -> Verdict:
        name, version = self.name, self.version
        evidence: dict[str, Any] = {
            "exit_code": result.exit_code,
            "stderr": result.stderr.decode("utf-8", "replace")[-1500:],
        }
        if result.ok:
            return Verdict.failed(
                name,
                version,
                Failure.FORMAT,
                evidence=evidence,
                feedback=f"the script wrote no {self.output}"
                if self.kind == "python"
                else "the scene holds no mesh to export",
            )
        failure, message = describe_failure(result)
        if failure is Failure.TIME_LIMIT:
            return Verdict.timed_out(name, version, failure, message, evidence=evidence)
        return Verdict.errored(name, version, failure, message, evidence=evidence)
