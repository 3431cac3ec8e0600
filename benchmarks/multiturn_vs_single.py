"""Multi-turn against single-turn training on the same tasks, model, budget and seeds.

Issue 25's "done when": the tiny model learns a multi-turn task with the chat template on,
its final-turn reward clearly above lr 0 and above the single-turn run on the same tasks.

The task is the bundled single-digit sums (`datasets/arithmetic/tasks.jsonl`). Every arm
starts from the same tiny GPT-2 (built with the run's seed, the chat template bundled) and
sees the same first context, the template's rendering of the sum (``U:3+4=\\nA:``), with
the same reward on an answer (0.8 x the math verifier + 0.2 x "only an integer"; checked
equal in tests/environments/test_multiturn_vs_single.py):

- multi_turn: `train_multiturn` on `retry_arithmetic` (chat template on). A wrong answer
  is told "wrong, try again" and gets a second turn; the final reward is the last answer's.
  The feedback says only that the first answer was wrong, never what is right.
- multi_turn_hint: the same, a wrong integer told "too high" or "too low" (`HigherLower`):
  more to go on, still never the answer.
- multi_turn_per_turn: multi_turn trained with per-turn credit (`turn_credit: per_turn`,
  GRPO's advantage per turn, `turn_discount` below 1): a first answer that needed the
  retry earns less than a right first answer, so the first try learns on its own.
- multi_turn_hint_per_turn: multi_turn_hint trained with per-turn credit.
- single_turn: `train` (the single-turn trainer) on the same sums, each prompt the chat
  template's rendering of the same message, so its token ids are the multi-turn prompt's
  (checked); one try.
- one_turn_env: a control, `train_multiturn` on retry_arithmetic limited to one turn: the
  multi-turn trainer's code path playing the single-turn game.

Same steps, prompts per step, group size, lr, KL (0), GRPO, 3 new tokens a try, and
seeds; each arm is also run at lr 0. A run's figure (`final`) measures the policy it
leaves on every task, `eval_samples` episodes each at temperature 1 with fixed seeds,
played as the arm trained (multi-turn arms: up to two tries, or `--max-tries`; the others:
one); `one_try` and `two_tries` measure every policy with one and two tries, `right` and
`one_try_right` the share of those episodes whose last answer is the sum (the math verdict:
a reward near 0.2 is mostly the format term an integer earns), and `train_reward` is the
mean reward of the last `window` training batches. `--max-tries` (the multi-turn arms' turn
limit) also widens every arm's base model to hold the longer rows, so compare arms run
with the same value.

    nice -n 10 .venv/bin/python benchmarks/multiturn_vs_single.py --seeds 0 -o build/mt0.json
    .venv/bin/python benchmarks/multiturn_vs_single.py --merge build/mt?.json -o build/mt.json
    .venv/bin/python benchmarks/multiturn_vs_single.py --steps 4 --seeds 0 --no-lr0  # a look
    nice -n 10 .venv/bin/python benchmarks/multiturn_vs_single.py --seeds 0 --max-tries 5 \
        --arms multi_turn_hint_per_turn single_turn -o build/mt5-0.json  # five tries

Writes JSON (settings, every run's figures, mean and spread per arm) and prints a table.
Each run's training wall time is in the JSON (`seconds`); on shared cores it is rough. Run
one process per seed to use more than one core.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, NamedTuple

from rewardsmith.environments import RetryArithmetic
from rewardsmith.environments.arithmetic import RETRY_REWARD
from rewardsmith.environments.protocol import EpisodeLimits, EpisodeState
from rewardsmith.graders import Reward
from rewardsmith.trainer.chat import ChatRenderer
from rewardsmith.trainer.config import TrainConfig
from rewardsmith.trainer.data import sample_seed
from rewardsmith.trainer.demo import TASKS
from rewardsmith.trainer.hf_engine import HFEngine
from rewardsmith.trainer.loop import train
from rewardsmith.trainer.metrics import read_metrics
from rewardsmith.trainer.multiturn import TurnSettings, run_episodes, train_multiturn
from rewardsmith.trainer.tiny import (
    ARITHMETIC_ALPHABET,
    CHAT_ALPHABET,
    CHAT_TEMPLATE,
    build_tiny_model,
)
from rewardsmith.verifiers.types import Status

RETRY_TEXT = "wrong, try again"
HINTS = ("too high", "too low")
ALPHABET = ARITHMETIC_ALPHABET + CHAT_ALPHABET + "".join(sorted(set(RETRY_TEXT + "".join(HINTS))))
"""Every arm's model has the same vocabulary: the sums, the template, every feedback."""
TRY_TOKENS = 3
"""New tokens per answer, in every arm ("17" and the end-of-turn token)."""
PROMPT_TOKENS = 12


def row_tokens(tries: int) -> int:
    """A multi-turn row of `tries` tries: the first, then per retry a cut try's end-of-turn
    token, the longest feedback and the try."""
    return TRY_TOKENS + (tries - 1) * (1 + len(f"U:{RETRY_TEXT}\nA:") + TRY_TOKENS)


ROW_TOKENS = row_tokens(2)
ARMS = (
    "multi_turn",
    "multi_turn_hint",
    "multi_turn_per_turn",
    "multi_turn_hint_per_turn",
    "single_turn",
    "one_turn_env",
)
"""multi_turn: retry_arithmetic, two tries (`Budget.tries`), "wrong, try again".
multi_turn_hint: the same, told "too high" or "too low" (`HigherLower`).
multi_turn_per_turn: multi_turn with GRPO advantages per turn (`turn_credit: per_turn`,
`Budget.turn_discount`). multi_turn_hint_per_turn: the hint arm with per-turn credit.
single_turn: `train`, one try. one_turn_env: the control, `train_multiturn` on
retry_arithmetic with one turn (the multi-turn trainer's code path with the single-turn
arm's game)."""


class HigherLower(RetryArithmetic):
    """retry_arithmetic whose wrong integer answer is told which way it is off (a wrong
    answer that is not an integer is told "wrong, try again"). The feedback narrows the
    answer; it never says it."""

    def feedback(self, state: EpisodeState, action: str) -> str:
        answer = action.strip()
        if not re.fullmatch(r"\d{1,3}", answer):
            return self.retry_text
        return HINTS[0] if int(answer) > int(state.task["reference"]) else HINTS[1]


@dataclass(frozen=True)
class Budget:
    """What every arm is given."""

    steps: int = 40
    prompts_per_step: int = 8
    group_size: int = 8
    lr: float = 3e-3
    window: int = 8
    """Steps at the end whose batch rewards are averaged into `train_reward`."""
    eval_samples: int = 4
    """Episodes per task when a trained policy is measured (400 in all)."""
    turn_discount: float = 0.0
    """The per-turn arms' `turn_discount`: 0, each turn credited with its own step's reward
    (a rescued wrong first answer earns what a failed one does), chosen on seeds 10-12
    against 0.25 (docs/benchmarks.md); 0.5 was set untuned before."""
    tries: int = 2
    """The multi-turn arms' turn limit, in training and in `final` (`--max-tries`)."""


def arm_tries(arm: str, budget: Budget) -> int:
    """The tries `arm` trains with and is measured at (`final`): the budget's for the
    multi-turn arms, one for the others."""
    return budget.tries if arm.startswith("multi_turn") else 1


@dataclass(frozen=True)
class RunFigure:
    arm: str
    """One of `ARMS`."""
    seed: int
    lr: float
    final: float
    """The arm's own measure of its trained policy: every task, `eval_samples` episodes
    each, played as the arm trained (multi-turn arms: up to `Budget.tries` tries, the last
    answer's reward; single_turn and one_turn_env: one try)."""
    one_try: float
    """The trained policy given one try (a multi-turn policy's first answer)."""
    two_tries: float
    """The trained policy given a second try after the arm's feedback ("wrong, try again";
    the hint arm: "too high"/"too low")."""
    train_reward: float
    """Mean reward of the last `window` training batches."""
    right: float
    """The share of `final`'s episodes whose last answer the math verifier passes: the sum
    itself, without the 0.2 an integer earns however wrong (a policy that answers one
    integer to every sum earns 0.2 + 0.8 x the share of sums equal to it)."""
    one_try_right: float
    """The same, the trained policy given one try."""
    seconds: float
    """Training wall time (shared, busy cores: a rough figure)."""


def sums() -> list[dict[str, Any]]:
    return [json.loads(line) for line in TASKS.read_text().splitlines() if line.strip()]


def base_model(folder: Path, seed: int, tries: int = 2) -> str:
    """The tiny GPT-2 every arm starts from, initialised with `seed`, its template bundled,
    with room for a prompt and a row of `tries` tries (64 positions, as before, for two)."""
    positions = max(64, PROMPT_TOKENS + row_tokens(tries))
    return build_tiny_model(
        folder, alphabet=ALPHABET, chat_template=CHAT_TEMPLATE, seed=seed, n_positions=positions
    )


def environment(arm: str, tries: int = 2) -> RetryArithmetic:
    limits = EpisodeLimits(max_turns=tries, max_tokens=64)
    kind = HigherLower if arm.startswith("multi_turn_hint") else RetryArithmetic
    return kind(RETRY_TEXT, limits)


def config(
    model: str, out: Path, budget: Budget, seed: int, lr: float, **extra: Any
) -> TrainConfig:
    settings: dict[str, Any] = {
        "model": model,
        "prompts": str(TASKS),
        "output_dir": str(out),
        "algorithm": "grpo",
        "steps": budget.steps,
        "prompts_per_step": budget.prompts_per_step,
        "group_size": budget.group_size,
        "minibatch_size": budget.prompts_per_step * budget.group_size // 2,
        "max_prompt_tokens": PROMPT_TOKENS,
        "lr": lr,
        "kl_coef": 0.0,
        "seed": seed,
        "tensorboard": False,
        **extra,
    }
    return TrainConfig(**settings)


def chat_prompt_tasks(model: str, tasks: Sequence[dict[str, Any]], path: Path) -> Path:
    """`tasks` with each prompt replaced by the chat template's rendering of it: the text
    whose tokens are exactly the multi-turn episode's first context (checked)."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model)
    chat = ChatRenderer(tokenizer)
    with path.open("w", encoding="utf-8") as handle:
        for task in tasks:
            ids = chat.prompt_ids([{"role": "user", "content": task["prompt"]}])
            text = tokenizer.decode(ids)
            if tokenizer(text, add_special_tokens=True)["input_ids"] != ids:
                raise AssertionError(f"{task['id']}: the rendered prompt does not round-trip")
            handle.write(json.dumps({**task, "prompt": text}) + "\n")
    return path


def single_turn_settings(prompts: Path) -> dict[str, Any]:
    """The single-turn arm's config beyond `config`: the chat-rendered `prompts`, one try."""
    return {
        "prompts": str(prompts),
        "max_new_tokens": TRY_TOKENS,
        "reward": RETRY_REWARD,  # retry_arithmetic's reward on an answer
        "reward_executor": "inline",  # microsecond checks: a process hop costs more
    }


def train_arm(arm: str, model: str, out: Path, budget: Budget, seed: int, lr: float) -> RunFigure:
    """Train `arm` from `model` and measure the policy it leaves in ``out/model``."""
    t0 = time.perf_counter()
    if arm == "single_turn":
        out.mkdir(parents=True, exist_ok=True)
        prompts = chat_prompt_tasks(model, sums(), out / "tasks.jsonl")
        train(config(model, out, budget, seed, lr, **single_turn_settings(prompts)))
        key = "reward/mean"
    else:
        env = environment(arm, arm_tries(arm, budget))
        width = row_tokens(budget.tries)
        cfg = config(model, out, budget, seed, lr, max_new_tokens=width, **credit(arm, budget))
        try:
            train_multiturn(cfg, env, sums(), TurnSettings(TRY_TOKENS, chat_template=True))
        finally:
            env.close()
        key = "reward/final"
    seconds = time.perf_counter() - t0
    train_reward = _mean(r[key] for r in read_metrics(out)[-budget.window :])
    tries = arm_tries(arm, budget)
    measured = {
        n: evaluate(out / "model", environment(arm, n), seed, budget.eval_samples)
        for n in {1, 2, tries}
    }
    one, two, own = measured[1], measured[2], measured[tries]
    rewards = (own.reward, one.reward, two.reward, train_reward)
    return RunFigure(arm, seed, lr, *rewards, own.right, one.right, seconds)


def credit(arm: str, budget: Budget) -> dict[str, Any]:
    """The config that gives an arm its turn credit (the default, final, but for the
    per-turn arms)."""
    if not arm.endswith("_per_turn"):
        return {}
    return {"turn_credit": "per_turn", "turn_discount": budget.turn_discount}


class Measure(NamedTuple):
    reward: float
    """Mean final reward."""
    right: float
    """Share of episodes whose last answer the math verifier passes."""


def evaluate(model: Path, env: RetryArithmetic, seed: int, samples: int) -> Measure:
    """Mean final reward, and share of right last answers, of the policy in `model` on every
    task in `env` (which closes), `samples` episodes each, temperature 1, seeds fixed by
    `seed` (none a training step's)."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(model)
    engine = HFEngine.from_pretrained(model)
    tasks = [task for task in sums() for _ in range(samples)]
    seeds = [sample_seed(seed, 10_000, i) for i in range(len(tasks))]
    width = row_tokens(env.limits.max_turns)
    try:
        settings = TurnSettings(TRY_TOKENS, chat_template=True)
        episodes = run_episodes(engine, env, tasks, tokenizer, seeds, width, settings)
    finally:
        env.close()
    return Measure(
        _mean(0.0 if math.isnan(e.final_value) else e.final_value for e in episodes),
        _mean(passes_math(e.final) for e in episodes),
    )


def passes_math(final: Reward | None) -> bool:
    """Whether the math verifier passed this final answer: the sum is right, whatever the
    format term paid (an episode with no reward: not right)."""
    verdict = None if final is None else final.verdicts.get("math")
    return verdict is not None and verdict.status is Status.PASS


def compare(
    budget: Budget, seeds: Sequence[int], folder: Path, arms: Sequence[str] = ARMS, lr0: bool = True
) -> dict[str, Any]:
    """Every arm at every seed (and at lr 0 where `lr0`), each from the seed's base model."""
    runs: list[RunFigure] = []
    for seed in seeds:
        model = base_model(folder / f"base-{seed}", seed, budget.tries)
        for lr in (budget.lr, 0.0) if lr0 else (budget.lr,):
            for arm in arms:
                figure = train_arm(arm, model, folder / f"{arm}-s{seed}-lr{lr}", budget, seed, lr)
                runs.append(figure)
                print(json.dumps(asdict(figure)), flush=True)
    return {"budget": asdict(budget), "seeds": list(seeds), "runs": [asdict(r) for r in runs]}


def summary(result: dict[str, Any]) -> dict[str, dict[str, float]]:
    """Per arm and lr: mean, population standard deviation, min and max of `final`, and
    the means of the other measures."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for run in result["runs"]:
        groups.setdefault(f"{run['arm']} lr={run['lr']:g}", []).append(run)
    return {
        key: {
            "mean": statistics.fmean(r["final"] for r in rows),
            "sd": statistics.pstdev(r["final"] for r in rows),
            "min": min(r["final"] for r in rows),
            "max": max(r["final"] for r in rows),
            "one_try_mean": statistics.fmean(r["one_try"] for r in rows),
            "two_tries_mean": statistics.fmean(r["two_tries"] for r in rows),
            "train_reward_mean": statistics.fmean(r["train_reward"] for r in rows),
            "right_mean": statistics.fmean(r.get("right", math.nan) for r in rows),
            "one_try_right_mean": statistics.fmean(r.get("one_try_right", math.nan) for r in rows),
        }
        for key, rows in groups.items()
    }


def _mean(values: Any) -> float:
    return statistics.fmean(float(v) for v in values)


def main() -> None:
    args = arguments()
    if args.merge:
        result = merged([json.loads(path.read_text()) for path in args.merge])
    else:
        result = run(args)
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(json.dumps(result, indent=1) + "\n")
    print(table(result["summary"]))


def arguments(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--steps", type=int, default=Budget.steps)
    parser.add_argument("--lr", type=float, default=Budget.lr)
    parser.add_argument("--window", type=int, default=Budget.window)
    parser.add_argument("--turn-discount", type=float, default=Budget.turn_discount)
    parser.add_argument(
        "--max-tries",
        type=int,
        default=Budget.tries,
        help="The multi-turn arms' turn limit, in training and in their final measure.",
    )
    parser.add_argument("--arms", nargs="+", choices=ARMS, default=list(ARMS))
    parser.add_argument("--no-lr0", action="store_true", help="Skip the lr 0 runs.")
    parser.add_argument(
        "--merge", type=Path, nargs="+", help="Combine these outputs (one per seed) instead."
    )
    parser.add_argument("-o", "--output", type=Path, help="Write the JSON here.")
    return parser.parse_args(argv)


def run(args: argparse.Namespace) -> dict[str, Any]:
    budget = budget_of(args)
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    with tempfile.TemporaryDirectory() as folder:
        result = compare(budget, args.seeds, Path(folder), args.arms, lr0=not args.no_lr0)
    result["summary"] = summary(result)
    result["command"] = " ".join(["benchmarks/multiturn_vs_single.py", *sys.argv[1:]])
    result["load_average_at_end"] = os.getloadavg()
    result["date"] = f"{started} to {time.strftime('%H:%M UTC', time.gmtime())}"
    return result


def budget_of(args: argparse.Namespace) -> Budget:
    return Budget(
        steps=args.steps,
        lr=args.lr,
        window=min(args.window, args.steps),
        turn_discount=args.turn_discount,
        tries=args.max_tries,
    )


def merged(results: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Runs made separately (one process per seed), as one result."""
    keys = ("command", "date", "load_average_at_end")
    whole = {
        "budget": results[0]["budget"],
        "seeds": [seed for r in results for seed in r["seeds"]],
        "runs": [run for r in results for run in r["runs"]],
        "parts": [{key: r.get(key) for key in keys} for r in results],
    }
    whole["summary"] = summary(whole)
    return whole


def table(rows: dict[str, dict[str, float]]) -> str:
    lines = [
        "| arm | final (mean) | sd | min | max | one try | two tries | training batches "
        "| right | right, one try |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for key, s in rows.items():
        lines.append(
            f"| {key} | {s['mean']:.3f} | {s['sd']:.3f} | {s['min']:.3f} | {s['max']:.3f} "
            f"| {s['one_try_mean']:.3f} | {s['two_tries_mean']:.3f} "
            f"| {s['train_reward_mean']:.3f} | {s['right_mean']:.3f} "
            f"| {s['one_try_right_mean']:.3f} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
