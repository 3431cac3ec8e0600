"""Code that runs inside the sandboxed Blender children (never in the scoring process).

The sandbox's warm server imports this module once (``preload``): that imports `bpy`,
starts Cycles up with one tiny render, and resets Blender to empty factory settings, so
every forked child starts from the same clean scene without paying for any of it. Entry
points run in children:

- `run_steps` (phase 1, with the model's code): executes each step's script in order,
  failing the run on the first error (Blender itself would exit 0), and saves the scene
  after each step as ``step_<k>.blend``.
- `inspect_blends` (phase 2, trusted code on hostile data, in a fresh child): opens each
  saved file with scripts disabled and writes a JSON dump of what the scene holds, and
  optionally a small deterministic Cycles preview;
- `export_mesh` (for `cad_code`, trusted, in a fresh child): exports the saved scene's
  meshes to STL.

Phase 2 runs in a separate process from the model's code, so a script cannot forge the
dump: whatever the saved file holds is the scene that is judged.
"""

from __future__ import annotations

import json
import math
import os
import sys
import tempfile
import traceback
from typing import Any

import bpy
from mathutils import Vector

EXIT_SCRIPT_ERROR = 3
EXIT_SYNTAX_ERROR = 4
_PRINCIPLED_INPUTS = (
    "Base Color",
    "Metallic",
    "Roughness",
    "IOR",
    "Alpha",
    "Emission Color",
    "Emission Strength",
    "Transmission Weight",
    "Coat Weight",
    "Subsurface Weight",
)


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


def _vec(v: Any) -> list[float]:
    return [round(float(x), 6) for x in v]


def _value(v: Any) -> Any:
    if isinstance(v, int | float):
        return round(float(v), 6)
    try:
        return [round(float(x), 6) for x in v]
    except TypeError:
        return None


_MAX_EVALUATED_VERTICES = 5_000_000


def _evaluated_bounds(obj: Any, depsgraph: Any) -> tuple[list[Any], list[Any]] | None:
    """(local corners, world corners) of the evaluated mesh's vertices, modifiers applied.

    ``bound_box`` of an evaluated object can be the *unevaluated* box (a Subdivision
    Surface modifier left to the GPU, or to the drawing code, is not in it: a subdivided
    2 m cube read 2.0 where its mesh is 1.68 across), so the vertices are measured."""
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
    finally:
        evaluated.to_mesh_clear()
    world = [obj.matrix_world @ v for v in local]
    return _box(local), _box(world)


def _box(points: list[Any]) -> list[Any]:
    return [
        [min(p[i] for p in points) for i in range(3)],
        [max(p[i] for p in points) for i in range(3)],
    ]


def _object(obj: Any, depsgraph: Any) -> dict[str, Any]:
    evaluated = obj.evaluated_get(depsgraph)  # with modifiers applied
    corners = [obj.matrix_world @ Vector(c) for c in evaluated.bound_box]
    low = [min(c[i] for c in corners) for i in range(3)]
    high = [max(c[i] for c in corners) for i in range(3)]
    dimensions = list(evaluated.dimensions)
    measured = _evaluated_bounds(obj, depsgraph)
    if measured is not None:
        (local_low, local_high), (low, high) = measured
        scale = obj.matrix_world.to_scale()
        dimensions = [abs(scale[i]) * (local_high[i] - local_low[i]) for i in range(3)]
    return {
        "name": obj.name,
        "type": obj.type,
        "location": _vec(obj.matrix_world.translation),
        "dimensions": _vec(dimensions),
        "bbox_min": _vec(low),
        "bbox_max": _vec(high),
        "modifiers": [{"name": m.name, "type": m.type} for m in obj.modifiers],
        "materials": [s.material.name for s in obj.material_slots if s.material],
        "parent": obj.parent.name if obj.parent else None,
    }


def _material(mat: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"name": mat.name, "principled": None}
    tree = mat.node_tree if mat.use_nodes else None
    nodes = [n for n in tree.nodes if n.type == "BSDF_PRINCIPLED"] if tree else []
    if nodes:
        node = nodes[0]
        out["principled"] = {
            name: {
                "value": _value(node.inputs[name].default_value),
                "linked": node.inputs[name].is_linked,
            }
            for name in _PRINCIPLED_INPUTS
            if name in node.inputs
        }
    out["diffuse_color"] = _vec(mat.diffuse_color)
    return out


def _light(obj: Any) -> dict[str, Any]:
    forward = obj.matrix_world.to_3x3() @ Vector((0.0, 0.0, -1.0))
    return {
        "name": obj.name,
        "type": obj.data.type,
        "energy": round(float(obj.data.energy), 6),
        "color": _vec(obj.data.color),
        "location": _vec(obj.matrix_world.translation),
        "direction": _vec(forward.normalized()),
    }


def _camera(scene: Any) -> dict[str, Any] | None:
    cam = scene.camera
    if cam is None or cam.type != "CAMERA":
        return None
    forward = cam.matrix_world.to_3x3() @ Vector((0.0, 0.0, -1.0))
    return {
        "name": cam.name,
        "location": _vec(cam.matrix_world.translation),
        "direction": _vec(forward.normalized()),
        "lens": round(float(cam.data.lens), 6),
        "sensor": round(float(max(cam.data.sensor_width, cam.data.sensor_height)), 6),
        "projection": cam.data.type,
    }


def _render(scene: Any) -> dict[str, Any]:
    r = scene.render
    return {
        "engine": r.engine,
        "resolution_x": r.resolution_x,
        "resolution_y": r.resolution_y,
        "resolution_percentage": r.resolution_percentage,
        "samples": scene.cycles.samples if r.engine == "CYCLES" else None,
        "film_transparent": bool(r.film_transparent),
    }


def dump_scene() -> dict[str, Any]:
    """What the open scene holds, as plain values (the record the spec is checked against)."""
    scene = bpy.context.scene
    depsgraph = bpy.context.evaluated_depsgraph_get()
    objects = list(scene.objects)
    used = {s.material.name for o in objects for s in o.material_slots if s.material}
    return {
        "objects": [_object(o, depsgraph) for o in objects[:1000]],
        "materials": [_material(m) for m in bpy.data.materials if m.name in used][:1000],
        "lights": [_light(o) for o in objects[:1000] if o.type == "LIGHT"],
        "camera": _camera(scene),
        "render": _render(scene),
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
    n_steps: int, preview_size: int = 0, preview_samples: int = 16, views: str = "[]"
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
    rendered = False
    if preview_size and dumps and dumps[-1] is not None:
        rendered = _preview(preview_size, preview_samples, "/box/preview.png")
        _render_views(json.loads(views), preview_size, preview_samples)
    with open("/box/scene.json", "w", encoding="utf-8") as handle:
        # NaN coordinates (a hostile scene can hold them) go out as NaN tokens, which the
        # trusted side reads and fails every comparison on.
        json.dump({"steps": dumps, "preview": rendered}, handle)


def export_mesh(path: str = "/box/out.stl") -> None:
    """Open ``step_0.blend`` (scripts disabled) and export every mesh object to STL,
    in world coordinates with modifiers applied: the geometry a Blender CAD script built."""
    bpy.ops.wm.open_mainfile(filepath="/box/step_0.blend", load_ui=False, use_scripts=False)
    if not any(o.type == "MESH" for o in bpy.context.scene.objects):
        print("the scene holds no mesh object", file=sys.stderr)
        sys.exit(EXIT_SCRIPT_ERROR)
    bpy.ops.wm.stl_export(filepath=path, export_selected_objects=False, apply_modifiers=True)


_warm_cycles()
bpy.ops.wm.read_factory_settings(use_empty=True)
bpy.context.preferences.system.use_gpu_subdivision = False
