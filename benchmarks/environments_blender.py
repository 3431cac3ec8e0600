"""`blender_scene` episodes per second against a naive driver that starts Blender per step.

    nice -n 10 .venv/bin/python benchmarks/environments.py --env blender_scene [--rounds 3]

Both drivers play the expert policy on the same bundled tasks through the same environment
and jail. The environment forks every tool's Blender program from the verifier's warm
server (`bpy` imported, Cycles started, once); the naive driver runs each of those
programs in a fresh ``python3`` that imports `bpy` itself (as `benchmarks/mesh.py`'s fresh
runner does). The final reward (the verifier's replay) is the same warm verifier in both.
Budgets are lifted for both (a fresh start per program on a loaded machine ran past the
30 s turn budget and lost the lighting step). Both must earn the same rewards; rounds
alternate the drivers; the load is printed beside every figure.
"""

from __future__ import annotations

import os
import platform
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any, ClassVar

from mesh import _fresh_modules  # benchmarks/ is on the path when run as a script

from rewardsmith.environments import BlenderSceneEnv
from rewardsmith.environments import blender_workbench as wb
from rewardsmith.environments.blender_policies import expert_actions
from rewardsmith.environments.blender_scene import load_tasks
from rewardsmith.verifiers.sandbox import Limits, SandboxResult, run

_PREFIX = "import sys; sys.path.insert(0, '/box'); import _inside\n"


def fresh_python(
    code: str,
    *,
    files: Mapping[str, bytes] | None = None,
    readonly_files: Mapping[str, bytes] | None = None,
    limits: Limits | None = None,
    collect: Sequence[str] = (),
    preload: Sequence[str] = (),
) -> SandboxResult:
    """`run_python` in a fresh interpreter that imports bpy (and `_inside`) itself."""
    flat = code.replace("rewardsmith.verifiers.blender._", "_")
    box = {**_fresh_modules(), **(files or {}), **(readonly_files or {})}
    return run(["python3", "-c", _PREFIX + flat], files=box, limits=limits, collect=collect)


@contextmanager
def naive() -> Any:
    warm, wb.run_python = wb.run_python, fresh_python  # type: ignore[assignment]
    try:
        yield
    finally:
        wb.run_python = warm  # type: ignore[assignment]


class _Unhurried(BlenderSceneEnv):
    """Budgets no driver reaches: a naive step on a loaded machine must not be cut."""

    turn_budget_s: ClassVar[float] = 600.0
    episode_budget_s: ClassVar[float] = 3600.0


def episodes(env: BlenderSceneEnv, tasks: list[dict[str, Any]]) -> tuple[float, list[float]]:
    rewards, started = [], time.perf_counter()
    for task in tasks:
        state, _ = env.reset(task)
        for action in expert_actions(task):
            transition = env.step(state, action)
            state = transition.state
        rewards.append(transition.reward.value if transition.reward else 0.0)
    return len(tasks) / (time.perf_counter() - started), rewards


def bench(rounds: int, count: int = 4, say: Callable[[str], None] = print) -> float:
    tasks = load_tasks()
    env = _Unhurried(call_wall_s=120.0)
    episodes(env, tasks[:1])  # the warm server and the Scorer start once, outside the timing
    ratios = []
    for round_ in range(rounds):
        chosen = [tasks[(round_ * count + k) % len(tasks)] for k in range(count)]
        warm, warm_rewards = episodes(env, chosen)
        load_warm = os.getloadavg()[0]
        with naive():
            cold, cold_rewards = episodes(env, chosen)
        load_cold = os.getloadavg()[0]
        assert warm_rewards == cold_rewards, (warm_rewards, cold_rewards)
        ratios.append(warm / cold)
        say(f"round {round_} env   {warm:6.3f} episodes/s (load {load_warm:.1f})")
        say(f"round {round_} naive {cold:6.3f} episodes/s (load {load_cold:.1f})")
    env.close()
    when = f"{datetime.now(UTC):%Y-%m-%d %H:%M}"
    say(f"machine: {platform.platform()}, {os.cpu_count()} cores; {when}")
    median = statistics.median(ratios)
    say(f"env / naive per round: {[round(r, 2) for r in ratios]}; median {median:.2f}")
    return median
