"""Metamorphic relations of the `mesh_compare` verifier (see
`rewardsmith.verifiers.metamorphic`).

The completion is the path of a mesh file; a rewrite loads it, changes the mesh and writes
the result beside the verifier's ``allowed_root`` (or a scratch folder), named by its
content so that the same chain writes the same file. The part stays the same when it is
re-tessellated, its faces and vertices reordered, moved, or (where the verifier aligns
poses) rotated; it is another part when hollowed to a thin wall with a vent (most of its
material gone, issue 32), its holes and notches filled (its convex hull), stretched
along one axis, its thinnest side grown by a few percent and (where the verifier aligns)
turned a quarter (the pose's slack must not hide it; red team rt3d, class A), or hollowed
to about half its material with walls a quarter of its thinnest side (inside the
Hausdorff pass level on a thin part: it earns at most its material ramp; class B), or
its thinnest side made 5-20 % thinner under studs that keep its box (class C), or made a
thin skin layered a hundred times into one shell that passes through itself, so its signed
volume is the part's (red team rt3d3: `hollow.layered_skin`); a
second object beside it, a loose piece inside it or a second copy over it must not lift a
wrong part.

    >>> import os, tempfile, trimesh
    >>> from rewardsmith.verifiers.types import Sample
    >>> path = os.path.join(tempfile.mkdtemp(), "box.stl")
    >>> _ = trimesh.creation.box(extents=[4, 2, 1]).export(path)
    >>> rel = {r.name: r for r in relations(None)}
    >>> hollow = rel["mesh/hollowed"](Sample(id="q", completion=path, reference=path), 0)
    >>> round(trimesh.load(hollow.completion).volume / 8, 2) < 0.5
    True
"""

from __future__ import annotations

import hashlib
import os
import random
import tempfile
from collections.abc import Callable
from functools import partial
from typing import Any

import numpy as np

from rewardsmith.verifiers.metamorphic import Kind, Relation, Rewrite, rewritten
from rewardsmith.verifiers.types import Sample

__all__ = ["relations"]

MeshChange = Callable[[Any, random.Random], Any]
"""A trimesh in, the changed trimesh out (None where it does not apply)."""


def _scratch(verifier: object) -> str:
    root = getattr(verifier, "allowed_root", None)
    return os.path.join(root or tempfile.gettempdir(), "rewardsmith-relations")


def _on_mesh(change: MeshChange, folder: str) -> Rewrite:
    def rewrite(sample: Sample, rng: random.Random) -> Sample | None:
        import trimesh

        path = sample.completion
        if not isinstance(path, str) or not os.path.isfile(path):
            return None
        try:
            mesh = trimesh.load(path, force="mesh")
        except Exception:  # a file trimesh cannot read is no part to rewrite
            return None
        changed = change(mesh, rng)
        if changed is None:
            return None
        data = changed.export(file_type="stl")
        os.makedirs(folder, exist_ok=True)
        out = os.path.join(folder, hashlib.sha256(data).hexdigest()[:16] + ".stl")
        if not os.path.exists(out):
            with open(out, "wb") as handle:
                handle.write(data)
        return rewritten(sample, out)

    return rewrite


# ----------------------------------------------------------------------------- preserving


def _retessellated(mesh: Any, rng: random.Random) -> Any:
    return mesh.subdivide() if len(mesh.faces) < 50_000 else None


def _reordered(mesh: Any, rng: random.Random) -> Any:
    import trimesh

    order = list(range(len(mesh.faces)))
    rng.shuffle(order)
    faces = np.asarray(mesh.faces)[order]
    shift = rng.randrange(3)
    return trimesh.Trimesh(mesh.vertices, np.roll(faces, shift, axis=1), process=False)


def _moved(mesh: Any, rng: random.Random) -> Any:
    moved = mesh.copy()
    moved.apply_translation([rng.uniform(-5, 5) for _ in range(3)])
    return moved


def _posed(mesh: Any, rng: random.Random) -> Any:
    import trimesh

    posed = mesh.copy()
    axis = [rng.uniform(-1, 1) for _ in range(3)]
    angle = rng.choice((np.pi / 2, np.pi, rng.uniform(0.3, 2.8)))
    posed.apply_transform(trimesh.transformations.rotation_matrix(angle, axis, mesh.centroid))
    return posed


# ----------------------------------------------------------------------------- changing


def _hollowed(mesh: Any, rng: random.Random) -> Any:
    """A thin shell of the part with a vent to its cavity: one shell, the same outside,
    most of the material gone (issue 32's hollowed block)."""
    import trimesh

    if not mesh.is_volume:
        return None
    wall = rng.choice((0.9, 0.95, 0.98, 0.99, 0.995, 0.998))
    inner = mesh.copy()
    inner.apply_transform(trimesh.transformations.scale_matrix(wall, mesh.centroid))
    lo, hi = mesh.bounds
    side = float(min(hi - lo)) * rng.choice((0.01, 0.05))
    vent = trimesh.creation.box(extents=[side, side, float(hi[2] - mesh.centroid[2]) * 1.2])
    vent.apply_translation(mesh.centroid + np.array([0, 0, float(hi[2] - mesh.centroid[2]) * 0.6]))
    try:
        return trimesh.boolean.difference([mesh, trimesh.boolean.union([inner, vent])])
    except Exception:  # no boolean engine for this mesh: the relation does not apply
        return None


def _thin_side_grown(mesh: Any, rng: random.Random, turn: bool) -> Any:
    """The thinnest side grown by 5 % of itself or 0.2-0.35 % of the longest side, which
    is more (within the old pose slack of 0.4 %), and with `turn` a quarter turn."""
    import trimesh

    sides = mesh.extents
    thin, longest = int(np.argmin(sides)), float(sides.max())
    growth = max(0.05 * float(sides[thin]), rng.choice((0.002, 0.003, 0.0035)) * longest)
    factors = np.ones(3)
    factors[thin] = 1.0 + growth / float(sides[thin])
    grown = mesh.copy()
    grown.apply_transform(np.diag([*factors, 1.0]))
    if turn:
        axis = np.zeros(3)
        axis[(thin + rng.choice((1, 2))) % 3] = 1.0  # about a long side: the thin one moves
        grown.apply_transform(trimesh.transformations.rotation_matrix(np.pi / 2, axis))
    return grown


def padded_thin_side(mesh: Any, thinner: float) -> Any:
    """`mesh` made `thinner` (real units) along its thinnest side, its bounding box kept by
    eight studs 1 % of its longest side across, `thinner / 2` proud of each face at the
    quarter points of the other two sides (red team rt3d2, class C). None where the
    boolean engine refuses it."""
    import trimesh

    sides = np.asarray(mesh.extents, dtype=float)
    axis = int(np.argmin(sides))
    centre = mesh.bounds.mean(axis=0)
    scale = np.eye(4)
    scale[axis, axis] = (sides[axis] - thinner) / sides[axis]
    body = mesh.copy()
    body.apply_translation(-centre)
    body.apply_transform(scale)
    others = [k for k in range(3) if k != axis]
    studs = []
    for a in (-1, 1):
        for b in (-1, 1):
            for side in (-1, 1):
                size = np.full(3, 0.01 * float(sides.max()))
                size[axis] = thinner / 2 + 1e-3 * sides[axis]
                stud = trimesh.creation.box(extents=size)
                where = np.zeros(3)
                where[others[0]] = a * sides[others[0]] / 4
                where[others[1]] = b * sides[others[1]] / 4
                where[axis] = side * (sides[axis] / 2 - size[axis] / 2)
                stud.apply_translation(where)
                studs.append(stud)
    try:
        padded = trimesh.boolean.union([body, *studs], engine="manifold")
    except Exception:  # no boolean engine for this mesh: the relation does not apply
        return None
    padded.apply_translation(centre)
    return padded


def _thin_side_padded(mesh: Any, rng: random.Random) -> Any:
    """The thinnest side 5-20 % thinner under studs that keep the box (class C)."""
    if not mesh.is_volume or len(mesh.faces) > 50_000:
        return None
    return padded_thin_side(mesh, rng.choice((0.05, 0.1, 0.2)) * float(mesh.extents.min()))


THIN_HOLLOW_MOST = 0.6
"""`_thin_hollowed` keeps at most this much of the material (else it does not apply)."""


def _thin_hollowed(mesh: Any, rng: random.Random) -> Any:
    """Walls a quarter of the thinnest side, vented: about half the material of a plate,
    every outer face in place (class B); None where more than `THIN_HOLLOW_MOST` stays."""
    from rewardsmith.verifiers.mesh.hollow import hollowed

    if not mesh.is_volume or len(mesh.faces) > 50_000:
        return None
    thin = float(mesh.extents.min())
    try:
        shell = hollowed(mesh, rng.choice((0.22, 0.25, 0.28)) * thin, vent=0.2 * thin)
    except Exception:  # no void, or no boolean for this mesh: the relation does not apply
        return None
    return shell if shell.volume <= THIN_HOLLOW_MOST * mesh.volume else None


def _layered_skin(mesh: Any, rng: random.Random) -> Any:
    """A skin 0.3-0.5 % of the part's size deep, layered until its signed volume is the
    part's, as one self-overlapping shell (red team rt3d3)."""
    from rewardsmith.verifiers.mesh.hollow import layered_skin

    if not mesh.is_volume or len(mesh.faces) > 2_000:
        return None
    return layered_skin(mesh, inner=rng.choice((0.997, 0.995)))


def _filled(mesh: Any, rng: random.Random) -> Any:
    hull = mesh.convex_hull
    return hull if mesh.is_volume and hull.volume > 1.05 * mesh.volume else None


def _stretched(mesh: Any, rng: random.Random) -> Any:
    stretched = mesh.copy()
    factors = [1.0, 1.0, 1.0]
    factors[rng.randrange(3)] = rng.choice((0.7, 1.3, 1.5))
    stretched.apply_scale(factors)
    return stretched


# ----------------------------------------------------------------------------- dressing


def _beside(mesh: Any, rng: random.Random) -> Any:
    import trimesh

    lo, hi = mesh.bounds
    extra = trimesh.creation.box(extents=(hi - lo) * rng.choice((0.05, 0.2)))
    extra.apply_translation(hi + (hi - lo) * rng.uniform(0.5, 2.0))
    return trimesh.util.concatenate([mesh, extra])


def _inside(mesh: Any, rng: random.Random) -> Any:
    import trimesh

    lo, hi = mesh.bounds
    piece = trimesh.creation.box(extents=(hi - lo) * 0.05)
    piece.apply_translation(mesh.centroid)
    return trimesh.util.concatenate([mesh, piece]) if mesh.contains([mesh.centroid])[0] else None


def _doubled(mesh: Any, rng: random.Random) -> Any:
    import trimesh

    return trimesh.util.concatenate([mesh, mesh.copy()])


def relations(verifier: object) -> list[Relation]:
    """The relations of `mesh_compare`; a rotation is preserving only where the verifier
    aligns poses (``align``), else the pose is part of the task."""
    folder = _scratch(verifier)
    table: list[tuple[str, Kind, MeshChange]] = [
        ("retessellated", "preserving", _retessellated),
        ("reordered", "preserving", _reordered),
        ("moved", "preserving", _moved),
        ("hollowed", "changing", _hollowed),
        ("filled", "changing", _filled),
        ("stretched", "changing", _stretched),
        ("thin_hollowed", "changing", _thin_hollowed),
        ("layered_skin", "changing", _layered_skin),
        ("object_beside", "dressing", _beside),
        ("piece_inside", "dressing", _inside),
        ("doubled", "dressing", _doubled),
    ]
    aligns = bool(getattr(verifier, "align", False))
    if getattr(verifier, "check_scale", True):  # scale free, a thicker side may be the part
        table.append(("thin_side_grown", "changing", partial(_thin_side_grown, turn=aligns)))
        table.append(("thin_side_padded", "changing", _thin_side_padded))
    if aligns:
        table.append(("posed", "preserving", _posed))
    # A part missing most of its material is no part (0), one missing about half earns at
    # most its material ramp (under a quarter); a stretched or thickened one is another
    # part where the size is checked; a filled one may keep partial credit for its outline.
    sized = 0.0 if getattr(verifier, "check_scale", True) else None
    limits = {
        "hollowed": 0.0,
        "thin_hollowed": 0.25,
        "layered_skin": 0.0,
        "stretched": sized,
        "thin_side_grown": 0.0,
        "thin_side_padded": 0.0,
    }
    return [
        Relation(f"mesh/{name}", kind, _on_mesh(f, folder), limit=limits.get(name))
        for name, kind, f in table
    ]
