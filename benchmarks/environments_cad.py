"""The `cad_part` part of `benchmarks/environments.py`: episodes per second of the
environment (warm CAD sandbox server: cadquery imported once) against a naive driver that
runs every CAD phase of every step (the build tool's two, and `cad_code`'s two when the
answer is scored) in a fresh interpreter of the CAD venv that imports CadQuery again.

Each episode plays three turns: a wrong first try (a box), the reference script, and the
answer. Both drivers must earn the same rewards. Run through `benchmarks/environments.py
--env cad_part`.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from typing import Any

from mesh_cad import fresh_phase

import rewardsmith.verifiers.mesh.cad as cad_module
from rewardsmith.environments import CadPart, cad_build
from rewardsmith.environments.cad_part import CAD_TASKS, build_call, expert_actions
from rewardsmith.verifiers.cad.run import run_cad
from rewardsmith.verifiers.sandbox import Limits, Program, SandboxResult

_BOX = "import cadquery as cq\nresult = cq.Workplane('XY').box(10, 10, 10)\nshow_object(result)"
_WARM_EXECUTE, _WARM_RUN_CAD = cad_build._execute, cad_module.run_cad
_NAIVE_LIMITS = Limits(wall_s=300, cpu_s=300, memory_bytes=2 << 30)
"""A cold CadQuery import alone takes over 15 s on a loaded machine: the naive driver gets
time enough to finish, so both drivers earn the same rewards."""


def _fresh(program: Program) -> SandboxResult:
    return fresh_phase(replace(program, limits=_NAIVE_LIMITS))


def _fresh_run_cad(script: str, **kwargs: Any) -> Any:
    return run_cad(script, **{**kwargs, "execute": _fresh})


@contextmanager
def naive() -> Iterator[None]:
    """Every CAD phase in a fresh interpreter (the build tool's and `cad_code`'s)."""
    cad_build._execute = _fresh
    cad_module.run_cad = _fresh_run_cad
    try:
        yield
    finally:
        cad_build._execute = _WARM_EXECUTE
        cad_module.run_cad = _WARM_RUN_CAD


def episodes(env: CadPart, tasks: list[dict], fresh: bool) -> tuple[float, list[float]]:
    rewards, started = [], time.perf_counter()
    for task in tasks:
        state, _ = env.reset(task)
        for action in (build_call(_BOX), *expert_actions(task)):
            if fresh:
                with naive():
                    transition = env.step(state, action)
            else:
                transition = env.step(state, action)
            state = transition.state
        rewards.append(transition.reward.value if transition.reward else 0.0)
    return len(tasks) / (time.perf_counter() - started), rewards


def rounds(count: int, n_tasks: int) -> list[float]:
    """Interleaved rounds (environment, then naive); the ratio of each round."""
    lines = CAD_TASKS.read_text().splitlines()
    tasks = [json.loads(line) for line in lines if line.strip()][:n_tasks]
    env = CadPart()
    episodes(env, tasks, fresh=False)  # references built, Scorer and server started
    ratios = []
    for round_ in range(count):
        warm, warm_rewards = episodes(env, tasks, fresh=False)
        load_warm = os.getloadavg()[0]
        slow, naive_rewards = episodes(env, tasks, fresh=True)
        load_naive = os.getloadavg()[0]
        assert warm_rewards == naive_rewards == [1.0] * len(tasks), (warm_rewards, naive_rewards)
        ratios.append(warm / slow)
        print(f"round {round_} cad_part env   {warm:7.3f} episodes/s (load {load_warm:.1f})")
        print(f"round {round_} cad_part naive {slow:7.3f} episodes/s (load {load_naive:.1f})")
    env.close()
    return ratios
