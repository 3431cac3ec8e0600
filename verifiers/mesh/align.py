"""Put two meshes in a comparable frame: normalisation, and optional pose alignment.

**Normalisation** (as CAD-Recode and cadrille do): translate the bounding-box centre to the
origin and scale uniformly so the longest side is 1, i.e. the shape fits the unit cube
``[-0.5, 0.5]^3``. This removes units and placement, so distances are fractions of the part's
size; the real dimensions are checked separately (`compare.py`).

**Pose alignment** (when the task does not fix the orientation) finds the proper rotation
(never a mirror: a mirrored part is another part) that brings the candidate onto the
reference:

1. both surfaces are sampled, centred on their sample mean and scaled to unit RMS radius
   (so the search does not depend on the bounding box, which changes with the pose);
2. candidate rotations: the identity (the pose as given), and the candidate's principal
   axes (eigenvectors of the sample covariance) mapped onto the reference's through each of
   the 24 rotations of the cube, since principal axes are defined only up to sign and order,
   and not at all for symmetric parts (a square plate, a cylinder);
3. those within 1.5x of the best Chamfer distance (at least two, at most four: a plate's
   four flips tie on Chamfer, only its holes tell them apart) are refined by point-to-plane
   ICP (Chen & Medioni, "Object modelling by registration of multiple range images", 1992:
   each step minimises ``sum_i ((R p_i + t - q_i) . n_i)^2``, linearised in the rotation),
   which converges to the exact pose on flat CAD faces where point-to-point ICP stalls at
   the sampling gap;
4. each refined candidate, rotated, is normalised in the reference's frame (its bounding
   box there) and polished by a last ICP pass; the one whose worst point-to-surface
   deviation from the reference is least wins.

The caller also scores the unaligned pose, so alignment can never lower a score.

    >>> import trimesh
    >>> m = normalise(trimesh.creation.box(extents=[4, 2, 1]))
    >>> m.extents.round(3).tolist()
    [1.0, 0.5, 0.25]
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np
import trimesh
from scipy.spatial import cKDTree

from rewardsmith.verifiers.mesh.distance import Surface
from rewardsmith.verifiers.mesh.metrics import (
    chamfer_from_distances,
    nearest_both_ways,
    sample_with_faces,
)

__all__ = ["CUBE_ROTATIONS", "Alignment", "align_pair", "icp_point_to_plane", "normalise"]


def _cube_rotations() -> list[np.ndarray]:
    found = []
    for order in itertools.permutations(range(3)):
        for signs in itertools.product((1, -1), repeat=3):
            matrix = np.zeros((3, 3))
            matrix[range(3), order] = signs
            if np.linalg.det(matrix) > 0:
                found.append(matrix)
    return found


CUBE_ROTATIONS = _cube_rotations()
"""The 24 proper rotations that map the coordinate axes onto themselves."""


@dataclass(frozen=True)
class Alignment:
    candidate: trimesh.Trimesh
    """The candidate rotated into the reference's frame and normalised there."""
    reference: trimesh.Trimesh
    """The reference, normalised."""
    rotation: np.ndarray
    """The rotation (3 x 3) applied to the candidate's original coordinates."""


def normalise(mesh: trimesh.Trimesh) -> trimesh.Trimesh:
    """A copy centred on its bounding-box centre and scaled so its longest side is 1."""
    out = mesh.copy()
    out.apply_translation(-out.bounds.mean(axis=0))
    longest = float(out.extents.max())
    if longest > 0:
        out.apply_scale(1.0 / longest)
    return out


def _rodrigues(vector: np.ndarray) -> np.ndarray:
    angle = float(np.linalg.norm(vector))
    if angle < 1e-15:
        return np.eye(3)
    k = vector / angle
    cross = np.array([[0, -k[2], k[1]], [k[2], 0, -k[0]], [-k[1], k[0], 0]])
    return np.eye(3) + np.sin(angle) * cross + (1 - np.cos(angle)) * cross @ cross


def icp_point_to_plane(
    source: np.ndarray,
    target: np.ndarray,
    normals: np.ndarray,
    iterations: int = 30,
    source_normals: np.ndarray | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """(R, t) minimising ``sum ((R p + t - q) . n)^2`` over nearest target points q.

    With `source_normals`, a pair whose normals disagree (a point near an edge matched to
    the neighbouring face) is left out: such pairs pull a thin part's rotation off."""
    tree = cKDTree(target)
    rotation, shift = np.eye(3), np.zeros(3)
    for _ in range(iterations):
        moved = source @ rotation.T + shift
        _, index = tree.query(moved, workers=-1)
        q, n = target[index], normals[index]
        if source_normals is not None:
            agree = np.abs(np.einsum("ij,ij->i", source_normals @ rotation.T, n)) > 0.8
            if agree.sum() >= 6:
                moved, q, n = moved[agree], q[agree], n[agree]
        system = np.hstack([np.cross(moved, n), n])
        residual = -np.einsum("ij,ij->i", moved - q, n)
        step, *_ = np.linalg.lstsq(system, residual, rcond=None)
        turn = _rodrigues(step[:3])
        rotation, shift = turn @ rotation, turn @ shift + step[3:]
        if np.linalg.norm(step) < 1e-10:
            break
    return rotation, shift


def _chamfer(a: np.ndarray, b: np.ndarray) -> float:
    d_ab, _, d_ba, _ = nearest_both_ways(a, b)
    return chamfer_from_distances(d_ab, d_ba)


def _standardised(points: np.ndarray) -> np.ndarray:
    centred = points - points.mean(axis=0)
    radius = float(np.sqrt(np.mean(np.sum(centred**2, axis=1))))
    return centred / radius if radius > 0 else centred


def _principal_axes(points: np.ndarray) -> np.ndarray:
    """Rows: the principal axes, largest variance first, as a proper rotation."""
    _, vectors = np.linalg.eigh(np.cov(points.T))
    axes = vectors[:, ::-1].T.copy()
    if np.linalg.det(axes) < 0:
        axes[2] *= -1
    return axes


def _rotations(cand: np.ndarray, ref: np.ndarray, ref_normals: np.ndarray) -> list[np.ndarray]:
    """Refined rotations of the standardised candidate samples onto the reference's: the
    identity and the principal-axes guesses whose Chamfer is within 1.5x of the best (a
    plate's four flips tie on Chamfer; only its holes tell them apart), at most six."""
    to_cand, to_ref = _principal_axes(cand), _principal_axes(ref)
    guesses = [np.eye(3)] + [to_ref.T @ cube @ to_cand for cube in CUBE_ROTATIONS]
    scored = sorted((_chamfer(cand @ r.T, ref), k) for k, r in enumerate(guesses))
    chosen = [guesses[k] for cd, k in scored if cd <= 1.5 * scored[0][0]][:4]
    chosen = chosen if len(chosen) >= 2 else [guesses[k] for _, k in scored[:2]]
    return [icp_point_to_plane(cand @ g.T, ref, ref_normals, iterations=15)[0] @ g for g in chosen]


def _placed(
    candidate: trimesh.Trimesh, ref: Surface, rotation: np.ndarray, seed: int, n: int
) -> tuple[trimesh.Trimesh, np.ndarray, float]:
    """The candidate turned by `rotation`, normalised, polished by ICP onto the normalised
    reference; its total rotation and its worst sampled deviation from the reference."""
    turned = candidate.copy()
    turned.apply_transform(_homogeneous(rotation, np.zeros(3)))
    cand = normalise(turned)
    points, faces = sample_with_faces(cand, n, seed + 2)
    turn, shift = icp_point_to_plane(
        points,
        ref.samples,
        ref.mesh.face_normals[ref.sample_faces],
        source_normals=cand.face_normals[faces],
    )
    cand.apply_transform(_homogeneous(turn, shift))
    placed = Surface(cand, points @ turn.T + shift, faces)
    # The largest bounds refined: enough to rank the candidates (no verdict reads this
    # figure: the chosen pose is measured again, exactly where it counts, by `metrics`).
    worst = ref.farthest(placed.samples, max_exact=300, exact_above=np.inf)
    worst = placed.farthest(ref.samples, floor=worst, max_exact=300, exact_above=np.inf)
    return cand, turn @ rotation, worst


def align_pair(
    candidate: trimesh.Trimesh, reference: trimesh.Trimesh, *, seed: int = 0, n: int = 2000
) -> Alignment:
    """The candidate rotated onto the reference, both normalised (see the module docstring):
    of the refined rotations, the one whose worst deviation from the reference is least."""
    ref = normalise(reference)
    ref_points, ref_faces = sample_with_faces(reference, n, seed)
    cand_points, _ = sample_with_faces(candidate, n, seed + 1)
    ref_normals = reference.face_normals[ref_faces]
    placed_on = Surface(ref, *sample_with_faces(ref, n, seed + 3))  # the same for every pose
    found = [
        _placed(candidate, placed_on, rotation, seed, n)
        for rotation in _rotations(
            _standardised(cand_points), _standardised(ref_points), ref_normals
        )
    ]
    cand, rotation, _ = min(found, key=lambda f: f[2])
    return Alignment(cand, ref, rotation)


def _homogeneous(rotation: np.ndarray, shift: np.ndarray) -> np.ndarray:
    matrix = np.eye(4)
    matrix[:3, :3], matrix[:3, 3] = rotation, shift
    return matrix
