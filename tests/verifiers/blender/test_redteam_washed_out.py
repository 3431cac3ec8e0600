"""Colours washed out by light or colour management the task did not ask for (2026-12-05).
The blown-out gate (`LIT_MAX`) fails a render near saturation; under it, a white world at
strength 5 rendered the red cube pale pink (display RGB 0.96, 0.76, 0.75; 0.92 luminance
on white surfaces) and a green world turned it brown, every material check on values
right, at full reward. Now the light the task does not ask for may add at most
`WORLD_MAX` times the asked lights' light where the task's objects are (the light split),
an unasked emission may not outshine the light, and a colour-rewriting view fails the
materials (`truth.gate_on_truth`)."""

from __future__ import annotations

import importlib.util

import pytest

from rewardsmith.verifiers.blender.spec import SceneSpec
from rewardsmith.verifiers.blender.truth import WORLD_MAX, colour_rewrites, gate_on_truth
from rewardsmith.verifiers.types import Status
from tests.verifiers.blender.test_redteam_blown_out import Check, _world
from tests.verifiers.blender.test_redteam_lights_and_blur import judge

_VIEW = "v = bpy.context.scene.view_settings\n"
_GLOW = (
    "for m in bpy.data.materials:\n    b = m.node_tree.nodes['Principled BSDF']\n"
    "    b.inputs['Emission Color'].default_value = {}\n"
    "    b.inputs['Emission Strength'].default_value = {}\n"
)
_LAMP = (
    "d = bpy.data.lights.new('Flood', 'AREA'); d.energy = {}; d.size = 1.0\n"
    "o = bpy.data.objects.new('Flood', d); bpy.context.scene.collection.objects.link(o)\n"
    "o.location = {}\n"
)

TRICKS = {  # (task, stage that must fall, code after the right scene)
    "white_world_2": ("red_cube", "materials", _world((1, 1, 1), 2.0)),
    "white_world_5": ("red_cube", "materials", _world((1, 1, 1), 5.0)),
    "white_world_10": ("red_cube", "materials", _world((1, 1, 1), 10.0)),
    "white_world_5_dice": ("dice_row", "materials", _world((1, 1, 1), 5.0)),
    "white_world_5_still_life": ("still_life", "materials", _world((1, 1, 1), 5.0)),
    "green_world_3": ("red_cube", "materials", _world((0, 1, 0), 3.0)),
    "green_world_10": ("red_cube", "materials", _world((0, 1, 0), 10.0)),
    "blue_world_5_dice": ("dice_row", "materials", _world((0, 0, 1), 5.0)),
    "white_emission_1": ("red_cube", "materials", _GLOW.format((1, 1, 1, 1), 1.0)),
    "cyan_emission_1": ("red_cube", "materials", _GLOW.format((0, 1, 1, 1), 1.0)),
    "white_emission_0.5_dice": ("dice_row", "materials", _GLOW.format((1, 1, 1, 1), 0.5)),
    "greyscale_look": ("red_cube", "materials", _VIEW + "v.look = 'AgX - Greyscale'"),
    "greyscale_look_dice": ("dice_row", "materials", _VIEW + "v.look = 'AgX - Greyscale'"),
    "white_balance_1800": (
        "dice_row",
        "materials",
        _VIEW + "v.use_white_balance = True; v.white_balance_temperature = 1800.0",
    ),
    "white_balance_tint_green": (
        "red_cube",
        "materials",
        _VIEW + "v.use_white_balance = True; v.white_balance_tint = -150.0",
    ),
    "curve_white_level": (
        "red_cube",
        "materials",
        _VIEW + "v.use_curve_mapping = True; v.curve_mapping.white_level = (0.1, 0.1, 0.1)",
    ),
}  # fmt: skip
HONEST = {  # light and colour management a scene uses: full marks
    "grey_world_default": ("red_cube", _world((0.05, 0.05, 0.05), 1.0)),
    "blue_sky_1": ("red_cube", _world((0.4, 0.55, 0.8), 1.0)),
    "warm_world_1_dice": ("dice_row", _world((0.8, 0.6, 0.4), 1.0)),
    "white_sky_1_blue_ball": ("blue_ball", _world((1, 1, 1), 1.0)),  # the most world, 2.5x
    "white_sky_1_still_life": ("still_life", _world((1, 1, 1), 1.0)),
    "standard_view": ("red_cube", _VIEW + "v.view_transform = 'Standard'"),
    "filmic_view": ("dice_row", _VIEW + "v.view_transform = 'Filmic'"),
    "khronos_neutral": ("red_cube", _VIEW + "v.view_transform = 'Khronos PBR Neutral'"),
    "punchy_look": ("dice_row", _VIEW + "v.look = 'AgX - Punchy'"),
    "low_contrast_look": ("red_cube", _VIEW + "v.look = 'AgX - Low Contrast'"),
    "exposure_+1": ("red_cube", _VIEW + "v.exposure = 1.0"),
    "exposure_-1_dice": ("dice_row", _VIEW + "v.exposure = -1.0"),
    "red_emission_faint": ("red_cube", _GLOW.format((0.8, 0.05, 0.05, 1), 0.3)),
    "white_balance_6500": ("dice_row", _VIEW + "v.use_white_balance = True"),
    "white_balance_5000": (
        "red_cube",
        _VIEW + "v.use_white_balance = True; v.white_balance_temperature = 5000.0",
    ),
    "curves_on_identity": ("red_cube", _VIEW + "v.use_curve_mapping = True"),
}  # fmt: skip

needs_blender = pytest.mark.skipif(
    importlib.util.find_spec("bpy") is None, reason="bpy is not installed"
)


@pytest.mark.blender
@pytest.mark.sandbox
@needs_blender
@pytest.mark.parametrize("name", sorted(TRICKS))
def test_a_washed_out_colour_loses_its_stage(name: str) -> None:
    task_id, stage, code = TRICKS[name]
    verdict = judge(task_id, code)
    assert verdict.status is not Status.PASS, name
    assert verdict.evidence["stages"][stage] < 1.0, verdict.evidence["stages"]


@pytest.mark.blender
@pytest.mark.sandbox
@needs_blender
@pytest.mark.parametrize("name", sorted(HONEST))
def test_light_and_colour_a_scene_uses_keep_full_marks(name: str) -> None:
    task_id, code = HONEST[name]
    verdict = judge(task_id, code)
    assert verdict.status is Status.PASS, verdict.feedback


def _gated(
    world: float, lights: float, *, with_lights: bool = True, **material: object
) -> list[bool]:
    """The lighting, materials and geometry checks of a red cube lit `lights` by its lights
    and `world` more by its world (scene-linear, every channel), after the truth gate."""
    red = {"Red": {"inputs": {"Base Color": [0.8, 0.05, 0.05]}}}
    spec = SceneSpec.model_validate(
        {"objects": {"Cube": {}}, "materials": red, "lights": [{"type": "SUN"}] * with_lights}
    )
    light = {"all": [world + lights] * 3, "lights": [lights] * 3}
    dump = {
        "objects": [{"name": "Cube", "type": "MESH", "materials": ["Red"]}],
        "materials": [{"name": "Red", "principled": material}],
        "truth": {"luminance": 0.6, "objects": {"Cube": {"pixels": 100, "luminance": 0.6,
                                                         "light": light}}},
    }  # fmt: skip
    checks = [Check("lighting", "light 0"), Check("materials", "Red[Base Color]"),
              Check("geometry", "object 'Cube'")]  # fmt: skip
    return [c.ok for c in gate_on_truth(checks, dump, spec)]


@pytest.mark.parametrize(
    ("world", "lights", "with_lights", "ok"),
    [
        (0.8, 0.344, True, True),  # a white sky at 1 on the red cube: 2.4 times its sun
        (WORLD_MAX * 0.344, 0.344, True, True),
        (1.625, 0.344, True, False),  # a white world at 2: 4.7 times
        (0.15, 0.002, True, True),  # a dim world over a night scene: under the floor
        (4.0, 0.0, False, True),  # no light stated: the world may light it all
    ],
)
def test_the_world_may_add_at_most_world_max_times_the_lights(
    world: float, lights: float, with_lights: bool, ok: bool
) -> None:
    assert _gated(world, lights, with_lights=with_lights) == [ok, ok, True]


@pytest.mark.parametrize(
    ("strength", "colour", "asked", "ok"),
    [(1.0, [1, 1, 1], False, False), (0.3, [0.8, 0.05, 0.05], False, True),
     (0.15, [1, 1, 1], False, True), (1.0, [1, 1, 1], True, True)],
)  # fmt: skip
def test_an_unasked_emission_may_not_outshine_the_light(
    strength: float, colour: list[float], asked: bool, ok: bool
) -> None:
    material = {
        "Emission Strength": {"value": strength},
        "Emission Color": {"value": colour},
    }
    gated = _gated_asked(material) if asked else _gated(0.0, 0.344, **material)
    assert gated == [True, ok, True]


def _gated_asked(material: dict[str, object]) -> list[bool]:
    spec = SceneSpec.model_validate({
        "objects": {"Cube": {}}, "materials": {"Red": {"inputs": {"Emission Strength": 1.0}}},
    })  # fmt: skip
    dump = {
        "objects": [{"name": "Cube", "type": "MESH", "materials": ["Red"]}],
        "materials": [{"name": "Red", "principled": material}],
        "truth": {"luminance": 0.6, "objects": {"Cube": {"pixels": 100, "luminance": 0.6,
                  "light": {"all": [0.344] * 3, "lights": [0.344] * 3}}}},
    }  # fmt: skip
    checks = [Check("lighting", "light 0"), Check("materials", "Red[Emission Strength]"),
              Check("geometry", "object 'Cube'")]  # fmt: skip
    return [c.ok for c in gate_on_truth(checks, dump, spec)]


@pytest.mark.parametrize(
    ("render", "rewritten"),
    [
        ({"look": "AgX - Greyscale"}, True),
        ({"look": "AgX - Punchy"}, False),
        ({"white_balance": [1800.0, 10.0]}, True),
        ({"white_balance": [6500.0, -150.0]}, True),
        ({"white_balance": [5000.0, 10.0]}, False),
        ({"curves": True}, True),
        ({"curves": False, "white_balance": None}, False),
    ],
)
def test_colour_management_that_rewrites_every_colour(
    render: dict[str, object], rewritten: bool
) -> None:
    assert bool(colour_rewrites(render)) is rewritten
