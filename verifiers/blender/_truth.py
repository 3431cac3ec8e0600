"""The truth render: what the scene's own camera shows, measured (inside the Blender child).

Trusted code on a hostile scene, imported by `_inside`. Two small seeded Cycles renders on
the CPU from the scene's camera (lens, sensor, shift, clipping, depth of field) with its
crop border; only the size (`size` pixels wide, the scene's aspect), samples, seed and
device are ours:

1. **luminance**: the scene's lights, world, exposure and view transform on a white
   diffuse surface (a view-layer material override), saved as a 16-bit PNG through its
   colour management: how much light reaches the objects, whatever their own materials
   (a black, or a chrome mirroring a black world, material is not a dark light: the red
   team's honest dark scenes failed when the scene's own materials were measured);
2. **object index**: every surface replaced by an emission whose colour encodes the
   object's ``pass_index`` (set here to its place in the scene: nothing the script set is
   trusted), 1 sample, a tiny pixel filter, the raw view transform, a transparent film and
   lights unseen by the camera, so each pixel decodes to the object the camera ray hit.
   (Cycles' own object-index pass needs a multi-layer EXR, and OpenEXR's thread pool,
   started in the warm server, is missing in a forked child: the write never returns.)
   The index render comes last because it changes the scene; the luminance render puts
   back what it changed, so a preview rendered after it sees the scene as saved.
3. **light split**: white diffuse surfaces again, written scene-linear (Raw, no look,
   curves or white balance, exposure `LINEAR_STOPS`), once as the scene is (objects the
   spec does not name keep their own materials: a glowing one is a light) and once lit by
   the asked lights alone (those that meet the spec's light specs; no world, no other
   light): what the light nobody asked for adds where each object is, whatever its node
   trees.
4. **default view**: the scene as it is through Blender's default colour management (AgX,
   no look, exposure 0, gamma 1, film exposure 1): the colours its view should show.

`truth_stats` gives per object the pixels that show it and their mean display luminance
(with the colour renders and the light split, their mean colour and light), and the mean
luminance of the whole frame (pixels a crop border leaves out count as black).
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from typing import Any

import bpy
import cv2
import numpy as np

from rewardsmith.verifiers.blender._view import PRINCIPLED_INPUTS

__all__ = [
    "as_read_renders",
    "default_view_render",
    "index_render",
    "light_split",
    "luminance_render",
    "truth_size",
    "truth_stats",
]

_LUMA = np.array([0.2126, 0.7152, 0.0722])
_MAX_INDEX = 30000
_KEPT = (
    ("render", ("engine", "resolution_x", "resolution_y", "resolution_percentage")),
    ("render", ("pixel_aspect_x", "pixel_aspect_y", "filepath")),
    ("render.image_settings", ("file_format", "color_mode", "color_depth")),
    ("cycles", ("device", "samples", "seed", "use_denoising")),
    ("cycles", ("sample_clamp_direct", "sample_clamp_indirect")),
)


def truth_size(scene: Any, size: int) -> tuple[int, int]:
    """(width, height) of the truth renders: `size` wide, the scene's frame aspect."""
    r = scene.render
    aspect = (r.resolution_y * r.pixel_aspect_y) / max(r.resolution_x * r.pixel_aspect_x, 1e-9)
    return size, max(1, min(4 * size, round(size * aspect)))


def _setup(scene: Any, shape: tuple[int, int], samples: int) -> None:
    r = scene.render
    r.engine = "CYCLES"
    scene.cycles.device, scene.cycles.samples, scene.cycles.seed = "CPU", samples, 0
    scene.cycles.use_denoising = False
    r.resolution_x, r.resolution_y = shape
    r.resolution_percentage = 100
    r.pixel_aspect_x = r.pixel_aspect_y = 1.0
    r.image_settings.file_format = "PNG"
    r.image_settings.color_mode, r.image_settings.color_depth = "RGBA", "8"


def _render_png(scene: Any) -> np.ndarray:
    """Render, save as PNG through the scene's colour management, read back (h, w, 4)."""
    with tempfile.TemporaryDirectory(prefix="rewardsmith-truth-") as scratch:
        scene.render.filepath = os.path.join(scratch, "t.png")
        bpy.ops.render.render(write_still=True)
        # OpenCV keeps 16 bits a channel (PIL narrows RGBA to 8); it reads BGRA.
        pixels = cv2.imread(scene.render.filepath, cv2.IMREAD_UNCHANGED)
        if pixels is None or pixels.ndim != 3 or pixels.shape[2] != 4:
            raise ValueError("the truth render could not be read back as RGBA")
        top = 65535.0 if pixels.dtype == np.uint16 else 255.0
        return pixels[..., [2, 1, 0, 3]].astype(np.float64) / top


def _snapshot(scene: Any) -> list[tuple[Any, str, Any]]:
    kept = []
    for path, names in _KEPT:
        owner = scene
        for part in path.split("."):
            owner = getattr(owner, part)
        kept += [(owner, name, getattr(owner, name)) for name in names]
    return kept


def _white() -> Any:
    mat = bpy.data.materials.new("_RewardsmithWhite")
    mat.use_nodes = True
    bsdf = mat.node_tree.nodes["Principled BSDF"]
    bsdf.inputs["Base Color"].default_value = (0.8, 0.8, 0.8, 1.0)
    bsdf.inputs["Roughness"].default_value, bsdf.inputs["Metallic"].default_value = 1.0, 0.0
    return mat


def luminance_render(shape: tuple[int, int], samples: int) -> np.ndarray:
    """Display luminance (h, w) of the scene camera's render on white diffuse surfaces,
    settings (and the view layer's own override) put back after."""
    scene, layer = bpy.context.scene, bpy.context.view_layer
    kept, override = _snapshot(scene), layer.material_override
    try:
        _setup(scene, shape, samples)
        scene.render.image_settings.color_depth = "16"  # a night scene is not 8-bit black
        layer.material_override = _white()
        rgba = _render_png(scene)
    finally:
        for owner, name, value in kept:
            setattr(owner, name, value)
        layer.material_override = override
    return rgba[..., :3] @ _LUMA


def as_read_renders(shape: tuple[int, int], samples: int) -> tuple[np.ndarray, np.ndarray]:
    """(display RGB (h, w, 3) of the scene camera's render as it is, the same with every
    material as the dump reads it): each material's copy has the Principled BSDF inputs
    the dump does not read put back to their defaults and nothing feeding the output's
    volume or displacement. The two differ where something the checks never see changes
    what renders (a green sheen on a red cube, a displacement that moves its faces)."""
    scene = bpy.context.scene
    kept = _snapshot(scene)
    try:
        _setup(scene, shape, samples)
        scene.render.image_settings.color_depth = "16"
        rendered = _render_png(scene)[..., :3]
        with _materials_as_read(scene):
            read = _render_png(scene)[..., :3]
    finally:
        for owner, name, value in kept:
            setattr(owner, name, value)
    return rendered, read


@contextlib.contextmanager
def _materials_as_read(scene: Any) -> Iterator[None]:
    """Every material slot of the scene's objects holds its as-read copy meanwhile."""
    copies: dict[str, Any] = {}
    slots = [slot for obj in scene.objects for slot in getattr(obj, "material_slots", ())]
    originals = [slot.material for slot in slots]
    defaults = _principled_defaults()
    try:
        for slot in slots:
            if slot.material is not None:
                if slot.material.name not in copies:
                    copies[slot.material.name] = _as_read(slot.material, defaults)
                slot.material = copies[slot.material.name]
        yield
    finally:
        for slot, original in zip(slots, originals, strict=True):
            slot.material = original


def _principled_defaults() -> dict[str, Any]:
    """A fresh Principled BSDF's input values, by name."""
    mat = bpy.data.materials.new("_RewardsmithDefaults")
    mat.use_nodes = True
    node = mat.node_tree.nodes.new("ShaderNodeBsdfPrincipled")
    found = {i.name: _copied(i.default_value) for i in node.inputs if hasattr(i, "default_value")}
    bpy.data.materials.remove(mat)
    return found


def _copied(value: Any) -> Any:
    return tuple(value) if hasattr(value, "__len__") else value


def _as_read(material: Any, defaults: dict[str, Any]) -> Any:
    """A copy of `material` with what the dump does not read put back to its default."""
    copy = material.copy()
    tree = copy.node_tree
    if tree is None:
        return copy
    copy.displacement_method = "BUMP"
    for node in tree.nodes:
        if node.type == "BSDF_PRINCIPLED":
            for socket in node.inputs:
                if socket.name in PRINCIPLED_INPUTS or socket.name not in defaults:
                    continue
                for link in list(socket.links):
                    tree.links.remove(link)
                socket.default_value = defaults[socket.name]
        elif node.type == "OUTPUT_MATERIAL":
            for name in ("Volume", "Displacement"):
                for link in list(node.inputs[name].links):
                    tree.links.remove(link)
    return copy


LINEAR_STOPS = -4.0
"""The exposure of the scene-linear renders of `light_split` (values times 1/16, so light
up to 16 times a white surface under a 3 W sun stays under the PNG's 1.0)."""


@contextlib.contextmanager
def _neutral_view(scene: Any) -> Iterator[None]:
    """Meanwhile the scene's colour management writes scene-linear light (Raw, no look,
    curve, white balance, compositor or sequencer, film exposure 1, `LINEAR_STOPS`)."""
    view, display, r = scene.view_settings, scene.display_settings, scene.render
    kept = (
        display.display_device, view.view_transform, view.look, view.exposure, view.gamma,
        view.use_curve_mapping, view.use_white_balance, scene.cycles.film_exposure,
        r.use_compositing, r.use_sequencer,
    )  # fmt: skip
    try:
        display.display_device = "sRGB"
        view.view_transform, view.look = "Raw", "None"
        view.exposure, view.gamma = LINEAR_STOPS, 1.0
        view.use_curve_mapping = view.use_white_balance = False
        scene.cycles.film_exposure = 1.0
        r.use_compositing = r.use_sequencer = False
        yield
    finally:
        display.display_device, view.view_transform, view.look = kept[:3]
        view.exposure, view.gamma, view.use_curve_mapping, view.use_white_balance = kept[3:7]
        scene.cycles.film_exposure, r.use_compositing, r.use_sequencer = kept[7:]


@contextlib.contextmanager
def _asked_light(scene: Any, asked: set[str] | None) -> Iterator[bool]:
    """Meanwhile only the `asked` lights light the scene (no world, every other light
    hidden from the render, and no sample clamp: a clamp of 0.05 took six sevenths of the
    red cube's light); `asked` None (the task states no lights) changes nothing. Yields
    whether anything changed."""
    if asked is None:
        yield False
        return
    clamps = scene.cycles.sample_clamp_direct, scene.cycles.sample_clamp_indirect
    scene.cycles.sample_clamp_direct = scene.cycles.sample_clamp_indirect = 0.0  # no clamp
    world = scene.world
    dropped = [o for o in scene.objects if o.type == "LIGHT" and o.name not in asked]
    hidden = [o.hide_render for o in dropped]
    try:
        scene.world = None
        for obj in dropped:
            obj.hide_render = True
        yield world is not None or bool(dropped) or any(clamps)
    finally:
        scene.cycles.sample_clamp_direct, scene.cycles.sample_clamp_indirect = clamps
        scene.world = world
        for obj, was in zip(dropped, hidden, strict=True):
            obj.hide_render = was


@contextlib.contextmanager
def _white_task_objects(scene: Any, task: set[str], white: Any) -> Iterator[None]:
    """Meanwhile the `task` objects' material slots hold `white` (linked to the object, so
    a shared mesh is untouched) and every other object keeps its own materials: an
    unasked surface that emits (a glowing plane the camera does not see) lights them."""
    slots = [s for o in scene.objects if o.name in task for s in getattr(o, "material_slots", ())]
    kept = []
    try:
        for slot in slots:
            link = slot.link
            slot.link = "OBJECT"
            kept.append((slot, link, slot.material))
            slot.material = white
        yield
    finally:
        for slot, link, material in kept:
            slot.material = material
            slot.link = link


def light_split(
    shape: tuple[int, int],
    samples: int,
    asked: set[str] | None = None,
    task: set[str] | None = None,
) -> tuple[np.ndarray, np.ndarray]:
    """(scene-linear RGB (h, w, 3) of white diffuse surfaces lit by everything in the
    scene, the same lit by the `asked` lights alone, those that meet the spec's lights):
    what the world and every other light add is the light nobody asked for (a scene spec
    lists lights, never a world), measured apart from the asked lights whatever its node
    tree; the scene's own colour management is left out (it is judged as a render setting).
    `asked` None (the spec states no lights) takes only the world away. With the `task`
    objects named, everything else keeps its own materials in the first render (an unasked
    surface that glows is light nobody asked for too; the second has white everywhere). A
    scene with nothing unasked is rendered once. Settings put back after."""
    scene, layer = bpy.context.scene, bpy.context.view_layer
    kept, override, world = _snapshot(scene), layer.material_override, scene.world
    gain = 2.0**-LINEAR_STOPS
    try:
        _setup(scene, shape, samples)
        scene.render.image_settings.color_depth = "16"
        white = _white()
        others = [o.name for o in scene.objects if o.type not in ("LIGHT", "CAMERA")]
        task = task if task and any(n not in task for n in others) else None
        with _neutral_view(scene):
            if task:
                layer.material_override = None
                with _white_task_objects(scene, task, white):
                    everything = _render_png(scene)[..., :3] * gain
            layer.material_override = white
            if not task:
                everything = _render_png(scene)[..., :3] * gain
            lights = everything  # nothing unasked: one render (the inspection's time is shared)
            if task:
                with _asked_light(scene, asked):
                    lights = _render_png(scene)[..., :3] * gain
            elif asked is None and world is not None:
                scene.world = None
                lights = _render_png(scene)[..., :3] * gain
            elif asked is not None:
                with _asked_light(scene, asked) as changed:
                    if changed:
                        lights = _render_png(scene)[..., :3] * gain
    finally:
        scene.world = world
        for owner, name, value in kept:
            setattr(owner, name, value)
        layer.material_override = override
    return everything, lights


@contextlib.contextmanager
def _default_view(scene: Any) -> Iterator[None]:
    """Meanwhile the scene's colour management is Blender's default (AgX, no look, exposure
    0, gamma 1, no curves or white balance, film exposure 1, no compositor or sequencer)."""
    view, display, r = scene.view_settings, scene.display_settings, scene.render
    kept = (
        display.display_device, view.view_transform, view.look, view.exposure, view.gamma,
        view.use_curve_mapping, view.use_white_balance, scene.cycles.film_exposure,
        r.use_compositing, r.use_sequencer,
    )  # fmt: skip
    try:
        display.display_device = "sRGB"
        view.view_transform, view.look = "AgX", "None"
        view.exposure, view.gamma = 0.0, 1.0
        view.use_curve_mapping = view.use_white_balance = False
        scene.cycles.film_exposure = 1.0
        r.use_compositing = r.use_sequencer = False
        yield
    finally:
        display.display_device, view.view_transform, view.look = kept[:3]
        view.exposure, view.gamma, view.use_curve_mapping, view.use_white_balance = kept[3:7]
        scene.cycles.film_exposure, r.use_compositing, r.use_sequencer = kept[7:]


def _is_default_view(scene: Any) -> bool:
    view, r = scene.view_settings, scene.render
    return (
        scene.display_settings.display_device == "sRGB"
        and (view.view_transform, view.look) == ("AgX", "None")
        and (view.exposure, view.gamma, scene.cycles.film_exposure) == (0.0, 1.0, 1.0)
        and not (view.use_curve_mapping or view.use_white_balance)
        and not (r.use_compositing and getattr(scene, "compositing_node_group", None))
        and not (r.use_sequencer and scene.sequence_editor is not None)
    )


def default_view_render(shape: tuple[int, int], samples: int) -> np.ndarray | None:
    """Display RGB (h, w, 3) of the scene as it is (its materials, lights and world) shown
    through Blender's default colour management: the colours the asked materials take
    under the scene's light. What the render shows may differ from it in brightness (an
    exposure of a stop, a Standard or Filmic view), not in colour: a view that turns the
    asked red salmon (exposure +3, film exposure 8, a gamma) fails (`truth.py`). None
    where the scene's view is the default (the as-read renders' first picture is it)."""
    scene = bpy.context.scene
    if _is_default_view(scene):
        return None
    kept = _snapshot(scene)
    try:
        _setup(scene, shape, samples)
        scene.render.image_settings.color_depth = "16"
        with _default_view(scene):
            return _render_png(scene)[..., :3]
    finally:
        for owner, name, value in kept:
            setattr(owner, name, value)


def _index_material() -> Any:
    """Emission of colour ``(i mod 256, i div 256, 0) / 255`` for pass index i."""
    mat = bpy.data.materials.new("_RewardsmithIndex")
    mat.use_nodes = True
    tree = mat.node_tree
    tree.nodes.clear()
    info = tree.nodes.new("ShaderNodeObjectInfo")
    low, high = tree.nodes.new("ShaderNodeMath"), tree.nodes.new("ShaderNodeMath")
    low.operation, high.operation = "MODULO", "DIVIDE"
    low.inputs[1].default_value = high.inputs[1].default_value = 256.0
    floor = tree.nodes.new("ShaderNodeMath")
    floor.operation = "FLOOR"
    scale_low, scale_high = tree.nodes.new("ShaderNodeMath"), tree.nodes.new("ShaderNodeMath")
    for node in (scale_low, scale_high):
        node.operation = "DIVIDE"
        node.inputs[1].default_value = 255.0
    combine = tree.nodes.new("ShaderNodeCombineXYZ")
    emission, output = (
        tree.nodes.new("ShaderNodeEmission"),
        tree.nodes.new("ShaderNodeOutputMaterial"),
    )
    links = tree.links
    links.new(info.outputs["Object Index"], low.inputs[0])
    links.new(info.outputs["Object Index"], high.inputs[0])
    links.new(high.outputs[0], floor.inputs[0])
    links.new(low.outputs[0], scale_low.inputs[0])
    links.new(floor.outputs[0], scale_high.inputs[0])
    links.new(scale_low.outputs[0], combine.inputs[0])
    links.new(scale_high.outputs[0], combine.inputs[1])
    links.new(combine.outputs[0], emission.inputs["Color"])
    emission.inputs["Strength"].default_value = 1.0
    links.new(emission.outputs[0], output.inputs["Surface"])
    return mat


def index_render(shape: tuple[int, int], camera: Any) -> tuple[np.ndarray, dict[int, str]]:
    """(object index (h, w), 0 for nothing; index -> object name). Changes the scene: call
    it last."""
    scene, layer = bpy.context.scene, bpy.context.view_layer
    names = {}
    for k, obj in enumerate(scene.objects):
        obj.pass_index = k + 1 if k < _MAX_INDEX else 0
        names[k + 1] = obj.name
        if obj.type == "LIGHT":
            obj.visible_camera = False  # an area light seen by the camera is not an object
    scene.camera = camera
    scene.world = None  # a world volume would absorb or scatter the index colours
    scene.render.use_compositing = scene.render.use_sequencer = False  # nor rewrite them
    layer.material_override = _index_material()
    scene.render.film_transparent = True
    scene.cycles.filter_width = 0.01
    scene.view_settings.view_transform, scene.view_settings.look = "Raw", "None"
    scene.view_settings.exposure, scene.view_settings.gamma = 0.0, 1.0
    scene.view_settings.use_curve_mapping = scene.view_settings.use_white_balance = False
    scene.cycles.film_exposure = 1.0
    scene.display_settings.display_device = "sRGB"
    _setup(scene, shape, 1)
    rgba = _render_png(scene)
    codes = np.rint(rgba[..., 0] * 255) + 256 * np.rint(rgba[..., 1] * 255)
    codes[rgba[..., 3] < 0.5] = 0  # film showing through: no surface
    return codes.astype(np.int64), names


def truth_stats(
    luminance: np.ndarray,
    index: np.ndarray,
    names: dict[int, str],
    colours: tuple[np.ndarray, np.ndarray] | None = None,
    light: tuple[np.ndarray, np.ndarray] | None = None,
    default_view: np.ndarray | None = None,
) -> dict[str, Any]:
    """Per-object pixels and mean luminance (and, with `colours` from `as_read_renders`,
    mean display RGB as rendered and as read; with `light` from `light_split`, the mean
    scene-linear RGB on white surfaces from everything and from the lights alone); the
    frame's mean luminance."""
    height, width = luminance.shape
    objects = {}
    if index.shape == luminance.shape:
        for value in np.unique(index):
            if int(value) in names:
                mask = index == value
                found: dict[str, Any] = {
                    "pixels": int(mask.sum()),
                    "luminance": round(float(luminance[mask].mean()), 6),
                }
                if colours is not None and colours[0].shape[:2] == index.shape:
                    found["colour"] = [round(float(c), 6) for c in colours[0][mask].mean(axis=0)]
                    found["colour_as_read"] = [
                        round(float(c), 6) for c in colours[1][mask].mean(axis=0)
                    ]
                if light is not None and light[0].shape[:2] == index.shape:
                    found["light"] = {
                        key: [round(float(c), 6) for c in rgb[mask].mean(axis=0)]
                        for key, rgb in zip(("all", "lights"), light, strict=True)
                    }
                if default_view is not None and default_view.shape[:2] == index.shape:
                    found["colour_default_view"] = [
                        round(float(c), 6) for c in default_view[mask].mean(axis=0)
                    ]
                objects[names[int(value)]] = found
    return {
        "size": [width, height],
        "luminance": round(float(luminance.mean()), 6),
        "objects": objects,
    }
