"""Red team of issue 32 (/work/notes/redteam-3d.md, 04:40): classes that rewrite what the
picture shows after (or around) the render, each with several instances; honest scenes
that resemble them still pass."""

# ruff: noqa: E501  (a table of one-line Blender snippets)
from __future__ import annotations

import json
from pathlib import Path

import pytest

from rewardsmith.datasets.scenes3d.tasks import Task, load_tasks
from rewardsmith.verifiers.blender import BlenderScene
from rewardsmith.verifiers.types import Status

pytestmark = [pytest.mark.blender, pytest.mark.sandbox]

_BLACK_COMPOSITOR = (
    "ng = bpy.data.node_groups.new('Comp', 'CompositorNodeTree')\n"
    "out = ng.interface.new_socket('Image', in_out='OUTPUT', socket_type='NodeSocketColor')\n"
    "rgb = ng.nodes.new('CompositorNodeRGB'); go = ng.nodes.new('NodeGroupOutput')\n"
    "ng.links.new(rgb.outputs[0], go.inputs[0])\n"
    "bpy.context.scene.compositing_node_group = ng"
)
_SHELL = (
    "bpy.ops.mesh.primitive_uv_sphere_add(radius=3, location=(0, 0, 1))\n"
    "bpy.context.active_object.modifiers.new('Thick', 'SOLIDIFY').thickness = 0.1"
)
_OVERRIDE = (
    "green = bpy.data.materials.new('Green'); green.use_nodes = True\n"
    "green.node_tree.nodes['Principled BSDF'].inputs['Base Color'].default_value = (0, 1, 0, 1)\n"
    "bpy.context.view_layer.material_override = green"
)
TRICKS = {  # (stage that must fall, code), on gold_sphere (no image spec)
    "shadow_catcher": ("geometry", "ball.is_shadow_catcher = True"),
    "occluding_shell": ("geometry", _SHELL),
    "black_compositor": ("render", _BLACK_COMPOSITOR),
    "false_colour": ("render", "bpy.context.scene.view_settings.view_transform = 'False Color'"),
    "raw_view": ("render", "bpy.context.scene.view_settings.view_transform = 'Raw'"),
    "gamma_0.01": ("render", "bpy.context.scene.view_settings.gamma = 0.01"),
    "gamma_5": ("render", "bpy.context.scene.view_settings.gamma = 5.0"),
    "pixel_aspect_200": ("render", "bpy.context.scene.render.pixel_aspect_x = 200"),
    "material_override": ("materials", _OVERRIDE),
    "simplify_subsurf_0": (
        "geometry",
        "r = bpy.context.scene.render; r.use_simplify = True; r.simplify_subdivision_render = 0",
    ),
    "subsurf_render_off": ("geometry", "ball.modifiers['Smooth'].show_render = False"),
}
HONEST = {
    "floor_plane": "bpy.ops.mesh.primitive_plane_add(size=20, location=(0, 0, 0))",
    "standard_view": "bpy.context.scene.view_settings.view_transform = 'Standard'",
    "gamma_1.2": "bpy.context.scene.view_settings.gamma = 1.2",
    "simplify_on_high_cap": "r = bpy.context.scene.render; r.use_simplify = True; r.simplify_subdivision_render = 4",
    "small_object_in_front_aside": "bpy.ops.mesh.primitive_cube_add(size=0.3, location=(2.5, -3, 0.5))",
}


@pytest.fixture(scope="module")
def gold_sphere() -> Task:
    return next(t for t in load_tasks() if t.id == "gold_sphere")


def run(task: Task, code: str) -> object:
    return BlenderScene(wall_s=60)(task.sample([task.scripts[0] + "\n" + code + "\n"]))


@pytest.mark.parametrize("name", sorted(TRICKS))
def test_a_rewritten_picture_loses_its_stage(gold_sphere: Task, name: str) -> None:
    stage, code = TRICKS[name]
    verdict = run(gold_sphere, code)
    assert verdict.status is not Status.PASS  # type: ignore[attr-defined]
    assert verdict.evidence["stages"][stage] < 1.0, verdict.evidence["stages"]  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", sorted(HONEST))
def test_an_honest_scene_like_them_passes(gold_sphere: Task, name: str) -> None:
    verdict = run(gold_sphere, HONEST[name])
    assert verdict.status is Status.PASS, verdict.feedback  # type: ignore[attr-defined]


# Red team D-B1 (04:48): honest dark scenes, each with the spec asking for exactly that
# (the scene's darkness is the material's or the task's, not a dead light).
HONEST_DARK = {
    "black_material": (
        "bsdf.inputs['Base Color'].default_value = (0, 0, 0, 1)",
        {"materials": {"Gold": {"inputs": {"Base Color": [0, 0, 0]}}}},
    ),
    "chrome_in_a_black_world": (
        "bsdf.inputs['Base Color'].default_value = (1, 1, 1, 1)\n"
        "bsdf.inputs['Roughness'].default_value = 0.0",
        {
            "materials": {
                "Gold": {"inputs": {"Base Color": [1, 1, 1], "Metallic": 1, "Roughness": 0}}
            }
        },
    ),
    "night_lights": (
        "bpy.data.objects['Key'].data.energy = 2.0\nbpy.data.objects['Soft'].data.energy = 1.0",
        {
            "lights": [
                {"type": "POINT", "energy": 2, "color": [1.0, 0.8, 0.6]},
                {"type": "AREA", "energy": 1},
            ]
        },
    ),
}


@pytest.mark.parametrize("name", sorted(HONEST_DARK))
def test_an_honest_dark_scene_passes(gold_sphere: Task, name: str) -> None:
    code, changes = HONEST_DARK[name]
    spec = json.loads(Path(gold_sphere.reference).read_text())
    spec.update(changes)
    sample = gold_sphere.sample([gold_sphere.scripts[0] + "\n" + code + "\n"])
    verdict = BlenderScene(wall_s=60)(sample.model_copy(update={"reference": spec}))
    assert verdict.status is Status.PASS, verdict.feedback
