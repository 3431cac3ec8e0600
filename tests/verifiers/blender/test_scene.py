"""`blender_scene` end to end: real bpy in the sandbox, one defect per case."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from rewardsmith.datasets.scenes3d.tasks import Task, load_tasks
from rewardsmith.verifiers.blender import BlenderScene
from rewardsmith.verifiers.protocol import Verifier
from rewardsmith.verifiers.registry import create
from rewardsmith.verifiers.types import Failure, Sample, Status, Step, Verdict

pytestmark = [pytest.mark.blender, pytest.mark.sandbox]


@pytest.fixture(scope="module")
def tasks() -> dict[str, Task]:
    return {t.id: t for t in load_tasks()}


@pytest.fixture(scope="module")
def red_box(tasks: dict[str, Task]) -> Task:
    return tasks["red_box"]


def run(task: Task, script: str, verifier: BlenderScene | None = None) -> Verdict:
    return (verifier or BlenderScene(wall_s=20))(task.sample([script]))


@pytest.mark.parametrize("task_id", ["red_box", "gold_sphere", "crate_steps"])
def test_reference_solutions_pass(tasks: dict[str, Task], task_id: str) -> None:
    task = tasks[task_id]
    verdict = create(task.verifier, **task.config)(task.sample())
    assert verdict.status is Status.PASS, verdict.feedback
    assert verdict.evidence["stages"] == {
        s: 1.0 for s in ("geometry", "materials", "lighting", "render")
    }


def test_preview_matches_reference_render(red_box: Task) -> None:
    verdict = run(red_box, red_box.scripts[0])
    image = next(c for c in verdict.evidence["checks"] if c["what"] == "preview image")
    assert image["ok"] and "PSNR 99.00" in image["detail"]  # bit-identical for a fixed seed


# (what the model changed, the check that must fail, the stage it belongs to)
SCENE_DEFECTS = [
    (
        ("bpy.context.scene.collection.objects.link(sun)", "pass  # the sun never joins the scene"),
        "light 0",
        "lighting",
    ),
    (("(0.8, 0.05, 0.05, 1.0)", "(0.05, 0.05, 0.8, 1.0)"), "Red[Base Color]", "materials"),
    (("box.scale = (1.5, 1.0, 0.5)", "box.scale = (1.5, 1.0, 0.75)"), "Box.dimensions", "geometry"),
    (("camera.data.lens = 50", "camera.data.lens = 85"), "camera.lens", "render"),
]


@pytest.mark.parametrize(
    ("edit", "check", "stage"), SCENE_DEFECTS, ids=[d[1] for d in SCENE_DEFECTS]
)
def test_each_scene_defect_fails_its_check(
    red_box: Task, edit: tuple[str, str], check: str, stage: str
) -> None:
    old, new = edit
    assert old in red_box.scripts[0]
    verdict = run(red_box, red_box.scripts[0].replace(old, new))
    assert verdict.status is Status.PARTIAL and 0 < verdict.score < 1
    failed = [c for c in verdict.evidence["checks"] if not c["ok"]]
    assert any(c["what"].startswith(check) for c in failed), failed
    assert verdict.evidence["stages"][stage] < 1.0
    assert check in verdict.feedback


# (script, failure, a fragment of the feedback)
RUN_FAILURES = [
    (
        "import bpy\nbpy.data.objects['Nope'].location = (0, 0, 0)",
        Failure.RUNTIME_ERROR,
        "KeyError",
    ),
    ("import bpy\ndef broken(:\n    pass", Failure.COMPILE_ERROR, "SyntaxError"),
    ("import os\nos._exit(0)", Failure.RUNTIME_ERROR, "before its output was saved"),
    ("import sys\nsys.exit(2)", Failure.RUNTIME_ERROR, ""),
    (
        "import socket\nsocket.create_connection(('10.0.0.1', 80), timeout=2)",
        Failure.RUNTIME_ERROR,
        "Network is unreachable",
    ),
    (
        "import socket\nsocket.create_connection(('127.0.0.1', 22), timeout=2)",
        Failure.RUNTIME_ERROR,
        "OSError",
    ),
]


@pytest.mark.parametrize(
    ("script", "failure", "fragment"), RUN_FAILURES, ids=[r[2] or r[0] for r in RUN_FAILURES]
)
def test_a_failed_run_is_a_verdict(
    red_box: Task, script: str, failure: Failure, fragment: str
) -> None:
    verdict = run(red_box, script)
    assert verdict.status is Status.ERROR and verdict.failure is failure and verdict.score == 0.0
    assert fragment in verdict.feedback


def test_infinite_loop_is_killed(red_box: Task) -> None:
    verdict = run(red_box, "while True:\n    pass", BlenderScene(wall_s=2))
    assert verdict.status is Status.TIMEOUT and verdict.failure is Failure.TIME_LIMIT
    assert verdict.score == 0.0


def test_memory_blow_up_is_stopped(red_box: Task) -> None:
    script = "chunks = []\nwhile True:\n    chunks.append(bytearray(64 << 20))"
    verdict = run(red_box, script, BlenderScene(wall_s=30, memory_bytes=768 << 20))
    assert verdict.failure is Failure.MEMORY_LIMIT and verdict.score == 0.0


def test_writing_outside_the_work_dir_fails_and_leaves_nothing(
    red_box: Task, tmp_path: Path
) -> None:
    target = tmp_path / "escaped.txt"
    verdict = run(red_box, f"open({str(target)!r}, 'w').write('out')\n" + red_box.scripts[0])
    assert verdict.failure is Failure.RUNTIME_ERROR
    assert not target.exists()


def test_writing_system_files_fails(red_box: Task) -> None:
    verdict = run(red_box, "open('/etc/rewardsmith_escape', 'w').write('x')")
    assert verdict.failure is Failure.RUNTIME_ERROR and "Read-only file system" in verdict.feedback
    assert not Path("/etc/rewardsmith_escape").exists()


def test_a_forged_dump_is_ignored(red_box: Task) -> None:
    # The inspection runs in a fresh child on the saved scene: a file the script writes in
    # its work dir claiming a perfect scene never reaches the judge.
    perfect = {
        "objects": [
            {
                "name": "Box",
                "type": "MESH",
                "location": [0, 0, 1],
                "dimensions": [3, 2, 1],
                "bbox_min": [-1.5, -1, 0.5],
                "bbox_max": [1.5, 1, 1.5],
                "modifiers": [{"type": "BEVEL"}],
                "materials": ["Red"],
            }
        ],
        "lights": [{"name": "Sun", "type": "SUN", "energy": 3.0, "color": [1, 1, 1]}],
    }
    forged = (
        "import json\n"
        f"claim = {{'steps': [{perfect!r}], 'preview': False}}\n"
        "json.dump(claim, open('scene.json', 'w'))\n"
        "json.dump(claim, open('/tmp/scene.json', 'w'))\n"
    )
    verdict = run(red_box, forged)
    assert verdict.status is Status.FAIL and verdict.score == 0.0
    assert "no object named 'Box'" in verdict.feedback


def test_empty_scene_scores_zero(red_box: Task) -> None:
    verdict = run(red_box, "import bpy")
    assert verdict.status is Status.FAIL and verdict.failure is Failure.WRONG_ANSWER


def test_trajectory_reports_stage_scores_after_each_step(tasks: dict[str, Task]) -> None:
    task = tasks["crate_steps"]
    verdict = BlenderScene(staging="sequential")(task.sample())
    per_step = verdict.evidence["per_step"]
    assert [step["lighting"] for step in per_step] == [0.0, 0.0, 1.0, 1.0]
    assert [step["materials"] for step in per_step] == [0.0, 1.0, 1.0, 1.0]
    scores = verdict.evidence["per_step_score"]
    assert scores == sorted(scores) and scores[-1] == 1.0  # monotone progress: a potential


def test_sequential_staging_locks_later_stages(tasks: dict[str, Task]) -> None:
    task = tasks["crate_steps"]
    steps = list(task.scripts)
    steps[1] = steps[1].replace("(0.45, 0.3, 0.15, 1.0)", "(0.9, 0.9, 0.9, 1.0)")  # wrong wood
    mean = BlenderScene(staging="mean")(task.sample(steps))
    sequential = BlenderScene(staging="sequential")(task.sample(steps))
    assert mean.evidence["stages"] == sequential.evidence["stages"]
    stages = mean.evidence["stages"]
    assert sequential.score == pytest.approx((stages["geometry"] + stages["materials"]) / 4)
    assert mean.score > sequential.score


def test_a_failing_step_fails_the_trajectory(tasks: dict[str, Task]) -> None:
    task = tasks["crate_steps"]
    steps = [*task.scripts[:2], "raise RuntimeError('lights broke')", task.scripts[3]]
    verdict = BlenderScene()(task.sample(steps))
    assert verdict.failure is Failure.RUNTIME_ERROR and "lights broke" in verdict.feedback


@pytest.mark.parametrize(
    "reference",
    [None, {"objects": {"Box": {"dimension": [1, 1, 1]}}}, "/nowhere/spec.json"],
    ids=repr,
)
def test_bad_spec_is_a_data_error(reference: object) -> None:
    verdict = BlenderScene()(Sample(id="s", completion="import bpy", reference=reference))
    assert verdict.failure is Failure.BAD_REFERENCE and verdict.score is None


def test_oversized_input_is_refused_before_running() -> None:
    sample = Sample(id="s", completion="x = 1\n" * 50_000, reference={})
    assert BlenderScene().__call__(sample).failure is Failure.INPUT_TOO_LARGE
    many = Sample(id="s", completion=[Step(action="x = 1")] * 9, reference={})
    assert BlenderScene().__call__(many).failure is Failure.INPUT_TOO_LARGE


def test_pickle_round_trip_and_registry() -> None:
    verifier = BlenderScene(staging="sequential", wall_s=5)
    assert pickle.loads(pickle.dumps(verifier)) == verifier
    assert create("blender_scene", staging="sequential", wall_s=5) == verifier
    assert isinstance(verifier, Verifier)
    with pytest.raises(ValueError, match="staging"):
        BlenderScene(staging="sometimes")  # type: ignore[arg-type]


@pytest.mark.slow
def test_a_scene_too_heavy_to_build_or_inspect_is_the_models_failure(red_box: Task) -> None:
    # A billion cubes by three stacked arrays: it must cost the model, never become an
    # infrastructure error that would drop out of the reward.
    script = (
        "import bpy\n"
        "bpy.ops.mesh.primitive_cube_add()\n"
        "for axis in range(3):\n"
        "    m = bpy.context.active_object.modifiers.new(f'A{axis}', 'ARRAY')\n"
        "    m.count = 1000\n"
        "    m.relative_offset_displace = [1.0 if i == axis else 0.0 for i in range(3)]\n"
    )
    verdict = run(red_box, script, BlenderScene(wall_s=8, memory_bytes=1 << 30))
    assert verdict.failure in (Failure.MEMORY_LIMIT, Failure.TIME_LIMIT)
    assert verdict.score == 0.0 and not verdict.is_infra_failure
