"""Every mesh metric against a value computed by hand on simple shapes."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
import trimesh

from rewardsmith.verifiers.mesh import metrics
from rewardsmith.verifiers.mesh.align import normalise
from rewardsmith.verifiers.mesh.distance import Coincidence, coincidence
from rewardsmith.verifiers.mesh.metrics import (
    chamfer_from_distances,
    nearest_both_ways,
    reference_surface,
    surface_metrics,
)
from rewardsmith.verifiers.mesh.volume import iou, iou_exact, iou_voxel


def unit_cube(dx: float = 0.0) -> trimesh.Trimesh:
    return trimesh.creation.box(bounds=[[dx, 0, 0], [1 + dx, 1, 1]])


def chamfer_cubes_by_hand(d: float) -> float:
    """Two unit cubes offset by d along x, exact point-to-surface squared distances.

    Over A's surface (area 6): the face x=0 is at distance d (contributes d^2); the face
    x=1 lies inside B, at distance min(d, distance to its border), whose mean square is
    int_0^d 2t (1-2t)^2 dt = d^2 - 8d^3/3 + 2d^4; the four side faces are on B's surface
    for x >= d and at distance d - x below, each contributing int_0^d (d-x)^2 dx = d^3/3.
    By symmetry B -> A is the same, so CD = 2 * (2d^2 - 4d^3/3 + 2d^4) / 6.
    """
    return 2 * (2 * d**2 - 4 * d**3 / 3 + 2 * d**4) / 6


def fscore_cubes_by_hand(d: float, tau: float) -> float:
    """Same pair, tau < d: the share of A's area within tau of B (= recall, by symmetry).

    x=0 face: none; x=1 face: a border strip of width tau, area 1 - (1 - 2 tau)^2; side
    faces: x > d - tau, area 1 - d + tau each.
    """
    return ((1 - (1 - 2 * tau) ** 2) + 4 * (1 - d + tau)) / 6


def test_chamfer_of_point_sets_is_twice_the_squared_shift() -> None:
    grid = np.stack(np.meshgrid(*[np.arange(5.0)] * 3), axis=-1).reshape(-1, 3)
    d = 0.1  # far below half the spacing, so each point's nearest neighbour is its twin
    shifted = grid + np.array([d, 0, 0])
    d_gs, _, d_sg, _ = nearest_both_ways(grid, shifted)
    cd = chamfer_from_distances(d_gs, d_sg)
    assert cd == pytest.approx(2 * d**2, rel=1e-12)


def test_leaf_order_queries_equal_plain_kd_tree_queries() -> None:
    from scipy.spatial import cKDTree

    rng = np.random.default_rng(0)
    p, q = rng.random((5000, 3)), rng.random((4000, 3))
    d_pq, i_pq, d_qp, i_qp = nearest_both_ways(p, q)
    plain_pq, plain_ipq = cKDTree(q).query(p)
    plain_qp, plain_iqp = cKDTree(p).query(q)
    assert np.array_equal(d_pq, plain_pq) and np.array_equal(i_pq, plain_ipq)
    assert np.array_equal(d_qp, plain_qp) and np.array_equal(i_qp, plain_iqp)


@pytest.mark.parametrize("d", [0.1, 0.2])
def test_chamfer_of_offset_cubes_matches_hand_value(d: float) -> None:
    m = surface_metrics(unit_cube(), unit_cube(d), n_points=60_000, seed=1)
    # Sampling adds about the squared sample spacing (~1e-5 here): a few per cent at most.
    assert m.chamfer == pytest.approx(chamfer_cubes_by_hand(d), rel=0.05)


@pytest.mark.parametrize("d", [0.1, 0.3])
def test_hausdorff_of_offset_cubes_is_d(d: float) -> None:
    m = surface_metrics(unit_cube(), unit_cube(d), n_points=10_000, seed=2)
    # The worst distance is at the offset cube's corners, which are vertices: exactly d.
    assert d - 0.02 <= m.hausdorff <= d + 0.01


def test_fscore_of_offset_cubes_matches_hand_value() -> None:
    d, tau = 0.2, 0.05
    m = surface_metrics(unit_cube(), unit_cube(d), n_points=20_000, seed=3, threshold=tau)
    assert m.fscore == pytest.approx(fscore_cubes_by_hand(d, tau), abs=0.01)
    assert m.precision == pytest.approx(m.recall, abs=0.01)


@pytest.mark.parametrize("d", [0.0, 0.25, 0.5, 0.9])
def test_exact_iou_of_offset_cubes(d: float) -> None:
    assert iou_exact(unit_cube(), unit_cube(d)) == pytest.approx(
        (1 - d) / (1 + d), abs=1e-6
    )  # float32 inside


def _box(lo: list[float], hi: list[float]) -> trimesh.Trimesh:
    return trimesh.creation.box(bounds=[lo, hi])


def test_a_part_of_overlapping_shells_is_the_region_they_enclose() -> None:
    """Two shells sharing a third of their volume (a sweep in pieces, as CadQuery's Ex023
    gives) were measured twice, and manifold's booleans assume shells do not overlap: such
    a part read an IoU of 1.485 against itself. A cavity shell is cut out."""
    pieces = trimesh.util.concatenate([_box([0, 0, 0], [2, 1, 1]), _box([1, 0, 0], [3, 1, 1])])
    whole = _box([0, 0, 0], [3, 1, 1])
    assert iou_exact(pieces, pieces.copy()) == pytest.approx(1.0)  # `iou` skips a copy
    assert iou(pieces, pieces.copy()) == (1.0, "exact")
    assert iou(pieces, whole) == (pytest.approx(1.0), "exact")
    assert iou(pieces, _box([0, 0, 0], [2, 1, 1]))[0] == pytest.approx(2 / 3)
    cavity = _box([1, 1, 1], [3, 3, 3])
    cavity.invert()
    hollow = trimesh.util.concatenate([_box([0, 0, 0], [4, 4, 4]), cavity])
    assert iou(hollow, _box([0, 0, 0], [4, 4, 4]))[0] == pytest.approx(56 / 64)
    assert iou_exact(hollow, hollow.copy()) == pytest.approx(1.0)


def test_voxel_iou_approximates_exact_iou() -> None:
    d = 0.25
    assert iou_voxel(unit_cube(), unit_cube(d), resolution=64) == pytest.approx(0.6, abs=0.03)


def test_disjoint_cubes_have_zero_iou() -> None:
    assert iou_exact(unit_cube(), unit_cube(3.0)) == 0.0


def test_sphere_in_cube() -> None:
    sphere = trimesh.creation.icosphere(subdivisions=4, radius=1.0)
    cube = trimesh.creation.box(extents=[2, 2, 2])
    value, method = iou(sphere, cube)
    # The sphere lies inside the cube: IoU = V_sphere / V_cube = (4/3 pi) / 8 = pi/6.
    assert method == "exact"
    assert value == pytest.approx(math.pi / 6, rel=0.01)  # icosphere volume is 0.8% short
    assert value == pytest.approx(sphere.volume / 8, rel=1e-6)
    m = surface_metrics(sphere, cube, n_points=10_000, seed=4)
    # Farthest cube point from the sphere: a corner, at sqrt(3) - 1.
    assert m.hausdorff == pytest.approx(math.sqrt(3) - 1, abs=0.02)


@pytest.mark.parametrize("degrees", [0, 30, 60])
def test_normal_consistency_of_tilted_plates_is_cos_theta(degrees: float) -> None:
    plate = trimesh.Trimesh(
        vertices=[[-1, -1, 0], [1, -1, 0], [1, 1, 0], [-1, 1, 0]], faces=[[0, 1, 2], [0, 2, 3]]
    )
    tilted = plate.copy()
    tilted.apply_transform(
        trimesh.transformations.rotation_matrix(math.radians(degrees), [1, 0, 0])
    )
    m = surface_metrics(plate, tilted, n_points=5_000, seed=5)
    assert m.normal_consistency == pytest.approx(math.cos(math.radians(degrees)), abs=1e-9)


def test_identical_meshes_score_perfectly_up_to_sampling() -> None:
    box = trimesh.creation.box(extents=[3, 2, 1])
    m = surface_metrics(normalise(box), normalise(box), n_points=20_000, seed=0)
    assert m.chamfer < 5e-4 and m.fscore > 0.97 and m.normal_consistency > 0.97


def test_sampling_is_seeded() -> None:
    a, b = unit_cube(), unit_cube(0.1)
    assert surface_metrics(a, b, n_points=2000, seed=7) == surface_metrics(
        a, b, n_points=2000, seed=7
    )
    assert surface_metrics(a, b, n_points=2000, seed=7) != surface_metrics(
        a, b, n_points=2000, seed=8
    )


def test_normalise_fits_the_unit_cube() -> None:
    m = normalise(trimesh.creation.box(bounds=[[10, 20, 30], [50, 30, 35]]))
    assert m.extents.max() == pytest.approx(1.0)
    assert np.allclose(m.bounds.mean(axis=0), 0.0)


def test_the_reference_surface_is_built_once_per_content() -> None:
    """A task's reference is measured against every sample: its surface is kept, keyed on
    the mesh's content (an equal mesh in another object finds it; a changed one does not),
    and the metrics are the same with it kept as built afresh."""
    part = normalise(trimesh.creation.annulus(r_min=0.2, r_max=0.5, height=0.3))
    candidate = normalise(trimesh.creation.cylinder(radius=0.5, height=0.3))
    first = surface_metrics(candidate, part, n_points=2000, seed=5)
    kept = reference_surface(part.copy(), 2000, 6)
    assert reference_surface(part, 2000, 6) is kept
    assert surface_metrics(candidate, part.copy(), n_points=2000, seed=5) == first
    moved = part.copy()
    moved.vertices[0] += 1e-9
    assert reference_surface(moved, 2000, 6) is not kept
    assert reference_surface(part, 2000, 7) is not kept
    for k in range(8):  # others push it out: the cache is bounded
        reference_surface(part, 100, k)
    assert reference_surface(part, 2000, 6) is not kept


def _parts() -> dict[str, trimesh.Trimesh]:
    annulus = trimesh.creation.annulus(r_min=0.2, r_max=0.5, height=0.3)
    return {
        "cube": unit_cube(),
        "annulus": normalise(annulus),
        "sphere": normalise(trimesh.creation.icosphere(subdivisions=2)),
        "slab with a sliver": normalise(trimesh.creation.box(extents=[1, 1e-3, 0.4])),
    }


@pytest.mark.parametrize("name", list(_parts()))
def test_a_candidate_of_the_reference_arrays_reads_what_the_general_path_reads(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A candidate of the same arrays as the reference takes its areas and normals from
    the kept reference, and where every triangle is shared its distances are 0 without
    the bounds, the settling and the vertices' check: every figure is the general path's,
    bit for bit, cold (the reference built) and warm (kept)."""
    part = _parts()[name]
    metrics._reference_surfaces.clear()
    fast = [surface_metrics(part.copy(), part.copy(), n_points=3000, seed=2) for _ in range(2)]
    monkeypatch.setattr(
        metrics, "coincidence", lambda a, b: dataclasses.replace(coincidence(a, b), same=False)
    )
    monkeypatch.setattr(Coincidence, "every_face", property(lambda self: False))
    metrics._reference_surfaces.clear()
    general = [surface_metrics(part.copy(), part.copy(), n_points=3000, seed=2) for _ in range(2)]
    assert fast == general
    assert fast[0].hausdorff == fast[0].p95 == 0.0 and fast[0].fscore == 1.0


def test_the_kept_reference_does_not_change_with_the_callers_mesh() -> None:
    """The reference is kept on its own copy of the arrays: a caller that edits its mesh
    afterwards changes neither the kept surface nor the next equal reference's figures."""
    part = normalise(trimesh.creation.annulus(r_min=0.2, r_max=0.5, height=0.3))
    metrics._reference_surfaces.clear()
    edited = part.copy()
    first = surface_metrics(part.copy(), edited, n_points=2000, seed=5)
    edited.vertices[0] += [0.3, 0.1, 0.0]  # its faces change area and normal
    assert surface_metrics(part.copy(), part.copy(), n_points=2000, seed=5) == first


@pytest.mark.parametrize("name", list(_parts()))
def test_kept_frames_draw_what_trimesh_draws(name: str) -> None:
    """The reference's kept sampling frames draw the points and faces trimesh's
    ``sample_surface`` draws with the same seed, bit for bit (a zero-area face included)."""
    part = _parts()[name]
    flat = trimesh.Trimesh(
        np.vstack([part.vertices, part.vertices[:1]]),
        np.vstack([part.faces, [[0, len(part.vertices), 0]]]),
        process=False,
    )
    for mesh in (part, flat):
        frames = metrics._Frames.of(mesh.copy())
        for n, seed in ((1, 0), (3000, 2), (20_000, 7)):
            points, faces = frames.draw(n, seed)
            want_points, want_faces = metrics.sample_with_faces(mesh.copy(), n, seed)
            assert np.array_equal(points, want_points) and np.array_equal(faces, want_faces)
