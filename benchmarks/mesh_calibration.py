"""Calibrate the mesh comparison's pass levels on generated parts (not a timing benchmark).

For each part of `rewardsmith.datasets.scenes3d.parts` (made by CadQuery in the sandbox):
the same script again, the part in six other poses (three moved as a mesh, three rotated
in the script so that OCP tessellates it anew), and each one-feature difference. Prints
every figure the score uses, in the pose the verdict chose, and the verdict, as Markdown.
The levels in `Thresholds` sit between the largest "same part" figure and the smallest
"one feature differs" one; the tests then check them on real parts that were not used here.

Run: ``.venv/bin/python benchmarks/mesh_calibration.py`` (needs ``.venv-cad``).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import trimesh

from rewardsmith.datasets.scenes3d.parts import PARTS, Part
from rewardsmith.verifiers.cad import run_cad
from rewardsmith.verifiers.mesh import MeshCompare
from rewardsmith.verifiers.sandbox import Limits
from rewardsmith.verifiers.types import Sample, Verdict

LIMITS = Limits(wall_s=60, cpu_s=60, memory_bytes=2 << 30)
SCRIPT_POSES = [
    "result = result.rotate((0, 0, 0), (1, 1, 0), 37).translate((10, 5, 3))\n",
    "result = result.rotate((0, 0, 0), (0, 0, 1), 90)\n",
    "result = result.rotate((0, 0, 0), (1, 0, 0), 180).rotate((0, 0, 0), (0, 1, 1), 71)\n",
]


def mesh_of(script: str) -> bytes:
    run = run_cad(script, kind="cadquery", limits=LIMITS)
    assert run.mesh is not None, run.build.stderr.decode()[-500:]
    return run.mesh


def moved(mesh: bytes, seed: int, folder: Path) -> Path:
    part = trimesh.load(trimesh.util.wrap_as_stream(mesh), file_type="stl")
    transform = trimesh.transformations.random_rotation_matrix(
        np.random.default_rng(seed).random(3)
    )
    transform[:3, 3] = np.random.default_rng(seed).uniform(-50, 50, 3)
    part.apply_transform(transform)
    path = folder / f"moved_{seed}.stl"
    part.export(path)
    return path


def candidates(part: Part, folder: Path, reference: bytes) -> list[tuple[str, str, Path]]:
    """(kind, name, path): same, pose and feature candidates for one part."""
    found: list[tuple[str, str, Path]] = []

    def add(kind: str, name: str, data: bytes) -> None:
        path = folder / f"{name}.stl"
        path.write_bytes(data)
        found.append((kind, name, path))

    add("same", "same script", mesh_of(part.script()))
    for seed in range(3):
        found.append(("pose", f"moved mesh {seed}", moved(reference, seed, folder)))
    for k, pose in enumerate(SCRIPT_POSES):
        add("pose", f"script pose {k}", mesh_of(part.script(extra=pose)))
    for name, script in part.same_scripts().items():
        add("same", name, mesh_of(script))
    for name, script in part.variant_scripts().items():
        add("feature", name, mesh_of(script))
    return found


def judge(verifier: MeshCompare, candidate: Path, reference: Path) -> Verdict:
    return verifier(Sample(id="c", completion=str(candidate), reference=str(reference)))


def row(part: str, kind: str, name: str, verdict: Verdict) -> str:
    evidence = verdict.evidence
    figures = evidence.get(evidence.get("pose", "raw")) or {}
    cells = [f"{figures.get(m, float('nan')):.2g}" for m in ("hausdorff", "p95", "chamfer")]
    cells += [f"{figures.get(m, float('nan')):.3f}" for m in ("fscore", "iou")]
    topo = "; ".join(p for p in evidence.get("problems", []) if "genus" in p or "shells" in p)
    return (
        f"| {part} | {kind} | {name} | {evidence.get('pose')} | {' | '.join(cells)} "
        f"| {topo or '-'} | {verdict.status.value} {verdict.score:.2f} |"
    )


def main() -> None:
    verifier = MeshCompare(align=True)
    lines = [
        "| part | kind | candidate | pose | Hausdorff | p95 | Chamfer | F | IoU "
        "| topology | verdict |",
        "| --- | --- | --- | --- | ---: | ---: | ---: | ---: | ---: | --- | --- |",
    ]
    with tempfile.TemporaryDirectory(prefix="mesh-calibration-") as scratch:
        for part in PARTS:
            folder = Path(scratch) / part.name
            folder.mkdir()
            reference = mesh_of(part.script())
            ref_path = folder / "reference.stl"
            ref_path.write_bytes(reference)
            for kind, name, path in candidates(part, folder, reference):
                lines.append(row(part.name, kind, name, judge(verifier, path, ref_path)))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
