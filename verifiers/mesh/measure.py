"""The worker side of mesh comparison: load two files, gate, normalise, measure.

`measure_pair` runs in a killable worker process (`call_with_limits`), never in the scoring
process: a hostile mesh that makes trimesh hang or allocate without bound costs only that
worker. It is module-level so it pickles by name, and it returns plain JSON-ready values.
"""

from __future__ import annotations

import copy
import hashlib
from collections import OrderedDict
from pathlib import Path
from typing import Any

import trimesh

from rewardsmith.verifiers.mesh.align import align_pair, normalise
from rewardsmith.verifiers.mesh.load import MeshLoadError, load_mesh
from rewardsmith.verifiers.mesh.metrics import surface_metrics
from rewardsmith.verifiers.mesh.sides import aligned_sides, surface_spread
from rewardsmith.verifiers.mesh.thresholds import Thresholds
from rewardsmith.verifiers.mesh.topology import measure_topology
from rewardsmith.verifiers.mesh.validity import check_validity
from rewardsmith.verifiers.mesh.volume import iou, volume_ratio

__all__ = ["measure_pair"]


def _load(path: str, settings: dict[str, Any]) -> tuple[trimesh.Trimesh | None, dict[str, Any]]:
    try:
        mesh = load_mesh(
            path, max_bytes=settings["max_file_bytes"], max_faces=settings["max_faces"]
        )
    except MeshLoadError as exc:
        return None, {"load_error": str(exc)}
    return mesh, {
        "validity": check_validity(mesh).to_dict(),
        "topology": measure_topology(mesh).to_dict(),
        "extents": mesh.extents.tolist(),
        "spread": surface_spread(mesh),
    }


_REFERENCES = 4
"""References kept loaded and gated per worker process (`_load_reference`)."""

_references: OrderedDict[tuple[Any, ...], tuple[trimesh.Trimesh | None, dict[str, Any]]]
_references = OrderedDict()


def _load_reference(
    path: str, settings: dict[str, Any]
) -> tuple[trimesh.Trimesh | None, dict[str, Any]]:
    """`_load` for the reference, kept for the next call: a task's reference file is the
    same for every sample scored against it, and the worker stays warm between samples.
    Keyed on the file's bytes (every accepted format holds its geometry in the one file),
    its name (the loader and the messages read it) and the limits, so a changed file is
    loaded again. The mesh is shared: nothing here modifies it (each
    use copies it first: `normalise`); the figures are copied out."""
    file = Path(path)
    if not file.is_file() or file.stat().st_size > settings["max_file_bytes"]:
        return _load(path, settings)  # let `load_mesh` say what is wrong
    digest = hashlib.sha256(file.read_bytes()).digest()
    key = (digest, file.name, settings["max_file_bytes"], settings["max_faces"])
    if key not in _references:
        _references[key] = _load(path, settings)
        while len(_references) > _REFERENCES:
            _references.popitem(last=False)
    _references.move_to_end(key)
    mesh, info = _references[key]
    return mesh, copy.deepcopy(info)


def _figures(a: trimesh.Trimesh, b: trimesh.Trimesh, settings: dict[str, Any]) -> dict[str, Any]:
    metrics = surface_metrics(
        a,
        b,
        n_points=settings["n_points"],
        seed=settings["seed"],
        threshold=settings["fscore_tau"],
        levels=Thresholds(**settings["thresholds"]),
    )
    value, method = iou(a, b, settings["voxel_resolution"])
    return {
        **metrics.to_dict(),
        "iou": value,
        "iou_method": method,
        "volume_ratio": volume_ratio(a, b),
    }


def _passes(figures: dict[str, Any], settings: dict[str, Any]) -> bool:
    ramps = Thresholds(**settings["thresholds"]).ramps(figures)
    return all(r >= 1.0 for r in ramps.values())


def measure_pair(candidate: str, reference: str, settings: dict[str, Any]) -> dict[str, Any]:
    """Everything the verdict needs, as plain values.

    ``{"candidate": {...}, "reference": {...}, "raw": {...} | None, "aligned": {...} | None}``
    where each side holds ``validity``, ``topology`` and ``extents`` (or ``load_error``),
    ``raw`` holds the metrics on the two meshes normalised in place, and ``aligned`` (when
    ``settings["align"]``) the metrics after alignment, with ``extents``: the candidate's
    real size in the reference's axes once rotated onto it, and ``pose_slack``: how much
    each may read long from the rotation its principal axes leave free (`sides.py`). The
    search is skipped (``aligned`` None, ``align_skipped`` says why) when the stated pose
    passes already. Each side also holds ``spread``: its surface's spread along each
    principal axis (`sides.surface_spread`, pose free).
    """
    cand, cand_info = _load(candidate, settings)
    ref, ref_info = _load_reference(reference, settings)
    result: dict[str, Any] = {"candidate": cand_info, "reference": ref_info}
    result["raw"] = result["aligned"] = None
    if cand is None or ref is None:
        return result
    result["raw"] = {**_figures(normalise(cand), normalise(ref), settings), "rotated": False}
    result["raw"]["extents"] = cand_info["extents"]
    if settings["align"] and _passes(result["raw"], settings):
        # The stated pose already earns every ramp: the search cannot score higher, and a
        # tie keeps the raw pose (`compare._best_pose`), so the verdict is the same.
        result["align_skipped"] = "the stated pose passes every metric"
    elif settings["align"]:
        aligned = align_pair(cand, ref, seed=settings["seed"])
        level = Thresholds(**settings["thresholds"]).hausdorff_pass
        sides = aligned_sides(cand, ref, aligned.rotation, slack_angle=level)
        result["aligned"] = {
            **_figures(aligned.candidate, aligned.reference, settings),
            "rotated": True,
            "extents": sides.extents,
            "pose_slack": sides.slack,
            "pinned_axes": sides.pinned,
        }
    return result
