"""What is judged is what renders: scenes that measure right but render something else.

Red team of issue 21 (second round). Each row is a right `gold_sphere` scene (no reference
image in its spec, as most tasks have none) changed so that the thing a check reads is not
the thing the render shows: an object or light hidden from the render, a material whose
checked Principled BSDF does not reach the output, geometry that differs between the
viewport evaluation and the render. None may pass.
"""

from __future__ import annotations

import pytest

from rewardsmith.datasets.scenes3d.tasks import Task, load_tasks
from rewardsmith.verifiers.blender import BlenderScene
from rewardsmith.verifiers.types import Status, Verdict

pytestmark = [pytest.mark.blender, pytest.mark.sandbox]

HIDDEN_OBJECT = {
    "hide_render": "ball.hide_render = True",
    "camera_ray_off": "ball.visible_camera = False",
    "holdout": "ball.is_holdout = True",
    "collection_hide_render": (
        "col = bpy.data.collections.new('Hidden')\n"
        "bpy.context.scene.collection.children.link(col)\n"
        "bpy.context.scene.collection.objects.unlink(ball)\n"
        "col.objects.link(ball)\n"
        "col.hide_render = True"
    ),
    "collection_excluded": (
        "col = bpy.data.collections.new('Off')\n"
        "bpy.context.scene.collection.children.link(col)\n"
        "bpy.context.scene.collection.objects.unlink(ball)\n"
        "col.objects.link(ball)\n"
        "bpy.context.view_layer.layer_collection.children['Off'].exclude = True"
    ),
}
DARK_LIGHTS = {
    "hide_render": "for o in bpy.data.objects:\n    if o.type == 'LIGHT': o.hide_render = True",
    "node_strength_0": (
        "for o in bpy.data.objects:\n"
        "    if o.type == 'LIGHT':\n"
        "        o.data.use_nodes = True\n"
        "        o.data.node_tree.nodes['Emission'].inputs['Strength'].default_value = 0.0"
    ),
    "collection_hide_render": (
        "col = bpy.data.collections.new('Dark')\n"
        "bpy.context.scene.collection.children.link(col)\n"
        "for o in [o for o in bpy.data.objects if o.type == 'LIGHT']:\n"
        "    bpy.context.scene.collection.objects.unlink(o)\n"
        "    col.objects.link(o)\n"
        "col.hide_render = True"
    ),
}
DECOY_MATERIAL = {
    "emission_feeds_output": (
        "nt = gold.node_tree\n"
        "em = nt.nodes.new('ShaderNodeEmission')\n"
        "em.inputs['Color'].default_value = (0, 0, 1, 1)\n"
        "nt.links.new(em.outputs[0], nt.nodes['Material Output'].inputs['Surface'])"
    ),
    "second_principled_feeds_output": (
        "nt = gold.node_tree\n"
        "blue = nt.nodes.new('ShaderNodeBsdfPrincipled')\n"
        "blue.inputs['Base Color'].default_value = (0, 0, 1, 1)\n"
        "nt.links.new(blue.outputs[0], nt.nodes['Material Output'].inputs['Surface'])"
    ),
    "mix_with_blue": (
        "nt = gold.node_tree\n"
        "mix = nt.nodes.new('ShaderNodeMixShader'); mix.inputs[0].default_value = 0.95\n"
        "blue = nt.nodes.new('ShaderNodeBsdfDiffuse')\n"
        "blue.inputs['Color'].default_value = (0, 0, 1, 1)\n"
        "nt.links.new(bsdf.outputs[0], mix.inputs[1])\n"
        "nt.links.new(blue.outputs[0], mix.inputs[2])\n"
        "nt.links.new(mix.outputs[0], nt.nodes['Material Output'].inputs['Surface'])"
    ),
    "slot_no_face_uses": (
        "ball.data.materials.append(bpy.data.materials.new('Blue'))\n"
        "for p in ball.data.polygons: p.material_index = 1"
    ),
}
RENDER_ONLY_GEOMETRY = {
    "displace_render_only": (
        "m = ball.modifiers.new('Grow', 'DISPLACE'); m.strength = 1.0; m.show_viewport = False"
    ),
    "shrink_viewport_only": (  # the real mesh is twice the size; the viewport shows it right
        "ball.scale = (2, 2, 2); m = ball.modifiers.new('Fake', 'DISPLACE')\n"
        "m.strength = -1.0; m.show_render = False"
    ),
    "subsurf_render_levels": (  # a 2 m cube in the viewport, a 1.68 m blob in the render
        "bpy.ops.mesh.primitive_cube_add(size=2, location=(0, 0, 1))\n"
        "cube = bpy.context.active_object\n"
        "bpy.data.objects.remove(ball); cube.name = 'Ball'\n"
        "cube.data.materials.append(gold)\n"
        "s = cube.modifiers.new('Smooth', 'SUBSURF'); s.levels = 0; s.render_levels = 2"
    ),
}
CAMERA_SEES_NOTHING = {  # location, aim and lens as stated; nothing of the scene in its picture
    "orthographic": "camera.data.type = 'ORTHO'",
    "panoramic": "camera.data.type = 'PANO'",
    "clip_end_short": "camera.data.clip_end = 1.0",
    "clip_start_far": "camera.data.clip_start = 50.0; camera.data.clip_end = 100.0",
    "shifted_away": "camera.data.shift_x = 3.0",
}
TABLE = [
    pytest.param(
        cls,
        code,
        id=f"{cls}-{name}",
    )
    for cls, rows in (
        ("hidden_object", HIDDEN_OBJECT),
        ("dark_lights", DARK_LIGHTS),
        ("decoy_material", DECOY_MATERIAL),
        ("render_only_geometry", RENDER_ONLY_GEOMETRY),
        ("camera_sees_nothing", CAMERA_SEES_NOTHING),
    )
    for name, code in rows.items()
]
STAGE_OF = {
    "hidden_object": "geometry",
    "dark_lights": "lighting",
    "decoy_material": "materials",
    "render_only_geometry": "geometry",
    "camera_sees_nothing": "render",
}


@pytest.fixture(scope="module")
def gold_sphere() -> Task:
    return next(t for t in load_tasks() if t.id == "gold_sphere")


def run(task: Task, code: str) -> Verdict:
    return BlenderScene(wall_s=30)(task.sample([task.scripts[0] + "\n" + code + "\n"]))


@pytest.mark.parametrize(("cls", "code"), TABLE)
def test_a_scene_is_judged_as_it_renders(gold_sphere: Task, cls: str, code: str) -> None:
    verdict = run(gold_sphere, code)
    assert verdict.status is Status.PARTIAL, verdict.feedback
    assert verdict.evidence["stages"][STAGE_OF[cls]] < 1.0, verdict.evidence["stages"]


def test_the_right_scene_still_passes_and_is_seen_to_render(gold_sphere: Task) -> None:
    verdict = run(gold_sphere, "")
    assert verdict.status is Status.PASS, verdict.feedback
