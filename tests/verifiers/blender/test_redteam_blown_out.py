"""A render blown out by light the task did not ask for (2026-12-05). The lighting gate
had only a floor (`LIT_MIN`, the black render): a white world at strength 50 rendered the
red cube white (display RGB 1.0, 0.97, 0.96) and a green one at 50 rendered it pale green,
both at full reward, every check on values right. Now the task's objects rendered on white
diffuse surfaces may read at most `LIT_MAX` (0.95) mean display luminance: above it the
lighting and material checks fail (no colour survives). The bundled honest scenes read
0.45-0.86 (their brightest object), so a bright sky or a strong sun still passes."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass

import pytest

from rewardsmith.verifiers.blender.spec import SceneSpec
from rewardsmith.verifiers.blender.truth import LIT_MAX, gate_on_truth
from rewardsmith.verifiers.types import Status
from tests.verifiers.blender.test_redteam_lights_and_blur import judge


def _world(colour: tuple[float, float, float], strength: float) -> str:
    return (
        "w = bpy.data.worlds.new('W')\nbpy.context.scene.world = w\nw.use_nodes = True\n"
        "bg = w.node_tree.nodes['Background']\n"
        f"bg.inputs['Color'].default_value = {(*colour, 1.0)!r}\n"
        f"bg.inputs['Strength'].default_value = {strength!r}\n"
    )


_LIGHTS_X = "for o in bpy.data.objects:\n    if o.type == 'LIGHT':\n        o.data.energy *= {}\n"

TRICKS = {  # (task, code after the right scene): lighting and materials must fall
    "white_world_50": ("red_cube", _world((1, 1, 1), 50.0)),
    "green_world_50": ("red_cube", _world((0, 1, 0), 50.0)),
    "lights_x1000_dice": ("dice_row", _LIGHTS_X.format(1000)),
}
HONEST = {  # light the task did not ask for, at a strength a scene uses
    "grey_sky": ("red_cube", _world((0.05, 0.05, 0.05), 1.0)),
    "white_sky_1": ("dice_row", _world((1, 1, 1), 1.0)),
    "white_sky_1_lamp_post": ("lamp_post", _world((1, 1, 1), 1.0)),  # the brightest scene
}


@pytest.mark.blender
@pytest.mark.sandbox
@pytest.mark.skipif(importlib.util.find_spec("bpy") is None, reason="bpy is not installed")
@pytest.mark.parametrize("name", sorted(TRICKS))
def test_a_blown_out_render_loses_its_lighting_and_materials(name: str) -> None:
    task_id, code = TRICKS[name]
    verdict = judge(task_id, code)
    assert verdict.status is not Status.PASS, name
    stages = verdict.evidence["stages"]
    assert stages["lighting"] < 1.0 and stages["materials"] < 1.0, stages


@pytest.mark.blender
@pytest.mark.sandbox
@pytest.mark.skipif(importlib.util.find_spec("bpy") is None, reason="bpy is not installed")
@pytest.mark.parametrize("name", sorted(HONEST))
def test_light_a_scene_could_use_still_passes(name: str) -> None:
    task_id, code = HONEST[name]
    verdict = judge(task_id, code)
    assert verdict.status is Status.PASS, verdict.feedback


@dataclass(frozen=True)
class Check:
    stage: str
    what: str
    ok: bool = True
    detail: str | None = None


SPEC = SceneSpec.model_validate({"objects": {"Cube": {}}, "materials": {"Red": {}}})


@pytest.mark.parametrize(("lit", "failed"), [(0.5, False), (LIT_MAX, False), (0.99, True)])
def test_the_gate_fails_lighting_and_materials_above_the_ceiling(lit: float, failed: bool) -> None:
    dump = {
        "objects": [{"name": "Cube", "type": "MESH", "materials": ["Red"]}],
        "truth": {"luminance": lit, "objects": {"Cube": {"pixels": 100, "luminance": lit}}},
    }
    checks = [Check("lighting", "light 'Sun'"), Check("materials", "material 'Red'"),
              Check("geometry", "object 'Cube'")]  # fmt: skip
    gated = gate_on_truth(checks, dump, SPEC)
    assert [c.ok for c in gated] == [not failed, not failed, True]
