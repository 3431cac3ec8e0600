"""The lights, the camera and the render settings of the open scene, as plain values
(inside the Blender child, imported by `_inside`; trusted code on a hostile scene)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

from bpy_extras.object_utils import world_to_camera_view
from mathutils import Vector

__all__ = ["PRINCIPLED_INPUTS", "camera_of", "in_frame", "light_of", "render_of", "vec"]

PRINCIPLED_INPUTS = (
    "Base Color",
    "Metallic",
    "Roughness",
    "IOR",
    "Alpha",
    "Emission Color",
    "Emission Strength",
    "Transmission Weight",
    "Coat Weight",
    "Coat Tint",
    "Subsurface Weight",
)
"""The Principled BSDF inputs the scene dump reads (and the checks can judge). Every other
input, and what feeds the material output's volume and displacement, must not change what
renders (`_truth.as_read_renders`)."""


def vec(v: Any) -> list[float]:
    """A vector as a list of floats rounded to 6 places (JSON-ready)."""
    return [round(float(x), 6) for x in v]


def light_of(obj: Any, hidden: str | None, meshes: Sequence[str] = ()) -> dict[str, Any]:
    """A light as plain values, as the render gets them: its energy times its node tree's
    strength and ``2 ** exposure`` (and an area light's area when it is not normalized),
    its colour times the node tree's and, with ``use_temperature``, the blackbody colour
    (a colour brighter than 1, before that tint, is read as that much more energy and a
    colour of at most 1).
    `hidden` says why the render does not show it; ``unlit`` names the `meshes` (the
    rendered ones) its light linking keeps it off."""
    forward = obj.matrix_world.to_3x3() @ Vector((0.0, 0.0, -1.0))
    data = obj.data
    strength, tint = _light_nodes(data)
    color = [c * t for c, t in zip(data.color, tint, strict=True)]
    energy = None if strength is None else data.energy * strength * 2.0**data.exposure
    gain = max(color)
    if gain > 1.0:  # a colour over 1 scales the light's radiance: it is energy, not hue
        color = [c / gain for c in color]
        energy = None if energy is None else energy * gain
    if getattr(data, "use_temperature", False):  # Blender keeps its luminance at 1
        color = [c * b for c, b in zip(color, data.temperature_color, strict=True)]
    if energy is not None and data.type == "AREA" and not getattr(data, "normalize", True):
        energy *= _area(data)  # not normalized: its power scales with its area
    return {
        "name": obj.name,
        "type": data.type,
        "energy": None if energy is None else round(float(energy), 6),
        "color": vec(color),
        "unlit": _unlit(obj, meshes),
        "location": vec(obj.matrix_world.translation),
        "direction": vec(forward.normalized()),
        "hidden": hidden,
        "rays": {
            ray: bool(getattr(obj, f"visible_{ray}", True))
            for ray in ("diffuse", "glossy", "transmission", "volume_scatter")
        },
        "spot_size_deg": (
            round(math.degrees(obj.data.spot_size), 6) if obj.data.type == "SPOT" else None
        ),
        "spread_deg": round(math.degrees(data.spread), 6) if data.type == "AREA" else None,
    }


def _area(light: Any) -> float:
    """An area light's area in square metres (its shape and sizes)."""
    width = float(light.size)
    height = float(light.size_y) if light.shape in ("RECTANGLE", "ELLIPSE") else width
    return width * height * (math.pi / 4 if light.shape in ("DISK", "ELLIPSE") else 1.0)


def _unlit(light: Any, meshes: Sequence[str]) -> list[str]:
    """Which of `meshes` the light's light linking keeps it off, as Cycles reads it: with a
    receiver collection that has an Include entry only those objects are lit, and an
    Exclude entry never is (an empty collection changes nothing)."""
    receivers = light.light_linking.receiver_collection
    if receivers is None:
        return []
    states = {
        o.name: entry.light_linking.link_state
        for o, entry in zip(receivers.objects, receivers.collection_objects, strict=False)
    }
    for child, entry in zip(receivers.children, receivers.collection_children, strict=False):
        for o in child.all_objects:
            states.setdefault(o.name, entry.light_linking.link_state)
    only = "INCLUDE" in states.values()
    return [m for m in meshes if states.get(m) == "EXCLUDE" or (only and m not in states)]


def _light_nodes(light: Any) -> tuple[float | None, list[float]]:
    """(strength, colour) the light's node tree multiplies its energy and colour by: (1,
    white) without nodes, None where the tree is not a plain constant Emission (what it
    emits cannot be read as a value)."""
    tree = light.node_tree if getattr(light, "use_nodes", False) else None
    if tree is None:
        return 1.0, [1.0, 1.0, 1.0]
    output = next((n for n in tree.nodes if n.type == "OUTPUT_LIGHT" and n.is_active_output), None)
    if output is None or not output.inputs["Surface"].is_linked:
        return 0.0, [1.0, 1.0, 1.0]
    node = output.inputs["Surface"].links[0].from_node
    if node.type != "EMISSION" or node.mute or any(i.is_linked for i in node.inputs):
        return None, [1.0, 1.0, 1.0]
    return float(node.inputs["Strength"].default_value), list(node.inputs["Color"].default_value)[
        :3
    ]


def camera_of(scene: Any) -> dict[str, Any] | None:
    cam = scene.camera
    if cam is None or cam.type != "CAMERA":
        return None
    forward = cam.matrix_world.to_3x3() @ Vector((0.0, 0.0, -1.0))
    return {
        "name": cam.name,
        "location": vec(cam.matrix_world.translation),
        "direction": vec(forward.normalized()),
        "lens": round(float(cam.data.lens), 6),
        "sensor": round(float(max(cam.data.sensor_width, cam.data.sensor_height)), 6),
        "sensor_width": round(float(cam.data.sensor_width), 6),
        "sensor_height": round(float(cam.data.sensor_height), 6),
        "sensor_fit": cam.data.sensor_fit,
        "projection": cam.data.type,
        "dof_fstop": round(float(cam.data.dof.aperture_fstop), 6) if cam.data.dof.use_dof else None,
    }


def in_frame(scene: Any, dumped: dict[str, Any]) -> bool:
    """Whether any corner or the centre of the object's world box projects inside the scene
    camera's frame (Blender's own projection: lens, sensor, shift, projection type) and
    between its clipping distances."""
    cam = scene.camera
    low, high = dumped["bbox_min"], dumped["bbox_max"]
    points = [[(low, high)[(k >> i) & 1][i] for i in range(3)] for k in range(8)]
    points.append([(a + b) / 2 for a, b in zip(low, high, strict=True)])
    near, far = cam.data.clip_start, cam.data.clip_end
    for point in points:
        x, y, depth = world_to_camera_view(scene, cam, Vector(point))
        if 0.0 <= x <= 1.0 and 0.0 <= y <= 1.0 and near <= depth <= far:
            return True
    return False


def render_of(scene: Any) -> dict[str, Any]:
    r = scene.render
    return {
        "engine": r.engine,
        "resolution_x": r.resolution_x,
        "resolution_y": r.resolution_y,
        "resolution_percentage": r.resolution_percentage,
        "samples": scene.cycles.samples if r.engine == "CYCLES" else None,
        "film_transparent": bool(r.film_transparent),
        "border": [r.border_min_x, r.border_min_y, r.border_max_x, r.border_max_y]
        if r.use_border
        else None,
        "exposure": round(float(scene.view_settings.exposure), 6),
        "film_exposure": round(float(scene.cycles.film_exposure), 6),
        "gamma": round(float(scene.view_settings.gamma), 6),
        "view_transform": scene.view_settings.view_transform,
        "look": scene.view_settings.look,
        "white_balance": _white_balance(scene.view_settings),
        "curves": _curves_change(scene.view_settings),
        "pixel_aspect": [round(float(r.pixel_aspect_x), 6), round(float(r.pixel_aspect_y), 6)],
        "compositor": bool(r.use_compositing and getattr(scene, "compositing_node_group", None)),
        "material_override": _override(),
    }


def _white_balance(view: Any) -> list[float] | None:
    """[temperature K, tint] of the view's white balance when it is on."""
    if not getattr(view, "use_white_balance", False):
        return None
    return [
        round(float(view.white_balance_temperature), 3),
        round(float(view.white_balance_tint), 3),
    ]


def _curves_change(view: Any) -> bool:
    """Whether the view's RGB curves (when on) are other than the identity."""
    if not view.use_curve_mapping:
        return False
    curves = view.curve_mapping
    levels = list(curves.black_level) + [1.0 - v for v in curves.white_level]
    if any(abs(v) > 1e-4 for v in levels):
        return True
    return any(
        any(abs(p.location[0] - p.location[1]) > 1e-4 for p in curve.points)
        for curve in curves.curves
    )


def _override() -> str | None:
    """The view layer's material override (it replaces every material in the render)."""
    import bpy

    override = bpy.context.view_layer.material_override
    return override.name if override is not None else None
