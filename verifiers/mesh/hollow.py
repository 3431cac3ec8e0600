"""Hollowed parts: the outside of a part with most of its material taken away.

A shell of a part whose wall is thin next to the part has every outer face where the part
has it, so surface metrics (Chamfer, F-score, Hausdorff) read it as the part: the inner
surface lies one wall thickness from the outer one. Only the volume tells it apart (a
block hollowed to a 0.1 mm wall measured IoU 0.018 and scored 0.667 while IoU was
averaged in). `hollowed` makes such parts for the exploit generators and the tests.

The void is the part eroded by the wall thickness ``t``: the part intersected with six
copies of itself moved by ``t`` along each axis (a point stays when every point ``t`` away
along an axis is inside the part), so it lies inside the part with a wall of at least
about ``t / sqrt(3)``. A vent is a thin cylinder from the void's centre out through the
wall, so the shell stays one surface (no second shell for topology to count).

    >>> import trimesh
    >>> block = trimesh.creation.box(extents=[40, 20, 10])
    >>> shell = hollowed(block, wall=0.1, vent=0.2)
    >>> round(shell.volume / block.volume, 3)  # 3.5 % of the material left
    0.035

`layered_skin` (red team rt3d3) makes a skin whose *signed* volume is the part's: the part's
surface and a copy scaled by `inner` about the centroid (turned inward) enclose a skin; `k`
such skins, each moved a hair, are joined into one closed, consistently wound shell of
genus 0 by tubes between matching faces. Every point of it lies within the skin, yet the
divergence theorem counts the skin `k` times: a surface that passes through itself.

    >>> skin = layered_skin(block, inner=0.997)
    >>> skin.is_watertight, skin.is_winding_consistent, len(skin.split(only_watertight=False))
    (True, True, 1)
    >>> round(skin.volume / block.volume, 1)
    1.0
"""

from __future__ import annotations

import numpy as np
import trimesh

__all__ = ["hollowed", "layered_skin"]


def _boolean(kind: str, meshes: list[trimesh.Trimesh]) -> trimesh.Trimesh:
    return getattr(trimesh.boolean, kind)(meshes, engine="manifold")


def _void(mesh: trimesh.Trimesh, wall: float) -> trimesh.Trimesh:
    copies = [mesh]
    for axis in range(3):
        for sign in (-1.0, 1.0):
            moved = mesh.copy()
            shift = np.zeros(3)
            shift[axis] = sign * wall
            moved.apply_translation(shift)
            copies.append(moved)
    return _boolean("intersection", copies)


def hollowed(mesh: trimesh.Trimesh, wall: float, vent: float | None = None) -> trimesh.Trimesh:
    """`mesh` with its inside removed, leaving a wall about `wall` thick; with `vent`, a
    hole of that diameter from the void out through the top wall (see the module
    docstring). Raises ValueError when the wall leaves no void (a part thinner than it)."""
    void = _void(mesh, wall)
    if len(void.faces) == 0 or void.volume <= 0:
        raise ValueError(f"a {wall} wall leaves no void in this part")
    shell = _boolean("difference", [mesh, void])
    if vent is None:
        return shell
    centre = void.centroid
    height = float(mesh.bounds[1][2] - centre[2]) + wall
    drill = trimesh.creation.cylinder(vent / 2, height * 2, sections=12)
    drill.apply_translation(centre + np.array([0.0, 0.0, height]))
    return _boolean("difference", [shell, drill])


def _tube(a: np.ndarray, b: np.ndarray, points: np.ndarray) -> list[list[int]]:
    """Six triangles joining the hole left by face `a` to the hole left by face `b` (of a
    shell wound the other way), each corner of `a` paired with the nearest of `b`'s taken
    in reverse order, so every edge is still used once each way."""
    turns = [[int(b[(r - i) % 3]) for i in range(3)] for r in range(3)]
    bb = min(turns, key=lambda t: float(np.linalg.norm(points[a] - points[t], axis=1).sum()))
    found = []
    for i in range(3):
        a0, a1, b0, b1 = int(a[i]), int(a[(i + 1) % 3]), bb[i], bb[(i + 1) % 3]
        found += [[a0, a1, b1], [a0, b1, b0]]
    return found


def layered_skin(mesh: trimesh.Trimesh, inner: float, layers: int | None = None) -> trimesh.Trimesh:
    """The skin between `mesh` and its copy scaled by `inner`, repeated `layers` times
    (by default as often as makes its signed volume the part's), joined into one
    self-overlapping shell (see the module docstring)."""
    if not 0 < inner < 1 or not mesh.is_volume or len(mesh.faces) < 2:
        raise ValueError("need a closed, outward part and 0 < inner < 1")
    if layers is not None:
        return _layered(mesh, inner, layers)
    guess = max(1, round(1 / (1 - inner**3)))
    first = _layered(mesh, inner, guess)  # the tubes cut some volume: one correction
    return _layered(mesh, inner, max(1, round(guess * mesh.volume / first.volume)))


def _layered(mesh: trimesh.Trimesh, inner: float, layers: int) -> trimesh.Trimesh:
    step = np.array([1.0, 1.3, 0.7]) * 2e-6 * float(mesh.scale)
    faces = np.asarray(mesh.faces)
    shells = []
    for j in range(layers):
        outer = np.asarray(mesh.vertices) + j * step
        shrunk = (np.asarray(mesh.vertices) - mesh.centroid) * inner + mesh.centroid + j * step
        shells += [(outer, faces), (shrunk, faces[:, ::-1])]
    points = np.concatenate([v for v, _ in shells])
    starts = np.cumsum([0] + [len(v) for v, _ in shells])
    cut: list[set[int]] = [set() for _ in shells]
    tubes: list[list[int]] = []
    for s in range(len(shells) - 1):  # shell s uses face s as A, shell s + 1 face s as B
        index = s % len(faces)
        cut[s].add(index)
        cut[s + 1].add(index)
        a, b = shells[s][1][index] + starts[s], shells[s + 1][1][index] + starts[s + 1]
        tubes += _tube(a, b, points)
    kept = [
        np.delete(f, sorted(c), axis=0) + starts[i]
        for i, ((_, f), c) in enumerate(zip(shells, cut, strict=True))
    ]
    return trimesh.Trimesh(points, np.concatenate([*kept, np.array(tubes)]), process=False)
