"""`mesh_compare`: score a mesh file against a reference mesh.

The sample's completion is the path of the mesh the model produced (a rollout writes it
and names it); the reference is a mesh path, or a mapping with the path and what the task
states::

    {"mesh": "ref.stl", "dimensions": [40, 20, 10], "components": 1}

Steps: load both (in a killable worker: see `measure.py`), apply the validity gates to the
candidate, check real dimensions when the task gives them, normalise both to the unit cube
and measure (see `metrics.py`, `volume.py`), optionally also after pose alignment
(`align.py`). Both raw and aligned figures go into the evidence; the score uses the aligned
ones when `align` is on.

**Score.** Each metric maps to [0, 1] by a linear ramp between a fail level and a pass level
(`Thresholds`); the score is the mean of the three ramps (Chamfer, F-score, IoU). The verdict
passes when all three reach their pass levels, fails when the score is 0, is partial
between. A candidate that fails a validity gate or a stated dimension scores 0.

    >>> import os, tempfile, trimesh
    >>> from rewardsmith.verifiers.types import Sample
    >>> d = tempfile.mkdtemp()
    >>> ref, got = os.path.join(d, "ref.stl"), os.path.join(d, "got.stl")
    >>> _ = trimesh.creation.box(extents=[4, 2, 1]).export(ref)
    >>> _ = trimesh.creation.box(extents=[4, 2, 1]).export(got)
    >>> MeshCompare()(Sample(id="1", completion=got, reference=ref)).status
    <Status.PASS: 'pass'>
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar

from rewardsmith.verifiers.killable import call_with_limits
from rewardsmith.verifiers.mesh.measure import measure_pair
from rewardsmith.verifiers.mesh.validity import Validity
from rewardsmith.verifiers.protocol import Cost
from rewardsmith.verifiers.types import Failure, Sample, Status, Verdict

__all__ = ["MeshCompare", "Thresholds", "compare_files", "verdict_from_measurement"]


@dataclass(frozen=True)
class Thresholds:
    """Fail and pass levels per metric, on unit-cube-normalised shapes.

    Calibrated on the shared meshes with the defaults (20k points, tau 0.02): an identical
    part measures Chamfer about 2e-4, F-score above 0.98 and IoU 1.0; `unit_cube` against
    `7_8ths_cube` (one octant missing) measures Chamfer 0.011, F 0.87, IoU 0.875.
    """

    chamfer_pass: float = 1e-3
    """Chamfer at or below this scores 1 on that metric."""
    chamfer_fail: float = 1e-2
    """Chamfer at or above this scores 0."""
    fscore_pass: float = 0.95
    fscore_fail: float = 0.5
    iou_pass: float = 0.95
    iou_fail: float = 0.5

    def __post_init__(self) -> None:
        for metric in ("chamfer", "fscore", "iou"):
            good, bad = getattr(self, f"{metric}_pass"), getattr(self, f"{metric}_fail")
            if good == bad:
                raise ValueError(f"{metric}_pass equals {metric}_fail: the ramp has no width")
        if self.chamfer_pass > self.chamfer_fail:
            raise ValueError("chamfer_pass must be below chamfer_fail (lower is better)")
        if self.fscore_pass < self.fscore_fail or self.iou_pass < self.iou_fail:
            raise ValueError("fscore_pass and iou_pass must be above their fail levels")

    def ramps(self, figures: dict[str, Any]) -> dict[str, float]:
        """Each metric's score in [0, 1]: ``clip((x - fail) / (pass - fail), 0, 1)``."""

        def ramp(x: float, fail: float, good: float) -> float:
            return min(1.0, max(0.0, (x - fail) / (good - fail)))

        return {
            "chamfer": ramp(figures["chamfer"], self.chamfer_fail, self.chamfer_pass),
            "fscore": ramp(figures["fscore"], self.fscore_fail, self.fscore_pass),
            "iou": ramp(figures["iou"], self.iou_fail, self.iou_pass),
        }


@dataclass(frozen=True)
class MeshCompare:
    """Compare a mesh file with a reference: validity gates, dimensions, shape metrics."""

    name: ClassVar[str] = "mesh_compare"
    version: ClassVar[str] = "1"
    cost: ClassVar[Cost] = Cost.CPU
    takes_structured_reference: ClassVar[bool] = True  # JSON-text references are decoded

    align: bool = False
    """Pose invariance: also align principal axes (trying sign flips) and refine by ICP."""
    n_points: int = 20_000
    """Surface samples per mesh for Chamfer, Hausdorff, F-score, normal consistency."""
    seed: int = 0
    """Sampling seed: the same seed gives the same verdict."""
    fscore_tau: float = 0.02
    """F-score distance threshold, as a fraction of the part's longest side."""
    voxel_resolution: int = 64
    """Cells along the longest side for the voxel IoU fallback (open meshes)."""
    require_valid: bool = True
    """Score 0 when the candidate fails a validity gate."""
    dimension_rel_tol: float = 0.01
    """Relative tolerance on stated dimensions."""
    dimension_abs_tol: float = 1e-6
    thresholds: Thresholds = field(default_factory=Thresholds)
    timeout_s: float = 60.0
    """Wall-clock limit for loading and measuring; the worker is killed past it."""
    memory_bytes: int = 4 << 30
    """Address-space limit of the worker."""
    max_file_bytes: int = 64 << 20
    max_faces: int = 2_000_000
    allowed_root: str | None = None
    """When set, the candidate path must resolve (links followed) inside this folder: the
    rollouts' output folder. Without it a completion could name any readable mesh."""

    def __post_init__(self) -> None:
        if isinstance(self.thresholds, dict):  # from a YAML spec
            object.__setattr__(self, "thresholds", Thresholds(**self.thresholds))
        if self.n_points < 100 or self.fscore_tau <= 0 or self.voxel_resolution < 8:
            raise ValueError("need n_points >= 100, fscore_tau > 0, voxel_resolution >= 8")

    def settings(self) -> dict[str, Any]:
        """What the worker needs, as plain values."""
        return {k: v for k, v in asdict(self).items() if k != "thresholds"}

    def __call__(self, sample: Sample) -> Verdict:
        ref = _reference(sample.reference)
        if ref is None:
            return Verdict.errored(
                self.name,
                self.version,
                Failure.BAD_REFERENCE,
                "mesh_compare needs `reference`: a mesh path or {'mesh': path, 'dimensions':"
                " [x, y, z] (positive), 'components': n (>= 1, or null)}",
            )
        candidate = sample.completion_text.strip()
        problem = _candidate_problem(candidate, ref["mesh"], self.allowed_root)
        if problem:
            return Verdict.failed(self.name, self.version, Failure.FORMAT, feedback=problem)
        return compare_files(self, candidate, ref)


def _candidate_problem(candidate: str, reference: str, root: str | None) -> str | None:
    """Why the completion is not a usable mesh path (None when it is)."""
    if not candidate or len(candidate) > 4096 or "\x00" in candidate:
        return "the completion must be the path of the mesh file produced"
    resolved = os.path.realpath(candidate)
    if root is not None and os.path.commonpath([resolved, os.path.realpath(root)]) != (
        os.path.realpath(root)
    ):
        return "the mesh must be under the rollout output folder"
    if resolved == os.path.realpath(reference):  # naming the answer key is not an answer
        return "the completion names the reference mesh itself"
    return None


def _reference(value: Any) -> dict[str, Any] | None:
    """The reference as a mapping, or None when it is malformed."""
    if isinstance(value, str) and value:
        value = {"mesh": value}
    if not isinstance(value, dict) or not isinstance(value.get("mesh"), str):
        return None
    dims = value.get("dimensions")
    if dims is not None and not (
        isinstance(dims, list | tuple)
        and len(dims) == 3
        and all(isinstance(x, int | float) and not isinstance(x, bool) and x > 0 for x in dims)
    ):
        return None
    components = value.get("components", 1)
    if components is not None and (not isinstance(components, int) or components < 1):
        return None
    return value


def compare_files(verifier: MeshCompare, candidate: str, ref: dict[str, Any]) -> Verdict:
    """Measure in a killable worker and turn the measurement into a verdict."""
    outcome = call_with_limits(
        measure_pair,
        candidate,
        ref["mesh"],
        verifier.settings(),
        timeout_s=verifier.timeout_s,
        memory_bytes=verifier.memory_bytes,
        preload=("trimesh",),
    )
    name, version = verifier.name, verifier.version
    if outcome.timed_out:
        return Verdict.timed_out(
            name,
            version,
            Failure.TIME_LIMIT,
            f"loading and measuring the mesh took over {verifier.timeout_s} s",
        )
    if outcome.died:
        return Verdict.errored(
            name,
            version,
            Failure.MEMORY_LIMIT,
            "the mesh worker died (memory limit or crash) on this mesh",
        )
    if outcome.error is not None:
        return Verdict.errored(name, version, Failure.VERIFIER_CRASH, outcome.error[-500:])
    return verdict_from_measurement(verifier, outcome.value, ref)


def verdict_from_measurement(
    verifier: MeshCompare, measured: dict[str, Any], ref: dict[str, Any]
) -> Verdict:
    """Gates first (load, validity, dimensions), then the metric score."""
    name, version = verifier.name, verifier.version
    cand, reference = measured["candidate"], measured["reference"]
    if "load_error" in reference:
        return Verdict.errored(name, version, Failure.BAD_REFERENCE, reference["load_error"])
    if "load_error" in cand:
        return Verdict.failed(
            name, version, Failure.FORMAT, evidence=measured, feedback=cand["load_error"]
        )
    problems = _gate_problems(verifier, cand, ref)
    figures = measured["aligned"] if verifier.align else measured["raw"]
    ramps = verifier.thresholds.ramps(figures)
    evidence = {**measured, "ramps": ramps, "problems": problems}
    if problems:
        return Verdict.failed(name, version, evidence=evidence, feedback="; ".join(problems))
    score = sum(ramps.values()) / len(ramps)
    feedback = ", ".join(f"{k} {figures[k]:.4g}" for k in ("chamfer", "fscore", "iou"))
    if all(r >= 1.0 for r in ramps.values()):
        return Verdict.passed(name, version, evidence=evidence, feedback=feedback)
    if score <= 0.0:
        return Verdict.failed(name, version, evidence=evidence, feedback=feedback)
    # Below every pass level at least one ramp is under 1, so the score is under 1 too.
    return Verdict(name, version, Status.PARTIAL, score, evidence=evidence, feedback=feedback)


def _gate_problems(verifier: MeshCompare, cand: dict[str, Any], ref: dict[str, Any]) -> list[str]:
    problems: list[str] = []
    if verifier.require_valid:
        expected = ref.get("components", 1)
        problems += Validity(**cand["validity"]).problems(expected_components=expected)
    wanted = ref.get("dimensions")
    if wanted is not None:
        got = cand["extents"]
        for axis, g, w in zip("xyz", got, wanted, strict=True):
            if abs(g - w) > max(verifier.dimension_abs_tol, verifier.dimension_rel_tol * abs(w)):
                problems.append(f"{axis} size is {g:.6g}; the task states {w:.6g}")
    return problems
