"""Put two meshes in a comparable frame: normalisation, and optional pose alignment.

**Normalisation** (as CAD-Recode does): translate the bounding-box centre to the origin and
scale uniformly so the longest side is 1, i.e. the shape fits the unit cube
``[-0.5, 0.5]^3``. This removes units and placement, so distances are fractions of the part's
size; the real dimensions are checked separately (`compare.py`).

**Pose alignment** (when the task does not fix the orientation): each mesh is centred on
the mean of an area-uniform surface sample and rotated into its principal axes (the
eigenvectors of that sample's covariance, largest first). Principal axes are defined only
up to sign, so the four proper sign flips ``diag(±1, ±1, ±1)`` with determinant +1 are
tried and the one with the lowest Chamfer distance kept; ICP (Besl & McKay, "A method for
registration of 3-D shapes", PAMI 1992; ``trimesh.registration.icp``) then refines the
rotation and translation. Each aligned mesh is normalised in that frame.

    >>> import trimesh
    >>> m = normalise(trimesh.creation.box(extents=[4, 2, 1]))
    >>> m.extents.round(3).tolist()
    [1.0, 0.5, 0.25]
"""

from __future__ import annotations

import numpy as np
import trimesh

from rewardsmith.verifiers.mesh.metrics import (
    chamfer_from_distances,
    nearest_both_ways,
    sample_points,
)

__all__ = ["align_pair", "normalise", "principal_frame"]

_FLIPS = [np.diag(s) for s in ([1, 1, 1], [1, -1, -1], [-1, 1, -1], [-1, -1, 1])]


def normalise(mesh: trimesh.Trimesh) -> trimesh.Trimesh:
    """A copy centred on its bounding-box centre and scaled so its longest side is 1."""
    out = mesh.copy()
    out.apply_translation(-out.bounds.mean(axis=0))
    longest = float(out.extents.max())
    if longest > 0:
        out.apply_scale(1.0 / longest)
    return out


def principal_frame(mesh: trimesh.Trimesh, seed: int, n: int = 4000) -> trimesh.Trimesh:
    """A copy centred on its surface centroid and rotated into its principal axes."""
    points, _ = sample_points(mesh, n, seed)
    centre = points.mean(axis=0)
    _, vectors = np.linalg.eigh(np.cov((points - centre).T))
    rotation = vectors[:, ::-1]  # columns by decreasing variance
    if np.linalg.det(rotation) < 0:
        rotation[:, 2] *= -1  # a proper rotation: never mirror the part
    transform = np.eye(4)
    transform[:3, :3] = rotation.T
    transform[:3, 3] = -rotation.T @ centre
    out = mesh.copy()
    out.apply_transform(transform)
    return out


def _chamfer(a: np.ndarray, b: np.ndarray) -> float:
    d_ab, _, d_ba, _ = nearest_both_ways(a, b)
    return chamfer_from_distances(d_ab, d_ba)


def align_pair(
    candidate: trimesh.Trimesh,
    reference: trimesh.Trimesh,
    *,
    seed: int = 0,
    icp_iterations: int = 40,
) -> tuple[trimesh.Trimesh, trimesh.Trimesh]:
    """Both meshes in the reference's principal frame, normalised, candidate ICP-aligned."""
    ref = normalise(principal_frame(reference, seed))
    cand = normalise(principal_frame(candidate, seed))
    ref_points, _ = sample_points(ref, 2000, seed)
    cand_points, _ = sample_points(cand, 2000, seed + 1)
    best = min(_FLIPS, key=lambda flip: _chamfer(cand_points @ flip.T, ref_points))
    initial = np.eye(4)
    initial[:3, :3] = best
    matrix, _, _ = trimesh.registration.icp(
        cand_points, ref_points, initial=initial, max_iterations=icp_iterations, scale=False
    )
    cand.apply_transform(matrix)
    return cand, ref
