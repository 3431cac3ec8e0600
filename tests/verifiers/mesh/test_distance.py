"""Point-to-surface distances (`distance.py`) against a brute force over every triangle.

The oracle here shares no code with the verifier: each point is projected onto each
triangle's plane, kept where its barycentric coordinates (a 2 x 2 solve) are all >= 0,
otherwise (or where the triangle has no area) measured to the nearest of the three edges.
Cases: random triangle soups, and the adversarial ones: slivers, collinear and repeated
vertices, huge beside tiny triangles, points far away, points on the surface and at its
vertices."""

from __future__ import annotations

import numpy as np
import pytest
import trimesh

from rewardsmith.verifiers.mesh.distance import (
    Surface,
    coincidence,
    farthest_vertex,
    point_triangle_distances,
    to_surface,
)
from rewardsmith.verifiers.mesh.metrics import sample_with_faces, surface_metrics


def _segment(point: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    """Distance from one point to many segments (m, 3) each."""
    edge = end - start
    length2 = np.sum(edge * edge, axis=1)
    safe = np.where(length2 > 0, length2, 1.0)
    along = np.clip(np.sum((point - start) * edge, axis=1) / safe, 0, 1)
    return np.linalg.norm(point - (start + along[:, None] * edge), axis=1)


def brute_force(point: np.ndarray, triangles: np.ndarray) -> np.ndarray:
    """Distance from one point to every triangle (m, 3, 3), by projection or the edges."""
    a, b, c = triangles[:, 0], triangles[:, 1], triangles[:, 2]
    u, v, w = b - a, c - a, point - a
    uu, uv, vv = np.sum(u * u, 1), np.sum(u * v, 1), np.sum(v * v, 1)
    wu, wv = np.sum(w * u, 1), np.sum(w * v, 1)
    det = uu * vv - uv * uv
    flat = det > 1e-30 * (uu * vv + 1e-300)  # a triangle with an area
    safe = np.where(flat, det, 1.0)
    s, t = (vv * wu - uv * wv) / safe, (uu * wv - uv * wu) / safe
    inside = flat & (s >= 0) & (t >= 0) & (s + t <= 1)
    projected = np.linalg.norm(w - s[:, None] * u - t[:, None] * v, axis=1)
    edges = np.minimum.reduce([_segment(point, a, b), _segment(point, b, c), _segment(point, c, a)])
    return np.where(inside, np.minimum(projected, edges), edges)


def brute_to_mesh(points: np.ndarray, triangles: np.ndarray) -> np.ndarray:
    return np.array([brute_force(p, triangles).min() for p in points])


def _tolerance(*arrays: np.ndarray) -> float:
    scale = max(float(np.abs(x).max()) for x in arrays)
    return 1e-9 * max(scale, 1.0)


def _soup(rng: np.random.Generator, n: int, size: float = 1.0) -> np.ndarray:
    centres = rng.uniform(-1, 1, size=(n, 1, 3))
    return centres + size * rng.normal(size=(n, 3, 3))


def adversarial_triangles(rng: np.random.Generator) -> np.ndarray:
    """Slivers (a vertex 1e-12 off the opposite edge), collinear and repeated vertices, a
    point-triangle, huge (1e3) and tiny (1e-6) triangles, mm-sized ones in unit space."""
    a, b = rng.normal(size=(2, 3))
    sliver = np.array([a, b, (a + b) / 2 + 1e-12 * rng.normal(size=3)])
    long_sliver = np.array([[-0.5, 0, 0], [0.5, 0, 0], [0.1, 1e-9, 0]])
    collinear = np.array([a, b, a + 2.5 * (b - a)])
    repeated = np.array([a, a, b])
    point = np.array([a, a, a])
    huge = 1e3 * rng.normal(size=(3, 3))
    tiny = a + 1e-6 * rng.normal(size=(3, 3))
    small = b + 3e-3 * rng.normal(size=(3, 3))
    return np.stack([sliver, long_sliver, collinear, repeated, point, huge, tiny, small])


def _query_points(rng: np.random.Generator, triangles: np.ndarray, n: int) -> np.ndarray:
    """Near each triangle, on it (random barycentric), at its vertices, and far away."""
    pick = triangles[rng.integers(len(triangles), size=n)]
    weights = rng.dirichlet(np.ones(3), size=n)
    on = np.einsum("nv,nvc->nc", weights, pick)
    near = on + 1e-3 * rng.normal(size=(n, 3))
    scale = np.abs(pick).max(axis=(1, 2))[:, None] + 1.0
    off = on + scale * rng.normal(size=(n, 3))
    far = 1e4 * rng.normal(size=(n, 3))
    corners = pick[:, 0]
    return np.concatenate([on, near, off, far, corners])


@pytest.mark.parametrize("seed", range(4))
def test_pairwise_distance_equals_brute_force_on_random_and_adversarial_triangles(
    seed: int,
) -> None:
    rng = np.random.default_rng(seed)
    triangles = np.concatenate([_soup(rng, 40), adversarial_triangles(rng)])
    points = _query_points(rng, triangles, 60)
    rows = rng.integers(len(triangles), size=len(points))
    pairs = np.concatenate([rows, np.arange(len(triangles))])  # every triangle at least once
    at = np.concatenate([np.arange(len(points)), rng.integers(len(points), size=len(triangles))])
    fast = point_triangle_distances(points[at], triangles[pairs])
    slow = np.array(
        [brute_force(points[i], triangles[j][None])[0] for i, j in zip(at, pairs, strict=True)]
    )
    assert np.all(np.isfinite(fast))
    assert np.abs(fast - slow).max() <= _tolerance(points, triangles)


def test_a_point_inside_a_millimetre_triangle_is_on_it() -> None:
    """trimesh's ``closest_point`` decides its regions against an absolute 1e-12: on a
    triangle of 5e-3 (a CAD facet in unit space) it put this point, which lies inside the
    triangle, 1.65e-6 away, on an edge (found on CadQuery's Ex019)."""
    triangle = np.array(
        [
            [-0.45495590567588806, -0.16960333287715912, 0.0553101971745491],
            [-0.4590449929237366, -0.16942159831523895, 0.05890509858727455],
            [-0.45665112137794495, -0.171430304646492, 0.0553101971745491],
        ]
    )
    point = np.array([-0.45707844948461795, -0.17106957441259385, 0.055953610559049516])
    assert brute_force(point, triangle[None])[0] < 1e-12
    assert point_triangle_distances(point[None], triangle[None])[0] < 1e-12


def _meshes() -> dict[str, trimesh.Trimesh]:
    rng = np.random.default_rng(7)
    soup = np.concatenate([_soup(rng, 60, 0.3), adversarial_triangles(rng)])
    plate = trimesh.creation.box(extents=[1.0, 1.0, 1e-4])  # a thin part: two faces 1e-4 apart
    mixed = trimesh.util.concatenate(
        [trimesh.creation.icosphere(subdivisions=3), trimesh.creation.box(extents=[1e-5] * 3)]
    )
    fan = trimesh.creation.cylinder(radius=0.5, height=1.0, sections=256)  # slivers on its caps
    return {
        "soup": trimesh.Trimesh(soup.reshape(-1, 3), np.arange(len(soup) * 3).reshape(-1, 3)),
        "thin plate": plate,
        "huge sphere and tiny box": mixed,
        "cylinder fan": fan,
    }


@pytest.mark.parametrize("name", list(_meshes()))
def test_surface_distance_refined_everywhere_equals_brute_force(name: str) -> None:
    mesh = _meshes()[name]
    rng = np.random.default_rng(1)
    samples, faces = sample_with_faces(mesh, 400, 0)
    points = _query_points(rng, np.asarray(mesh.triangles), 40)
    got = Surface(mesh, samples, faces).distances(points, refine_above=0.0, max_exact=len(points))
    want = brute_to_mesh(points, np.asarray(mesh.triangles))
    assert np.abs(got - want).max() <= _tolerance(points, mesh.vertices)


@pytest.mark.parametrize("name", list(_meshes()))
def test_surface_distance_is_never_below_the_brute_force(name: str) -> None:
    """With the default refinement (some points keep their upper bound) a surface never
    looks closer than it is; nor by the triangles around the nearest vertex."""
    mesh = _meshes()[name]
    rng = np.random.default_rng(2)
    samples, faces = sample_with_faces(mesh, 400, 0)
    points = _query_points(rng, np.asarray(mesh.triangles), 40)
    got = to_surface(points, mesh, samples, faces, max_exact=10)
    fans = Surface(mesh, samples, faces).fan_bounds(points)
    want = brute_to_mesh(points, np.asarray(mesh.triangles))
    assert np.all(got >= want - _tolerance(points, mesh.vertices))
    assert np.all(fans >= want - _tolerance(points, mesh.vertices))


def test_thin_plate_reads_its_thickness_not_the_sampling_gap() -> None:
    """The far face of a plate 1e-2 thick, measured from the near face's samples, is 1e-2
    away everywhere: a point-to-point distance to a sparse sample would read more."""
    near = trimesh.creation.box(bounds=[[0, 0, 0], [1, 1, 1e-3]])
    far = trimesh.creation.box(bounds=[[0, 0, 1e-2], [1, 1, 1.1e-2]])
    points, _ = sample_with_faces(near, 2000, 0)
    top = points[points[:, 2] > 1e-3 - 1e-12]
    samples, faces = sample_with_faces(far, 300, 1)
    got = Surface(far, samples, faces).distances(top, refine_above=0.0, max_exact=len(top))
    assert np.allclose(got, 9e-3, atol=1e-12)


def test_farthest_vertex_reads_a_needle_tip() -> None:
    box = trimesh.creation.box(extents=[1, 1, 1])
    needle = trimesh.Trimesh(
        [[0.5, 0, 0], [0.5, 1e-6, 0], [0.5, 0, 1e-6], [0.8, 0, 0]], [[0, 1, 3], [0, 3, 2]]
    )
    spiked = trimesh.util.concatenate([box, needle])
    samples, faces = sample_with_faces(box, 2000, 0)
    assert farthest_vertex(spiked, Surface(box, samples, faces)) == pytest.approx(0.3, abs=1e-12)


@pytest.mark.parametrize("name", list(_meshes()))
@pytest.mark.parametrize("max_exact", [0, 5, 10_000])
def test_farthest_is_the_largest_distance(name: str, max_exact: int) -> None:
    """`farthest` skips the points that cannot raise the maximum: the same maximum as
    measuring every point, whatever the floor; with a plain cap (``exact_above=inf``) the
    same as the capped `distances`, and by default the exact one however low the cap."""
    mesh = _meshes()[name]
    rng = np.random.default_rng(3)
    samples, faces = sample_with_faces(mesh, 400, 0)
    surface = Surface(mesh, samples, faces)
    points = _query_points(rng, np.asarray(mesh.triangles), 40)
    points = points[np.abs(points).max(axis=1) < 10]  # near ones: the maximum is contested
    capped = surface.distances(points, max_exact=max_exact)
    every = surface.distances(points, max_exact=len(points))
    for floor in (0.0, float(np.median(every)), float(every.max()) + 1.0):
        got = surface.farthest(points, floor=floor, max_exact=max_exact, exact_above=np.inf)
        assert got == max(floor, float(capped.max()))
        # Past the cap, every point that could raise the maximum is measured exactly.
        got = surface.farthest(points, floor=floor, max_exact=max_exact)
        assert got == max(floor, float(every.max()))


def _reordered(mesh: trimesh.Trimesh, rng: np.random.Generator) -> trimesh.Trimesh:
    """The same triangles, listed in another order, each from another corner, with the
    vertices renumbered: no array is equal, every triangle is."""
    perm = rng.permutation(len(mesh.vertices))
    faces = np.argsort(perm)[mesh.faces]  # vertex k moves to where perm holds k
    faces = np.roll(faces, 1, axis=1)[rng.permutation(len(faces))]
    return trimesh.Trimesh(mesh.vertices[perm], faces, process=False)


def _raised(mesh: trimesh.Trimesh) -> np.ndarray:
    """Mask: the highest third of the vertices."""
    return mesh.vertices[:, 2] > np.quantile(mesh.vertices[:, 2], 2 / 3)


def _part_moved(mesh: trimesh.Trimesh) -> trimesh.Trimesh:
    """The `_raised` vertices up by 1e-12: the triangles they touch are not shared any
    more (equal means bit for bit, not close)."""
    vertices = mesh.vertices.copy()
    vertices[_raised(mesh), 2] += 1e-12
    return trimesh.Trimesh(vertices, mesh.faces, process=False)


@pytest.mark.parametrize("name", list(_meshes()))
def test_coincidence_finds_exactly_the_triangles_and_vertices_both_meshes_have(
    name: str,
) -> None:
    """Shared triangles by their three corners, whatever the order and numbering; a point
    drawn on a shared triangle is on the other surface (the brute force reads 0, up to
    rounding), and a shared vertex too; nothing is shared that is not."""
    mesh = _meshes()[name]
    rng = np.random.default_rng(4)
    same = coincidence(mesh, mesh.copy())
    assert same.faces_a.all() and same.faces_b.all()
    assert same.vertices_a[np.unique(mesh.faces)].all()
    other = _reordered(mesh, rng)
    found = coincidence(mesh, other)
    assert found.faces_a.all() and found.faces_b.all() and found.vertices_b.all()
    moved = _part_moved(mesh)
    found = coincidence(mesh, moved)
    touched = _raised(mesh)[mesh.faces].any(axis=1)
    assert np.array_equal(found.faces_a, ~touched) and np.array_equal(found.faces_b, ~touched)
    assert np.array_equal(found.vertices_a, ~_raised(mesh))
    kept = np.asarray(mesh.triangles)[found.faces_a]
    assert len(kept)
    u, v = rng.uniform(0, 1, size=(2, len(kept), 1))
    u, v = np.where(u + v > 1, 1 - u, u), np.where(u + v > 1, 1 - v, v)
    points = kept[:, 0] + u * (kept[:, 1] - kept[:, 0]) + v * (kept[:, 2] - kept[:, 0])
    # The oracle's own projection loses digits on the thin plate's 1e-4 slivers (4e-9).
    scale = 10 * _tolerance(mesh.vertices)
    assert brute_to_mesh(points, np.asarray(moved.triangles)).max() <= scale
    shared = mesh.vertices[found.vertices_a]
    assert brute_to_mesh(shared, np.asarray(moved.triangles)).max() <= scale


def test_coincidence_ignores_the_sign_of_zero_and_shares_nothing_not_finite() -> None:
    box = trimesh.creation.box(extents=[1, 1, 1])
    flipped = trimesh.Trimesh(box.vertices.copy(), box.faces, process=False)
    flipped.vertices[0, 0] = 0.0
    box.vertices[0, 0] = -0.0
    assert coincidence(box, flipped).faces_a.all()
    broken = trimesh.Trimesh(box.vertices.copy(), box.faces, process=False)
    broken.vertices[0] = np.nan
    for found in (coincidence(broken, broken.copy()), coincidence(box, broken)):
        assert not found.faces_a.any() and not found.vertices_a.any()


def test_hausdorff_of_a_part_sharing_most_triangles_equals_the_brute_force() -> None:
    """A sphere against itself with its top cap raised 0.05: the triangles away from the
    cap are shared (their points read 0 without a search), the others are measured; the
    Hausdorff distance (samples both ways and vertices) is the brute force's, exactly."""
    sphere = trimesh.creation.icosphere(subdivisions=3)
    vertices = sphere.vertices.copy()
    vertices[vertices[:, 2] > 0.8, 2] += 0.05
    raised = trimesh.Trimesh(vertices, sphere.faces, process=False)
    assert 0 < coincidence(sphere, raised).faces_a.mean() < 1
    got = surface_metrics(sphere, raised, n_points=600, seed=3)
    pa, _ = sample_with_faces(sphere, 600, 3)
    pb, _ = sample_with_faces(raised, 600, 4)
    want = max(
        brute_to_mesh(np.concatenate([pa, sphere.vertices]), np.asarray(raised.triangles)).max(),
        brute_to_mesh(np.concatenate([pb, raised.vertices]), np.asarray(sphere.triangles)).max(),
    )
    assert got.hausdorff == pytest.approx(want, abs=1e-12)
    assert got.hausdorff > 0.01
