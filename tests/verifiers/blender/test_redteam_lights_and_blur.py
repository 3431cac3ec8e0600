"""Red team of the `blender_scene` environment (2026-12-04, /work/notes/redteam-blender.md):
settings the checks read right while the render differs. A light's exposure scales its
energy, a blackbody temperature tints it, light linking keeps it off meshes; motion blur
smears an object (or the camera) keyframed away either side of the frame. Each breaks its
stage with several instances; honest scenes that use the same features still pass."""

from __future__ import annotations

import importlib.util
from typing import Any

import pytest

from rewardsmith.environments.blender_scene import load_tasks
from rewardsmith.verifiers.blender import BlenderScene
from rewardsmith.verifiers.types import Sample, Status, Step, Verdict

pytestmark = [
    pytest.mark.blender,
    pytest.mark.sandbox,
    pytest.mark.skipif(importlib.util.find_spec("bpy") is None, reason="bpy is not installed"),
]

TASKS = {t["id"]: t for t in load_tasks()}
_LIGHTS = "import bpy\nlights = [o for o in bpy.data.objects if o.type == 'LIGHT']\n"
_LINK = (
    "group = bpy.data.collections.new('Receivers')\n"
    "group.objects.link(bpy.data.objects['Cube'])\n"
    "for o in lights:\n    o.light_linking.receiver_collection = group\n"
)
_WORLD = (
    "world = bpy.data.worlds.new('Faint'); world.use_nodes = True\n"
    "world.node_tree.nodes['Background'].inputs['Color'].default_value = (0.3, 0.3, 0.3, 1)\n"
    "bpy.context.scene.world = world\n"
)


def _keyframed(kind: str, channel: str, far: float) -> str:
    """Every object of `kind` keyframed `far` along z either side of the frame, blur on."""
    return (
        "scene = bpy.context.scene\nscene.render.use_motion_blur = True\n"
        "scene.render.motion_blur_shutter = 1.0\nf = scene.frame_current\n"
        f"for o in [o for o in bpy.data.objects if o.type == {kind!r}]:\n"
        f"    here = o.{channel}.copy()\n"
        f"    for step, shift in ((-1, -{far}), (1, {far}), (0, 0.0)):\n"
        f"        o.{channel} = here\n        o.{channel}[2] += shift\n"
        f"        o.keyframe_insert({channel!r}, frame=f + step)\n"
        "scene.frame_set(f)\n"
    )


TRICKS = {  # (task, stage that must fall, code after the right scene)
    "exposure_-6": ("red_cube", "lighting", "for o in lights: o.data.exposure = -6.0"),
    "exposure_-1": ("red_cube", "lighting", "for o in lights: o.data.exposure = -1.0"),
    "exposure_+3": ("red_cube", "lighting", "for o in lights: o.data.exposure = 3.0"),
    "exposure_-30_world": (
        "red_cube",
        "lighting",
        "for o in lights: o.data.exposure = -30.0\n" + _WORLD,
    ),
    "exposure_-4_two_lights": ("lamp_post", "lighting", "for o in lights: o.data.exposure = -4.0"),
    "temperature_800": (
        "lamp_post",
        "lighting",
        "for o in lights: o.data.use_temperature = True; o.data.temperature = 800.0",
    ),
    "temperature_12000": (
        "lamp_post",
        "lighting",
        "for o in lights: o.data.use_temperature = True; o.data.temperature = 12000.0",
    ),
    "linking_excludes_cube": (
        "red_cube",
        "lighting",
        _LINK + "group.collection_objects[0].light_linking.link_state = 'EXCLUDE'\n" + _WORLD,
    ),
    "linking_includes_an_empty": (
        "red_cube",
        "lighting",
        _LINK.replace("bpy.data.objects['Cube']", "bpy.data.objects.new('Nothing', None)") + _WORLD,
    ),
    "linking_excludes_one_of_three": (
        "dice_row",
        "lighting",
        _LINK.replace("'Cube'", "'DieRed'")
        + "group.collection_objects[0].light_linking.link_state = 'EXCLUDE'\n"
        + _WORLD,
    ),
    "blur_meshes_400m": ("red_cube", "geometry", _keyframed("MESH", "location", 400.0)),
    "blur_meshes_3m": ("dice_row", "geometry", _keyframed("MESH", "location", 3.0)),
    "blur_camera_turning": ("red_cube", "render", _keyframed("CAMERA", "rotation_euler", 3.0)),
    "blur_camera_moving": ("red_cube", "render", _keyframed("CAMERA", "location", 20.0)),
}
_MATERIALS = "for m in bpy.data.materials:\n    b = m.node_tree.nodes['Principled BSDF']\n"


def _coat(weight: float, tint: tuple[float, float, float]) -> str:
    """Every material's coat at `weight`, tinted `tint`."""
    return _MATERIALS + (
        f"    b.inputs['Coat Weight'].default_value = {weight}\n"
        f"    b.inputs['Coat Tint'].default_value = (*{tint}, 1)\n"
    )


_AREA = "a = bpy.data.objects['Light0'].data\n"
TRICKS.update(
    {
        "coat_black": (
            "red_cube",
            "materials",
            _coat(1.0, (0, 0, 0)),
        ),
        "coat_grey_half": (
            "dice_row",
            "materials",
            _coat(0.6, (0.5, 0.5, 0.5)),
        ),
        "coat_green": (
            "lamp_post",
            "materials",
            _coat(1.0, (0, 1, 0)),
        ),
        "area_unnormalized_small": ("still_life", "lighting", _AREA + "a.normalize = False"),
        "area_unnormalized_huge": (
            "still_life",
            "lighting",
            _AREA + "a.normalize = False; a.size = 30.0",
        ),
        "area_spread_0.01": ("still_life", "lighting", _AREA + "a.spread = 0.0002"),
        "area_spread_2deg": ("smooth_ball", "lighting", _AREA + "a.spread = 0.035"),
    }
)
TRICKS.update(
    {
        "colour_gain_50": (
            "red_cube",
            "lighting",
            "for o in lights: o.data.color = (50.0, 50.0, 50.0)",
        ),
        "colour_gain_3_tinted": (
            "lamp_post",
            "lighting",
            "for o in lights: o.data.color = (3.0, 2.55, 1.8)",
        ),
    }
)
HONEST = {
    "colour_gain_with_energy_divided": (
        "red_cube",
        "for o in lights: o.data.color = (4.0, 4.0, 4.0); o.data.energy /= 4",
    ),
    "clear_coat": ("red_cube", _MATERIALS + "    b.inputs['Coat Weight'].default_value = 1.0"),
    "coat_faint_tint": (
        "dice_row",
        _coat(0.5, (0.8, 0.9, 1.0)),
    ),
    "area_unnormalized_same_power": (
        "smooth_ball",
        _AREA + "a.size = 2.0; a.normalize = False; a.energy = 125.0",
    ),
    "area_spread_90": (
        "still_life",
        _AREA + "a.spread = 1.5708",
    ),  # (task, code): the same features used without changing what renders
    "exposure_0": ("red_cube", "for o in lights: o.data.exposure = 0.0"),
    "energy_halved_exposure_+1": (
        "red_cube",
        "for o in lights: o.data.energy /= 2; o.data.exposure = 1.0",
    ),
    "temperature_off": ("lamp_post", "for o in lights: o.data.temperature = 800.0"),
    "temperature_on_uncoloured_task": (
        "red_cube",
        "for o in lights: o.data.use_temperature = True; o.data.temperature = 3000.0",
    ),
    "linking_empty_collection": (
        "red_cube",
        _LINK.replace("group.objects.link(bpy.data.objects['Cube'])\n", ""),
    ),
    "linking_includes_the_cube": ("red_cube", _LINK),
    "blur_still_scene": ("red_cube", "bpy.context.scene.render.use_motion_blur = True"),
    "blur_moving_5mm": ("red_cube", _keyframed("MESH", "location", 0.005)),
    "keyframed_away_without_blur": (
        "red_cube",
        _keyframed("MESH", "location", 400.0).replace(
            "use_motion_blur = True", "use_motion_blur = False"
        ),
    ),
}


def judge(task_id: str, code: str) -> Verdict:
    task = TASKS[task_id]
    script = "\n".join(task["solution"]["scripts"]) + "\n" + _LIGHTS + code + "\n"
    sample = Sample(
        id=task_id, prompt="", completion=[Step(action=script)], reference=task["reference"]
    )
    return BlenderScene(staging="sequential", wall_s=60)(sample)


@pytest.mark.parametrize("name", sorted(TRICKS))
def test_a_render_unlike_its_readings_loses_its_stage(name: str) -> None:
    task_id, stage, code = TRICKS[name]
    verdict = judge(task_id, code)
    assert verdict.status is not Status.PASS, name
    assert verdict.evidence["stages"][stage] < 1.0, verdict.evidence["stages"]


@pytest.mark.parametrize("name", sorted(HONEST))
def test_an_honest_scene_with_the_feature_passes(name: str) -> None:
    task_id, code = HONEST[name]
    verdict = judge(task_id, code)
    assert verdict.status is Status.PASS, verdict.feedback


@pytest.mark.parametrize(
    ("exposure", "temperature"), [(-2.0, None), (1.5, None), (0.0, 1500.0), (-1.0, 5000.0)]
)
def test_a_light_is_read_as_it_renders(exposure: float, temperature: float | None) -> None:
    """Energy times 2 ** exposure; colour times the blackbody colour when it is on."""
    tint = (
        f"; o.data.use_temperature = True; o.data.temperature = {temperature}"
        if temperature
        else ""
    )
    verdict = judge("red_cube", f"for o in lights: o.data.exposure = {exposure}{tint}")
    light: dict[str, Any] = verdict.evidence["scene"]["lights"][0]
    assert light["energy"] == pytest.approx(3.0 * 2**exposure, rel=1e-4)
    if temperature is not None:
        assert light["color"] != pytest.approx([1.0, 1.0, 1.0], abs=0.02)
        assert (light["color"][0] > light["color"][2]) == (temperature < 6500)
