"""`mesh_compare`: score a mesh file against a reference mesh.

The sample's completion is the path of the mesh the model produced (a rollout writes it
and names it); the reference is a mesh path, or a mapping with the path and what the task
states::

    {"mesh": "ref.stl", "dimensions": [40, 20, 10], "components": 1}

Steps: load both (in a killable worker: see `measure.py`; the header's face count is
checked before parsing), apply the validity gates to the candidate, compare its topology
(shells, genus: through-holes) with the reference's, normalise both to the unit cube and
measure (see `metrics.py`, `volume.py`), and with `align` also after pose alignment
(`align.py`). Both raw and aligned figures go into the evidence; the verdict uses whichever
pose scores higher, so alignment never lowers a score. The real size is checked in that
pose: the stated `dimensions`, or (with `check_scale`) the reference mesh's own extents,
each within `dimension_rel_tol` of itself; in an aligned pose the sides are read where the
part's principal axes pin the pose, and only a rotation they leave free adds slack
(`sides.py`: a turned plate made 15 % thicker no longer hides in the pose's slack).

**Score.** See `thresholds.py`: ``mean(Chamfer, F-score, IoU ramps) * min(Hausdorff, p95
ramps) * material ramp``. The verdict passes when every ramp is 1, fails when the score is
0, is partial between. A candidate that fails a validity gate, the topology, the size or
(where the reference is a solid) the material gate (`material` under ``solid_gate``: a
hollowed shell) scores 0; above the gate its material ramps the score.

**Presets.** ``preset="cadrille"`` measures as the cadrille and CAD-Recode evaluations do
(8,192 points a side, both meshes normalised by their bounding box, no alignment, scale
free); the set-level figures (median Chamfer x 1000, invalidity ratio, IoU) come from
``rewardsmith cad-report`` over a scored dump (see docs/3d.md).

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
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from typing import Any, ClassVar

from rewardsmith.verifiers.exploits import Exploit
from rewardsmith.verifiers.killable import call_with_limits
from rewardsmith.verifiers.mesh.measure import measure_pair
from rewardsmith.verifiers.mesh.thresholds import Thresholds
from rewardsmith.verifiers.mesh.topology import Topology
from rewardsmith.verifiers.mesh.validity import Validity
from rewardsmith.verifiers.protocol import Cost
from rewardsmith.verifiers.types import Failure, Sample, Status, Verdict

__all__ = [
    "PRESETS",
    "MeshCompare",
    "Thresholds",
    "compare_files",
    "material",
    "solid_problems",
    "verdict_from_measurement",
    "with_material",
]

PRESETS: dict[str, dict[str, Any]] = {
    # cadrille's evaluate.py: 8,192 points a side, the prediction normalised by its bounding
    # box (centre to the origin, longest side 1) against a ground truth normalised the same
    # way, squared Chamfer both ways; no pose search; the units are the normalised ones.
    "cadrille": {"n_points": 8192, "align": False, "check_scale": False},
}


@dataclass(frozen=True)
class MeshCompare:
    """Compare a mesh file with a reference: validity gates, dimensions, shape metrics."""

    name: ClassVar[str] = "mesh_compare"
    version: ClassVar[str] = "3"
    cost: ClassVar[Cost] = Cost.CPU
    takes_structured_reference: ClassVar[bool] = True  # JSON-text references are decoded

    preset: str | None = None
    """``"cadrille"``: measure as the cadrille / CAD-Recode evaluations (8,192 points, no
    alignment, scale free); it sets `n_points`, `align` and `check_scale`."""
    align: bool = False
    """Pose invariance: also score the candidate rotated onto the reference (`align.py`)."""
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
    check_scale: bool = True
    """Without stated dimensions, the candidate's size must still match the reference
    mesh's (within the dimension tolerance): a scaled part is another part. Off where the
    reference's units are arbitrary (a normalised benchmark mesh)."""
    check_topology: bool = True
    """Shells and genus (through-holes) must equal the reference's, when both are closed."""
    thresholds: Thresholds = field(default_factory=Thresholds)
    timeout_s: float = 60.0
    """Wall-clock limit for loading and measuring; the worker is killed past it."""
    memory_bytes: int = 4 << 30
    """Address-space limit of the worker."""
    max_file_bytes: int = 64 << 20
    max_faces: int = 1_000_000
    allowed_root: str | None = None
    """When set, the candidate path must resolve (links followed) inside this folder: the
    rollouts' output folder. Without it a completion could name any readable mesh."""

    def __post_init__(self) -> None:
        if isinstance(self.thresholds, dict):  # from a YAML spec
            object.__setattr__(self, "thresholds", Thresholds(**self.thresholds))
        if self.preset is not None:
            if self.preset not in PRESETS:
                raise ValueError(f"preset must be one of {sorted(PRESETS)}, not {self.preset!r}")
            for key, value in PRESETS[self.preset].items():
                object.__setattr__(self, key, value)
        if self.n_points < 100 or self.fscore_tau <= 0 or self.voxel_resolution < 8:
            raise ValueError("need n_points >= 100, fscore_tau > 0, voxel_resolution >= 8")

    def settings(self) -> dict[str, Any]:
        """What the worker needs, as plain values."""
        return {k: v for k, v in asdict(self).items() if k != "preset"}

    def exploits(self, sample: Sample) -> Iterator[Exploit]:
        """Adversarial variants of a right `sample` (see `exploits.py`): each earns 0."""
        from rewardsmith.verifiers.mesh.exploits import mesh_exploits

        yield from mesh_exploits(
            sample,
            align=self.align,
            level=self.thresholds.hausdorff_fail,
            root=self.allowed_root,
        )

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
    if resolved == os.path.realpath(reference) or _same_file(resolved, reference):
        return "the completion names the reference mesh itself"  # not an answer
    return None


def _same_file(a: str, b: str) -> bool:
    """Whether two paths are one file (a hard link of the reference is the reference)."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


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
        # MemoryError or a subclass (numpy's _ArrayMemoryError): the mesh drove the worker
        # past its memory limit, while loading or measuring.
        if outcome.error.split(":", 1)[0].endswith("MemoryError"):
            return Verdict.errored(
                name, version, Failure.MEMORY_LIMIT, "measuring the mesh ran out of memory"
            )
        return Verdict.errored(name, version, Failure.VERIFIER_CRASH, outcome.error[-500:])
    return verdict_from_measurement(verifier, outcome.value, ref)


def verdict_from_measurement(
    verifier: MeshCompare, measured: dict[str, Any], ref: dict[str, Any]
) -> Verdict:
    """Gates first (load, validity, topology, size), then the metric score."""
    name, version = verifier.name, verifier.version
    cand, reference = measured["candidate"], measured["reference"]
    if "load_error" in reference:
        return Verdict.errored(name, version, Failure.BAD_REFERENCE, reference["load_error"])
    if "load_error" in cand:
        return Verdict.failed(
            name, version, Failure.FORMAT, evidence=measured, feedback=cand["load_error"]
        )
    pose, figures, ramps, score = _best_pose(verifier, measured)
    problems = _gate_problems(verifier, measured, figures, ref)
    evidence = {**measured, "pose": pose, "ramps": ramps, "problems": problems}
    if problems:
        return Verdict.failed(name, version, evidence=evidence, feedback="; ".join(problems))
    feedback = ", ".join(
        f"{k} {figures[k]:.4g}" for k in ("chamfer", "fscore", "iou", "hausdorff", "p95")
    )
    if figures.get("material") is not None:
        feedback += f", material {figures['material']:.4g}"
    if all(r >= 1.0 for r in ramps.values()):
        return Verdict.passed(name, version, evidence=evidence, feedback=feedback)
    if score <= 0.0:
        return Verdict.failed(name, version, evidence=evidence, feedback=feedback)
    # Below every pass level at least one ramp is under 1, so the score is under 1 too.
    return Verdict(name, version, Status.PARTIAL, score, evidence=evidence, feedback=feedback)


def _best_pose(
    verifier: MeshCompare, measured: dict[str, Any]
) -> tuple[str, dict[str, Any], dict[str, float], float]:
    """The pose (raw or aligned) that scores higher; raw on a tie (it needs no search)."""
    best: tuple[str, dict[str, Any], dict[str, float], float] | None = None
    for pose in ("raw", "aligned"):
        if measured.get(pose) is None:
            continue
        figures = with_material(measured[pose], measured["candidate"], measured["reference"])
        ramps = verifier.thresholds.ramps(figures)
        score = verifier.thresholds.score(ramps)
        if best is None or score > best[3]:
            best = (pose, figures, ramps, score)
    assert best is not None
    return best


def _material_figures(
    figures: dict[str, Any], cand: dict[str, Any], reference: dict[str, Any]
) -> dict[str, float]:
    """What tells how much of a solid reference's material the part has: its volume ratio
    (when both are closed) and its IoU (when the part is closed: an open one's voxel IoU
    is no volume). Nothing when the reference is open (it has no volume)."""
    if not reference.get("topology", {}).get("closed"):
        return {}
    found = {}
    if figures.get("volume_ratio") is not None:
        found["volume_ratio"] = float(figures["volume_ratio"])
    if cand.get("topology", {}).get("closed") and figures.get("iou") is not None:
        found["iou"] = float(figures["iou"])
    return found


def material(
    figures: dict[str, Any], cand: dict[str, Any], reference: dict[str, Any]
) -> float | None:
    """The part's material as a fraction of the reference's (see `thresholds.py`): the
    lower of its volume ratio and IoU, or None where neither applies."""
    found = _material_figures(figures, cand, reference)
    return min(found.values()) if found else None


def with_material(
    figures: dict[str, Any], cand: dict[str, Any], reference: dict[str, Any]
) -> dict[str, Any]:
    """`figures` with ``material`` (what the material ramp reads) set from them."""
    return {**figures, "material": material(figures, cand, reference)}


def solid_problems(
    gate: float, figures: dict[str, Any], cand: dict[str, Any], reference: dict[str, Any]
) -> list[str]:
    """The material gate (see `thresholds.py`): where the reference is a solid, a part with
    under `gate` of its volume, or of its overlap, is not the part, however its surface
    reads. Applies only when the reference is closed (an open reference has no volume)."""
    found = []
    for name, value in _material_figures(figures, cand, reference).items():
        if value < gate and name == "volume_ratio":
            found.append(f"the part has {value:.3g} of the reference's volume (hollowed or thin?)")
        elif value < gate:
            found.append(f"the part overlaps the reference's volume by IoU {value:.3g}")
    return found


def _spread_problems(
    verifier: MeshCompare, cand: dict[str, Any], reference: dict[str, Any]
) -> list[str]:
    """The surface's spread along each principal axis (`sides.surface_spread`, pose free),
    as a fraction of its largest spread, within the size tolerance of the reference's: a
    side made thinner under a few studs that keep its bounding box spreads less (red team
    rt3d2, class C). As fractions of a pose-free length, so a reference mesh in other
    units than the stated dimensions, and a candidate in any pose, compare too."""
    if not cand.get("spread") or not reference.get("spread"):
        return []
    got_all = [x / max(max(cand["spread"]), 1e-300) for x in cand["spread"]]
    want_all = [x / max(max(reference["spread"]), 1e-300) for x in reference["spread"]]
    problems = []
    for rank, got, want in zip(("1st", "2nd"), got_all, want_all, strict=False):
        if abs(got - want) > verifier.dimension_rel_tol * want:
            problems.append(
                f"the surface spreads {got:.4g} of its widest spread along its {rank}"
                f" principal axis; the reference {want:.4g} (a side thinner or thicker than"
                " its box?)"
            )
    return problems


def _gate_problems(
    verifier: MeshCompare, measured: dict[str, Any], figures: dict[str, Any], ref: dict[str, Any]
) -> list[str]:
    cand, reference = measured["candidate"], measured["reference"]
    problems: list[str] = []
    if verifier.require_valid:
        expected = ref.get("components", 1)
        problems += Validity(**cand["validity"]).problems(expected_components=expected)
    if verifier.check_topology:
        problems += Topology(**cand["topology"]).differences(Topology(**reference["topology"]))
    problems += solid_problems(verifier.thresholds.solid_gate, figures, cand, reference)
    wanted = ref.get("dimensions")
    if wanted is None and verifier.check_scale:
        wanted = reference["extents"]
    if wanted is not None:
        problems += _spread_problems(verifier, cand, reference)
        got = figures["extents"]
        # A turned part's sides read long by what the rotation its principal axes leave
        # free can add (`sides.py`); the stated pose has none.
        pose_slack = figures.get("pose_slack") or [0.0, 0.0, 0.0]
        for axis, g, w, turn in zip("xyz", got, wanted, pose_slack, strict=True):
            slack = max(verifier.dimension_abs_tol, verifier.dimension_rel_tol * abs(w), turn)
            if abs(g - w) > slack:
                source = "the task states" if "dimensions" in ref else "the reference is"
                problems.append(f"{axis} size is {g:.6g}; {source} {w:.6g}")
    return problems
