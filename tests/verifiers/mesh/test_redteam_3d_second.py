"""Red team rt3d2: ways a wrong part earned reward from `mesh_compare`, failing before
their fixes (the first round's open classes A and B, /work/notes/report-rt3d.md).

- **A, pose slack on thin sides.** With ``align`` the size check gave every axis the
  Hausdorff pass level times the longest side as slack (the pose was trusted only to
  that): 0.4 mm on a 100 mm part is 20 % of a 2 mm side, so a plate made 2.3 thick earned
  0.94 once turned (0 unturned). Now the turned part's sides are read in the pose its
  surface's principal axes pin exactly (`sides.py`), and only a rotation they leave free
  keeps slack, sized by what it can move.
- **B, a thin part hollowed to about half its material.** The material gate is a step at
  half and IoU was one of three averaged ramps; on a thin part the inner faces lie within
  the Hausdorff pass level, so a 1.6 mm plate with 0.4 mm walls earned 0.51. Now the
  material (the lower of IoU and the volume ratio) multiplies the score as a ramp from the
  gate to its pass level, as the feature ramps do: a part earns at most its material ramp.
- **C, a thin side made thinner under studs that keep its box** (found here). The size
  check read the bounding box, and a few studs standing proud of the faces restore it: a
  2 mm plate made 1.9 thick passed (1.0), 1.8 earned 0.96, the same plates without studs 0.
  Now the surface's spread along each principal axis (pose free, `sides.surface_spread`)
  must match the reference's within the size tolerance, as the sides do.

Each class has a metamorphic relation (`relations.py`: ``mesh/thin_side_grown``,
``mesh/thin_hollowed``, ``mesh/thin_side_padded``), checked here on a thin plate.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
import trimesh
from scipy.spatial.transform import Rotation

from rewardsmith.verifiers.mesh import MeshCompare
from rewardsmith.verifiers.mesh.hollow import hollowed
from rewardsmith.verifiers.mesh.relations import padded_thin_side, relations
from rewardsmith.verifiers.types import Sample, Status, Verdict

pytestmark = pytest.mark.slow


def _judge(
    verifier: MeshCompare, folder: Path, candidate: trimesh.Trimesh, reference: object
) -> Verdict:
    path = folder / f"cand_{len(list(folder.iterdir()))}.stl"
    candidate.export(path)
    return verifier(Sample(id="rt3d2", completion=str(path), reference=reference))


def _written(mesh: trimesh.Trimesh, path: Path) -> str:
    mesh.export(path)
    return str(path)


def _turned(mesh: trimesh.Trimesh, how: str) -> trimesh.Trimesh:
    """A quarter turn about x or y, or a seeded random proper rotation, and a move."""
    out = mesh.copy()
    if how in ("x", "y"):
        matrix = trimesh.transformations.rotation_matrix(np.pi / 2, [how == "x", how == "y", 0])
    else:
        matrix = np.eye(4)
        matrix[:3, :3] = Rotation.random(random_state=int(how)).as_matrix()
    matrix[:3, 3] = [7.0, -3.0, 2.0]
    out.apply_transform(matrix)
    return out


def _box(x: float, y: float, z: float) -> trimesh.Trimesh:
    return trimesh.creation.box(extents=[x, y, z])


def _disk(radius: float, height: float) -> trimesh.Trimesh:
    return trimesh.creation.cylinder(radius=radius, height=height, sections=64)


# (label, reference, wrong candidate, turn): the candidate's thin side is 10-15 % off.
THICKER_TURNED: list[tuple[str, trimesh.Trimesh, trimesh.Trimesh, str]] = [
    ("plate 2 made 2.2, quarter turn about x", _box(100, 60, 2), _box(100, 60, 2.2), "x"),
    ("plate 2 made 2.3, quarter turn about x", _box(100, 60, 2), _box(100, 60, 2.3), "x"),
    ("plate 2 made 2.3, quarter turn about y", _box(100, 60, 2), _box(100, 60, 2.3), "y"),
    ("plate 2 made 2.3, random pose", _box(100, 60, 2), _box(100, 60, 2.3), "5"),
    ("plate 2 made 1.8, random pose", _box(100, 60, 2), _box(100, 60, 1.8), "6"),
    ("square plate 2 made 2.3", _box(60, 60, 2), _box(60, 60, 2.3), "x"),
    ("bar 4 x 2 made 4 x 2.3", _box(100, 4, 2), _box(100, 4, 2.3), "8"),
    ("disk 2 thick made 2.3", _disk(50, 2), _disk(50, 2.3), "y"),
]


@pytest.mark.parametrize(
    ("label", "reference", "candidate", "turn"),
    THICKER_TURNED,
    ids=[row[0] for row in THICKER_TURNED],
)
def test_a_thin_side_resized_earns_nothing_in_any_pose(
    tmp_path: Path, label: str, reference: trimesh.Trimesh, candidate: trimesh.Trimesh, turn: str
) -> None:
    ref = _written(reference, tmp_path / "ref.stl")
    verifier = MeshCompare(align=True)
    wrong = _judge(verifier, tmp_path, _turned(candidate, turn), ref)
    assert wrong.score == 0.0, f"{label}: {wrong.score} {wrong.feedback}"
    assert "size" in wrong.feedback
    right = _judge(verifier, tmp_path, _turned(reference, turn), ref)
    assert right.status is Status.PASS, f"{label}, the right part: {right.feedback}"


def test_a_stated_thin_side_is_held_in_the_aligned_pose(tmp_path: Path) -> None:
    ref = {"mesh": _written(_box(100, 60, 2), tmp_path / "ref.stl"), "dimensions": [100, 60, 2]}
    verifier = MeshCompare(align=True)
    wrong = _judge(verifier, tmp_path, _turned(_box(100, 60, 2.3), "x"), ref)
    assert wrong.score == 0.0 and "the task states 2" in wrong.feedback, wrong.feedback
    right = _judge(verifier, tmp_path, _turned(_box(100, 60, 2), "x"), ref)
    assert right.status is Status.PASS, right.feedback


def _pocketed(plate: trimesh.Trimesh, depth: float, rim: float) -> trimesh.Trimesh:
    """A pocket cut from below, `depth` deep, leaving a rim `rim` wide: a tray."""
    lo, hi = plate.bounds
    size = hi - lo
    pocket = _box(size[0] - 2 * rim, size[1] - 2 * rim, 2 * depth)
    pocket.apply_translation([0, 0, lo[2]])
    return trimesh.boolean.difference([plate, pocket], engine="manifold")


Hollowing = Callable[[trimesh.Trimesh], trimesh.Trimesh]

# (label, reference, how it is hollowed): every outer face kept, material taken from inside.
HOLLOWED_THIN: list[tuple[str, trimesh.Trimesh, Hollowing]] = [
    ("plate 1.6, wall 0.4, vent", _box(100, 60, 1.6), lambda m: hollowed(m, 0.4, 0.3)),
    ("plate 1.6, wall 0.45, vent", _box(100, 60, 1.6), lambda m: hollowed(m, 0.45, 0.3)),
    ("plate 1.6, wall 0.4, sealed", _box(100, 60, 1.6), lambda m: hollowed(m, 0.4)),
    ("plate 1.0, wall 0.25, vent", _box(100, 60, 1.0), lambda m: hollowed(m, 0.25, 0.2)),
    ("upright wall 1.6 thick, wall 0.45", _box(1.6, 60, 100), lambda m: hollowed(m, 0.45, 0.3)),
    ("disk 1.6, wall 0.4, vent", _disk(50, 1.6), lambda m: hollowed(m, 0.4, 0.3)),
    ("plate 1.6, pocket 0.4 deep from below", _box(100, 60, 1.6), lambda m: _pocketed(m, 0.4, 2)),
]


def _material_ramp(fraction: float, verifier: MeshCompare) -> float:
    """The most a part with `fraction` of the reference's material may earn."""
    low, high = verifier.thresholds.solid_gate, verifier.thresholds.material_pass
    return min(1.0, max(0.0, (fraction - low) / (high - low)))


@pytest.mark.parametrize(
    ("label", "reference", "hollow"), HOLLOWED_THIN, ids=[row[0] for row in HOLLOWED_THIN]
)
def test_b_a_thin_part_missing_material_earns_at_most_its_material(
    tmp_path: Path, label: str, reference: trimesh.Trimesh, hollow: Hollowing
) -> None:
    ref = _written(reference, tmp_path / "ref.stl")
    verifier = MeshCompare()
    shell = hollow(reference)
    fraction = float(shell.volume / reference.volume)
    assert fraction < 0.8, f"{label}: the exploit keeps {fraction:.3f} of the material"
    got = _judge(verifier, tmp_path, shell, ref)
    most = _material_ramp(fraction, verifier)
    assert got.score is not None and got.score <= most + 1e-9, (
        f"{label}: {fraction:.3f} of the material earned {got.score}, more than {most:.3f};"
        f" {got.feedback}"
    )
    if fraction < 0.6:  # about half of it missing: (next to) nothing
        assert got.score < 0.25, f"{label}: {fraction:.3f} of the material earned {got.score}"


@pytest.mark.parametrize("align", [False, True], ids=["stated pose", "aligned"])
def test_the_relations_of_both_classes_hold_on_a_thin_plate(tmp_path: Path, align: bool) -> None:
    """`mesh/thin_side_grown` (class A: turned where the verifier aligns),
    `mesh/thin_hollowed` (class B) and `mesh/thin_side_padded` (class C) on a right plate
    earn at most their limits."""
    plate = _box(100, 60, 1.6)
    ref = _written(plate, tmp_path / "ref.stl")
    verifier = MeshCompare(align=align, allowed_root=str(tmp_path))
    right = Sample(id="plate", completion=_written(plate, tmp_path / "right.stl"), reference=ref)
    assert verifier(right).score == 1.0
    found = {r.name: r for r in relations(verifier)}
    for name in ("mesh/thin_side_grown", "mesh/thin_hollowed", "mesh/thin_side_padded"):
        relation = found[name]
        assert relation.limit is not None
        for seed in range(2):
            changed = relation(right, seed)
            assert changed is not None, name
            got = verifier(changed)
            assert got.score is not None and got.score <= relation.limit + 1e-3, (
                f"{name} seed {seed}: {got.score} {got.feedback}"
            )


# (label, reference, candidate): a thin side 5-20 % thinner, its bounding box kept by studs.
PADDED_THIN: list[tuple[str, trimesh.Trimesh, trimesh.Trimesh]] = [
    ("plate 2 made 1.9, studs", _box(100, 60, 2), padded_thin_side(_box(100, 60, 2), 0.1)),
    ("plate 2 made 1.8, studs", _box(100, 60, 2), padded_thin_side(_box(100, 60, 2), 0.2)),
    ("plate 2 made 1.6, studs", _box(100, 60, 2), padded_thin_side(_box(100, 60, 2), 0.4)),
    ("upright wall 3 made 2.8", _box(3, 60, 100), padded_thin_side(_box(3, 60, 100), 0.2)),
    ("disk 2 made 1.8, studs", _disk(50, 2), padded_thin_side(_disk(50, 2), 0.2)),
]


@pytest.mark.parametrize(
    ("label", "reference", "candidate"), PADDED_THIN, ids=[row[0] for row in PADDED_THIN]
)
@pytest.mark.parametrize("align", [False, True], ids=["stated pose", "aligned"])
def test_c_a_thin_side_made_thinner_under_studs_earns_nothing(
    tmp_path: Path, label: str, reference: trimesh.Trimesh, candidate: trimesh.Trimesh, align: bool
) -> None:
    assert np.allclose(candidate.extents, reference.extents, atol=1e-3), candidate.extents
    ref = _written(reference, tmp_path / "ref.stl")
    got = _judge(MeshCompare(align=align), tmp_path, candidate, ref)
    assert got.score == 0.0, f"{label}: {got.score} {got.feedback}"


def test_c_studs_do_not_keep_a_stated_thin_side(tmp_path: Path) -> None:
    """With stated dimensions (the bundled CAD tasks state theirs) the box is read from the
    task, and the spread is held too."""
    plate = _box(60, 40, 5)
    ref = {"mesh": _written(plate, tmp_path / "ref.stl"), "dimensions": [60, 40, 5]}
    verifier = MeshCompare()
    wrong = _judge(verifier, tmp_path, padded_thin_side(plate, 0.3), ref)
    assert wrong.score == 0.0 and "spreads" in wrong.feedback, wrong.feedback
    assert _judge(verifier, tmp_path, plate, ref).status is Status.PASS
