"""Evaluated bounds, light and camera pose, renders from more than one view, exploits."""

from __future__ import annotations

import math

import pytest

from rewardsmith.datasets.scenes3d.tasks import Task, load_tasks
from rewardsmith.verifiers.blender import BlenderScene, SceneSpec, check_scene
from rewardsmith.verifiers.exploits import exploits_of
from rewardsmith.verifiers.types import Sample, Status, Verdict

blender = [pytest.mark.blender, pytest.mark.sandbox]


@pytest.fixture(scope="module")
def red_box() -> Task:
    return next(t for t in load_tasks() if t.id == "red_box")


def run(task: Task, script: str) -> Verdict:
    return BlenderScene(wall_s=30)(task.sample([script]))


def failed(verdict: Verdict) -> dict[str, str]:
    return {c["what"]: c["detail"] for c in verdict.evidence["checks"] if not c["ok"]}


SUBDIVIDED = """
import bpy
bpy.ops.mesh.primitive_cube_add(size=2, location=(0, 0, 1))
cube = bpy.context.active_object
cube.name = "Cube"
cube.modifiers.new("Smooth", "SUBSURF").levels = 1
"""


@pytest.mark.parametrize("mark", [0], ids=["subsurf"])
@pytest.mark.blender
@pytest.mark.sandbox
def test_a_subdivided_cube_is_measured_as_evaluated(mark: int) -> None:
    spec = {"objects": {"Cube": {"type": "MESH", "dimensions": [2, 2, 2]}}}
    verdict = BlenderScene(wall_s=30)(Sample(id="s", completion=SUBDIVIDED, reference=spec))
    cube = next(o for o in verdict.evidence["scene"]["objects"] if o["name"] == "Cube")
    # Catmull-Clark level 1 pulls a 2 m cube's corners in: 1.679 m across (issue 21).
    assert cube["dimensions"] == pytest.approx([1.6786, 1.6786, 1.6786], abs=2e-3)
    assert cube["bbox_max"][2] == pytest.approx(1 + 1.6786 / 2, abs=2e-3)
    assert verdict.status is not Status.PASS and "Cube.dimensions" in failed(verdict)


@pytest.mark.blender
@pytest.mark.sandbox
def test_a_camera_facing_away_fails_as_such(red_box: Task) -> None:
    script = red_box.scripts[0] + (
        "\nimport mathutils\n"
        "camera.matrix_world = camera.matrix_world @ mathutils.Matrix.Rotation(math.pi, 4, 'Y')\n"
    ).replace("math.pi", "3.141592653589793")
    problems = failed(run(red_box, script))
    assert "faces away" in problems["camera sees the scene"]
    assert "faces away" in problems["camera.look_at"]


@pytest.mark.blender
@pytest.mark.sandbox
def test_the_suns_direction_is_checked(red_box: Task) -> None:
    script = red_box.scripts[0].replace("(0.6, 0.2, 0.8)", "(0.0, 0.9, 0.8)")
    problems = failed(run(red_box, script))  # the renders change with the light, too
    light = [detail for what, detail in problems.items() if what.startswith("light 0")]
    assert len(light) == 1 and "direction off by" in light[0]
    assert not [what for what in problems if what.startswith(("Box", "Red", "camera"))]


@pytest.mark.blender
@pytest.mark.sandbox
def test_every_view_is_rendered_and_a_change_seen_only_from_the_side_fails(red_box: Task) -> None:
    right = run(red_box, red_box.scripts[0])
    images = [c for c in right.evidence["checks"] if c["what"].endswith("image")]
    assert [c["what"] for c in images] == ["preview image", "view 0 image", "view 1 image"]
    assert all(c["ok"] and "PSNR 99.00" in c["detail"] for c in images)
    # Above the box, out of the scene camera's field (33 degrees off its axis, half-field
    # 20), in front of the top view's.
    extra = "\nbpy.ops.mesh.primitive_cube_add(size=0.8, location=(0, 0, 6))\n"
    problems = failed(run(red_box, red_box.scripts[0] + extra))
    assert "view 0 image" in problems and "preview image" not in problems


def scene(**light: object) -> dict[str, object]:
    base = {"name": "Key", "type": "SPOT", "energy": 100.0, "color": [1, 1, 1]}
    return {"objects": [], "lights": [{**base, **light}]}


@pytest.mark.parametrize(
    ("light", "ok"),
    [
        ({"location": [0, 0, 5], "direction": [0, 0, -1]}, True),
        ({"location": [0, 0, 5.04], "direction": [0, 0, -1]}, True),  # within 0.05
        ({"location": [0, 0.1, 5], "direction": [0, 0, -1]}, False),
        ({"location": [0, 0, 5], "direction": [0, math.sin(0.1), -math.cos(0.1)]}, False),
        ({"location": [0, 0, 5], "direction": [0, 0, 1]}, False),  # facing up, away
        ({"location": [math.nan, 0, 5], "direction": [0, 0, -1]}, False),
    ],
)
def test_light_pose_by_hand(light: dict[str, object], ok: bool) -> None:
    spec = SceneSpec.model_validate(
        {"lights": [{"type": "SPOT", "location": [0, 0, 5], "look_at": [0, 0, 0]}]}
    )
    checks = check_scene(scene(**light), spec)
    assert [c.ok for c in checks] == [ok]


RENDER_TRUTH = {
    "blender/viewport_hidden",
    "blender/not_rendered",
    "blender/dark_render",
    "blender/blown_out",
    "blender/washed_out",
    "blender/render_settings",
    "blender/glowing_material",
    "blender/unread_material",
    "blender/hidden_from_render",
    "blender/dark_lights",
    "blender/decoy_material",
    "blender/render_only_geometry",
    "blender/camera_sees_nothing",
}


PARTS = 3
"""Each task's exploits are played in PARTS tests (every PARTS-th exploit, from `part`):
~40 scenes of ~2 s each were one test of ~75-115 s that pytest-xdist could only run whole,
often alone at the end of `make test`. Part 0 also scores the right scene and checks which
classes were made; together the parts play every exploit once, as the one test did."""


@pytest.mark.blender
@pytest.mark.sandbox
@pytest.mark.slow
@pytest.mark.parametrize("part", range(PARTS), ids=lambda k: f"part{k}")
@pytest.mark.parametrize("task_id", ["red_box", "gold_sphere"])
def test_no_scene_exploit_earns_more_than_its_limit(task_id: str, part: int) -> None:
    task = next(t for t in load_tasks() if t.id == task_id)
    verifier = BlenderScene(wall_s=30)
    right = task.sample()
    made = list(exploits_of(verifier, right))
    seen = {exploit.exploit_class for exploit in made}
    if part == 0:
        assert verifier(right).score == 1.0
    over, crashed = [], []
    for exploit in made[part::PARTS]:
        verdict = verifier(exploit.sample)
        if (verdict.score or 0.0) > exploit.max_fraction + 1e-9:
            over.append((exploit.exploit_class, verdict.score, exploit.max_fraction))
        if exploit.exploit_class in RENDER_TRUTH and verdict.status is not Status.PARTIAL:
            crashed.append((exploit.exploit_class, verdict.feedback))  # it must have run
    assert over == [] and crashed == []
    assert seen >= RENDER_TRUTH
    assert {"blender/names_only", "blender/subdivided_stand_in", "blender/wrong_size",
            "blender/camera_away", "blender/forged_dump", "blender/empty"} <= seen  # fmt: skip
    if task_id == "red_box":
        assert "blender/light_moved" in seen
