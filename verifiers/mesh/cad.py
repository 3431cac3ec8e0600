"""`cad_code`: run model-written geometry code in the sandbox, compare the mesh it makes.

Four kinds of script, all hostile code run only in the sandbox (`verifiers/sandbox/`) with
time and memory limits, from a warm server that has pre-imported the heavy library:

- ``kind="python"``: a Python script (trimesh and numpy available) that writes the mesh
  file `output` (default ``out.stl``) in its working directory;
- ``kind="blender"``: a bpy script that builds the part in an empty scene; a second,
  trusted sandboxed run opens the saved scene (scripts disabled) and exports every mesh
  object to STL, modifiers applied;
- ``kind="cadquery"`` / ``"build123d"``: a CAD script that ends with CQ-editor's
  ``show_object(result)`` (or assigns ``result``), run on the OCP kernel in the CAD venv
  (`rewardsmith.verifiers.cad`); a second, trusted run checks the B-rep it showed
  (``BRepCheck``: an invalid B-rep scores 0), measures the B-rep volume IoU against the
  reference's B-rep when the reference has one (``{"brep": path}``) and both are solids,
  and tessellates it. Files the script writes itself are never read.

The mesh that comes back is compared with the reference exactly as `mesh_compare` does
(same reference format, same thresholds; `compare` holds those settings). A syntax error,
an exception, a timeout, running out of memory, or no output each give a verdict naming
it, never an exception.

    >>> CadCode(kind="python").name
    'cad_code'
"""

from __future__ import annotations

import re
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, ClassVar, Literal

from rewardsmith.verifiers.blender.run import describe_failure
from rewardsmith.verifiers.cad.run import EXIT_NO_SHAPE, CadRun, run_cad
from rewardsmith.verifiers.exploits import Exploit
from rewardsmith.verifiers.mesh.compare import (
    MeshCompare,
    _reference,
    compare_files,
    with_material,
)
from rewardsmith.verifiers.mesh.load import FORMATS
from rewardsmith.verifiers.protocol import Cost
from rewardsmith.verifiers.sandbox import Limits, SandboxResult, run_python
from rewardsmith.verifiers.types import Failure, Sample, Status, Verdict

__all__ = ["CadCode"]

KINDS = ("python", "blender", "cadquery", "build123d")
_FENCE = re.compile(r"```(?:python|py)?[ \t]*\n(.*?)```", re.DOTALL)
_BLENDER = ("rewardsmith.verifiers.blender._inside",)


@dataclass(frozen=True)
class CadCode:
    """Run a geometry script in the sandbox and score the mesh it produces."""

    name: ClassVar[str] = "cad_code"
    version: ClassVar[str] = "3"
    cost: ClassVar[Cost] = Cost.SANDBOX
    takes_structured_reference: ClassVar[bool] = True  # JSON-text references are decoded

    kind: Literal["python", "blender", "cadquery", "build123d"] = "python"
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
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {', '.join(KINDS)}, not {self.kind!r}")
        if Path(self.output).suffix.lower().lstrip(".") not in FORMATS or "/" in self.output:
            raise ValueError(f"output must be a plain file name ending in one of {sorted(FORMATS)}")

    def exploits(self, sample: Sample) -> Iterator[Exploit]:
        """Adversarial rewrites of a right script (see `cad_exploits.py`): each earns 0."""
        from rewardsmith.verifiers.mesh.cad_exploits import cad_exploits

        ref = _reference(sample.reference)
        if ref is None:
            return
        right = sample.model_copy(update={"completion": _script_of(sample.completion_text)})
        yield from cad_exploits(
            right,
            self.kind,
            align=self.compare.align,
            level=self.compare.thresholds.hausdorff_fail,
            output=self.output,
        )

    def __call__(self, sample: Sample) -> Verdict:
        ref = _reference(sample.reference)
        if ref is None:
            return Verdict.errored(
                self.name,
                self.version,
                Failure.BAD_REFERENCE,
                "cad_code needs `reference`: a mesh path or {'mesh': path, ...}",
            )
        script = _script_of(sample.completion_text)
        if len(script) > self.max_script_chars:
            return Verdict.failed(
                self.name,
                self.version,
                Failure.INPUT_TOO_LARGE,
                feedback=f"script has {len(script)} characters; limit {self.max_script_chars}",
            )
        if self.kind in ("cadquery", "build123d"):
            return self._judge_cad(script, ref)
        result, output = self._run(script)
        if output is None:
            return self._no_mesh(result)
        return self._compare(output, Path(self.output).suffix, ref)

    def _compare(
        self,
        output: bytes,
        suffix: str,
        ref: dict[str, Any],
        extra: dict[str, Any] | None = None,
        compare: MeshCompare | None = None,
    ) -> Verdict:
        with tempfile.TemporaryDirectory(prefix="cad_code_") as scratch:
            path = Path(scratch) / ("out" + suffix)
            path.write_bytes(output)
            verdict = compare_files(compare or self.compare, str(path), ref)
        return Verdict(
            self.name,
            self.version,
            verdict.status,
            verdict.score,
            verdict.failure,
            {**verdict.evidence, **(extra or {})},
            verdict.feedback,
        )

    def _judge_cad(self, script: str, ref: dict[str, Any]) -> Verdict:
        reference_brep = None
        if ref.get("brep") is not None:
            try:
                reference_brep = Path(ref["brep"]).read_bytes()
            except OSError as exc:
                return Verdict.errored(
                    self.name, self.version, Failure.BAD_REFERENCE, f"reference B-rep: {exc}"
                )
        run = run_cad(script, kind=self.kind, limits=self._limits(), reference_brep=reference_brep)
        if run.report is None or run.inspect is None:
            return self._cad_failed(run)
        report = run.report
        if reference_brep is not None and "reference" not in report:
            return Verdict.errored(
                self.name, self.version, Failure.BAD_REFERENCE, "the reference B-rep is unusable"
            )
        problem = _brep_problem(report)
        if problem is not None or run.mesh is None:
            return Verdict.failed(
                self.name,
                self.version,
                Failure.WRONG_ANSWER if problem else Failure.FORMAT,
                evidence={"brep": report},
                feedback=problem or "the shape has no surface to mesh",
            )
        # The B-rep was checked (BRepCheck, solids): the mesh gates would judge the
        # tessellation instead (touching solids share edges, slivers), so they are off.
        compare = replace(self.compare, require_valid=False)
        verdict = self._compare(run.mesh, ".stl", ref, {"brep": report}, compare)
        solids = _solid_count_problem(report, ref)
        if solids is not None:
            return Verdict.failed(
                self.name, self.version, evidence=verdict.evidence, feedback=solids
            )
        return _with_brep_iou(verdict, report, self.compare)

    def _cad_failed(self, run: CadRun) -> Verdict:
        """Phase 1 left no B-rep (the script's failure), or phase 2 failed on it."""
        if run.inspect is None:
            if run.build.exit_code == EXIT_NO_SHAPE:
                return Verdict.failed(
                    self.name,
                    self.version,
                    Failure.FORMAT,
                    feedback="the script showed no shape: end it with show_object(result)",
                )
            return self._no_mesh(run.build)
        inspect = run.inspect
        if inspect.limit_hit is not None:  # a B-rep too heavy to check is the model's
            failure, message = describe_failure(inspect)
            return Verdict.errored(
                self.name, self.version, failure, f"checking the B-rep: {message}"
            )
        if inspect.error:
            return Verdict.errored(self.name, self.version, Failure.SANDBOX_ERROR, inspect.error)
        # The kernel could not read or measure what the script saved: not a usable B-rep.
        return Verdict.failed(
            self.name,
            self.version,
            Failure.FORMAT,
            evidence={"stderr": inspect.stderr.decode("utf-8", "replace")[-1500:]},
            feedback="the saved shape could not be read back as a B-rep",
        )

    def _limits(self) -> Limits:
        return Limits(wall_s=self.wall_s, cpu_s=self.wall_s, memory_bytes=self.memory_bytes)

    def _run(self, script: str) -> tuple[SandboxResult, bytes | None]:
        limits = self._limits()
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
                feedback={
                    "python": f"the script wrote no {self.output}",
                    "blender": "the scene holds no mesh to export",
                }.get(self.kind, "the script ended before it showed a shape"),
            )
        failure, message = describe_failure(result)
        if failure is Failure.TIME_LIMIT:
            return Verdict.timed_out(name, version, failure, message, evidence=evidence)
        return Verdict.errored(name, version, failure, message, evidence=evidence)


def _script_of(text: str) -> str:
    """The first fenced Python block, or the whole text when there is none."""
    match = _FENCE.search(text)
    return match.group(1) if match else text


def _solid_count_problem(report: dict[str, Any], ref: dict[str, Any]) -> str | None:
    """The number of solids against the reference B-rep's (or the stated `components`)."""
    want = report.get("reference", {}).get("solids", ref.get("components", 1))
    if want is None or report["solids"] == want:
        return None
    return f"the shape has {report['solids']} solids; expected {want}"


def _brep_problem(report: dict[str, Any]) -> str | None:
    """Why the B-rep is not a usable part (None when it is)."""
    if not report.get("valid"):
        return "the B-rep is invalid (BRepCheck_Analyzer found faults)"
    if not report.get("solids"):
        return "the shape holds no solid (only faces, wires or edges)"
    if report.get("loose_faces"):
        # Its tessellation would be measured as the part: the skin of the right part plus
        # a token solid scored 1.0 (the skin is no material; red team rt3d).
        return f"the shape holds {report['loose_faces']} faces outside any solid"
    if not report.get("volume", 0) > 0:
        return "the solid has no volume"
    return None


def _with_brep_iou(verdict: Verdict, report: dict[str, Any], compare: MeshCompare) -> Verdict:
    """Where both sides are solids the B-rep IoU is the exact one, so it replaces the
    tessellations' IoU in the score. It is measured in the task's frame, so only a verdict
    scored in that pose (``raw``) uses it; one that failed a gate stays failed."""
    value = report.get("brep_iou")
    evidence = verdict.evidence
    if value is None or evidence.get("pose") != "raw" or evidence.get("problems"):
        return verdict
    name, version = verdict.name, verdict.version
    if value < compare.thresholds.solid_gate:  # the material gate, on the exact volumes
        problem = f"the B-rep overlaps the reference's volume by IoU {value:.3g}"
        updated = {**evidence, "problems": [problem], "iou_source": "brep"}
        return Verdict.failed(name, version, evidence=updated, feedback=problem)
    figures = with_material(
        {**evidence["raw"], "iou": value}, evidence["candidate"], evidence["reference"]
    )
    # Both are solids, so the exact IoU counts as material however the tessellation closed.
    figures["material"] = min(value, figures["material"] if figures["material"] else 1.0)
    ramps = compare.thresholds.ramps(figures)
    score = compare.thresholds.score(ramps)
    updated = {**evidence, "ramps": ramps, "iou_source": "brep"}
    feedback = f"{verdict.feedback}, B-rep IoU {value:.4g}"
    if all(r >= 1.0 for r in ramps.values()):
        return Verdict.passed(name, version, evidence=updated, feedback=feedback)
    if score <= 0.0:
        return Verdict.failed(name, version, evidence=updated, feedback=feedback)
    return Verdict(name, version, Status.PARTIAL, score, evidence=updated, feedback=feedback)
