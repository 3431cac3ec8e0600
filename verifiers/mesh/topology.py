"""Topology of a closed mesh: shells, Euler characteristic, genus (through-holes).

Distances miss features that are small next to the part: a plate without its hole measured
Chamfer 1e-4. Topology does not: a through-hole is a handle of the surface.

For a closed, orientable triangle mesh with V vertices, E edges and F faces, the **Euler
characteristic** is ``chi = V - E + F``; for each closed shell ``chi = 2 - 2g`` where the
**genus** g counts its handles. For a solid CAD part, g is the number of through-holes (a
plate with two holes: g = 2, chi = -2); a blind hole, a pocket, a boss or a fillet leave it
unchanged. **Shells** are the connected pieces of the surface (faces joined by edges); a
solid with an internal void has two. Defined only for watertight meshes: on an open one
`genus` is None.

    >>> import trimesh
    >>> box = trimesh.creation.box()
    >>> measure_topology(box).to_dict()
    {'shells': 1, 'euler': 2, 'genus': 0, 'closed': True}
    >>> measure_topology(trimesh.creation.torus(1.0, 0.3)).genus
    1
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import trimesh

__all__ = ["Topology", "measure_topology"]


@dataclass(frozen=True)
class Topology:
    shells: int
    """Connected pieces of the surface (faces joined through shared edges)."""
    euler: int
    """``V - E + F`` of the whole mesh (vertices merged by position)."""
    genus: int | None
    """Handles summed over the shells (through-holes of a solid); None when not closed."""
    closed: bool

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    def differences(self, reference: Topology) -> list[str]:
        """What differs from the reference's topology, as sentences; empty when equal or
        when either side is not closed (then distances decide)."""
        if not (self.closed and reference.closed):
            return []
        found = []
        if self.shells != reference.shells:
            found.append(f"surface has {self.shells} shells; the reference has {reference.shells}")
        if self.genus != reference.genus:
            found.append(
                f"part has {self.genus} through-holes (genus); the reference has {reference.genus}"
            )
        return found


def measure_topology(mesh: trimesh.Trimesh) -> Topology:
    """Shells, Euler characteristic and genus of a loaded (vertex-merged) mesh."""
    faces = np.asarray(mesh.faces)
    used = np.unique(faces)
    edges = mesh.edges_unique
    euler = int(len(used) - len(edges) + len(faces))
    shells = len(
        trimesh.graph.connected_components(mesh.face_adjacency, nodes=np.arange(len(faces)))
    )
    closed = bool(mesh.is_watertight)
    genus = None
    if closed:
        # Summed over shells: chi = sum(2 - 2 g_i) = 2 shells - 2 g.
        twice = 2 * shells - euler
        genus = twice // 2 if twice >= 0 and twice % 2 == 0 else None
    return Topology(shells=shells, euler=euler, genus=genus, closed=closed and genus is not None)
