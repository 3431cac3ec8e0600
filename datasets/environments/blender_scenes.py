"""Generate ``blender_scene.jsonl``: the `blender_scene` environment's bundled tasks.

Each scene is declared once, below, as plain values; from that one declaration come the
prompt (every number the checks use, in words), the `SceneSpec` reference (exact truth:
the declared values themselves) and the expert's scripts, one per stage (geometry,
materials, lighting, camera and render), which the environment's expert plays as turns.

    python datasets/environments/blender_scenes.py   # rewrites blender_scene.jsonl

The output is deterministic (sorted keys, no clock, no randomness).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

OUT = Path(__file__).resolve().parent / "blender_scene.jsonl"

# (name, shape, size, location, material, modifiers). Shapes: box (size = x, y, z),
# sphere (size = radius), cylinder (radius, depth), plane (side), cone (radius, depth).
Obj = tuple[str, str, Any, tuple[float, float, float], str, tuple[str, ...]]

SCENES: list[dict[str, Any]] = [
    {
        "id": "red_cube",
        "objects": [("Cube", "box", (2, 2, 2), (0, 0, 1), "Red", ())],
        "materials": {"Red": {"Base Color": [0.8, 0.05, 0.05], "Roughness": 0.4}},
        "lights": [{"type": "SUN", "energy": 3.0, "rotation": (0.6, 0.2, 0.8)}],
        "camera": {"location": [6, -6, 4], "look_at": [0, 0, 1], "lens": 50},
    },
    {
        "id": "blue_ball",
        "objects": [("Ball", "sphere", 1.0, (0, 0, 1), "Blue", ())],
        "materials": {"Blue": {"Base Color": [0.05, 0.1, 0.8], "Metallic": 1.0, "Roughness": 0.3}},
        "lights": [{"type": "POINT", "energy": 1000.0, "location": [3, -3, 5]}],
        "camera": {"location": [0, -8, 3], "look_at": [0, 0, 1], "lens": 35},
    },
    {
        "id": "bevelled_slab",
        "objects": [("Slab", "box", (3, 2, 1), (0, 0, 0.5), "Stone", ("BEVEL",))],
        "materials": {"Stone": {"Base Color": [0.5, 0.5, 0.45], "Roughness": 0.9}},
        "lights": [{"type": "SUN", "energy": 4.0, "rotation": (0.5, 0.1, 0.6)}],
        "camera": {"location": [7, -7, 5], "look_at": [0, 0, 0.5], "lens": 50},
        "render": {"engine": "CYCLES", "resolution_x": 320, "resolution_y": 240},
    },
    {
        "id": "smooth_ball",
        "objects": [("Orb", "sphere", 1.0, (0, 0, 1.5), "Glass", ("SUBSURF",))],
        "materials": {"Glass": {"Base Color": [0.9, 0.9, 1.0], "Roughness": 0.05, "IOR": 1.45}},
        "lights": [{"type": "AREA", "energy": 500.0, "location": [2, -3, 5]}],
        "camera": {"location": [0, -7, 2.5], "look_at": [0, 0, 1.5], "lens": 50},
        "render": {"engine": "CYCLES", "resolution_x": 400, "resolution_y": 300},
    },
    {
        "id": "plinth_and_ball",
        "objects": [
            ("Plinth", "box", (1, 1, 1), (0, 0, 0.5), "Marble", ()),
            ("Ball", "sphere", 0.5, (0, 0, 1.5), "Brass", ()),
        ],
        "materials": {
            "Marble": {"Base Color": [0.9, 0.9, 0.88], "Roughness": 0.2},
            "Brass": {"Base Color": [0.8, 0.6, 0.2], "Metallic": 1.0, "Roughness": 0.25},
        },
        "lights": [{"type": "SUN", "energy": 3.0, "rotation": (0.7, 0.0, 0.9)}],
        "camera": {"location": [5, -5, 3], "look_at": [0, 0, 1], "lens": 50},
    },
    {
        "id": "dice_row",
        "objects": [
            ("DieRed", "box", (0.5, 0.5, 0.5), (-1, 0, 0.25), "Red", ()),
            ("DieGreen", "box", (0.5, 0.5, 0.5), (0, 0, 0.25), "Green", ()),
            ("DieBlue", "box", (0.5, 0.5, 0.5), (1, 0, 0.25), "Blue", ()),
        ],
        "materials": {
            "Red": {"Base Color": [0.8, 0.05, 0.05]},
            "Green": {"Base Color": [0.05, 0.7, 0.1]},
            "Blue": {"Base Color": [0.05, 0.1, 0.8]},
        },
        "lights": [{"type": "SUN", "energy": 3.0, "rotation": (0.5, 0.2, 0.3)}],
        "camera": {"location": [0, -5, 2.5], "look_at": [0, 0, 0.25], "lens": 35},
    },
    {
        "id": "table",
        "objects": [
            ("Top", "box", (2, 1, 0.1), (0, 0, 0.75), "Wood", ()),
            ("Leg1", "box", (0.1, 0.1, 0.7), (0.9, 0.4, 0.35), "Wood", ()),
            ("Leg2", "box", (0.1, 0.1, 0.7), (-0.9, 0.4, 0.35), "Wood", ()),
            ("Leg3", "box", (0.1, 0.1, 0.7), (0.9, -0.4, 0.35), "Wood", ()),
            ("Leg4", "box", (0.1, 0.1, 0.7), (-0.9, -0.4, 0.35), "Wood", ()),
        ],
        "materials": {"Wood": {"Base Color": [0.45, 0.3, 0.15], "Roughness": 0.7}},
        "lights": [
            {"type": "SUN", "energy": 2.0, "rotation": (0.6, 0.1, 0.5)},
            {"type": "AREA", "energy": 300.0, "location": [-2, -3, 4]},
        ],
        "camera": {"location": [4, -4, 2.5], "look_at": [0, 0, 0.5], "lens": 40},
    },
    {
        "id": "snowman",
        "objects": [
            ("Base", "sphere", 0.6, (0, 0, 0.6), "Snow", ()),
            ("Body", "sphere", 0.45, (0, 0, 1.6), "Snow", ()),
            ("Head", "sphere", 0.3, (0, 0, 2.35), "Snow", ()),
            ("Hat", "cylinder", (0.2, 0.3), (0, 0, 2.8), "Coal", ()),
        ],
        "materials": {
            "Snow": {"Base Color": [0.95, 0.95, 0.97], "Roughness": 0.8},
            "Coal": {"Base Color": [0.03, 0.03, 0.03], "Roughness": 0.6},
        },
        "lights": [{"type": "SUN", "energy": 3.0, "rotation": (0.6, 0.0, 0.4)}],
        "camera": {"location": [0, -8, 2], "look_at": [0, 0, 1.5], "lens": 50},
    },
    {
        "id": "tree",
        "objects": [
            ("Trunk", "cylinder", (0.2, 1.0), (0, 0, 0.5), "Bark", ()),
            ("Crown", "cone", (1.0, 2.0), (0, 0, 2.0), "Leaves", ()),
        ],
        "materials": {
            "Bark": {"Base Color": [0.3, 0.18, 0.08], "Roughness": 0.9},
            "Leaves": {"Base Color": [0.1, 0.5, 0.1], "Roughness": 0.7},
        },
        "lights": [{"type": "SUN", "energy": 3.5, "rotation": (0.5, 0.3, 0.9)}],
        "camera": {"location": [6, -6, 3], "look_at": [0, 0, 1.5], "lens": 50},
        "render": {"engine": "CYCLES", "resolution_x": 300, "resolution_y": 400},
    },
    {
        "id": "lamp_post",
        "objects": [
            ("Ground", "plane", 8, (0, 0, 0), "Asphalt", ()),
            ("Pole", "cylinder", (0.2, 3.0), (0, 0, 1.5), "Iron", ()),
            ("Lamp", "sphere", 0.25, (0, 0, 3.2), "Frosted", ()),
        ],
        "materials": {
            "Asphalt": {"Base Color": [0.1, 0.1, 0.1], "Roughness": 0.95},
            "Iron": {"Base Color": [0.2, 0.2, 0.22], "Metallic": 1.0, "Roughness": 0.5},
            "Frosted": {"Base Color": [1.0, 0.95, 0.8], "Roughness": 0.6},
        },
        "lights": [
            {"type": "POINT", "energy": 800.0, "color": [1.0, 0.85, 0.6], "location": [0, -1, 3.2]},
            {"type": "SUN", "energy": 1.0, "rotation": (0.8, 0.0, 0.3)},
        ],
        "camera": {"location": [4, -6, 2], "look_at": [0, 0, 1.5], "lens": 35},
    },
    {
        "id": "crates_on_floor",
        "objects": [
            ("Floor", "plane", 10, (0, 0, 0), "Concrete", ()),
            ("Crate1", "box", (1, 1, 1), (-1.5, 0, 0.5), "Wood", ("BEVEL",)),
            ("Crate2", "box", (1, 1, 1), (0, 0.5, 0.5), "Wood", ("BEVEL",)),
            ("Crate3", "box", (0.8, 0.8, 0.8), (1.5, -0.5, 0.4), "Wood", ("BEVEL",)),
        ],
        "materials": {
            "Concrete": {"Base Color": [0.5, 0.5, 0.5], "Roughness": 0.9},
            "Wood": {"Base Color": [0.45, 0.3, 0.15], "Roughness": 0.7},
        },
        "lights": [
            {"type": "AREA", "energy": 400.0, "location": [0, -3, 5]},
            {"type": "POINT", "energy": 300.0, "location": [3, 2, 3]},
        ],
        "camera": {"location": [7, -7, 5], "look_at": [0, 0, 0.5], "lens": 40},
        "render": {"engine": "CYCLES", "resolution_x": 400, "resolution_y": 300},
    },
    {
        "id": "spot_stage",
        "objects": [
            ("Stage", "cylinder", (3.0, 0.2), (0, 0, 0.1), "Boards", ()),
            ("Pedestal", "cylinder", (0.4, 1.0), (0, 0, 0.7), "Marble", ()),
            ("Statue", "sphere", 0.4, (0, 0, 1.6), "Bronze", ("SUBSURF",)),
        ],
        "materials": {
            "Boards": {"Base Color": [0.35, 0.2, 0.1], "Roughness": 0.8},
            "Marble": {"Base Color": [0.9, 0.9, 0.88], "Roughness": 0.2},
            "Bronze": {"Base Color": [0.6, 0.4, 0.2], "Metallic": 1.0, "Roughness": 0.35},
        },
        "lights": [
            {"type": "SPOT", "energy": 2000.0, "location": [0, -4, 6], "look_at": [0, 0, 1]},
            {"type": "SUN", "energy": 0.5, "rotation": (0.9, 0.0, 0.0)},
        ],
        "camera": {"location": [6, -6, 3], "look_at": [0, 0, 1], "lens": 50},
    },
    {
        "id": "still_life",
        "objects": [
            ("Tabletop", "box", (3, 2, 0.1), (0, 0, 0.05), "Linen", ()),
            ("Apple", "sphere", 0.2, (-0.5, 0, 0.3), "AppleRed", ()),
            ("Orange", "sphere", 0.22, (0.1, 0.3, 0.32), "Peel", ()),
            ("Vase", "cylinder", (0.25, 0.8), (0.8, -0.2, 0.5), "Porcelain", ()),
            ("Cone", "cone", (0.2, 0.5), (0.3, -0.5, 0.35), "Peel", ()),
        ],
        "materials": {
            "Linen": {"Base Color": [0.85, 0.82, 0.75], "Roughness": 0.9},
            "AppleRed": {"Base Color": [0.7, 0.05, 0.05], "Roughness": 0.4},
            "Peel": {"Base Color": [0.9, 0.45, 0.05], "Roughness": 0.6},
            "Porcelain": {"Base Color": [0.95, 0.95, 0.95], "Roughness": 0.1},
        },
        "lights": [
            {"type": "AREA", "energy": 300.0, "location": [-2, -2, 3]},
            {"type": "SUN", "energy": 2.0, "rotation": (0.7, 0.2, 0.5)},
        ],
        "camera": {"location": [0, -4, 2], "look_at": [0, 0, 0.3], "lens": 40},
        "render": {"engine": "CYCLES", "resolution_x": 320, "resolution_y": 240},
    },
]


# --------------------------------------------------------------------------- geometry


def _dimensions(shape: str, size: Any) -> list[float]:
    if shape == "box":
        return [float(s) for s in size]
    if shape == "sphere":
        return [2.0 * size] * 3
    if shape in ("cylinder", "cone"):
        return [2.0 * size[0], 2.0 * size[0], float(size[1])]
    return [float(size), float(size), 0.0]  # plane


def _add(shape: str, size: Any, location: tuple[float, ...]) -> str:
    at = f"location={tuple(float(v) for v in location)}"
    if shape == "box":
        return f"bpy.ops.mesh.primitive_cube_add(size=1, {at}, scale={tuple(size)})"
    if shape == "sphere":
        return f"bpy.ops.mesh.primitive_uv_sphere_add(radius={size}, segments=32, {at})"
    if shape == "cylinder":
        return (
            f"bpy.ops.mesh.primitive_cylinder_add(radius={size[0]}, depth={size[1]}, "
            f"vertices=32, {at})"
        )
    if shape == "cone":
        return (
            f"bpy.ops.mesh.primitive_cone_add(radius1={size[0]}, depth={size[1]}, "
            f"vertices=32, {at})"
        )
    return f"bpy.ops.mesh.primitive_plane_add(size={size}, {at})"


def _describe_object(obj: Obj) -> str:
    name, shape, size, location, material, modifiers = obj
    dims = " x ".join(f"{d:g}" for d in _dimensions(shape, size))
    kind = {
        "box": "box",
        "sphere": "sphere",
        "cylinder": "cylinder",
        "plane": "plane",
        "cone": "cone",
    }[shape]
    extra = (
        f", with a {' and a '.join(_MODIFIER_WORDS[m] for m in modifiers)} modifier"
        if (modifiers)
        else ""
    )
    return (
        f"a {kind} named {name}, {dims} m (its bounding box), centred at "
        f"{_xyz(location)}{extra}, material {material}"
    )


_MODIFIER_WORDS = {"BEVEL": "Bevel", "SUBSURF": "Subdivision Surface"}


def _xyz(values: Any) -> str:
    return "(" + ", ".join(f"{float(v):g}" for v in values) + ")"


# --------------------------------------------------------------------------- the three outputs


SUBDIVIDED_LENGTH_TOL = 0.05


def _spec(scene: dict[str, Any]) -> dict[str, Any]:
    objects = {}
    for name, shape, size, location, material, modifiers in scene["objects"]:
        entry: dict[str, Any] = {
            "type": "MESH",
            "location": [float(v) for v in location],
            "materials": [material],
        }
        entry["dimensions"] = _dimensions(shape, size)
        if modifiers:
            entry["modifiers"] = list(modifiers)
        objects[name] = entry
    lights = [{k: v for k, v in light.items() if k != "rotation"} for light in scene["lights"]]
    spec: dict[str, Any] = {
        "objects": objects,
        "materials": {m: {"inputs": inputs} for m, inputs in scene["materials"].items()},
        "lights": lights,
        "camera": scene["camera"],
    }
    if "render" in scene:
        spec["render"] = scene["render"]
    if any("SUBSURF" in modifiers for *_, modifiers in scene["objects"]):
        # Subdivision shrinks the cage it smooths (a 2 m sphere measures 1.97 m): sizes are
        # checked to 5 cm there, not left out (a 3 m sphere earned the full reward).
        spec["tolerances"] = {"length": SUBDIVIDED_LENGTH_TOL}
    return spec


def _prompt(scene: dict[str, Any]) -> str:
    lines = ["Build this scene in Blender (names, sizes and values are checked; metres):"]
    lines += [f"- {_describe_object(o)};" for o in scene["objects"]]
    for name, inputs in scene["materials"].items():
        values = ", ".join(
            f"{k.lower()} {_xyz(v) if isinstance(v, list) else f'{v:g}'}" for k, v in inputs.items()
        )
        lines.append(f"- material {name} (Principled BSDF): {values};")
    for light in scene["lights"]:
        words = f"- a {light['type']} light of {light['energy']:g} W"
        if "color" in light:
            words += f", colour {_xyz(light['color'])}"
        if "location" in light:
            words += f", at {_xyz(light['location'])}"
        if "look_at" in light:
            words += f", aimed at {_xyz(light['look_at'])}"
        lines.append(words + ";")
    cam = scene["camera"]
    lines.append(
        f"- the scene camera: a {cam['lens']:g} mm lens at {_xyz(cam['location'])}, looking "
        f"at {_xyz(cam['look_at'])}" + (";" if "render" in scene else ".")
    )
    if "render" in scene:
        r = scene["render"]
        lines.append(f"- render with Cycles at {r['resolution_x']} x {r['resolution_y']}.")
    return "\n".join(lines)


def _scripts(scene: dict[str, Any]) -> list[str]:
    geometry = ["import bpy"]
    for name, shape, size, location, _material, modifiers in scene["objects"]:
        geometry += [
            _add(shape, size, location),
            "obj = bpy.context.active_object",
            f"obj.name = {name!r}",
        ]
        geometry += [f"obj.modifiers.new({m.title()!r}, {m!r})" for m in modifiers]
    materials = ["import bpy"]
    for name, inputs in scene["materials"].items():
        materials += [
            f"mat = bpy.data.materials.new({name!r})",
            "mat.use_nodes = True",
            "bsdf = mat.node_tree.nodes['Principled BSDF']",
        ]
        for key, value in inputs.items():
            shown = (*value, 1.0) if isinstance(value, list) else value
            shown = tuple(shown) if isinstance(shown, tuple) else shown
            materials.append(f"bsdf.inputs[{key!r}].default_value = {shown}")
    for name, *_rest, material, _modifiers in scene["objects"]:
        materials.append(
            f"bpy.data.objects[{name!r}].data.materials.append(bpy.data.materials[{material!r}])"
        )
    lighting = ["import bpy", "from mathutils import Vector"]
    for k, light in enumerate(scene["lights"]):
        lighting += [
            f"light = bpy.data.objects.new('Light{k}', bpy.data.lights.new('Light{k}', "
            f"{light['type']!r}))",
            f"light.data.energy = {light['energy']}",
            "bpy.context.scene.collection.objects.link(light)",
        ]
        if "color" in light:
            lighting.append(f"light.data.color = {tuple(light['color'])}")
        if "location" in light:
            lighting.append(f"light.location = {tuple(light['location'])}")
        if "rotation" in light:
            lighting.append(f"light.rotation_euler = {tuple(light['rotation'])}")
        if "look_at" in light:
            lighting.append(
                f"light.rotation_euler = (Vector({tuple(light['look_at'])}) - "
                "light.location).to_track_quat('-Z', 'Y').to_euler()"
            )
    cam = scene["camera"]
    camera = [
        "import bpy",
        "from mathutils import Vector",
        "cam = bpy.data.objects.new('Camera', bpy.data.cameras.new('Camera'))",
        "bpy.context.scene.collection.objects.link(cam)",
        f"cam.location = {tuple(cam['location'])}",
        f"cam.data.lens = {cam['lens']}",
        f"cam.rotation_euler = (Vector({tuple(cam['look_at'])}) - cam.location)"
        ".to_track_quat('-Z', 'Y').to_euler()",
        "bpy.context.scene.camera = cam",
    ]
    if "render" in scene:
        r = scene["render"]
        camera += [
            "scene = bpy.context.scene",
            f"scene.render.engine = {r['engine']!r}",
            f"scene.render.resolution_x = {r['resolution_x']}",
            f"scene.render.resolution_y = {r['resolution_y']}",
        ]
    return ["\n".join(s) + "\n" for s in (geometry, materials, lighting, camera)]


def task(scene: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": scene["id"],
        "task": "blender_scene",
        "prompt": _prompt(scene),
        "reference": _spec(scene),
        "solution": {"scripts": _scripts(scene)},
        "objects": len(scene["objects"]),
    }


def main() -> None:
    rows = [json.dumps(task(s), sort_keys=True) for s in SCENES]
    OUT.write_text("\n".join(rows) + "\n", encoding="utf-8")
    print(f"wrote {len(rows)} tasks to {OUT}")


if __name__ == "__main__":
    main()
