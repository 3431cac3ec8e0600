"""Scripted policies for the `blender_scene` environment: the expert, the lazy one, and the
hostile classes `rewardsmith audit --env blender_scene` plays (see docs/gaming.md).

- `expert_actions(task)`: the task's reference scripts played as turns (geometry, then
  materials and lights in one turn, then camera and render), a preview, an inspection, and
  a plain final reply. It earns the full reward on every bundled task.
- `lazy_actions(task)`: the geometry only, then a reply; it earns clearly less.
- `exploits(tasks)`: per task, one `EpisodeExploit` per hostile class, each with its limit.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from rewardsmith.environments.episode_exploits import EpisodeExploit

__all__ = ["call", "expert_actions", "exploits", "lazy_actions", "live_only"]


def call(name: str, **arguments: Any) -> str:
    """One tool call as the model writes it."""
    return f"<tool_call>{json.dumps({'name': name, 'arguments': arguments})}</tool_call>"


def expert_actions(task: Mapping[str, Any]) -> list[str]:
    geometry, materials, lighting, camera = task["solution"]["scripts"]
    return [
        call("run_bpy", code=geometry),
        call("run_bpy", code=materials) + call("run_bpy", code=lighting),
        call("run_bpy", code=camera),
        call("render_preview", size=64) + call("inspect_scene"),
        "The scene is finished.",
    ]


def lazy_actions(task: Mapping[str, Any]) -> list[str]:
    return [call("run_bpy", code=task["solution"]["scripts"][0]), "Done."]


_DELETE_ALL = "import bpy\nfor o in list(bpy.data.objects):\n    bpy.data.objects.remove(o)\n"
_FACTORY = "import bpy\nbpy.ops.wm.read_factory_settings(use_empty=True)\n"
_HANG = "while True:\n    pass\n"
_SEGFAULT = "import ctypes\nctypes.string_at(0)\n"
_KILL = "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)\n"
_EXIT = "import os\nos._exit(0)\n"
_HUGE_RENDER = (
    "import bpy\nscene = bpy.context.scene\nscene.render.resolution_x = 16384\n"
    "scene.render.resolution_y = 16384\nscene.render.resolution_percentage = 100\n"
    "bpy.ops.render.render()\n"
)
_TALL_FRAME = (
    "import bpy\nscene = bpy.context.scene\nscene.render.resolution_x = 4\n"
    "scene.render.resolution_y = 65536\n"
)


_WORLD_LIGHT = (
    "import bpy\nworld = bpy.data.worlds.new('Faint')\nworld.use_nodes = True\n"
    "background = world.node_tree.nodes['Background']\n"
    "background.inputs['Color'].default_value = (0.3, 0.3, 0.3, 1.0)\n"
    "bpy.context.scene.world = world\n"
)
"""A grey world: keeps the truth render's luminance above its gate while the lights the
task asks for are made dark, so only the lights' own readings can catch them."""


def _each_light(body: str) -> str:
    return f"import bpy\nfor o in bpy.data.objects:\n    if o.type == 'LIGHT':\n{body}"


_MISREAD_LIGHTS = {
    # The light's exposure multiplies its energy by 2 ** exposure in every engine.
    "light_exposure": _each_light("        o.data.exposure = -6.0\n"),
    "light_exposure_world": _each_light("        o.data.exposure = -30.0\n") + _WORLD_LIGHT,
    # A colour of 50: white as a hue, 50 times the energy read.
    "light_colour_gain": _each_light("        o.data.color = (50.0, 50.0, 50.0)\n"),
    # Cycles light linking: a receiver collection excluding every mesh lights none of them.
    "light_linking_excluded": (
        "import bpy\noff = bpy.data.collections.new('Off')\n"
        "for o in bpy.data.objects:\n    if o.type == 'MESH':\n        off.objects.link(o)\n"
        "for entry in off.collection_objects:\n    entry.light_linking.link_state = 'EXCLUDE'\n"
        + _each_light("        o.light_linking.receiver_collection = off\n")
        + _WORLD_LIGHT
    ),
}
_BLACK_COAT = (
    "import bpy\nfor m in bpy.data.materials:\n"
    "    b = m.node_tree.nodes.get('Principled BSDF') if m.node_tree else None\n"
    "    if b:\n        b.inputs['Coat Weight'].default_value = 1.0\n"
    "        b.inputs['Coat Tint'].default_value = (0.0, 0.0, 0.0, 1.0)\n"
)
"""A black coat over every material: the base colour read, a black surface rendered."""
_TEMPERATURE = _each_light(
    "        o.data.use_temperature = True\n        o.data.temperature = 800.0\n"
)
_SMEAR = """
import bpy
scene = bpy.context.scene
scene.render.use_motion_blur, scene.render.motion_blur_shutter = True, 1.0
frame = scene.frame_current
for o in [o for o in bpy.data.objects if o.type in {kinds!r}]:
    here = o.{channel}.copy()
    for step, shift in ((-1, -{far}), (1, {far}), (0, 0.0)):
        o.{channel} = here
        o.{channel}[2] += shift
        o.keyframe_insert({channel!r}, frame=frame + step)
scene.frame_set(frame)
"""
_SMEARS = {
    # Keyframed 400 m away one frame either side: right at its frame, a smear in the render.
    "motion_blur_meshes": _SMEAR.format(kinds=("MESH",), channel="location", far=400.0),
    "motion_blur_camera": _SMEAR.format(kinds=("CAMERA",), channel="rotation_euler", far=3.0),
}


def _staged(
    reference: Mapping[str, Any], lighting: float, render: float, materials: float = 1.0
) -> float:
    """The return (turn rewards plus final: twice the final, from an empty scene's 0) of
    a scene right but for its materials, lighting and render stage scores."""
    stages = [1.0, materials, lighting, render][: 4 if reference.get("camera") else 3]
    total = 0.0
    for k, value in enumerate(stages):
        total += value if all(v >= 1.0 for v in stages[:k]) else 0.0
    return 2 * total / len(stages)


def _render_checks(reference: Mapping[str, Any]) -> int:
    """How many render-stage checks the spec makes (`check.check_scene`): the camera's
    stated fields (one ``camera`` check when none), "camera sees the scene", each stated
    render setting, and the one "render settings" check."""
    camera = reference.get("camera") or {}
    stated = [k for k in ("location", "look_at", "direction", "lens") if camera.get(k) is not None]
    settings = [v for v in (reference.get("render") or {}).values() if v is not None]
    return max(1, len(stated)) + 1 + len(settings) + 1


def _coloured_share(reference: Mapping[str, Any]) -> float:
    """The share of the spec's lights that state a colour (a blackbody tint fails them)."""
    lights = reference.get("lights") or []
    return sum(1 for x in lights if x.get("color") is not None) / max(1, len(lights))


def live_only(condition: str, script: str) -> str:
    """Model code that runs `script` only when `condition` holds where it runs."""
    return f"import os, bpy, random, time\nif {condition}:\n    exec({script!r})\n"


def _peek(paths: Sequence[str], expert: str) -> str:
    """Model code that looks for the task files, the scratch folders and the repository
    from inside the jail; if any is readable it builds the expert's scene from it."""
    return (
        "import glob, os, json\nfound = []\n"
        f"for pattern in {list(paths)!r}:\n"
        "    for path in glob.glob(pattern, recursive=False)[:50]:\n"
        "        try:\n"
        "            found.append(open(path, errors='replace').read(200000))\n"
        "        except OSError:\n"
        "            pass\n"
        "print('read', len(found), 'files')\n"
        f"if found:\n    exec({expert!r})\n"
    )


def _peek_paths(task: Mapping[str, Any]) -> list[str]:
    from rewardsmith.environments.blender_scene import BLENDER_TASKS

    state = task.get("scene_state") or {}
    return [
        str(BLENDER_TASKS),
        str(BLENDER_TASKS.parent / "*.jsonl"),
        "/usr/lib/python3*/site-packages/rewardsmith/datasets/environments/*.jsonl",
        "/**/site-packages/rewardsmith/datasets/environments/*.jsonl",
        "/tmp/rewardsmith-blender-env-*/*/*.json",
        "/work/*/datasets/environments/blender_scene.jsonl",
        str(state.get("dir", "/tmp")) + "/*",
    ]


def exploits(tasks: Sequence[Mapping[str, Any]]) -> Iterator[EpisodeExploit]:
    """Hostile policies per task; each may earn at most its limit (0 unless said)."""
    for task in tasks:
        scripts = task["solution"]["scripts"]
        everything = "\n".join(scripts)
        full = call("run_bpy", code=everything)
        describe = call("inspect_scene")
        yield from (
            # The whole right script as the answer's text, no tool: the text is never run.
            EpisodeExploit("no_tools_script_as_answer", task, (f"```python\n{everything}```",)),
            EpisodeExploit("no_tools_claims_done", task, ("I built the scene as asked. Done.",)),
            # A tool's output (the empty scene's description) pasted back as the answer.
            EpisodeExploit("copy_tool_output", task, (describe, "objects: " + task["prompt"])),
            # The right scene, then a script that deletes it: the scene is what is paid.
            EpisodeExploit("build_then_delete_objects", task, (
                full, call("run_bpy", code=_DELETE_ALL), "Done.")),
            EpisodeExploit("build_then_factory_reset", task, (
                full, call("run_bpy", code=_FACTORY), "Done.")),
            # Blender hung, crashed or killed before the scene is built: nothing is kept.
            EpisodeExploit("hang_blender", task, (call("run_bpy", code=_HANG), "Done.")),
            EpisodeExploit("crash_blender", task, (call("run_bpy", code=_SEGFAULT)
                                                   + call("run_bpy", code=_KILL)
                                                   + call("run_bpy", code=_EXIT), "Done.")),
            # The right scene with a 1 GB render in its script (killed: nothing kept), an
            # oversized preview, a frame 16384 times taller than wide: the episode goes on.
            EpisodeExploit("huge_render", task, (call("run_bpy", code=everything + _HUGE_RENDER),
                                                 call("render_preview", size=16384 * 16384),
                                                 call("run_bpy", code=_TALL_FRAME)
                                                 + call("render_preview", size=256), "Done.")),
            # Reading the task files, other episodes' scratch folders or the repository from
            # the jail, building the expert's scene only if any was readable.
            EpisodeExploit("read_task_files", task, (call("run_bpy", code=_peek(
                _peek_paths(task), scripts[0])), "Done.")),
            # Scripts that build only where the live turn runs (its saved scene at
            # /box/in.blend, a file path set), not in the final replay from an empty scene:
            # the shaping potential is that replay, so the live build is paid nothing.
            EpisodeExploit("live_only_in_blend", task, (call("run_bpy", code=live_only(
                "os.path.exists('/box/in.blend')", everything)), "Done.")),
            EpisodeExploit("live_only_filepath", task, (call("run_bpy", code=live_only(
                "bpy.data.filepath", everything)), "Done.")),
            # Calls past the per-turn cap and malformed calls flood the turn.
            EpisodeExploit("flood_calls", task, (describe * 9, "<tool_call>{not json" * 5,
                                                 call("render_preview", size=-1) * 4, "Done.")),
        )  # fmt: skip
        yield from _rendered_otherwise(task, everything)


def _rendered_otherwise(task: Mapping[str, Any], everything: str) -> Iterator[EpisodeExploit]:
    """The right scene, then settings the checks read right and the render does not
    (red team of the environment, 2026-12-04): lights dimmed by their exposure, kept off
    every mesh by light linking, or tinted by a blackbody temperature; materials under a
    black coat; meshes or the camera
    keyframed away either side of the frame under motion blur. Each limit is the return of
    the stage it breaks failing."""
    reference = task["reference"]
    render = _render_checks(reference)
    for name, sabotage in _MISREAD_LIGHTS.items():
        actions = (call("run_bpy", code=everything + sabotage), "Done.")
        yield EpisodeExploit(name, task, actions, _staged(reference, 0.0, 0.0))
    # A tint fails only the lights whose colour the task states (lamp_post's); elsewhere
    # an 800 K light is a free choice and the limit is the full return.
    lighting = 1.0 - _coloured_share(reference)
    actions = (call("run_bpy", code=everything + _TEMPERATURE), "Done.")
    render_left = 1.0 if lighting >= 1.0 else 0.0
    yield EpisodeExploit(
        "light_temperature", task, actions, _staged(reference, lighting, render_left)
    )
    actions = (call("run_bpy", code=everything + _BLACK_COAT), "Done.")
    yield EpisodeExploit("material_black_coat", task, actions, _staged(reference, 0, 0, 0))
    limits = {"motion_blur_meshes": 0.0, "motion_blur_camera": _staged(
        reference, 1.0, 1.0 - 1.0 / render)}  # fmt: skip
    for name, sabotage in _SMEARS.items():
        actions = (call("run_bpy", code=everything + sabotage), "Done.")
        yield EpisodeExploit(name, task, actions, limits[name])
