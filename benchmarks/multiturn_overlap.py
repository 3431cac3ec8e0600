"""A multi-turn training step with slow environment steps, with and without reward overlap.

Every environment step sleeps `--step-s` seconds (a stand-in for a sandboxed test run or a
Blender render: a real sleep, so the step waits as such a step does, not on the CPU). The
two-turn "wrong, try again" sums are rolled by the tiny model and trained with GRPO; the
time of a step is the time between two consecutive steps' ends (step 0 is left out: it has
no batch carried into it). With `reward_overlap: one_step` turn 0 of batch k+1 and its first
environment steps run while batch k finishes and learns, so a step should cost about one
environment step less than without. Runs interleave (off, on, off, on, ...).

    nice -n 10 .venv/bin/python benchmarks/multiturn_overlap.py --rounds 3
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from rewardsmith.environments import RetryArithmetic
from rewardsmith.trainer.config import TrainConfig
from rewardsmith.trainer.multiturn import TurnSettings, train_multiturn
from rewardsmith.trainer.tiny import ARITHMETIC_ALPHABET, build_tiny_model

REPO = Path(__file__).resolve().parents[1]
RETRY = "wrong, try again"


class SlowSteps(RetryArithmetic):
    """The two-turn sums, every step sleeping `seconds` first."""

    def __init__(self, seconds: float) -> None:
        super().__init__()
        self.seconds = seconds

    def step(self, state: Any, action: str, action_tokens: int | None = None) -> Any:
        time.sleep(self.seconds)
        return super().step(state, action, action_tokens)


def one_run(model: str, out: Path, overlap: str, args: argparse.Namespace) -> dict[str, float]:
    tasks = [
        json.loads(x)
        for x in (REPO / "datasets/arithmetic/tasks.jsonl").read_text().split("\n")
        if x
    ]
    cfg = TrainConfig(
        model=model,
        prompts="unused",
        output_dir=str(out),
        algorithm="grpo",
        steps=args.steps,
        prompts_per_step=args.prompts,
        group_size=4,
        minibatch_size=args.prompts * 4,
        ppo_epochs=args.epochs,
        max_prompt_tokens=4,
        max_new_tokens=3 + len(RETRY) + 3,
        lr=3e-3,
        kl_coef=0.0,
        tensorboard=False,
        reward_overlap=overlap,
    )
    ends: list[float] = []
    rows: list[dict[str, float]] = []

    def on_step(step: int, metrics: dict[str, float]) -> None:
        ends.append(time.perf_counter())
        rows.append(metrics)

    env = SlowSteps(args.step_s)
    try:
        settings = TurnSettings(turn_tokens=3, step_threads=2 * args.prompts * 4)
        train_multiturn(cfg, env, tasks, settings, on_step)
    finally:
        env.close()
    steps = [b - a for a, b in itertools.pairwise(ends)]
    return {
        "step_s": statistics.median(steps),
        "rollout_s": statistics.median(r["time/rollout_s"] for r in rows[1:]),
        "turns": statistics.mean(r["episode/turns"] for r in rows),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--prompts", type=int, default=4)
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--step-s", type=float, default=0.5)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp())
    model = build_tiny_model(
        folder / "model", alphabet=ARITHMETIC_ALPHABET + "".join(sorted(set(RETRY)))
    )
    results: dict[str, list[dict[str, float]]] = {"off": [], "one_step": []}
    for round_ in range(args.rounds):
        for overlap in results:
            load = os.getloadavg()[0]
            row = one_run(model, folder / f"{overlap}{round_}", overlap, args)
            results[overlap].append(row)
            print(
                f"round {round_} {overlap:8s} load {load:.1f}: "
                + json.dumps({k: round(v, 3) for k, v in row.items()})
            )
    print(
        f"machine: {platform.platform()}, {os.cpu_count()} cores; "
        + time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    )
    for overlap, rows in results.items():
        med = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
        print(f"median {overlap:8s}: " + json.dumps({k: round(v, 3) for k, v in med.items()}))
    pairs = [
        a["step_s"] / b["step_s"] for a, b in zip(results["off"], results["one_step"], strict=True)
    ]
    print(f"off / one_step step time, per round: {[round(p, 3) for p in pairs]}")


if __name__ == "__main__":
    main()
