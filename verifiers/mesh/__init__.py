"""Mesh and CAD verifiers: validity gates, shape metrics, and scoring model-written geometry.

- `MeshCompare` (``mesh_compare``): a mesh file against a reference mesh.
- `CadCode` (``cad_code``): run model-written geometry code in the sandbox, then compare
  the mesh it writes.

The metric functions (`surface_metrics`, `iou`, `align_pair`, `normalise`,
`check_validity`, `load_mesh`) are public for benchmarks and analysis. See docs/3d.md.
"""

from rewardsmith.verifiers.mesh.align import Alignment, align_pair, normalise
from rewardsmith.verifiers.mesh.compare import MeshCompare
from rewardsmith.verifiers.mesh.load import MeshLoadError, load_mesh
from rewardsmith.verifiers.mesh.metrics import SurfaceMetrics, surface_metrics
from rewardsmith.verifiers.mesh.thresholds import Thresholds
from rewardsmith.verifiers.mesh.topology import Topology, measure_topology
from rewardsmith.verifiers.mesh.validity import Validity, check_validity
from rewardsmith.verifiers.mesh.volume import iou, iou_exact, iou_voxel

__all__ = [
    "Alignment",
    "MeshCompare",
    "MeshLoadError",
    "SurfaceMetrics",
    "Thresholds",
    "Topology",
    "Validity",
    "align_pair",
    "check_validity",
    "iou",
    "iou_exact",
    "iou_voxel",
    "load_mesh",
    "measure_topology",
    "normalise",
    "surface_metrics",
]
