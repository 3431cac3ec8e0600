"""blender_scene environment: real Blender in the sandbox. The expert earns full reward on
every bundled task, the lazy policy clearly less, each hostile class no more than its
limit; shaping telescopes; bad input is an observation and the scene stays as it was."""

from __future__ import annotations

import importlib.util
import json
import pickle
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest

from rewardsmith.environments import BlenderSceneEnv, EpisodeLimits
from rewardsmith.environments.blender_policies import (
    call,
    expert_actions,
    exploits,
    lazy_actions,
    live_only,
)
from rewardsmith.environments.blender_scene import load_tasks
from rewardsmith.environments.episode_exploits import play
from rewardsmith.environments.episodes import episode_row, spec_document
from rewardsmith.environments.protocol import EpisodeState
from rewardsmith.graders import Scorer
from rewardsmith.verifiers.blender import SceneSpec
from rewardsmith.verifiers.types import Sample, Step

pytestmark = [
    pytest.mark.blender,
    pytest.mark.sandbox,
    pytest.mark.skipif(importlib.util.find_spec("bpy") is None, reason="bpy is not installed"),
]

TASKS = load_tasks()


class QuickEnv(BlenderSceneEnv):
    """Short budgets (4 s a call, 10 s a turn), so hanging scripts cost seconds, not
    minutes, with room for an honest call on a loaded machine."""

    turn_budget_s: ClassVar[float] = 10.0
    episode_budget_s: ClassVar[float] = 30.0


@pytest.fixture(scope="module")
def env() -> Iterator[BlenderSceneEnv]:
    environment = QuickEnv(call_wall_s=4.0)
    yield environment
    environment.close()


def episode(env: BlenderSceneEnv, task: dict[str, Any], actions: list[str]) -> Any:
    """(final transition, turn rewards, the states after each step)."""
    state, _ = env.reset(task)
    rewards, states = [], [state]
    for action in actions:
        transition = env.step(state, action)
        state = transition.state
        states.append(state)
        rewards.append(None if transition.reward is None else transition.reward.value)
        if transition.done:
            return transition, rewards, states
    return env.truncate(state, "policy_stopped"), rewards, states


def test_the_bundled_set_has_twelve_scenes_of_several_sizes() -> None:
    assert len(TASKS) >= 12
    assert sum(t["objects"] > 1 for t in TASKS) >= 6 and max(t["objects"] for t in TASKS) >= 5
    for task in TASKS:
        spec = SceneSpec.model_validate(task["reference"])
        assert all(name in task["prompt"] for name in spec.objects)
        assert len(task["solution"]["scripts"]) == 4


@pytest.mark.slow
@pytest.mark.parametrize("task", TASKS, ids=[t["id"] for t in TASKS])
def test_the_expert_earns_full_reward_and_shaping_telescopes(
    env: BlenderSceneEnv, task: dict[str, Any]
) -> None:
    final, rewards, states = episode(env, task, expert_actions(task))
    assert final.state.end == "answered"
    assert final.reward.value == 1.0, final.reward.reason
    shaping = [r for r in rewards[:-1] if r is not None]
    start = states[0].task["scene_state"]["potential"]
    assert sum(shaping) == pytest.approx(1.0 - start, abs=1e-9)


def test_the_lazy_policy_earns_clearly_less(env: BlenderSceneEnv) -> None:
    earned = [episode(env, t, lazy_actions(t))[0].reward.value for t in TASKS]
    assert max(earned) < 0.3 and sum(earned) / len(earned) <= 0.25
    # the return (final plus shaping, as the trainer sums it) against the expert's 2.0
    assert max(play(env, t, lazy_actions(t)) for t in TASKS[:4]) < 0.6


# Scripts whose build depends on where or when they run: live turn or final replay.
DIVERGENT = [
    "os.path.exists('/box/in.blend')",
    "bpy.data.filepath",
    "not os.path.exists('/box/in.blend')",
    "random.random() < 0.5",
    "int(time.time() * 10) % 2 == 0",
]


@pytest.mark.slow
@pytest.mark.parametrize("condition", DIVERGENT)
def test_shaping_never_pays_beyond_the_final_reward(env: BlenderSceneEnv, condition: str) -> None:
    for task in TASKS[:4]:
        code = live_only(condition, "\n".join(task["solution"]["scripts"]))
        actions = [call("run_bpy", code=code), call("inspect_scene"), "Done."]
        final, rewards, states = episode(env, task, actions)
        shaping = sum(r for r in rewards[:-1] if r is not None)
        start = states[0].task["scene_state"]["potential"]
        assert shaping == pytest.approx(final.reward.value - start, abs=1e-9), condition


EXPLOITS = list(exploits(TASKS))
CLASSES = sorted({e.name for e in EXPLOITS})
SAME_ON_EVERY_TASK = {"hang_blender": "no_tools_claims_done"}
"""Classes whose actions are one script that builds nothing (a hang, killed at the call's
wall limit, then "Done."), the same on every task: on any task the episode ends on the
start scene as it was, which the class named beside it is paid for on every task. What a
play adds (the kill, and the scene kept through it) does not depend on the task, so these
are played on the first and the last task only: 4 s of hang each, not 12 x 4 s."""


@pytest.mark.slow
@pytest.mark.parametrize("name", CLASSES)
def test_each_exploit_class_earns_no_more_than_its_limit(env: BlenderSceneEnv, name: str) -> None:
    instances = [e for e in EXPLOITS if e.name == name]
    assert len(instances) == len(TASKS) >= 12
    if name in SAME_ON_EVERY_TASK:
        assert len({e.actions for e in instances}) == 1, f"{name} now depends on the task"
        assert SAME_ON_EVERY_TASK[name] in CLASSES
        instances = [instances[0], instances[-1]]
    over = [
        (e.task["id"], reward)
        for e in instances
        if (reward := play(env, e.task, e.actions)) > e.limit
    ]
    assert not over, f"{name} earned more than its limit: {over}"


def test_env_exploits_are_the_module_classes(env: BlenderSceneEnv) -> None:
    assert {e.name for e in env.exploits(TASKS[:1])} == set(CLASSES) and len(CLASSES) >= 12


_REMOVE = "import bpy\nbpy.ops.wm.read_factory_settings(use_empty=True)\n"


@pytest.mark.slow
@pytest.mark.parametrize("task", TASKS[:8], ids=[t["id"] for t in TASKS[:8]])
def test_a_raise_then_remove_round_trip_pays_nothing(
    env: BlenderSceneEnv, task: dict[str, Any]
) -> None:
    scripts = task["solution"]["scripts"]
    actions = [call("run_bpy", code=s) for s in scripts] + [call("run_bpy", code=_REMOVE)] * 2
    final, rewards, states = episode(env, task, [*actions, "Done."])
    paid = [r for r in rewards[:-1] if r is not None]
    assert env.scene_of(states[-2])["potential"] == states[0].task["scene_state"]["potential"]
    assert max(paid) > 0  # the build was paid on the way up ...
    assert sum(paid) == pytest.approx(0.0, abs=1e-9)  # ... and all of it taken back
    assert final.reward.value == 0.0


@pytest.mark.slow
@pytest.mark.parametrize("task", TASKS[:6], ids=[t["id"] for t in TASKS[:6]])
def test_a_turn_that_ends_the_episode_does_not_change_the_scored_scene(
    task: dict[str, Any],
) -> None:
    short = QuickEnv(limits=EpisodeLimits(max_turns=3), call_wall_s=4.0)
    build = call("run_bpy", code="\n".join(task["solution"]["scripts"]))
    remove = call("run_bpy", code=_REMOVE)
    look = call("inspect_scene")
    # built, then deleted in the turn the limit ends: the shaping paid stays, so the scene
    # must too (return 2.0, not 1.0 for a deleted scene)
    assert play(short, task, [build, look, remove]) == pytest.approx(2.0)
    # built only in the last turn: that turn's shaping is not paid, nor is its scene
    assert play(short, task, [look, look, build]) == 0.0
    final, _, _ = episode(short, task, [look, look, build])
    assert final.state.end == "turn_limit" and final.reward.value == 0.0
    short.close()


# (model code, what the observation must say)
BAD_SCRIPTS = [
    ("import bpy\nbpy.ops.mesh.primitive_cube_add(\n", "SyntaxError"),
    ("x = 1\nraise ValueError('my own bug')\n", "line 2: raise ValueError"),
    ("import bpy\nbpy.data.objects['Nope'].location.x = 1\n", "KeyError"),
    ("while True:\n    pass\n", "ran past its 4.0 s limit"),
    ("import ctypes\nctypes.string_at(0)\n", "signal SIGSEGV"),
    ("import os\nos.abort()\n", "error:"),
    ("import os\nos._exit(0)\n", "ended without saving"),
    ("import sys\nsys.exit(7)\n", "exited with 7"),
    ("import os\nos.remove('/box/in.blend')\nos._exit(0)\n", "ended without saving"),
    ("open('/box/out.blend', 'w').write('not a blend')\nimport os\nos._exit(0)\n",
     "does not open"),
    ("x = bytearray(3 << 30)\n", "limit"),
    ("import bpy\nbpy.ops.mesh.primitive_cube_add()\n"
     "bpy.context.active_object.modifiers.new('S', 'SUBSURF').levels = 11\n"
     "bpy.context.active_object.modifiers['S'].render_levels = 11\n", "limit"),
]  # fmt: skip


@pytest.mark.slow
@pytest.mark.parametrize("code,said", BAD_SCRIPTS)
def test_a_failing_script_is_an_observation_and_the_scene_is_unchanged(
    env: BlenderSceneEnv, code: str, said: str
) -> None:
    state, _ = env.reset(TASKS[0])
    before = env.scene_of(state)["blend"]
    transition = env.step(state, call("run_bpy", code=code))
    assert not transition.done
    assert said in transition.observation and "the scene is unchanged" in transition.observation
    assert env.scene_of(transition.state)["blend"] == before
    assert transition.state.attempts[-1]["meta"]["scripts"] == []


BAD_CALLS = [
    ("<tool_call>{not json</tool_call>", "not valid JSON"),
    (call("paint", colour="red"), "unknown tool 'paint'"),
    (call("run_bpy", code=5), "must be string"),
    (call("render_preview", size=16384 * 16384), "outside 16..256"),
    (call("render_preview", size=64), "no camera"),
    (call("inspect_scene") * 6, "at most 4 tool calls"),
]


@pytest.mark.parametrize("action,said", BAD_CALLS)
def test_a_malformed_call_is_an_observation(env: BlenderSceneEnv, action: str, said: str) -> None:
    state, _ = env.reset(TASKS[0])
    transition = env.step(state, action)
    assert not transition.done and said in transition.observation


def test_an_oversized_action_is_refused(env: BlenderSceneEnv) -> None:
    state, _ = env.reset(TASKS[0])
    transition = env.step(state, call("run_bpy", code="#" * 50_000), action_tokens=500)
    assert not transition.done and "at most 20000 are read" in transition.observation


def test_inspect_and_render_describe_the_scene(env: BlenderSceneEnv) -> None:
    task = TASKS[6]  # table: five objects
    state, _ = env.reset(task)
    for action in expert_actions(task)[:3]:
        state = env.step(state, action).state
    shown = env.step(state, call("inspect_scene") + call("render_preview", size=96)).observation
    assert "'Leg3' MESH at (0.9, -0.4, 0.35), size (0.1, 0.1, 0.7)" in shown
    assert "'Wood': base color (0.45, 0.3, 0.15)" in shown and "SUN" in shown
    assert "rendered 96 x" in shown and "'Top'" in shown


def test_a_tall_frame_renders_clamped_and_a_dark_scene_does_not_pass(
    env: BlenderSceneEnv,
) -> None:
    task = TASKS[0]
    dark = (
        "import bpy\nfor light in bpy.data.lights:\n    light.energy = 0\n"
        "bpy.context.scene.render.resolution_x = 4\n"
        "bpy.context.scene.render.resolution_y = 65536\n"
    )
    actions = [*expert_actions(task)[:3], call("run_bpy", code=dark)]
    state, _ = env.reset(task)
    for action in actions:
        state = env.step(state, action).state
    shown = env.step(state, call("render_preview", size=64))
    assert "rendered 64 x 256 px" in shown.observation and "black" in shown.observation
    final = env.step(shown.state, "Done.")
    assert final.done and final.reward.value < 1.0


def test_the_jail_sees_neither_the_scratch_folder_nor_the_task_file(
    env: BlenderSceneEnv,
) -> None:
    from rewardsmith.environments.blender_scene import BLENDER_TASKS

    state, _ = env.reset(TASKS[0])
    folder = state.task["scene_state"]["dir"]
    paths = [folder, str(BLENDER_TASKS)]
    code = f"import os\nprint('SEEN', *[os.path.exists(p) for p in {paths!r}])"
    observation = env.step(state, call("run_bpy", code=code)).observation
    assert "SEEN False False" in observation


def test_vision_mode_gives_the_image_path(tmp_path: Path) -> None:
    vision = BlenderSceneEnv(vision=True, scratch=str(tmp_path))
    task = TASKS[1]
    state, _ = vision.reset(task)
    for action in expert_actions(task)[:3]:
        state = vision.step(state, action).state
    shown = vision.step(state, call("render_preview", size=32)).observation
    path = Path(shown.rsplit("image: ", 1)[1])
    assert path.parent == tmp_path / Path(state.task["scene_state"]["dir"]).name
    assert path.read_bytes().startswith(b"\x89PNG")


class HangEnv(QuickEnv):
    """QuickEnv's budgets halved (2 s a call, 5 s a turn, 15 s an episode), in the same
    proportions: only hangs run in it, so no honest call needs the room."""

    turn_budget_s: ClassVar[float] = 5.0
    episode_budget_s: ClassVar[float] = 15.0


@pytest.mark.slow
def test_a_turn_and_an_episode_are_cut_at_their_budgets() -> None:
    hang = call("run_bpy", code="while True:\n    pass\n")
    env = HangEnv(call_wall_s=2.0)
    try:
        state, _ = env.reset(TASKS[0])
        transition = env.step(state, hang * 4)  # 4 x 2 s calls in a 5 s turn: the last is cut
        assert transition.observation.count("ran past its") >= 2
        assert "no time is left in this turn's budget" in transition.observation
        for _ in range(5):
            if transition.done:
                break
            transition = env.step(transition.state, hang * 4)
        assert transition.done and transition.state.end == "time_budget"
        assert transition.reward.value == 0.0
    finally:
        env.close()


@pytest.mark.slow
def test_a_flooding_episode_does_not_touch_another(env: BlenderSceneEnv) -> None:
    flood = call("run_bpy", code="x = bytearray(1 << 30)\nwhile True:\n    x[0] += 1\n") * 4
    flooded = QuickEnv(limits=EpisodeLimits(max_turns=3), call_wall_s=4.0)
    assert play(flooded, TASKS[0], [flood, flood, flood]) == 0.0
    assert episode(env, TASKS[4], expert_actions(TASKS[4]))[0].reward.value == 1.0


def test_the_dump_scores_to_the_environment_reward(env: BlenderSceneEnv) -> None:
    task = TASKS[5]
    final, rewards, _ = episode(env, task, [*expert_actions(task)[:2], "Done."])
    row = episode_row(env, "blender_scene", final.state, "prompt", final.reward, rewards, False)
    json.dumps(row)  # a dump row is plain JSON
    sample = Sample(
        id=row["id"],
        prompt=row["prompt"],
        completion=[Step(**s) for s in row["steps"]],
        reference=row["reference"],
        task=row["task"],
    )
    with Scorer(spec_document(env.final_reward), backend="inline") as scorer:
        again = scorer.score([sample])[0]
    assert 0.0 < again.value == final.reward.value < 1.0
    assert [s["action"] for s in row["steps"]] == task["solution"]["scripts"][:3]
    assert EpisodeState.from_dict(json.loads(json.dumps(final.state.to_dict()))) == final.state
    assert pickle.loads(pickle.dumps(env)).name == "blender_scene"


@pytest.mark.slow
def test_audit_env_plays_every_class_and_env_spec_prints_the_reward(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from rewardsmith.cli.main import app

    runner = CliRunner()
    audited = runner.invoke(app, ["audit", "--env", "blender_scene", "--limit", "1"])
    assert audited.exit_code == 0, audited.output
    assert "build_then_factory_reset" in audited.output
    spec = tmp_path / "spec.yaml"
    printed = runner.invoke(app, ["env", "spec", "blender_scene", "-o", str(spec)])
    assert printed.exit_code == 0, printed.output
    assert "blender_scene" in spec.read_text()


@pytest.mark.slow
@pytest.mark.parametrize("task_id", ["smooth_ball", "spot_stage"])
def test_a_subdivided_object_of_the_wrong_size_does_not_earn_full_reward(
    env: BlenderSceneEnv, task_id: str
) -> None:
    # audit --env blender_scene --search: the spec left a subdivided object's size out, so a
    # 3 m sphere asked as 2 m earned the full reward; sizes are now checked there to 5 cm.
    task = next(t for t in TASKS if t["id"] == task_id)
    actions = expert_actions(task)
    scaled = [
        re.sub(r"radius=([0-9.]+)", lambda m: f"radius={1.5 * float(m[1])}", a) for a in actions
    ]
    assert scaled != actions
    final, _, _ = episode(env, task, scaled)
    assert final.reward.value < 1.0, final.reward.reason
