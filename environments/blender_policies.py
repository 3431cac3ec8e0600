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
