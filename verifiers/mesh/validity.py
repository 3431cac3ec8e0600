"""Validity gates: is this mesh a solid a CAD tool or a printer would accept?

A mesh can score well on surface distances and still be unusable: a triangle soup, a shell
with a hole, faces wound both ways. The gates, each a plain yes/no measured by trimesh:

- **watertight**: every edge is shared by exactly two faces (a closed 2-manifold surface);
- **consistent winding**: neighbouring faces agree on orientation;
- **outward**: the signed volume is positive (normals point out, not in);
- **components**: the number of connected pieces equals what the task expects (1 by
  default); a soup of 100 loose triangles has 100;
- **no degenerate faces**: no triangle of (numerically) zero area;
- **finite vertices**: checked when loading (`load_mesh` refuses NaN and infinity).

    >>> import trimesh
    >>> report = check_validity(trimesh.creation.box())
    >>> report.problems()
    []
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import trimesh

__all__ = ["Validity", "check_validity"]

_DEGENERATE_REL_HEIGHT = 1e-9
"""A face is degenerate when its smallest height is below this fraction of the mesh's
scale: zero area up to float rounding, not merely a thin sliver (CAD exports are full of
legitimate slivers, e.g. `7_8ths_cube.stl` has one with a 0.00002 degree angle)."""


@dataclass(frozen=True)
class Validity:
    """What the gates measured on one mesh (plain values, JSON-ready)."""

    faces: int
    vertices: int
    watertight: bool
    winding_consistent: bool
    outward: bool
    components: int
    degenerate_faces: int

    def problems(self, expected_components: int | None = 1) -> list[str]:
        """Each failed gate, as a sentence a model could act on; empty when valid."""
        found: list[str] = []
        if not self.watertight:
            found.append("mesh is not watertight (some edges do not join exactly two faces)")
        if not self.winding_consistent:
            found.append("face winding is inconsistent (neighbouring normals disagree)")
        elif self.watertight and not self.outward:
            found.append("normals point inward (signed volume is not positive)")
        if expected_components is not None and self.components != expected_components:
            found.append(f"mesh has {self.components} components; expected {expected_components}")
        if self.degenerate_faces:
            found.append(f"{self.degenerate_faces} degenerate (zero-area) faces")
        return found

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def check_validity(mesh: trimesh.Trimesh) -> Validity:
    """Measure every gate on a loaded (vertex-merged) mesh."""
    watertight = bool(mesh.is_watertight)
    winding = bool(mesh.is_winding_consistent)
    outward = bool(watertight and winding and mesh.volume > 0)
    height = _DEGENERATE_REL_HEIGHT * max(float(mesh.scale), 1e-300)
    degenerate = int(np.count_nonzero(~mesh.nondegenerate_faces(height=height)))
    components = int(mesh.body_count)  # pieces joined through shared vertices
    return Validity(
        faces=len(mesh.faces),
        vertices=len(mesh.vertices),
        watertight=watertight,
        winding_consistent=winding,
        outward=outward,
        components=components,
        degenerate_faces=degenerate,
    )
