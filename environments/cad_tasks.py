"""The `cad_part` tasks: text specs of parts with known dimensions and features.

Two sources, each a task id mapped to its spec (the prompt) and its reference script:

- **generated** parts (`FAMILIES`): plates with hole grids, slots, filleted blocks, bosses,
  flanges, brackets. The reference script is a pure function of the numbers the prompt
  states, so the task file and this module hold nothing the prompt does not already say;
- **CadQuery's examples** (``../shared/data/cad/cadquery-examples``, Apache-2.0), each with
  a hand-written text spec; their scripts are read from there when the reference is built
  and never copied into the repo. Without ``../shared`` those tasks are skipped.

`write_tasks()` writes ``datasets/environments/cad_part.jsonl`` (ids, prompts, and
``reference: {"part": id}``); `reference_script(task)` gives the script the expert plays
and the reference B-rep is built from.

    >>> plate_holes(80, 50, 6, 2, 3, 8)[1].count(".hole(")
    1
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

__all__ = ["EXAMPLES", "EXAMPLES_DIR", "FAMILIES", "TASKS_FILE", "reference_script", "tasks"]

_ROOT = Path(__file__).resolve().parents[1]
TASKS_FILE = _ROOT / "datasets" / "environments" / "cad_part.jsonl"
EXAMPLES_DIR = _ROOT.parent / "shared" / "data" / "cad" / "cadquery-examples"
_PLACE = "centred on the origin in X and Y, its base on z = 0 unless said otherwise"


def _script(body: str) -> str:
    return f"import cadquery as cq\n\nresult = (\n{body}\n)\nshow_object(result)\n"


def plate_holes(w: float, d: float, t: float, nx: int, ny: int, hole: float) -> tuple[str, str]:
    pitch_x, pitch_y = w / (nx + 1), d / (ny + 1)
    spec = (
        f"A rectangular plate {w} x {d} mm (X x Y), {t} mm thick, with a grid of {nx} x {ny} "
        f"through-holes of diameter {hole} mm at a pitch of {pitch_x:g} mm in X and "
        f"{pitch_y:g} mm in Y, the grid centred on the plate"
    )
    body = (
        f"    cq.Workplane('XY').box({w}, {d}, {t}, centered=(True, True, False))\n"
        f"    .faces('>Z').workplane()\n"
        f"    .rarray({pitch_x!r}, {pitch_y!r}, {nx}, {ny}).hole({hole})"
    )
    return spec, _script(body)


def plate_slot(w: float, d: float, t: float, slot_len: float, slot_w: float) -> tuple[str, str]:
    spec = (
        f"A rectangular plate {w} x {d} mm (X x Y), {t} mm thick, with one straight slot cut "
        f"through it at its centre: {slot_len} mm long end to end along X, {slot_w} mm wide, "
        f"with fully rounded ends"
    )
    body = (
        f"    cq.Workplane('XY').box({w}, {d}, {t}, centered=(True, True, False))\n"
        f"    .faces('>Z').workplane().slot2D({slot_len}, {slot_w}).cutThruAll()"
    )
    return spec, _script(body)


def filleted_block(w: float, d: float, h: float, r: float) -> tuple[str, str]:
    spec = (
        f"A block {w} x {d} x {h} mm (X x Y x Z) whose four vertical edges are rounded with "
        f"fillets of radius {r} mm"
    )
    body = (
        f"    cq.Workplane('XY').box({w}, {d}, {h}, centered=(True, True, False))\n"
        f"    .edges('|Z').fillet({r})"
    )
    return spec, _script(body)


def boss_block(w: float, d: float, t: float, boss_d: float, boss_h: float) -> tuple[str, str]:
    spec = (
        f"A base plate {w} x {d} mm (X x Y), {t} mm thick, with a solid cylindrical boss of "
        f"diameter {boss_d} mm rising {boss_h} mm from the centre of its top face"
    )
    body = (
        f"    cq.Workplane('XY').box({w}, {d}, {t}, centered=(True, True, False))\n"
        f"    .faces('>Z').workplane().circle({boss_d / 2}).extrude({boss_h})"
    )
    return spec, _script(body)


def bored_boss(w: float, t: float, boss_d: float, boss_h: float, bore: float) -> tuple[str, str]:
    spec = (
        f"A square base plate {w} x {w} mm, {t} mm thick, with a cylindrical boss of diameter "
        f"{boss_d} mm rising {boss_h} mm from the centre of its top face, and a bore of "
        f"diameter {bore} mm through the boss and the plate on the boss's axis"
    )
    body = (
        f"    cq.Workplane('XY').box({w}, {w}, {t}, centered=(True, True, False))\n"
        f"    .faces('>Z').workplane().circle({boss_d / 2}).extrude({boss_h})\n"
        f"    .faces('>Z').workplane().hole({bore})"
    )
    return spec, _script(body)


def flange(
    dia: float, t: float, bore: float, bolts: int, pcd: float, hole: float
) -> tuple[str, str]:
    spec = (
        f"A round flange: a disc of diameter {dia} mm, {t} mm thick, with a central bore of "
        f"diameter {bore} mm and {bolts} bolt holes of diameter {hole} mm equally spaced on a "
        f"{pcd} mm pitch circle, the first on the +X axis"
    )
    body = (
        f"    cq.Workplane('XY').circle({dia / 2}).circle({bore / 2}).extrude({t})\n"
        f"    .faces('>Z').workplane().polarArray({pcd / 2}, 0, 360, {bolts}).hole({hole})"
    )
    return spec, _script(body)


def bracket(w: float, d: float, h: float, t: float, hole: float) -> tuple[str, str]:
    spec = (
        f"An L-bracket {w} mm wide (X): a horizontal leg {d} mm deep (Y from 0 to {d}) and "
        f"{t} mm thick (Z from 0), and a vertical leg {h} mm tall (Z from 0) and {t} mm thick "
        f"(Y from 0 to {t}); the horizontal leg has one through-hole of diameter {hole} mm "
        f"at its centre (x = 0, y = {(d + t) / 2:g})"
    )
    body = (
        f"    cq.Workplane('XY').box({w}, {d}, {t}, centered=(True, False, False))\n"
        f"    .union(cq.Workplane('XY').box({w}, {t}, {h}, centered=(True, False, False)))\n"
        f"    .cut(cq.Workplane('XY').center(0, {(d + t) / 2:g}).circle({hole / 2}).extrude({t}))"
    )
    return spec, _script(body)


def slotted_fillet_plate(
    w: float, d: float, t: float, r: float, slot_len: float
) -> tuple[str, str]:
    spec = (
        f"A rectangular plate {w} x {d} mm (X x Y), {t} mm thick, its four vertical edges "
        f"filleted with radius {r} mm, with two through-slots {slot_len} mm long along Y and "
        f"{t} mm wide with rounded ends, centred at x = -{w / 4:g} and x = {w / 4:g}, y = 0"
    )
    body = (
        f"    cq.Workplane('XY').box({w}, {d}, {t}, centered=(True, True, False))\n"
        f"    .edges('|Z').fillet({r})\n"
        f"    .faces('>Z').workplane().pushPoints([(-{w / 4:g}, 0), ({w / 4:g}, 0)])\n"
        f"    .slot2D({slot_len}, {t}, 90).cutThruAll()"
    )
    return spec, _script(body)


FAMILIES: dict[str, tuple[Callable[..., tuple[str, str]], tuple[float, ...]]] = {
    "gen-plate-holes-2x3": (plate_holes, (80, 50, 6, 2, 3, 8)),
    "gen-plate-holes-4x1": (plate_holes, (120, 30, 5, 4, 1, 6)),
    "gen-plate-slot": (plate_slot, (70, 40, 8, 36, 10)),
    "gen-filleted-block": (filleted_block, (60, 40, 20, 8)),
    "gen-boss-block": (boss_block, (50, 50, 10, 20, 15)),
    "gen-bored-boss": (bored_boss, (60, 12, 30, 18, 14)),
    "gen-flange-6": (flange, (100, 12, 40, 6, 75, 9)),
    "gen-bracket": (bracket, (40, 50, 45, 6, 10)),
    "gen-slotted-fillet-plate": (slotted_fillet_plate, (90, 60, 6, 10, 30)),
}

EXAMPLES: dict[str, tuple[str, str]] = {
    "cq-ex002-bored-block": (
        "Ex002_Block_With_Bored_Center_Hole.py",
        "A block 80 x 60 mm (X x Y), 10 mm thick (Z), centred on the origin in X, Y and Z, "
        "with one through-hole of diameter 22 mm on its vertical centre axis",
    ),
    "cq-ex003-pillow-block": (
        "Ex003_Pillow_Block_With_Counterbored_Holes.py",
        "A pillow block 80 x 100 mm (X x Y), 10 mm thick (Z), centred on the origin in X, Y "
        "and Z: a 22 mm through-hole on its centre axis; four counterbored through-holes "
        "(2.4 mm hole, 4.4 mm counterbore 2.1 mm deep from the top face) at the corners of a "
        "68 x 88 mm rectangle centred on the block; its four vertical edges filleted 2 mm",
    ),
    "cq-ex004-cylindrical-plate": (
        "Ex004_Extruded_Cylindrical_Plate.py",
        "A round plate of radius 50 mm, 13 mm thick (Z from 0 to 13), centred on the Z axis, "
        "with a rectangular through-cut 13 mm (X) by 19 mm (Y) at its centre",
    ),
    "cq-ex016-construction-holes": (
        "Ex016_Using_Construction_Geometry.py",
        "A plate 2 x 2 (X x Y), 0.5 thick (Z), centred on the origin in X, Y and Z, with "
        "four through-holes of diameter 0.125 at the corners of a 1.5 x 1.5 square centred "
        "on the plate",
    ),
    "cq-ex019-countersunk": (
        "Ex019_Counter_Sunk_Holes.py",
        "A plate 4 x 2 (X x Y), 0.5 thick (Z), centred on the origin, with four countersunk "
        "through-holes (0.125 hole, 0.25 countersink diameter, 82 degree countersink angle, "
        "from the top face) at the corners of a 3.5 x 1.5 rectangle centred on the plate",
    ),
    "cq-ex020-rounded-corners": (
        "Ex020_Rounding_Corners_with_Fillets.py",
        "A plate 3 x 3 (X x Y), 0.5 thick (Z), centred on the origin, whose four vertical "
        "edges are filleted with radius 0.125",
    ),
}


def _prompt(spec: str) -> str:
    units = "millimetres" if "mm" in spec else "model units"
    return f"{spec}. Units: {units}; place the part {_PLACE}."


def tasks() -> list[dict[str, Any]]:
    """Every bundled task (examples only when ``../shared`` holds them)."""
    rows = []
    for task_id, (family, args) in FAMILIES.items():
        spec, _ = family(*args)
        rows.append({"id": task_id, "prompt": _prompt(spec), "reference": {"part": task_id}})
    for task_id, (_, spec) in EXAMPLES.items():
        rows.append({"id": task_id, "prompt": _prompt(spec), "reference": {"part": task_id}})
    return rows


def reference_script(task: Mapping[str, Any]) -> str:
    """The reference script of a bundled task (LookupError for an unknown part)."""
    part = str((task.get("reference") or {}).get("part", task.get("id", "")))
    if part in FAMILIES:
        family, args = FAMILIES[part]
        return family(*args)[1]
    if part in EXAMPLES:
        path = EXAMPLES_DIR / EXAMPLES[part][0]
        if not path.is_file():
            raise LookupError(f"{part}: CadQuery's examples are not in {EXAMPLES_DIR}")
        return path.read_text(encoding="utf-8")
    raise LookupError(f"no bundled CAD part {part[:60]!r}")


def write_tasks(path: Path = TASKS_FILE) -> None:
    """Write the bundled task file (byte-for-byte reproducible)."""
    lines = [json.dumps(row, sort_keys=True) for row in tasks()]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    write_tasks()
