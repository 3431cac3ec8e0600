"""Generated CAD parts and their one-feature differences, as CadQuery scripts.

The pass levels of the mesh comparison are calibrated on these (`benchmarks/mesh_calibration.py`)
and checked on real parts they were not tuned on (`../shared/data/`). Each `Part` is a
CadQuery script template with its parameters; `variants` are the same part with one
feature removed, resized, moved or added, or mirrored (chirality), each named by what
changed. Every script ends with ``show_object(result)``, as CQ-editor and CadQuery's own
examples do.

    >>> [p.name for p in PARTS][:3]
    ['plate_hole', 'slot_plate', 'boss_block']
    >>> "hole(10)" in PARTS[0].script()
    True
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["PARTS", "Part"]


@dataclass(frozen=True)
class Part:
    name: str
    template: str
    """CadQuery source with ``{param}`` fields; ``{extra}`` is where a variant adds a step."""
    params: dict[str, Any]
    variants: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Name -> parameter changes that make one feature differ."""
    same: dict[str, dict[str, Any]] = field(default_factory=dict)
    """Name -> changes that leave the same part (a mirror of an achiral part is itself)."""

    def script(self, **changes: Any) -> str:
        values = {"extra": "", **self.params, **changes}
        return "import cadquery as cq\n" + self.template.format(**values) + "show_object(result)\n"

    def variant_scripts(self) -> dict[str, str]:
        return {name: self.script(**changes) for name, changes in self.variants.items()}

    def same_scripts(self) -> dict[str, str]:
        return {name: self.script(**changes) for name, changes in self.same.items()}


_MIRROR = "result = result.mirror('XZ')\n"


def _hole(d: float, dx: float = 0, depth: str = "") -> str:
    return f".faces('>Z').workplane().center({dx}, 0).hole({d}{depth})"


def _slot(length: float, sx: float = 0) -> str:
    return f".faces('>Z').workplane().center({sx}, 8).slot2D({length}, 6).cutThruAll()"


def _boss(r: float, h: float) -> str:
    return f"\nresult = result.faces('>Z').workplane().center(8, 5).circle({r}).extrude({h})"


def _bracket_hole(hx: float, d: float = 8) -> str:
    return (
        "\nresult = result.faces('<Z').workplane(centerOption='CenterOfBoundBox')"
        f".center({hx}, 6).hole({d})"
    )


PARTS = [
    Part(
        "plate_hole",
        "result = cq.Workplane('XY').box(60, 40, 5){hole}\n{extra}",
        {"hole": _hole(10)},
        {
            "hole_removed": {"hole": ""},
            "hole_4mm": {"hole": _hole(4)},
            "hole_14mm": {"hole": _hole(14)},
            "hole_moved_8mm": {"hole": _hole(10, dx=8)},
            "hole_blind": {"hole": _hole(10, depth=", 2.5")},
            "second_hole": {
                "extra": "result = result.faces('>Z').workplane().center(20, 10).hole(6)\n"
            },
        },
    ),
    Part(
        "slot_plate",
        "result = cq.Workplane('XY').box(60, 40, 8){slot}\n{extra}",
        {"slot": _slot(20)},
        {
            "slot_removed": {"slot": ""},
            "slot_short": {"slot": _slot(14)},
            "slot_moved": {"slot": _slot(20, sx=10)},
        },
        # Its features go through the plate, so its mirror is the part turned over.
        same={"mirrored": {"extra": _MIRROR}},
    ),
    Part(
        "boss_block",
        "result = cq.Workplane('XY').box(40, 30, 10){boss}\n{extra}",
        {"boss": _boss(5, 8)},
        {
            "boss_removed": {"boss": ""},
            "boss_short": {"boss": _boss(5, 4)},
            "boss_thin": {"boss": _boss(3, 8)},
            "mirrored": {"extra": _MIRROR},
        },
    ),
    Part(
        "fillet_block",
        "result = cq.Workplane('XY').box(40, 30, 20){fillet}\n{extra}",
        {"fillet": ".edges('|Z').fillet(4)"},
        {
            "fillet_removed": {"fillet": ""},
            "fillet_half": {"fillet": ".edges('|Z').fillet(2)"},
            "top_fillet_added": {"extra": "result = result.edges('>Z').fillet(2)\n"},
        },
    ),
    Part(
        "chamfer_block",
        "result = cq.Workplane('XY').box(40, 30, 20){chamfer}\n{extra}",
        {"chamfer": ".edges('>Z').chamfer(2)"},
        {
            "chamfer_removed": {"chamfer": ""},
            "chamfer_4mm": {"chamfer": ".edges('>Z').chamfer(4)"},
            "bottom_chamfer_added": {"extra": "result = result.edges('<Z').chamfer(2)\n"},
        },
    ),
    Part(
        "bracket",  # chiral: the base's hole is off-centre, so its mirror is another part
        "base = cq.Workplane('XY').box(50, 30, 5, centered=False)\n"
        "upright = cq.Workplane('XY').box(5, 30, 35, centered=False)\n"
        "result = base.union(upright){hole}\n{extra}",
        {"hole": _bracket_hole(-12)},
        {
            "mirrored": {"extra": _MIRROR},
            "hole_removed": {"hole": ""},
            "hole_moved": {"hole": _bracket_hole(-4)},
            "gusset_added": {
                "extra": "result = result.union(cq.Workplane('XZ').polyline("
                "[(5, 5), (20, 5), (5, 20)]).close().extrude(-4).translate((0, 13, 0)))\n"
            },
        },
    ),
]
"""Six parts: holes, a slot, a boss, fillets, chamfers, and a chiral bracket."""
