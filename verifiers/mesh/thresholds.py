"""Pass levels and the score of one comparison: shape metrics times feature metrics
times material.

Each metric maps to [0, 1] by a linear ramp between a fail level and a pass level,
``clip((x - fail) / (pass - fail), 0, 1)``. The **shape** part is the mean of the Chamfer,
F-score and IoU ramps (how much of the part is right); the **feature** part is the lower of
the Hausdorff and 95th-percentile ramps (whether any feature is missing, moved or resized);
the **material** part is the ramp of the part's material from `solid_gate` to
`material_pass` (1 where the reference is no solid):

    score = mean(r_chamfer, r_fscore, r_iou) * min(r_hausdorff, r_p95) * r_material

so a part whose worst deviation is past the Hausdorff fail level earns 0 however close the
rest of it is: a plate without its hole is not most of a plate with a hole. A comparison
passes when every ramp is 1.

**Material** (issue 32; red team rt3d, class B). Where the reference is a solid, the
part's material is the lower of the volume ratio ``min(V_a, V_b) / max(V_a, V_b)``
(normalised volumes) and, where the part is closed too, the IoU (`compare.material`).
Below `solid_gate` the part fails outright: a block hollowed to a 0.1 mm wall has every
outer face in place, so the surface ramps are 1, and its IoU of 0.02 only lowered the mean
to 0.667. Above the gate the material multiplies the score, as the feature ramps do: on a
thin part the inner faces of a hollow lie within the Hausdorff pass level, and a 1.6 mm
plate with 0.4 mm walls (half its material) earned 0.51 while the material was only one
of three averaged ramps; now a part earns at most its material ramp (0.024 there).

**Calibration** (`benchmarks/mesh_calibration.py`, on six parts generated with CadQuery;
table in docs/benchmarks.md): the same part (other tessellation, six other poses after
alignment) measured Hausdorff at most 0.0014 and p95 at most 0.00094 of the part's size;
every one of the 23 one-feature differences there (a hole removed, resized, moved or made
blind, a slot, a boss, a fillet or chamfer removed, resized or added, a mirrored chiral
part) measured Hausdorff 0.021 or more. The Hausdorff pass and fail levels sit between.

    >>> t = Thresholds()
    >>> t.score(t.ramps({"chamfer": 2e-4, "fscore": 0.99, "iou": 1.0,
    ...                  "hausdorff": 0.03, "p95": 1e-4}))  # a feature is off
    0.0
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["FEATURE_METRICS", "SHAPE_METRICS", "Thresholds"]

SHAPE_METRICS = ("chamfer", "fscore", "iou")
FEATURE_METRICS = ("hausdorff", "p95")
_LOWER_IS_BETTER = ("chamfer", "hausdorff", "p95")


@dataclass(frozen=True)
class Thresholds:
    """Fail and pass levels per metric, on shapes normalised to a longest side of 1."""

    chamfer_pass: float = 1e-3
    """Chamfer at or below this scores 1 on that metric."""
    chamfer_fail: float = 1e-2
    """Chamfer at or above this scores 0."""
    fscore_pass: float = 0.95
    fscore_fail: float = 0.5
    iou_pass: float = 0.95
    iou_fail: float = 0.5
    hausdorff_pass: float = 0.004
    """Worst point-to-surface deviation that still passes: 0.4 % of the part's size."""
    hausdorff_fail: float = 0.005
    """At or above this the part scores 0: a feature is missing, moved or resized."""
    p95_pass: float = 0.002
    p95_fail: float = 0.01
    solid_gate: float = 0.5
    """Where the reference is a solid, material (the volume ratio, or the IoU of a closed
    part) below this fails the part: it is missing that much of its material. Also the
    material ramp's fail level."""
    material_pass: float = 0.95
    """Material at or above this keeps the whole score; between `solid_gate` and this
    the score is multiplied by the material ramp."""

    def __post_init__(self) -> None:
        for metric in (*SHAPE_METRICS, *FEATURE_METRICS):
            good, bad = getattr(self, f"{metric}_pass"), getattr(self, f"{metric}_fail")
            if good == bad:
                raise ValueError(f"{metric}_pass equals {metric}_fail: the ramp has no width")
            if metric in _LOWER_IS_BETTER and good > bad:
                raise ValueError(f"{metric}_pass must be below {metric}_fail (lower is better)")
            if metric not in _LOWER_IS_BETTER and good < bad:
                raise ValueError(f"{metric}_pass must be above {metric}_fail")
        if not 0.0 <= self.solid_gate < self.material_pass <= 1.0:
            raise ValueError("need 0 <= solid_gate < material_pass <= 1 (fractions)")

    def ramps(self, figures: dict[str, Any]) -> dict[str, float]:
        """Each metric's score in [0, 1]: ``clip((x - fail) / (pass - fail), 0, 1)``; and
        ``material`` where `figures` holds one (the reference is a solid)."""
        found = {m: self.ramp(m, figures[m]) for m in (*SHAPE_METRICS, *FEATURE_METRICS)}
        if figures.get("material") is not None:
            found["material"] = self.ramp("material", figures["material"])
        return found

    def ramp(self, metric: str, value: Any) -> float:
        """One metric's score in [0, 1]: ``clip((value - fail) / (pass - fail), 0, 1)``."""
        if metric == "material":
            fail, good = self.solid_gate, self.material_pass
        else:
            fail, good = getattr(self, f"{metric}_fail"), getattr(self, f"{metric}_pass")
        return min(1.0, max(0.0, (float(value) - fail) / (good - fail)))

    @staticmethod
    def score(ramps: dict[str, float]) -> float:
        """``mean(shape ramps) * min(feature ramps) * material ramp``: see the module
        docstring."""
        shape = sum(ramps[m] for m in SHAPE_METRICS) / len(SHAPE_METRICS)
        return shape * min(ramps[m] for m in FEATURE_METRICS) * ramps.get("material", 1.0)
