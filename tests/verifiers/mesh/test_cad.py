"""`cad_code`: model-written geometry code, run in the sandbox, then compared."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from rewardsmith.datasets.scenes3d.tasks import Task, load_tasks
from rewardsmith.verifiers.mesh import MeshCompare
from rewardsmith.verifiers.mesh.cad import CadCode
from rewardsmith.verifiers.protocol import Verifier
from rewardsmith.verifiers.registry import create
from rewardsmith.verifiers.types import Failure, Status, Verdict

pytestmark = pytest.mark.sandbox


@pytest.fixture(scope="module")
def tasks() -> dict[str, Task]:
    return {t.id: t for t in load_tasks()}


@pytest.fixture(scope="module")
def bracket(tasks: dict[str, Task]) -> Task:
    return tasks["bracket"]


def run(task: Task, script: str, **config: object) -> Verdict:
    return CadCode(**{"wall_s": 20.0, **task.config, **config})(task.sample([script]))


@pytest.mark.parametrize(
    "task_id", ["bracket", "plate_hole", pytest.param("block_blender", marks=pytest.mark.blender)]
)
def test_reference_solutions_pass(tasks: dict[str, Task], task_id: str) -> None:
    task = tasks[task_id]
    verdict = create(task.verifier, **task.config)(task.sample())
    assert verdict.status is Status.PASS, verdict.feedback


def test_wrong_part_is_scored_not_passed(bracket: Task) -> None:
    # Upright at the wrong end: same size, different shape.
    script = bracket.scripts[0].replace("[[0, 0, 0], [4, 20, 30]]", "[[36, 0, 0], [40, 20, 30]]")
    verdict = run(bracket, script)
    assert verdict.status in (Status.PARTIAL, Status.FAIL) and verdict.score < 1
    assert verdict.evidence["raw"]["iou"] < 0.95


def test_wrong_size_fails_the_dimension_gate(bracket: Task) -> None:
    verdict = run(bracket, bracket.scripts[0].replace("[4, 20, 30]", "[4, 20, 25]"))
    assert verdict.status is Status.FAIL and "z size is 25" in verdict.feedback


def test_overlapping_unjoined_boxes_fail_the_validity_gate(bracket: Task) -> None:
    script = (
        "import trimesh\n"
        "a = trimesh.creation.box(bounds=[[0, 0, 0], [40, 20, 4]])\n"
        "b = trimesh.creation.box(bounds=[[0, 0, 0], [4, 20, 30]])\n"
        "trimesh.util.concatenate([a, b]).export('out.stl')\n"  # overlapping, not unioned
    )
    verdict = run(bracket, script)
    # The boxes share corner vertices, so some edges join four faces: not a solid.
    assert verdict.status is Status.FAIL and "not watertight" in verdict.feedback


# (script, failure, status, a fragment of the feedback)
FAILURES = [
    ("print('done')", Failure.FORMAT, Status.FAIL, "wrote no out.stl"),
    ("def f(:\n", Failure.COMPILE_ERROR, Status.ERROR, "SyntaxError"),
    ("raise ValueError('no idea')", Failure.RUNTIME_ERROR, Status.ERROR, "ValueError: no idea"),
    ("open('out.stl', 'wb').write(b'solid junk\\n' * 100)", Failure.FORMAT, Status.FAIL, ""),
    ("import os\nos._exit(0)", Failure.FORMAT, Status.FAIL, "wrote no out.stl"),
]


@pytest.mark.parametrize(
    ("script", "failure", "status", "fragment"), FAILURES, ids=[f[0][:20] for f in FAILURES]
)
def test_failures_are_verdicts(
    bracket: Task, script: str, failure: Failure, status: Status, fragment: str
) -> None:
    verdict = run(bracket, script)
    assert verdict.failure is failure and verdict.status is status and verdict.score == 0.0
    assert fragment in verdict.feedback


def test_infinite_loop_is_killed(bracket: Task) -> None:
    verdict = run(bracket, "while True:\n    pass", wall_s=2.0)
    assert verdict.status is Status.TIMEOUT and verdict.failure is Failure.TIME_LIMIT


def test_memory_blow_up_is_stopped(bracket: Task) -> None:
    script = "chunks = []\nwhile True:\n    chunks.append(bytearray(64 << 20))"
    verdict = run(bracket, script, memory_bytes=512 << 20, wall_s=30.0)
    assert verdict.failure is Failure.MEMORY_LIMIT


def test_writing_outside_the_work_dir_does_not_happen(bracket: Task, tmp_path: Path) -> None:
    target = tmp_path / "escaped.stl"
    script = bracket.scripts[0].replace('"out.stl"', repr(str(target)))
    verdict = run(bracket, script)
    assert verdict.failure is Failure.RUNTIME_ERROR and not target.exists()


@pytest.mark.blender
def test_blender_script_error_and_empty_scene(tasks: dict[str, Task]) -> None:
    task = tasks["block_blender"]
    broken = run(task, "import bpy\nbpy.ops.mesh.no_such_operator()")
    assert broken.failure is Failure.RUNTIME_ERROR
    empty = run(task, "import bpy")
    assert empty.status is Status.ERROR and "no mesh" in empty.feedback


def test_config_is_validated_and_pickles() -> None:
    verifier = CadCode(kind="blender", compare=MeshCompare(align=True))
    assert pickle.loads(pickle.dumps(verifier)) == verifier
    assert create("cad_code", kind="blender", compare={"align": True}) == verifier
    assert isinstance(verifier, Verifier)
    with pytest.raises(ValueError, match="output"):
        CadCode(output="../escape.stl")
    with pytest.raises(ValueError, match="kind"):
        CadCode(kind="openscad")  # type: ignore[arg-type]
