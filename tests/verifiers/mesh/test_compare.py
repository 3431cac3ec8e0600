"""`mesh_compare` end to end: real meshes, pose, dimensions, hostile inputs, limits."""

from __future__ import annotations

import os
import pickle
import time
from pathlib import Path

import numpy as np
import pytest
import trimesh

from rewardsmith.verifiers.mesh import MeshCompare, Thresholds
from rewardsmith.verifiers.protocol import Verifier
from rewardsmith.verifiers.registry import create
from rewardsmith.verifiers.types import Failure, Sample, Status


def judge(verifier: MeshCompare, candidate: str | Path, reference: object) -> object:
    return verifier(Sample(id="m", completion=str(candidate), reference=reference))


@pytest.fixture(scope="module")
def meshes(shared_data: Path) -> Path:
    return shared_data / "meshes"


def copy_of(path: Path, folder: Path) -> Path:
    """The candidate as a rollout would write it: its own file, not the reference's."""
    target = folder / f"candidate_{path.name}"
    target.write_bytes(path.read_bytes())
    return target


FEW = MeshCompare(n_points=4000)
"""Where the verdict is far from every pass level, 4,000 points tell it as well as 20,000."""


def test_same_part_passes(meshes: Path, tmp_path: Path) -> None:
    v = judge(
        MeshCompare(), copy_of(meshes / "unit_cube.STL", tmp_path), str(meshes / "unit_cube.STL")
    )
    assert v.status is Status.PASS and v.score == 1.0
    assert v.evidence["raw"]["iou"] == pytest.approx(1.0, abs=1e-6)


def test_unit_cube_and_seven_eighths_cube_are_told_apart(meshes: Path) -> None:
    # The files' units differ (40 mm and 1), so the size check alone fails them; without
    # it, the missing octant is a feature the Hausdorff distance sees: score 0.
    sized = judge(FEW, meshes / "7_8ths_cube.stl", str(meshes / "unit_cube.STL"))
    assert sized.status is Status.FAIL and "x size is 40" in sized.feedback
    v = judge(
        MeshCompare(check_scale=False, n_points=4000),
        meshes / "7_8ths_cube.stl",
        str(meshes / "unit_cube.STL"),
    )
    assert v.status is Status.FAIL and v.score == 0.0
    assert v.evidence["raw"]["hausdorff"] > 0.2
    # One octant of the normalised cube is missing: IoU = 7/8 exactly.
    assert v.evidence["raw"]["iou"] == pytest.approx(7 / 8, abs=1e-5)
    assert v.evidence["raw"]["iou_method"] == "exact"


def test_soup_fails_the_validity_gate(meshes: Path) -> None:
    v = judge(FEW, meshes / "soup.stl", str(meshes / "unit_cube.STL"))
    assert v.status is Status.FAIL and v.score == 0.0
    assert "not watertight" in v.feedback and "100 components" in v.feedback
    assert v.evidence["raw"]["iou_method"] == "voxel"  # still measured, for the record


def test_busted_is_a_valid_solid(meshes: Path, tmp_path: Path) -> None:
    # See test_validity.py: despite its name the file is a closed, consistently wound solid.
    v = judge(MeshCompare(), copy_of(meshes / "busted.STL", tmp_path), str(meshes / "busted.STL"))
    assert v.status is Status.PASS


def test_large_block_obb_is_another_part(meshes: Path) -> None:
    # Not the same part in another pose: its volume is 8.46e8 against 3.33e9 and its edge
    # lengths differ. So it fails with and without alignment.
    reference = str(meshes / "large_block.STL")
    for align in (False, True):
        v = judge(
            MeshCompare(align=align, n_points=4000), meshes / "large_block_obb.STL", reference
        )
        assert v.status is not Status.PASS
        assert v.evidence["raw"]["iou"] < 0.5


@pytest.mark.parametrize("name", ["large_block.STL", "angle_block.STL"])
def test_pose_matches_after_alignment_and_not_before(
    meshes: Path, tmp_path: Path, name: str
) -> None:
    moved = trimesh.load(meshes / name)
    transform = trimesh.transformations.random_rotation_matrix(np.random.default_rng(3).random(3))
    transform[:3, 3] = [120.0, -40.0, 7.0]
    moved.apply_transform(transform)
    path = tmp_path / f"moved_{name}"
    moved.export(path)
    raw = judge(MeshCompare(), path, str(meshes / name))
    aligned = judge(MeshCompare(align=True), path, str(meshes / name))
    assert raw.status is not Status.PASS
    assert aligned.status is Status.PASS
    assert aligned.evidence["aligned"]["chamfer"] < raw.evidence["raw"]["chamfer"] / 10


def test_stated_dimensions_are_checked_unnormalised(meshes: Path, tmp_path: Path) -> None:
    candidate = copy_of(meshes / "7_8ths_cube.stl", tmp_path)
    ref = {"mesh": str(meshes / "7_8ths_cube.stl"), "dimensions": [40, 40, 40]}
    assert judge(MeshCompare(), candidate, ref).status is Status.PASS
    wrong = {"mesh": str(meshes / "7_8ths_cube.stl"), "dimensions": [40, 40, 20]}
    v = judge(MeshCompare(), candidate, wrong)
    assert v.status is Status.FAIL and "z size is 40" in v.feedback


@pytest.mark.parametrize(
    "reference",
    [
        None,
        3,
        "",
        {"dimensions": [1, 1, 1]},
        {"mesh": 5},
        {"mesh": "a.stl", "dimensions": [1, 1]},
        {"mesh": "a.stl", "dimensions": [1, 1, -1]},
        {"mesh": "a.stl", "dimensions": "40x20x10"},
        {"mesh": "a.stl", "components": 0},
    ],
    ids=repr,
)
def test_missing_reference_is_a_data_error(reference: object) -> None:
    v = judge(MeshCompare(), "/nowhere.stl", reference)
    assert v.status is Status.ERROR and v.failure is Failure.BAD_REFERENCE and v.score is None


def test_unreadable_reference_is_not_the_models_fault(meshes: Path, tmp_path: Path) -> None:
    v = judge(MeshCompare(), meshes / "unit_cube.STL", str(tmp_path / "gone.stl"))
    assert v.failure is Failure.BAD_REFERENCE and v.score is None


@pytest.mark.parametrize(
    "candidate", ["", "   ", "/dev/zero", "/etc/passwd", "x" * 10_000, "../../etc/shadow.stl"]
)
def test_hostile_candidate_paths_fail_as_format(meshes: Path, candidate: str) -> None:
    v = judge(MeshCompare(), candidate, str(meshes / "unit_cube.STL"))
    assert v.status is Status.FAIL and v.failure is Failure.FORMAT and v.score == 0.0


def test_naming_the_reference_itself_is_refused(meshes: Path, tmp_path: Path) -> None:
    reference = meshes / "unit_cube.STL"
    link = tmp_path / "mine.stl"
    link.symlink_to(reference)
    for candidate in (reference, link):
        v = judge(MeshCompare(), candidate, str(reference))
        assert v.failure is Failure.FORMAT and "reference mesh itself" in v.feedback


def test_allowed_root_confines_candidates(meshes: Path, tmp_path: Path) -> None:
    outside = judge(MeshCompare(allowed_root=str(tmp_path)), meshes / "unit_cube.STL", "r.stl")
    assert outside.failure is Failure.FORMAT and "output folder" in outside.feedback
    escape = tmp_path / "out.stl"
    escape.symlink_to(meshes / "7_8ths_cube.stl")  # a link out of the folder does not help
    linked = judge(MeshCompare(allowed_root=str(tmp_path)), escape, str(meshes / "unit_cube.STL"))
    assert linked.failure is Failure.FORMAT
    inside = tmp_path / "cube.stl"
    trimesh.creation.box().export(inside)
    ok = judge(MeshCompare(allowed_root=str(tmp_path)), inside, str(meshes / "unit_cube.STL"))
    assert ok.status is Status.PASS


def test_slow_mesh_ends_in_a_timeout_verdict(meshes: Path, tmp_path: Path) -> None:
    small, fine = tmp_path / "small.stl", tmp_path / "fine.stl"
    trimesh.creation.icosphere(subdivisions=2).export(small)
    trimesh.creation.icosphere(subdivisions=6).export(fine)  # 82k faces: seconds to measure
    reference = str(meshes / "unit_sphere.STL")
    # Warm the worker first, so the limit below is spent on measuring, not on starting up.
    assert judge(MeshCompare(), small, reference).status is not Status.TIMEOUT
    start = time.monotonic()
    v = judge(MeshCompare(timeout_s=0.3), fine, reference)
    assert v.status is Status.TIMEOUT and v.failure is Failure.TIME_LIMIT and v.score == 0.0
    assert time.monotonic() - start < 60  # generous: the limit is enforced, not the speed


def test_worker_out_of_memory_ends_in_a_verdict(meshes: Path) -> None:
    v = judge(
        MeshCompare(memory_bytes=64 << 20),
        meshes / "7_8ths_cube.stl",
        str(meshes / "unit_cube.STL"),
    )
    assert v.status is Status.ERROR and v.failure in (Failure.MEMORY_LIMIT, Failure.VERIFIER_CRASH)


def test_running_out_of_memory_while_measuring_is_the_models_memory_limit(
    meshes: Path, tmp_path: Path
) -> None:
    # 40M samples a side do not fit in 1.5 GB: a MemoryError in the middle of measuring,
    # as a mesh too heavy to measure would cause. It is the model's, score 0, not a crash.
    candidate = copy_of(meshes / "unit_cube.STL", tmp_path)
    verifier = MeshCompare(memory_bytes=3 << 29, n_points=40_000_000)
    v = judge(verifier, candidate, str(meshes / "unit_cube.STL"))
    assert v.status is Status.ERROR and v.failure is Failure.MEMORY_LIMIT and v.score == 0.0


def test_thresholds_are_validated() -> None:
    with pytest.raises(ValueError, match="lower is better"):
        Thresholds(chamfer_pass=0.1, chamfer_fail=0.01)
    with pytest.raises(ValueError, match="no width"):
        Thresholds(iou_pass=0.5, iou_fail=0.5)


def test_pickle_round_trip_and_registry() -> None:
    verifier = MeshCompare(align=True, thresholds=Thresholds(iou_pass=0.9))
    assert pickle.loads(pickle.dumps(verifier)) == verifier
    built = create("mesh_compare", align=True, thresholds={"iou_pass": 0.9})
    assert built == verifier and isinstance(built, Verifier)


def test_verdict_round_trips_through_json(meshes: Path) -> None:
    import json

    from rewardsmith.verifiers.types import Verdict

    v = judge(FEW, meshes / "7_8ths_cube.stl", str(meshes / "unit_cube.STL"))
    assert Verdict.from_dict(json.loads(json.dumps(v.to_dict()))) == v


@pytest.mark.parametrize("how", ["hard_link", "symlink", "same_path"])
def test_the_reference_under_another_name_is_refused(tmp_path: Path, how: str) -> None:
    # Red team of issue 32: a hard link passed (only the same real path was refused).
    ref = tmp_path / "ref.stl"
    trimesh.creation.box(extents=[4, 2, 1]).export(ref)
    got = tmp_path / "got.stl"
    if how == "hard_link":
        os.link(ref, got)
    elif how == "symlink":
        got.symlink_to(ref)
    else:
        got = ref
    verdict = MeshCompare()(Sample(id="k", completion=str(got), reference=str(ref)))
    assert verdict.score == 0.0 and "reference mesh itself" in verdict.feedback


def test_a_reference_rewritten_in_place_is_loaded_again(tmp_path: Path) -> None:
    """The worker keeps a task's reference loaded and gated between samples (keyed on the
    file's bytes): a file changed under the same name is read again, not taken from the
    kept one, and a caller changing the figures it got back changes nothing kept."""
    from rewardsmith.verifiers.mesh import measure

    settings = MeshCompare(n_points=500).settings()
    reference = tmp_path / "reference.stl"
    trimesh.creation.box(extents=[1, 1, 1]).export(reference)
    first, info = measure._load_reference(str(reference), settings)
    info["extents"][0] = -1.0
    again, info = measure._load_reference(str(reference), settings)
    assert again is first and info["extents"] == [1.0, 1.0, 1.0]
    trimesh.creation.box(extents=[2, 1, 1]).export(reference)
    changed, info = measure._load_reference(str(reference), settings)
    assert changed is not first and info["extents"] == [2.0, 1.0, 1.0]
    (tmp_path / "broken.stl").write_bytes(b"solid nothing\nendsolid\n")
    assert "load_error" in measure._load_reference(str(tmp_path / "broken.stl"), settings)[1]
