"""A part is judged on its material: hollowed shells fail, honest parts pass (issue 32).

Each row is a solid part hollowed to a wall a fraction of its size thick, with or without
a vent through the wall. The outer surface is the part's, so every surface metric reads
the part; only the volume (IoU, volume ratio) tells it apart, and it must gate the score.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import trimesh

from rewardsmith.verifiers.mesh import MeshCompare
from rewardsmith.verifiers.mesh.hollow import hollowed
from rewardsmith.verifiers.types import Sample, Status


def l_bracket() -> trimesh.Trimesh:
    base = trimesh.creation.box(bounds=[[0, 0, 0], [40, 20, 4]])
    upright = trimesh.creation.box(bounds=[[0, 0, 0], [10, 20, 30]])
    return trimesh.boolean.union([base, upright], engine="manifold")


def plate_with_hole() -> trimesh.Trimesh:
    plate = trimesh.creation.box(extents=[60, 40, 8])
    hole = trimesh.creation.cylinder(radius=5, height=20, sections=48)
    return trimesh.boolean.difference([plate, hole], engine="manifold")


PARTS = {
    "block_40x20x10": lambda: trimesh.creation.box(extents=[40, 20, 10]),
    "cube_20": lambda: trimesh.creation.box(extents=[20, 20, 20]),
    "cylinder_r10_h30": lambda: trimesh.creation.cylinder(radius=10, height=30, sections=64),
    "l_bracket": l_bracket,
    "plate_with_hole": plate_with_hole,
}
WALLS = (0.0025, 0.005, 0.02)  # of the part's longest side: 0.1 mm on 40 mm, ...
VENTS = (None, 0.005)


def write(mesh: trimesh.Trimesh, path: Path) -> str:
    mesh.export(path)
    return str(path)


@pytest.mark.parametrize("vent", VENTS, ids=["sealed", "vented"])
@pytest.mark.parametrize("wall", WALLS)
@pytest.mark.parametrize("part", sorted(PARTS))
def test_a_hollowed_part_earns_nothing(
    tmp_path: Path, part: str, wall: float, vent: float | None
) -> None:
    solid = PARTS[part]()
    size = float(solid.extents.max())
    shell = hollowed(solid, wall * size, None if vent is None else vent * size)
    reference = write(solid, tmp_path / "ref.stl")
    candidate = write(shell, tmp_path / "shell.stl")
    verdict = MeshCompare(n_points=4000)(Sample(id=part, completion=candidate, reference=reference))
    assert verdict.score == 0.0, (verdict.status, verdict.score, verdict.feedback)
    assert verdict.status is Status.FAIL


@pytest.mark.parametrize("part", sorted(PARTS))
@pytest.mark.parametrize("form", ["same", "retessellated", "moved_axes_kept"])
def test_the_solid_part_in_other_forms_still_passes(tmp_path: Path, part: str, form: str) -> None:
    solid = PARTS[part]()
    candidate = solid.copy()
    if form == "retessellated":
        candidate = candidate.subdivide()
    elif form == "moved_axes_kept":
        candidate.apply_translation([5.0, -3.0, 2.0])
    reference = write(solid, tmp_path / "ref.stl")
    got = write(candidate, tmp_path / "got.stl")
    verdict = MeshCompare(n_points=4000)(Sample(id=part, completion=got, reference=reference))
    assert verdict.status is Status.PASS, verdict.feedback
    assert verdict.evidence["raw"]["volume_ratio"] == pytest.approx(1.0, abs=1e-3)
