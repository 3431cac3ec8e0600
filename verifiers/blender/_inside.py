"""Code that runs inside the sandboxed Blender children (never in the scoring process).

The sandbox's warm server imports this module once (``preload``): that imports `bpy`,
starts Cycles up with one tiny render, and resets Blender to empty factory settings, so
every forked child starts from the same clean scene without paying for any of it. Entry
points run in children:

- `run_steps` (phase 1, with the model's code): executes each step's script in order,
  failing the run on the first error (Blender itself would exit 0), and saves the scene
  after each step as ``step_<k>.blend``.
- `inspect_blends` (phase 2, trusted code on hostile data, in a fresh child): opens each
  saved file with scripts disabled and writes a JSON dump of what the scene holds, with
  the truth render's statistics for the last (`_truth.py`: what the scene's own camera
  shows, per object), and optionally a small deterministic Cycles preview;
- `export_mesh` (for `cad_code`, trusted, in a fresh child): exports the saved scene's
  meshes to STL.

Phase 2 runs in a separate process from the model's code, so a script cannot forge the
dump: whatever the saved file holds is the scene that is judged.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import sys
import tempfile
import traceback
from typing import Any

import bpy
from mathutils import Vector

from rewardsmith.verifiers.blender._truth import (
    as_read_renders,
    default_view_render,
    index_render,
    light_split,
    luminance_render,
    truth_size,
    truth_stats,
)
from rewardsmith.verifiers.blender._view import (
    PRINCIPLED_INPUTS,
    camera_of,
    in_frame,
    light_of,
    render_of,
    vec,
)

EXIT_SCRIPT_ERROR = 3
EXIT_SYNTAX_ERROR = 4


def _warm_cycles() -> None:
    """Render and save one tiny frame, then reset: Cycles' one-time start-up and the image
    writer's colour management (about 0.8 s here) are paid once in the server, and every
    forked child's preview costs only its own frame (about 0.15 s). Children render the same
    pixels as a cold process (tested against the bundled preview).
    """
    bpy.ops.mesh.primitive_cube_add()
    camera = bpy.data.objects.new("Warm", bpy.data.cameras.new("Warm"))
    bpy.context.scene.collection.objects.link(camera)
    bpy.context.scene.camera = camera
    camera.location, camera.rotation_euler = (0, -5, 0), (math.pi / 2, 0, 0)
    sys.stdout.flush()
    saved, null = os.dup(1), os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)  # Blender prints "Saved: ..." from C: keep the server's stdout clean
    try:
        with tempfile.TemporaryDirectory(prefix="rewardsmith-warm-") as scratch:
            _preview(8, 1, os.path.join(scratch, "warm.png"))
    finally:
        os.dup2(saved, 1)
        os.close(saved)
        os.close(null)


# --------------------------------------------------------------------------- phase 1


def run_steps(n_steps: int) -> None:
    """Run ``step_0.py`` .. ``step_<n-1>.py`` in order, saving the scene after each."""
    for k in range(n_steps):
        with open(f"step_{k}.py", encoding="utf-8", errors="replace") as handle:
            source = handle.read()
        try:
            code = compile(source, f"step_{k}.py", "exec")
        except (SyntaxError, ValueError) as exc:
            print(f"step {k}: {type(exc).__name__}: {exc}", file=sys.stderr)
            sys.exit(EXIT_SYNTAX_ERROR)
        try:
            exec(code, {"__name__": "__main__", "bpy": bpy})
        except SystemExit as exc:
            if exc.code not in (None, 0):
                print(f"step {k}: exited with {exc.code!r}", file=sys.stderr)
                sys.exit(EXIT_SCRIPT_ERROR)
        except BaseException:
            print(f"step {k} raised:", file=sys.stderr)
            traceback.print_exc(limit=6)
            sys.exit(EXIT_SCRIPT_ERROR)
        bpy.ops.wm.save_as_mainfile(filepath=f"/box/step_{k}.blend", check_existing=False)


# --------------------------------------------------------------------------- phase 2


def _value(v: Any) -> Any:
    if isinstance(v, int | float):
        return round(float(v), 6)
    try:
        return [round(float(x), 6) for x in v]
    except TypeError:
        return None


_MAX_EVALUATED_VERTICES = 5_000_000


def _evaluated_bounds(obj: Any, depsgraph: Any) -> tuple[list[Any], list[Any], set[int]] | None:
    """(local corners, world corners, material slots its faces use) of the evaluated mesh,
    modifiers applied.

    ``bound_box`` of an evaluated object can be the *unevaluated* box (a Subdivision
    Surface modifier left to the GPU, or to the drawing code, is not in it: a subdivided
    2 m cube read 2.0 where its mesh is 1.68 across), so the vertices are measured. A slot
    no face uses renders nothing, so it is not reported as the object's material."""
    if obj.type not in ("MESH", "CURVE", "SURFACE", "FONT", "META"):
        return None
    evaluated = obj.evaluated_get(depsgraph)
    try:
        mesh = evaluated.to_mesh()
    except RuntimeError:
        return None
    try:
        if mesh is None or not len(mesh.vertices) or len(mesh.vertices) > _MAX_EVALUATED_VERTICES:
            return None
        local = [v.co.copy() for v in mesh.vertices]
        slots = {p.material_index for p in mesh.polygons}
    finally:
        evaluated.to_mesh_clear()
    world = [obj.matrix_world @ v for v in local]
    return _box(local), _box(world), slots


def _box(points: list[Any]) -> list[Any]:
    return [
        [min(p[i] for p in points) for i in range(3)],
        [max(p[i] for p in points) for i in range(3)],
    ]


def _object(obj: Any, depsgraph: Any, shown: set[str], clear: set[str]) -> dict[str, Any]:
    evaluated = obj.evaluated_get(depsgraph)  # with modifiers applied
    corners = [obj.matrix_world @ Vector(c) for c in evaluated.bound_box]
    low = [min(c[i] for c in corners) for i in range(3)]
    high = [max(c[i] for c in corners) for i in range(3)]
    dimensions = list(evaluated.dimensions)
    slots = obj.material_slots
    used = set(range(len(slots)))
    measured = _evaluated_bounds(obj, depsgraph)
    if measured is not None:
        (local_low, local_high), (low, high), used = measured
        scale = obj.matrix_world.to_scale()
        dimensions = [abs(scale[i]) * (local_high[i] - local_low[i]) for i in range(3)]
    return {
        "name": obj.name,
        "type": obj.type,
        "location": vec(obj.matrix_world.translation),
        "dimensions": vec(dimensions),
        "bbox_min": vec(low),
        "bbox_max": vec(high),
        "modifiers": [{"name": m.name, "type": m.type} for m in obj.modifiers if _renders(m)],
        "materials": [s.material.name for k, s in enumerate(slots) if s.material and k in used],
        "parent": obj.parent.name if obj.parent else None,
        "hidden": _hidden_from_render(obj, shown) or _see_through(obj, used, clear),
    }


def _simplify_cap() -> int | None:
    """The render's subdivision cap (Simplify), or None when it is off."""
    r = bpy.context.scene.render
    return int(r.simplify_subdivision_render) if r.use_simplify else None


def _renders(modifier: Any) -> bool:
    """Whether the render applies the modifier: shown in the render, and a subdivision not
    capped to level 0 by the scene's Simplify."""
    if not modifier.show_render:
        return False
    levels = getattr(modifier, "render_levels", None)
    cap = _simplify_cap()
    return levels is None or cap is None or min(levels, cap) > 0


def _see_through(obj: Any, used: set[int], clear: set[str]) -> str | None:
    """Why the render does not show `obj`'s surface: every material its faces use is
    transparent (see `_clear_materials`)."""
    slots = obj.material_slots
    names = [slots[k].material.name for k in used if k < len(slots) and slots[k].material]
    if names and len(names) == len(used) and all(n in clear for n in names):
        return "every material it uses is transparent (alpha under 0.5)"
    return None


def _clear_materials() -> set[str]:
    """Materials whose rendered Principled BSDF has an unlinked alpha under 0.5: Cycles draws
    nothing of such a surface, and the index pass skips it (its alpha threshold is 0.5)."""
    clear = set()
    for mat in bpy.data.materials:
        node, _ = _surface_shader(mat.node_tree if mat.use_nodes else None)
        alpha = node.inputs.get("Alpha") if node is not None else None
        if alpha is not None and not alpha.is_linked and alpha.default_value < 0.5:
            clear.add(mat.name)
    return clear


def _shown_collections(view_layer: Any) -> set[str]:
    """Names of the collections the render shows: not excluded from the view layer and not
    hidden from the render, nor any collection above them."""
    shown: set[str] = set()
    pending = [view_layer.layer_collection]
    while pending:
        layer = pending.pop()
        if layer.exclude or layer.collection.hide_render:
            continue
        shown.add(layer.collection.name)
        pending.extend(layer.children)
    return shown


def _hidden_from_render(obj: Any, shown: set[str]) -> str | None:
    """Why the render does not show `obj` (None when it does): the checks judge what renders,
    so an object measured right but hidden earns nothing for itself."""
    if obj.hide_render:
        return "hide_render is set"
    if not any(c.name in shown for c in obj.users_collection):
        return "its collections are excluded or hidden from the render"
    if obj.type != "LIGHT" and not obj.visible_camera:
        return "camera rays do not see it"
    if getattr(obj, "is_holdout", False):
        return "it is a holdout (renders as a hole)"
    if obj.type != "LIGHT" and getattr(obj, "is_shadow_catcher", False):
        return "it is a shadow catcher (renders only the shadows on it)"
    instancer = len(getattr(obj, "particle_systems", ())) or obj.instance_type != "NONE"
    if instancer and not obj.show_instancer_for_render:
        return "it is a particle emitter or instancer whose own mesh is not rendered"
    if obj.type == "MESH" and _reads_is_viewport(obj):
        return "its geometry nodes read Is Viewport (the render differs from what was measured)"
    return None


def _reads_is_viewport(obj: Any) -> bool:
    groups = [m.node_group for m in obj.modifiers if m.type == "NODES" and m.node_group]
    seen: set[str] = set()
    while groups:
        group = groups.pop()
        if group.name in seen:
            continue
        seen.add(group.name)
        for node in group.nodes:
            if node.bl_idname == "GeometryNodeIsViewport":
                return True
            if getattr(node, "node_tree", None) is not None:
                groups.append(node.node_tree)
    return False


def _as_rendered() -> None:
    """Make the (viewport) evaluation the checks measure match the render's: a modifier
    shown only in the viewport, or only in the render, and viewport subdivision levels
    would otherwise let a script show the check one mesh and the camera another. Viewport
    visibility is the viewport's only: an object, collection or layer hidden there is
    still rendered, but the viewport depsgraph leaves it unevaluated (its transform read
    as the identity, its modifiers skipped), so every viewport-only hide is cleared first;
    what renders is decided by the render flags alone (`_hidden_from_render`)."""
    for collection in bpy.data.collections:
        collection.hide_viewport = False
    pending = [bpy.context.view_layer.layer_collection]
    while pending:
        layer = pending.pop()
        layer.hide_viewport = False
        pending.extend(layer.children)
    for obj in bpy.data.objects:
        obj.hide_viewport = False
        if obj.name in bpy.context.view_layer.objects:
            obj.hide_set(False)
        for modifier in obj.modifiers:
            modifier.show_viewport = modifier.show_render
            if hasattr(modifier, "render_levels") and hasattr(modifier, "levels"):
                cap = _simplify_cap()  # the render applies Simplify's cap; measure that
                levels = modifier.render_levels
                modifier.levels = levels if cap is None else min(levels, cap)
        data = obj.data
        if obj.type in ("CURVE", "SURFACE", "FONT") and data.render_resolution_u:
            data.resolution_u = data.render_resolution_u


_SMEAR_M = 0.01
"""How far a point of an object may move during the motion-blur shutter and still be
measured where it renders (1 cm)."""


def _moving_in_shutter(scene: Any, objects: list[Any]) -> dict[str, str]:
    """Objects (the camera among them) that move during the render's motion-blur shutter,
    with how far: the checks measure each at the current frame, but the render averages
    the shutter, so an object keyframed away either side of the frame renders as a smear
    (the red team's cube, right at its frame, showed in 0 % of the picture)."""
    if not scene.render.use_motion_blur:
        return {}
    frame, shutter = scene.frame_current, float(scene.render.motion_blur_shutter)

    def corners() -> dict[str, list[Any]]:
        depsgraph = bpy.context.evaluated_depsgraph_get()
        return {
            o.name: [o.matrix_world @ Vector(c) for c in o.evaluated_get(depsgraph).bound_box]
            + [o.matrix_world @ Vector((0.0, 0.0, -1.0))]  # a camera's aim moves this point
            for o in objects
        }

    still = corners()
    moved: dict[str, float] = {}
    try:
        for offset in (-shutter, -shutter / 2, shutter / 2, shutter):
            whole = math.floor(frame + offset)
            scene.frame_set(whole, subframe=frame + offset - whole)
            for name, points in corners().items():
                far = max((p - q).length for p, q in zip(points, still[name], strict=True))
                moved[name] = max(moved.get(name, 0.0), far)
    finally:
        scene.frame_set(frame)
    return {
        name: f"it moves {far:.3g} m during the motion-blur shutter (the render smears it)"
        for name, far in moved.items()
        if far > _SMEAR_M
    }


def _material(mat: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"name": mat.name, "principled": None}
    tree = mat.node_tree if mat.use_nodes else None
    node, out["surface"] = _surface_shader(tree)
    if node is not None:
        out["principled"] = {
            name: {
                "value": _value(node.inputs[name].default_value),
                "linked": node.inputs[name].is_linked,
            }
            for name in PRINCIPLED_INPUTS
            if name in node.inputs
        }
    out["diffuse_color"] = vec(mat.diffuse_color)
    return out


def _surface_shader(tree: Any) -> tuple[Any, str]:
    """(the Principled BSDF the render's material output is fed by, or None; what feeds it).
    Only that node's inputs are what renders: a second Principled BSDF left unconnected, or
    one mixed with another shader, is a decoy."""
    if tree is None:
        return None, "the material does not use nodes"
    output = tree.get_output_node("CYCLES")
    if output is None or not output.inputs["Surface"].is_linked:
        return None, "nothing feeds the material output's surface"
    link = output.inputs["Surface"].links[0]
    node = link.from_node
    while node.type == "REROUTE" and node.inputs[0].is_linked:
        link = node.inputs[0].links[0]
        node = link.from_node
    if link.is_muted or node.mute or node.type != "BSDF_PRINCIPLED":
        return None, f"the surface is fed by {node.bl_label or node.type}, not a Principled BSDF"
    return node, "Principled BSDF"


_VIEW_KEYS = (
    "view_transform", "look", "exposure", "gamma", "use_curve_mapping", "use_white_balance",
    "white_balance_temperature", "white_balance_tint",
)  # fmt: skip


def _follow_override(scene: Any) -> None:
    """An output colour-management override (``image_settings.color_management``) is the
    view the saved picture goes through: made the scene's own, so the render settings read
    it and every truth render (the object-index one above all) controls it. Otherwise an
    override at exposure +3 saved a salmon cube that the scene's view never showed."""
    image = scene.render.image_settings
    if getattr(image, "color_management", "FOLLOW_SCENE") != "OVERRIDE":
        return
    view, own = image.view_settings, scene.view_settings
    with contextlib.suppress(TypeError, ValueError):
        scene.display_settings.display_device = image.display_settings.display_device
    for key in _VIEW_KEYS:
        with contextlib.suppress(TypeError, ValueError, AttributeError):
            setattr(own, key, getattr(view, key))
    for key in ("black_level", "white_level"):
        setattr(own.curve_mapping, key, getattr(view.curve_mapping, key))
    own.curve_mapping.update()
    image.color_management = "FOLLOW_SCENE"


def _saved_layer_only(scene: Any) -> None:
    """Keep only the view layer the saved picture shows, the first one the render uses:
    the dump and the truth renders read the context's layer, which is the first whatever
    its ``use`` (a disabled first layer left a second, rendered one with a green material
    override unread, and an honest second layer failed: the index render's override went
    to the layer that does not render). No layer in use: nothing changes."""
    used = [layer for layer in scene.view_layers if layer.use]
    if not used:
        return
    for layer in list(scene.view_layers):
        if layer != used[0]:
            scene.view_layers.remove(layer)


def dump_scene() -> dict[str, Any]:
    """What the open scene holds, as plain values (the record the spec is checked against)."""
    scene = bpy.context.scene
    _saved_layer_only(scene)
    _as_rendered()
    _follow_override(scene)
    depsgraph = bpy.context.evaluated_depsgraph_get()
    objects = list(scene.objects)[:1000]
    shown = _shown_collections(bpy.context.view_layer)
    clear = _clear_materials()
    smeared = _moving_in_shutter(scene, objects)
    dumped = [_object(o, depsgraph, shown, clear) for o in objects]
    for entry in dumped:
        entry["hidden"] = entry["hidden"] or smeared.get(entry["name"])
    rendered = [o["name"] for o in dumped if o["type"] == "MESH" and not o["hidden"]]
    used = {name for o in dumped if not o["hidden"] for name in o["materials"]}
    camera = camera_of(scene)
    if camera is not None:  # what of the scene the picture holds: not only where it points
        camera["in_frame"] = [
            o["name"]
            for o in dumped
            if o["type"] == "MESH" and not o["hidden"] and in_frame(scene, o)
        ]
    render = render_of(scene)
    render["camera_moves"] = smeared.get(scene.camera.name) if scene.camera else None
    return {
        "objects": dumped,
        "materials": [_material(m) for m in bpy.data.materials if m.name in used][:1000],
        "lights": [
            light_of(o, _hidden_from_render(o, shown), rendered)
            for o in objects
            if o.type == "LIGHT"
        ],
        "camera": camera,
        "render": render,
    }


def _preview(size: int, samples: int, path: str) -> bool:
    scene = bpy.context.scene
    if scene.camera is None:
        return False
    scene.render.engine = "CYCLES"
    scene.cycles.device = "CPU"
    scene.cycles.samples = samples
    scene.cycles.seed = 0
    scene.cycles.use_denoising = False
    aspect = scene.render.resolution_y / max(scene.render.resolution_x, 1)
    scene.render.resolution_x, scene.render.resolution_y = size, max(1, round(size * aspect))
    scene.render.resolution_percentage = 100
    scene.render.image_settings.file_format = "PNG"
    scene.render.filepath = path
    bpy.ops.render.render(write_still=True)
    return True


def _view_camera(location: list[float], look_at: list[float]) -> Any:
    """A 50 mm camera at `location` aimed at `look_at`, made the scene's camera."""
    camera = bpy.data.objects.new("_RewardsmithView", bpy.data.cameras.new("_RewardsmithView"))
    bpy.context.scene.collection.objects.link(camera)
    camera.location = location
    forward = Vector(look_at) - Vector(location)
    camera.rotation_euler = forward.to_track_quat("-Z", "Y").to_euler()
    bpy.context.scene.camera = camera
    return camera


def _render_views(views: list[dict[str, Any]], size: int, samples: int) -> None:
    """Render the scene from each extra view to ``view_<k>.png``: a scene right from one
    camera can be a flat cut-out from another."""
    for k, view in enumerate(views):
        _view_camera(view["location"], view["look_at"])
        _preview(size, samples, f"/box/view_{k}.png")


def inspect_blends(
    n_steps: int,
    preview_size: int = 0,
    preview_samples: int = 16,
    views: str = "[]",
    truth_size_px: int = 48,
    truth_samples: int = 4,
    asked: str = "null",
) -> None:
    """Dump each ``step_<k>.blend`` to ``scene.json``; render the last when asked (from
    the scene camera, and from each of `views`, a JSON list of {location, look_at})."""
    bpy.context.preferences.system.use_gpu_subdivision = False  # evaluate on the CPU
    dumps: list[dict[str, Any] | None] = []
    for k in range(n_steps):
        try:  # use_scripts=False: the file's drivers and registered scripts never run
            bpy.ops.wm.open_mainfile(
                filepath=f"/box/step_{k}.blend", load_ui=False, use_scripts=False
            )
        except (RuntimeError, OSError) as exc:
            print(f"step {k}: cannot open the saved scene: {exc}", file=sys.stderr)
            dumps.append(None)
            continue
        dumps.append(dump_scene())
    rendered, final = False, dumps[-1] if dumps else None
    scene = bpy.context.scene
    camera, shape = scene.camera, truth_size(scene, truth_size_px)
    seen = final is not None and camera is not None and camera.type == "CAMERA" and truth_size_px
    wanted = json.loads(asked) or {}
    lit = _asked_lights(final, wanted) if seen and final is not None else None
    task = set(wanted.get("objects") or ())
    luminance = luminance_render(shape, truth_samples) if seen else None
    colours = as_read_renders(shape, truth_samples) if seen else None
    light = light_split(shape, truth_samples, lit, task) if seen else None
    reference = default_view_render(shape, truth_samples) if seen else None
    if reference is None and colours is not None:
        reference = colours[0]  # the scene's view is the default: the same picture
    if preview_size and final is not None:
        rendered = _preview(preview_size, preview_samples, "/box/preview.png")
        _render_views(json.loads(views), preview_size, preview_samples)
    if luminance is not None and final is not None:
        final["truth"] = truth_stats(
            luminance, *index_render(shape, camera), colours, light, reference
        )  # last
    with open("/box/scene.json", "w", encoding="utf-8") as handle:
        # NaN coordinates (a hostile scene can hold them) go out as NaN tokens, which the
        # trusted side reads and fails every comparison on.
        json.dump({"steps": dumps, "preview": rendered}, handle)


def _asked_lights(dump: dict[str, Any], asked: dict[str, Any] | None) -> set[str] | None:
    """Names of the scene's lights the task asks for (`check.asked_lights`, the checks'
    own matching), or None where the spec states no lights: the truth render's light split
    lights its reference with these alone."""
    if not asked or not asked.get("lights"):
        return None
    from rewardsmith.verifiers.blender.check import asked_lights
    from rewardsmith.verifiers.blender.spec import LightSpec, Tolerances

    specs = [LightSpec.model_validate(s) for s in asked["lights"]]
    tol = Tolerances.model_validate(asked.get("tolerances") or {})
    lights = list(dump.get("lights", []))
    return {lights[k]["name"] for k in asked_lights(lights, specs, tol)}


def export_mesh(path: str = "/box/out.stl") -> None:
    """Open ``step_0.blend`` (scripts disabled) and export every mesh object to STL,
    in world coordinates with modifiers applied: the geometry a Blender CAD script built."""
    bpy.ops.wm.open_mainfile(filepath="/box/step_0.blend", load_ui=False, use_scripts=False)
    _as_rendered()
    if not any(o.type == "MESH" for o in bpy.context.scene.objects):
        print("the scene holds no mesh object", file=sys.stderr)
        sys.exit(EXIT_SCRIPT_ERROR)
    bpy.ops.wm.stl_export(filepath=path, export_selected_objects=False, apply_modifiers=True)


_warm_cycles()
bpy.ops.wm.read_factory_settings(use_empty=True)
bpy.context.preferences.system.use_gpu_subdivision = False
