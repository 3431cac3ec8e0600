"""Pose: every pose of a real part passes, alignment never lowers a score, and sizes are
checked in the aligned pose."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import trimesh

from rewardsmith.verifiers.mesh import MeshCompare, align_pair, load_mesh
from rewardsmith.verifiers.mesh.align import CUBE_ROTATIONS, icp_point_to_plane
from rewardsmith.verifiers.types import Sample, Status, Verdict


def judge(verifier: MeshCompare, candidate: Path, reference: object) -> Verdict:
    return verifier(Sample(id="pose", completion=str(candidate), reference=reference))


def posed(source: Path, folder: Path, seed: int) -> Path:
    """The part turned by a random proper rotation and moved: another pose, same part."""
    mesh = trimesh.load(source, force="mesh")
    rng = np.random.default_rng(seed)
    transform = trimesh.transformations.random_rotation_matrix(rng.random(3))
    # Moved by a few part sizes: far more and float32 STL coordinates lose the part's detail.
    transform[:3, 3] = rng.uniform(-3, 3, 3) * float(mesh.extents.max())
    mesh.apply_transform(transform)
    path = folder / f"posed_{seed}_{source.stem}.stl"
    mesh.export(path)
    return path


# CAD parts with holes and pockets, and symmetric ones whose principal axes are undefined.
REAL_PARTS = [
    "angle_block.STL",
    "plate_holes.STL",
    "featuretype.STL",
    "octagonal_pocket.stl",
    "cylinder.stl",
    "unit_cube.STL",
]


@pytest.mark.slow
@pytest.mark.parametrize("name", REAL_PARTS)
def test_every_pose_of_a_real_part_passes(shared_data: Path, tmp_path: Path, name: str) -> None:
    reference = shared_data / "meshes" / name
    verdict = judge(MeshCompare(align=True), posed(reference, tmp_path, 11), str(reference))
    assert verdict.status is Status.PASS, verdict.feedback
    assert verdict.evidence["pose"] == "aligned"


def test_alignment_never_lowers_a_score(shared_data: Path) -> None:
    meshes = shared_data / "meshes"
    args = (meshes / "7_8ths_cube.stl", str(meshes / "unit_cube.STL"))
    raw = judge(MeshCompare(check_scale=False, check_topology=False), *args)
    aligned = judge(MeshCompare(align=True, check_scale=False, check_topology=False), *args)
    raw_figures = aligned.evidence["raw"]
    assert raw_figures == raw.evidence["raw"]  # the unaligned pose is always a candidate
    assert aligned.score >= raw.score


def test_a_square_plate_is_not_lowered_by_its_symmetry(tmp_path: Path) -> None:
    # Two equal principal axes: any rotation in the plane is "principal". The identity and
    # the 24 cube rotations are candidates, so the part in its own pose stays a pass.
    plate = trimesh.creation.box(extents=[40, 40, 4])
    for x, y in ((-10, -10), (10, -10), (-10, 10), (10, 10)):
        hole = trimesh.creation.cylinder(radius=3, height=10, sections=32)
        hole.apply_translation([x, y, 0])
        plate = trimesh.boolean.difference([plate, hole], engine="manifold")
    reference, candidate = tmp_path / "ref.stl", tmp_path / "cand.stl"
    plate.export(reference)
    plate.export(candidate)
    verdict = judge(MeshCompare(align=True), candidate, str(reference))
    assert verdict.status is Status.PASS and verdict.score == 1.0


def test_stated_dimensions_are_checked_in_the_aligned_pose(
    shared_data: Path, tmp_path: Path
) -> None:
    source = shared_data / "meshes" / "angle_block.STL"
    extents = load_mesh(source).extents.tolist()
    moved = posed(source, tmp_path, 5)
    right = {"mesh": str(source), "dimensions": extents}
    assert judge(MeshCompare(align=True), moved, right).status is Status.PASS
    wrong = {"mesh": str(source), "dimensions": [extents[0] * 1.1, *extents[1:]]}
    verdict = judge(MeshCompare(align=True), moved, wrong)
    assert verdict.status is Status.FAIL and "x size is" in verdict.feedback


def test_point_to_plane_icp_recovers_a_small_rotation() -> None:
    box = trimesh.creation.box(extents=[3, 2, 1])
    points, faces = trimesh.sample.sample_surface(box, 3000, seed=1)
    turn = trimesh.transformations.rotation_matrix(0.1, [1, 2, 3])[:3, :3]
    source = (points @ turn.T)[::2]
    rotation, shift = icp_point_to_plane(source, points, box.face_normals[faces])
    assert np.allclose(rotation @ turn, np.eye(3), atol=1e-6) and np.allclose(shift, 0, atol=1e-6)


def test_the_search_tries_the_24_proper_cube_rotations_and_never_a_mirror() -> None:
    assert len(CUBE_ROTATIONS) == 24
    assert all(np.isclose(np.linalg.det(r), 1.0) for r in CUBE_ROTATIONS)
    found = align_pair(trimesh.creation.box(extents=[3, 2, 1]), trimesh.creation.box())
    assert np.isclose(np.linalg.det(found.rotation), 1.0)
