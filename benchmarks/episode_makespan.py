"""Makespan of a mixed multi-turn batch: the rollout without a barrier per turn (steps
started expensive first) against a driver that waits for every episode's step before the
next turn and starts steps in arrival order.

The batch mixes one-turn math episodes (`math_tool`: a non-tool answer ends the episode)
with code-repair episodes of up to four turns whose every step runs the tests in the
sandbox, in one `MixedEnvironment`, rolled by the bundled random tiny model (its actions are
noise, so the repairs use all their turns). Both drivers sample each turn with the same
per-episode seeds, so they roll the same episodes. Rounds interleave (A, B, A, B).

The lower bound of a run: no schedule ends before its longest episode's own chain of steps
(each step timed where it ran), nor before the total step time spread over the step
threads, nor before the time the engine spent generating (one thread); the figure is
makespan / max(those three).

    .venv/bin/python benchmarks/episode_makespan.py --rounds 3
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import tempfile
import threading
import time
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from transformers import AutoTokenizer

from rewardsmith.environments import MixedEnvironment
from rewardsmith.environments.episodes import make_environment
from rewardsmith.trainer.engine import SamplingParams
from rewardsmith.trainer.hf_engine import HFEngine
from rewardsmith.trainer.multiturn import Episode, TurnSettings, run_episodes
from rewardsmith.trainer.tiny import build_tiny_model

REPO = Path(__file__).resolve().parents[1]
THREADS = 4
SETTINGS = TurnSettings(turn_tokens=24, step_threads=THREADS)
WIDTH = 1536


class TimedEngine:
    """The HF engine, adding up the time spent generating (on the rollout's own thread)."""

    def __init__(self, engine: HFEngine) -> None:
        self.engine, self.seconds = engine, 0.0

    def generate(self, prompts: Any, sampling: Any) -> Any:
        start = time.perf_counter()
        out = self.engine.generate(prompts, sampling)
        self.seconds += time.perf_counter() - start
        return out


class TimedEnvironment:
    """The mixed environment, timing each step (per episode) where it runs."""

    def __init__(self, env: MixedEnvironment) -> None:
        self.env, self.tools = env, ()
        self.steps: dict[str, list[float]] = defaultdict(list)
        self._lock = threading.Lock()

    def reset(self, task: Any) -> Any:
        return self.env.reset(task)

    def step(self, state: Any, action: str, tokens: int | None = None) -> Any:
        start = time.perf_counter()
        out = self.env.step(state, action, tokens)
        with self._lock:
            self.steps[str(state.task["id"])].append(time.perf_counter() - start)
        return out

    def truncate(self, state: Any, reason: str) -> Any:
        return self.env.truncate(state, reason)

    def step_cost(self, state: Any) -> float:
        return self.env.step_cost(state)


def barrier_rollout(engine: Any, env: Any, tasks: list, tokenizer: Any, seeds: list) -> list:
    """The driver before: one engine batch per turn, then every step in arrival order, and
    the next turn only when all of them are back."""
    from rewardsmith.trainer.turns import _encode, _observation_ids, _record, _take_action

    with ThreadPoolExecutor(THREADS) as pool:
        starts = list(pool.map(env.reset, tasks))
        episodes = [
            Episode(s, _encode(tokenizer, p), seed)
            for (s, p), seed in zip(starts, seeds, strict=True)
        ]
        turn = 0
        while live := [e for e in episodes if not e.done]:
            sampling = SamplingParams(
                SETTINGS.turn_tokens,
                1.0,
                tuple(SETTINGS.seed_for(e.seed, turn) for e in live),
                (int(tokenizer.eos_token_id),),
            )
            generation = engine.generate([e.prompt_ids + e.response_ids for e in live], sampling)
            actions = [_take_action(e, generation, row, WIDTH) for row, e in enumerate(live)]
            texts = tokenizer.batch_decode([a for a, _ in actions], skip_special_tokens=True)
            steps = pool.map(lambda e, t, a: env.step(e.state, t, len(a[0])), live, texts, actions)
            for episode, transition, (action, cut) in zip(live, steps, actions, strict=True):
                observed = _observation_ids(tokenizer, None, SETTINGS, episode, transition, action)
                _record(env, episode, transition, observed, cut, WIDTH)
            turn += 1
    return episodes


def tasks_of(math_n: int, repair_n: int) -> list[dict[str, Any]]:
    folder = REPO / "datasets" / "environments"
    maths = [json.loads(x) for x in (folder / "math.jsonl").read_text().splitlines()]
    repairs = [json.loads(x) for x in (folder / "code_repair.jsonl").read_text().splitlines()]
    repairs = [t for t in repairs if "language" not in t]  # the Python tasks, as measured
    picked = [{**t, "environment": "math_tool"} for t in (maths * 4)[:math_n]]
    picked += [{**t, "environment": "code_repair"} for t in (repairs * 4)[:repair_n]]
    # Arrival order interleaves them, cheap first: the order a dataloader would give.
    picked.sort(key=lambda t: t["environment"] != "math_tool")
    return [{**t, "id": f"{t['id']}#{i}"} for i, t in enumerate(picked)]


def one_run(driver: str, engine: Any, tokenizer: Any, tasks: list) -> dict[str, float]:
    env = TimedEnvironment(
        MixedEnvironment(
            {
                "math_tool": make_environment("math_tool"),
                "code_repair": make_environment("code_repair"),
            }
        )
    )
    seeds = list(range(len(tasks)))
    engine = TimedEngine(engine)
    start = time.perf_counter()
    try:
        if driver == "scheduled":
            episodes = run_episodes(engine, env, tasks, tokenizer, seeds, WIDTH, SETTINGS)
        else:
            episodes = barrier_rollout(engine, env, tasks, tokenizer, seeds)
    finally:
        env.env.close()
    makespan = time.perf_counter() - start
    chains = [sum(v) for v in env.steps.values()]
    bound = max(max(chains), sum(chains) / THREADS, engine.seconds)
    return {
        "makespan_s": makespan,
        "generate_s": engine.seconds,
        "lower_bound_s": bound,
        "ratio": makespan / bound,
        "episodes_per_s": len(episodes) / makespan,
        "turns": sum(len(e.turn_ends) for e in episodes),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--math", type=int, default=16)
    parser.add_argument("--repair", type=int, default=6)
    args = parser.parse_args()
    model = build_tiny_model(
        Path(tempfile.mkdtemp()) / "tiny",
        alphabet="".join(map(chr, range(32, 127))),
        n_positions=4096,
    )
    tokenizer = AutoTokenizer.from_pretrained(model)
    engine = HFEngine.from_pretrained(model)
    tasks = tasks_of(args.math, args.repair)
    results: dict[str, list[dict[str, float]]] = defaultdict(list)
    for round_ in range(args.rounds):
        for driver in ("barrier", "scheduled"):
            load = os.getloadavg()[0]
            row = one_run(driver, engine, tokenizer, tasks)
            results[driver].append(row)
            print(
                f"round {round_} {driver:9s} load {load:.1f}: "
                + json.dumps({k: round(v, 3) for k, v in row.items()})
            )
    print(
        f"machine: {platform.platform()}, {os.cpu_count()} cores; {time.strftime('%Y-%m-%d %H:%M')}"
    )
    for driver, rows in results.items():
        med = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
        print(f"median {driver:9s}: " + json.dumps({k: round(v, 3) for k, v in med.items()}))
    pairs = [
        b["makespan_s"] / s["makespan_s"]
        for b, s in zip(results["barrier"], results["scheduled"], strict=True)
    ]
    print(f"barrier / scheduled makespan, per round: {[round(p, 3) for p in pairs]}")


if __name__ == "__main__":
    main()
