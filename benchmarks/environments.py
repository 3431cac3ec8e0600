"""Episodes per second of `finance_document`, `cad_part` and `blender_scene` against naive
drivers, interleaved.

    nice -n 10 .venv/bin/python benchmarks/environments.py [--rounds 3] [--env cad_part]
    nice -n 10 .venv/bin/python benchmarks/environments.py --env blender_scene

(``--env blender_scene``: see `benchmarks/environments_blender.py`.)

The environment parses each report once per process (the tools' page cache and the
verifiers' document cache) and plays the expert policy on every bundled task. The naive
driver is the same environment with both caches emptied before every step: a fresh PDF
parse per step. Both must earn the same rewards. Rounds alternate the two drivers; the
load average is printed beside every figure. For `cad_part` see `environments_cad.py`.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from datetime import UTC, datetime

from environments_cad import rounds as cad_rounds

from rewardsmith.environments import FinanceDocument
from rewardsmith.environments.finance_document import FINANCE_TASKS, _pages, expert_actions
from rewardsmith.verifiers.finance import reference


def _empty_caches() -> None:
    _pages.cache_clear()
    reference._results._entries.clear()


def episodes(env: FinanceDocument, tasks: list[dict], naive: bool) -> tuple[float, list[float]]:
    rewards, started = [], time.perf_counter()
    for task in tasks:
        state, _ = env.reset(task)
        for action in expert_actions(task):
            if naive:
                _empty_caches()
            transition = env.step(state, action)
            state = transition.state
        rewards.append(transition.reward.value if transition.reward else 0.0)
    return len(tasks) / (time.perf_counter() - started), rewards


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--env", choices=("finance_document", "cad_part", "blender_scene"), default=None
    )
    parser.add_argument("--cad-tasks", type=int, default=4, help="cad_part tasks per round")
    args = parser.parse_args()
    if args.env == "blender_scene":  # its own driver pair: benchmarks/environments_blender.py
        from environments_blender import bench

        bench(args.rounds)
        return
    if args.env == "cad_part":
        _report(cad_rounds(args.rounds, args.cad_tasks))
        return
    tasks = [json.loads(line) for line in FINANCE_TASKS.read_text().splitlines() if line]
    env = FinanceDocument()
    episodes(env, tasks[:2], naive=False)  # start the Scorer once, outside the timing
    ratios = []
    for round_ in range(args.rounds):
        warm, warm_rewards = episodes(env, tasks, naive=False)
        load_warm = os.getloadavg()[0]
        naive, naive_rewards = episodes(env, tasks, naive=True)
        load_naive = os.getloadavg()[0]
        assert warm_rewards == naive_rewards, "both drivers must earn the same rewards"
        ratios.append(warm / naive)
        print(f"round {round_} env   {warm:7.2f} episodes/s (load {load_warm:.1f})")
        print(f"round {round_} naive {naive:7.2f} episodes/s (load {load_naive:.1f})")
    env.close()
    _report(ratios)


def _report(ratios: list[float]) -> None:
    when = f"{datetime.now(UTC):%Y-%m-%d %H:%M}"
    print(f"machine: {platform.platform()}, {os.cpu_count()} cores; {when}")
    median = statistics.median(ratios)
    print(f"env / naive per round: {[round(r, 2) for r in ratios]}; median {median:.2f}")


if __name__ == "__main__":
    main()
