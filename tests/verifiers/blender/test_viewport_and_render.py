# ruff: noqa: E501  (tables of one-line Blender snippets read best unwrapped)
"""Issue 32: what renders is judged, whatever the viewport shows; the render itself is
measured (truth render: luminance and an object-index render from the scene's camera).

Each row is the right `gold_sphere` scene with one change. Tricks must lose the stage
they cheat (and never pass); honest changes (viewport-only flags, sane exposure, a full
crop border, real depth of field, an explicit 36 mm sensor) must still pass.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rewardsmith.datasets.scenes3d.tasks import Task, load_tasks
from rewardsmith.verifiers.blender import BlenderScene
from rewardsmith.verifiers.types import Status, Verdict

pytestmark = [pytest.mark.blender, pytest.mark.sandbox]

_IN_COLLECTION = (
    "col = bpy.data.collections.new('Side')\n"
    "bpy.context.scene.collection.children.link(col)\n"
    "bpy.context.scene.collection.objects.unlink(ball)\n"
    "col.objects.link(ball)\n"
)
_STAND_IN = (
    "bpy.ops.mesh.primitive_cube_add(size=2, location=(0, 0, 1))\n"
    "cube = bpy.context.active_object\n"
    "bpy.data.objects.remove(ball); cube.name = 'Ball'\n"
    "cube.data.materials.append(gold)\n"
    "s = cube.modifiers.new('Smooth', 'SUBSURF'); s.levels = 2; s.render_levels = 2\n"
)
LIGHTS = "lights = [o for o in bpy.data.objects if o.type == 'LIGHT']\n"
TRICKS = {  # (stage that must fall, code)
    "viewport/scaled_moved": ("geometry", "ball.scale = (3, 3, 3); ball.location = (4, 0, 1); ball.hide_viewport = True"),
    "viewport/scaled_hide_set": ("geometry", "ball.scale = (3, 3, 3); ball.hide_set(True)"),
    "viewport/subdivided_stand_in": ("geometry", _STAND_IN + "cube.hide_viewport = True"),
    "viewport/displaced": ("geometry", "m = ball.modifiers.new('Grow', 'DISPLACE'); m.strength = 1.0; ball.hide_viewport = True"),
    "viewport/collection_scaled": ("geometry", "ball.scale = (2, 2, 2)\n" + _IN_COLLECTION + "col.hide_viewport = True"),
    "viewport/layer_scaled": ("geometry", "ball.scale = (2, 2, 2)\n" + _IN_COLLECTION + "bpy.context.view_layer.layer_collection.children['Side'].hide_viewport = True"),
    "not_rendered/emitter": ("geometry", "ball.modifiers.new('P', 'PARTICLE_SYSTEM'); ball.show_instancer_for_render = False"),
    "not_rendered/hair_emitter": ("geometry", "ball.modifiers.new('P', 'PARTICLE_SYSTEM'); ball.particle_systems[0].settings.type = 'HAIR'; ball.show_instancer_for_render = False"),
    "not_rendered/instancer": ("geometry", "ball.instance_type = 'VERTS'; ball.show_instancer_for_render = False"),
    "not_rendered/alpha_0": ("materials", "bsdf.inputs['Alpha'].default_value = 0.0"),
    "not_rendered/alpha_0.2": ("materials", "bsdf.inputs['Alpha'].default_value = 0.2"),
    "dark/rays_off": ("lighting", LIGHTS + "for o in lights:\n    o.visible_diffuse = o.visible_glossy = False"),
    "dark/black_all": ("lighting", LIGHTS + "for o in lights:\n    o.data.color = (0, 0, 0)"),
    "dark/black_area_only": ("lighting", "bpy.data.objects['Soft'].data.color = (0, 0, 0)"),
    "dark/zero_energy_area": ("lighting", "bpy.data.objects['Soft'].data.energy = 0.0"),
    "dark/exposure_-20": ("lighting", "bpy.context.scene.view_settings.exposure = -20"),
    "dark/film_exposure_0.001": ("lighting", "bpy.context.scene.cycles.film_exposure = 0.001"),
    "settings/percentage_1": ("render", "bpy.context.scene.render.resolution_percentage = 1"),
    "settings/crop_1pct_centre": ("render", "r = bpy.context.scene.render; r.use_border = True\nr.border_min_x, r.border_max_x, r.border_min_y, r.border_max_y = 0.45, 0.55, 0.45, 0.55"),
    "settings/crop_1pct_corner": ("render", "r = bpy.context.scene.render; r.use_border = True; r.use_crop_to_border = True\nr.border_min_x, r.border_max_x, r.border_min_y, r.border_max_y = 0.0, 0.1, 0.0, 0.1"),
    "settings/dof_f0.01": ("render", "c = bpy.context.scene.camera.data; c.dof.use_dof = True; c.dof.aperture_fstop = 0.01; c.dof.focus_distance = 0.2"),
    "settings/sensor_0.5mm": ("render", "bpy.context.scene.camera.data.sensor_width = 0.5"),
    "settings/sensor_0.5mm_vertical": ("render", "c = bpy.context.scene.camera.data; c.sensor_fit = 'VERTICAL'; c.sensor_height = 0.5"),
    "glow/emission_x100": ("materials", "bsdf.inputs['Emission Color'].default_value = (1.0, 0.77, 0.34, 1.0)\nbsdf.inputs['Emission Strength'].default_value = 100.0"),
    "glow/white_5": ("materials", "bsdf.inputs['Emission Color'].default_value = (1, 1, 1, 1)\nbsdf.inputs['Emission Strength'].default_value = 5.0"),
}  # fmt: skip
HONEST = {
    "viewport/hide_viewport": "ball.hide_viewport = True",
    "viewport/hide_set": "ball.hide_set(True)",
    "viewport/collection": _IN_COLLECTION + "col.hide_viewport = True",
    "viewport/layer": _IN_COLLECTION + "bpy.context.view_layer.layer_collection.children['Side'].hide_viewport = True",
    "viewport/display_bounds": "ball.display_type = 'BOUNDS'; ball.hide_select = True",
    "viewport/modifier_viewport_off": "ball.modifiers['Smooth'].show_viewport = False",
    "viewport/lights_hidden_in_viewport": LIGHTS + "for o in lights:\n    o.hide_viewport = True",
    "render/exposure_-1": "bpy.context.scene.view_settings.exposure = -1",
    "render/exposure_0.5": "bpy.context.scene.view_settings.exposure = 0.5",
    "render/percentage_100": "bpy.context.scene.render.resolution_percentage = 100",
    "render/full_border": "r = bpy.context.scene.render; r.use_border = True",
    "render/dof_f2.8": "c = bpy.context.scene.camera.data; c.dof.use_dof = True; c.dof.aperture_fstop = 2.8; c.dof.focus_distance = 8.2",
    "render/sensor_36_horizontal": "c = bpy.context.scene.camera.data; c.sensor_fit = 'HORIZONTAL'; c.sensor_width = 36",
    "render/emission_colour_no_strength": "bsdf.inputs['Emission Color'].default_value = (1, 1, 1, 1)",
    "render/alpha_1": "bsdf.inputs['Alpha'].default_value = 1.0",
    "render/light_shadow_rays_off": LIGHTS + "for o in lights:\n    o.visible_shadow = False",
}  # fmt: skip


@pytest.fixture(scope="module")
def gold_sphere() -> Task:
    return next(t for t in load_tasks() if t.id == "gold_sphere")


def run(task: Task, code: str, reference: object = None) -> Verdict:
    sample = task.sample([task.scripts[0] + "\n" + code + "\n"])
    if reference is not None:
        sample = sample.model_copy(update={"reference": reference})
    return BlenderScene(wall_s=60)(sample)


@pytest.mark.parametrize("name", sorted(TRICKS))
def test_a_trick_loses_its_stage(gold_sphere: Task, name: str) -> None:
    stage, code = TRICKS[name]
    verdict = run(gold_sphere, code)
    assert verdict.status is not Status.PASS, verdict.evidence.get("stages")
    assert verdict.evidence["stages"][stage] < 1.0, (verdict.evidence["stages"], verdict.feedback)


@pytest.mark.parametrize("name", sorted(HONEST))
def test_an_honest_change_still_passes(gold_sphere: Task, name: str) -> None:
    verdict = run(gold_sphere, HONEST[name])
    assert verdict.status is Status.PASS, verdict.feedback


_SPOT = (
    "spot = bpy.data.objects.new('Spot', bpy.data.lights.new('Spot', 'SPOT'))\n"
    "spot.data.energy = 1000.0; spot.location = (0, -4, 5)\n"
    "spot.rotation_euler = (spot.location - ball.location).to_track_quat('Z', 'Y').to_euler()\n"
    "bpy.context.scene.collection.objects.link(spot)\n"
)


@pytest.mark.parametrize(
    ("cone", "passes"), [(0.5, False), (1.0, False), (2.5, False), (30.0, True), (60.0, True)]
)
def test_a_pin_prick_spot_lights_nothing(gold_sphere: Task, cone: float, passes: bool) -> None:
    spec = json.loads(Path(gold_sphere.reference).read_text())
    spec["lights"].append({"type": "SPOT", "energy": 1000})
    code = _SPOT + f"import math\nspot.data.spot_size = math.radians({cone})"
    verdict = run(gold_sphere, code, reference=spec)
    assert (verdict.status is Status.PASS) is passes, verdict.feedback
    if not passes:
        assert "cone" in verdict.feedback


def test_the_truth_render_sees_the_ball(gold_sphere: Task) -> None:
    truth = run(gold_sphere, "").evidence["scene"]["truth"]
    assert truth["objects"]["Ball"]["pixels"] > 20
    assert truth["objects"]["Ball"]["luminance"] > 0.02
