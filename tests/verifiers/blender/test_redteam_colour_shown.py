"""The colour the render shows, against what the task asks (2026-12-05, rtblend4). Under
the render-settings bounds a view exposure of +3 (or film exposure 8, or the same exposure
in the output's colour-management override) showed the asked red cube salmon, and light
no spec states (a 3000 W area light beside it, a glowing plane the camera does not see)
washed it out, each at full reward: the extra light counted with the asked lights, the
white-surface light split dropped every emitting surface, and the override bypassed the
scene's view. Now the truth render compares each object's colour with Blender's default
view of the same render (`truth.view_shift`), lights its reference with the lights that
meet the spec alone (every other light, the world and unasked glowing surfaces are unasked
light, at most `UNASKED_STOPS` brighter per object, nor may a world volume or a sample
clamp take the asked light away by as much), lets the view's exposure and film exposure
together move the light as much, reads the override as the view, and keeps only the view
layer the saved picture shows."""

from __future__ import annotations

import importlib.util

import pytest

from rewardsmith.verifiers.blender.spec import SceneSpec
from rewardsmith.verifiers.blender.truth import (
    VIEW_LIGHTNESS_MAX,
    VIEW_SAT_KEEP,
    WORLD_MAX,
    gate_on_truth,
    view_shift,
)
from rewardsmith.verifiers.types import Status
from tests.verifiers.blender.test_redteam_blown_out import Check
from tests.verifiers.blender.test_redteam_lights_and_blur import judge

_VIEW = "v = bpy.context.scene.view_settings\n"
_OUTPUT = "i = bpy.context.scene.render.image_settings; i.color_management = 'OVERRIDE'\n"
_DISPLAY = "bpy.context.scene.display_settings.display_device = "
_STANDARD = "i.view_settings.view_transform = 'Standard'"
_LAMP = (
    "d = bpy.data.lights.new('Flood', 'AREA'); d.energy = {}; d.size = 1.0\n"
    "o = bpy.data.objects.new('Flood', d); bpy.context.scene.collection.objects.link(o)\n"
    "o.location = (1.5, -1.5, 2.5)\n"
)
_GLOW = (  # a plane beside the cube whose surface is an Emission shader
    "bpy.ops.mesh.primitive_plane_add(size=2, location=(2, -2, 2.5)); p = bpy.context.object\n"
    "m = bpy.data.materials.new('Glow'); m.use_nodes = True; t = m.node_tree; t.nodes.clear()\n"
    "e = t.nodes.new('ShaderNodeEmission'); e.inputs['Strength'].default_value = {}\n"
    "out = t.nodes.new('ShaderNodeOutputMaterial')\n"
    "t.links.new(e.outputs[0], out.inputs['Surface'])\n"
    "p.data.materials.append(m); p.rotation_euler = (0.8, 0, 0.8); p.visible_camera = {}\n"
)
_FOG = (
    "w = bpy.data.worlds.new('Haze'); bpy.context.scene.world = w; w.use_nodes = True\n"
    "a = w.node_tree.nodes.new('ShaderNodeVolumeAbsorption')\n"
    "a.inputs['Color'].default_value = (0.1, 1, 1, 1); a.inputs['Density'].default_value = 0.05\n"
    "w.node_tree.links.new(a.outputs[0], w.node_tree.nodes['World Output'].inputs['Volume'])\n"
)
_LAYER = "s = bpy.context.scene; second = s.view_layers.new('L2'); s.view_layers[0].use = False\n"
_GREEN = (
    "g = bpy.data.materials.new('G'); g.use_nodes = True\n"
    "g.node_tree.nodes['Principled BSDF'].inputs['Base Color'].default_value = (0, 1, 0, 1)\n"
    "second.material_override = g\n"
)
_SUN = (
    "d = bpy.data.lights.new('Sun2', 'SUN'); d.energy = 3.0\n"
    "o = bpy.data.objects.new('Sun2', d); bpy.context.scene.collection.objects.link(o)\n"
    "o.rotation_euler = (0.6, 0.2, 0.4)\n"
)

TRICKS = {  # (task, code after the right scene): the materials stage must fall
    "view_exposure_3": ("red_cube", _VIEW + "v.exposure = 3.0"),
    "film_exposure_8_dice": ("dice_row", "bpy.context.scene.cycles.film_exposure = 8.0"),
    "output_override_exposure_3": ("red_cube", _OUTPUT + "i.view_settings.exposure = 3.0"),
    "white_balance_4000_dice": (
        "dice_row",
        _VIEW + "v.use_white_balance = True; v.white_balance_temperature = 4000.0",
    ),
    "view_exposure_3_blue_ball": ("blue_ball", _VIEW + "v.exposure = 3.0"),  # dark, stops
    "flood_3000": ("red_cube", _LAMP.format(3000)),
    "glowing_plane_unseen": ("red_cube", _GLOW.format(50.0, False)),
    "cyan_world_volume": ("red_cube", _FOG),  # takes the red away: dark teal
    "sample_clamp_0.05": ("red_cube", "bpy.context.scene.cycles.sample_clamp_direct = 0.05"),
    "override_on_the_rendered_layer": ("red_cube", _LAYER + _GREEN),
}
HONEST = {  # full marks
    "second_sun_like_the_first": ("red_cube", _SUN),  # one stop of unasked light
    "display_p3": ("red_cube", _DISPLAY + "'Display P3'"),
    "output_override_standard": ("dice_row", _OUTPUT + _STANDARD),
    "faint_glowing_plane": ("red_cube", _GLOW.format(1.0, True)),
    "a_second_view_layer_renders": ("dice_row", _LAYER),
    "sample_clamp_10": ("dice_row", "bpy.context.scene.cycles.sample_clamp_indirect = 10.0"),
}  # fmt: skip

needs_blender = pytest.mark.skipif(
    importlib.util.find_spec("bpy") is None, reason="bpy is not installed"
)


@pytest.mark.blender
@pytest.mark.sandbox
@needs_blender
@pytest.mark.parametrize("name", sorted(TRICKS))
def test_a_shifted_colour_loses_its_materials(name: str) -> None:
    task_id, code = TRICKS[name]
    verdict = judge(task_id, code)
    assert verdict.status is not Status.PASS, name
    assert verdict.evidence["stages"]["materials"] < 1.0, verdict.evidence["stages"]


@pytest.mark.blender
@pytest.mark.sandbox
@needs_blender
@pytest.mark.parametrize("name", sorted(HONEST))
def test_a_view_or_light_that_keeps_the_colours_keeps_full_marks(name: str) -> None:
    task_id, code = HONEST[name]
    verdict = judge(task_id, code)
    assert verdict.status is Status.PASS, verdict.feedback


@pytest.mark.parametrize(
    ("shown", "default", "ok"),
    [  # display RGB measured on the red cube and the dice (2026-12-05)
        ([0.935, 0.569, 0.538], [0.569, 0.137, 0.109], False),  # exposure +3: 0.52 kept
        ([0.732, 0.253, 0.217], [0.569, 0.137, 0.109], True),  # exposure +1: 0.87
        ([0.585, 0.150, 0.150], [0.569, 0.137, 0.109], True),  # Standard view: 0.92
        ([0.594, 0.190, 0.176], [0.575, 0.169, 0.129], True),  # Filmic, the red die: 0.91
        ([0.020, 0.527, 0.425], [0.179, 0.508, 0.275], False),  # 4000 K: teal, 31 degrees
        ([0.552, 0.145, 0.156], [0.569, 0.137, 0.109], True),  # 5000 K: 5 degrees
        ([0.50, 0.50, 0.50], [0.569, 0.137, 0.109], False),  # greyscale
        ([0.60, 0.30, 0.30], [0.50, 0.50, 0.49], False),  # a grey tinted red
        ([0.52, 0.50, 0.47], [0.50, 0.50, 0.49], True),  # a grey a little warmer
        ([0.855, 0.411, 0.374], [0.569, 0.137, 0.109], True),  # exposure +2: L* +25
        ([0.751, 0.365, 0.325], [0.569, 0.137, 0.109], True),  # gamma 2: +19, 0.70 kept
        ([0.707, 0.707, 0.707], [0.097, 0.097, 0.097], False),  # the coal hat at +6 stops
        ([0.282, 0.39, 0.597], [0.028, 0.063, 0.143], False),  # the blue ball at +6: +37
    ],
)
def test_the_view_must_keep_the_default_views_colour(
    shown: list[float], default: list[float], ok: bool
) -> None:
    assert (view_shift(shown, default) is None) is ok


@pytest.mark.parametrize(
    ("exposure", "film", "ok"),
    [(3.0, 1.0, False), (0.0, 8.0, False), (-3.0, 1.0, False), (2.0, 2.0, False),
     (1.0, 1.0, True), (-1.0, 1.0, True), (3.0, 0.25, True), (0.0, 2.0, True)],
)  # fmt: skip
def test_the_view_may_move_the_light_two_stops(exposure: float, film: float, ok: bool) -> None:
    """Exposure and film exposure together, as unasked light: at most `UNASKED_STOPS`."""
    spec = SceneSpec.model_validate({"objects": {"Cube": {}}, "materials": {"Red": {}}})
    dump = {
        "objects": [{"name": "Cube", "type": "MESH", "materials": ["Red"]}],
        "materials": [{"name": "Red", "principled": {}}],
        "render": {"exposure": exposure, "film_exposure": film},
        "truth": {"luminance": 0.5, "objects": {"Cube": {"pixels": 100, "luminance": 0.5}}},
    }
    checks = [Check("materials", "Red[Base Color]"), Check("geometry", "object 'Cube'")]
    assert [c.ok for c in gate_on_truth(checks, dump, spec)] == [ok, True]


def _gated(lights: dict[str, tuple[float, float]]) -> list[bool]:
    """The lighting and materials checks of objects each lit (everything, asked lights)
    on white surfaces (scene-linear, every channel), one of them red."""
    spec = SceneSpec.model_validate({
        "objects": {name: {} for name in lights},
        "materials": {"Red": {"inputs": {"Base Color": [0.8, 0.05, 0.05]}}},
        "lights": [{"type": "SUN"}],
    })  # fmt: skip
    dump = {
        "objects": [{"name": n, "type": "MESH", "materials": ["Red"]} for n in lights],
        "materials": [{"name": "Red", "principled": {}}],
        "truth": {"luminance": 0.6, "objects": {
            n: {"pixels": 100 if k else 20, "luminance": 0.6,
                "light": {"all": [a] * 3, "lights": [b] * 3}}
            for k, (n, (a, b)) in enumerate(lights.items())}},
    }  # fmt: skip
    checks = [Check("lighting", "light 0"), Check("materials", "Red[Base Color]")]
    return [c.ok for c in gate_on_truth(checks, dump, spec)]


@pytest.mark.parametrize(
    ("lights", "ok"),
    [  # (everything, asked) per object, measured (2026-12-05)
        ({"Ball": (1.130, 0.319)}, True),  # a white sky at 1 on the blue ball: 2.5x, honest
        ({"Vase": (4.572, 0.759), "Tabletop": (5.157, 1.285)}, False),  # white world 5: 5.0x
        ({"Vase": (1.522, 0.759), "Tabletop": (2.059, 1.285)}, True),  # white sky 1: 1.0x
        ({"Cube": (7.949, 0.344)}, False),  # a 3000 W area light beside the red cube: 22x
        ({"Cube": (0.689, 0.344)}, True),  # a second sun like the first: 1x
    ],
)
def test_unasked_light_is_judged_per_object_against_the_asked_lights(
    lights: dict[str, tuple[float, float]], ok: bool
) -> None:
    assert _gated(lights) == [ok, ok]


def test_the_bounds_leave_margin_to_the_measured_rows() -> None:
    """The honest rows sit well inside and the tricks well outside (factors measured)."""
    assert 2.54 * 1.15 < WORLD_MAX < 5.0 / 1.5
    assert 0.53 * 1.15 < VIEW_SAT_KEEP < 0.87 / 1.15
    assert 12.5 * 1.5 < VIEW_LIGHTNESS_MAX < 37.2 / 1.15  # exposure +1 and +3, red cube
