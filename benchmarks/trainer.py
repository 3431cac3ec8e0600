"""Trainer benchmarks, side by side in one run, on the same tiny model, task and reward.

1. Throughput: completions per second of our GRPO against TRL's GRPOTrainer (TRL 1.16 no
   longer ships a PPO trainer; its RLOOTrainer is measured too), same model, prompts,
   group size, completion length, reward and steps.
2. Overlap: step time with a slow reward (SlowVerifier: 0.5 s per sample, 8 samples a
   step, inline executor) with and without generating batch k+1 while batch k is scored,
   against the larger of generation time and reward time.

    .venv/bin/python benchmarks/trainer.py            # about 5 minutes on 2 busy cores
    .venv/bin/python benchmarks/trainer.py --quick

Prints Markdown tables. Throughput counts steps after the first (warm-up), timed from
inside each trainer (model loading excluded); step parts are medians over those steps.
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")

from rewardsmith.graders import Executor, Grader, weighted
from rewardsmith.trainer import GraderReward, build_tiny_model, train
from rewardsmith.trainer.data import load_tasks
from rewardsmith.trainer.demo import DEMO_REWARD, TASKS, demo_config
from rewardsmith.trainer.metrics import read_metrics
from rewardsmith.verifiers.protocol import Cost
from rewardsmith.verifiers.registry import create
from rewardsmith.verifiers.types import Sample, Verdict

PROMPTS, GROUP, NEW_TOKENS = 8, 8, 4


@dataclass(frozen=True)
class SlowVerifier:
    """Sleeps `seconds`, then passes when the completion is an integer: a slow reward."""

    name: ClassVar[str] = "slow"
    version: ClassVar[str] = "1"
    cost: ClassVar[Cost] = Cost.SANDBOX
    seconds: float = 0.5

    def __call__(self, sample: Sample) -> Verdict:
        time.sleep(self.seconds)
        return Verdict.graded(self.name, self.version, float(sample.completion_text.isdigit()))


def rate(stamps: list[float]) -> float:
    """Completions per second from per-step end times, skipping the first (warm-up) step."""
    return (len(stamps) - 1) * PROMPTS * GROUP / (stamps[-1] - stamps[0])


def ours(model: str, out: Path, steps: int) -> float:
    """Completions per second of our GRPO: the demo's task, reward and settings, with one
    optimiser step per batch of 64 like TRL's defaults."""
    cfg = demo_config(out, steps, model=model, minibatch_size=PROMPTS * GROUP)
    stamps: list[float] = []
    train(cfg, on_step=lambda step, m: stamps.append(time.perf_counter()))
    return rate(stamps)


def trl_reward(completions: list[str], reference: list[str], **_: Any) -> list[float]:
    """The demo's reward (0.8 math + 0.2 format) through our verifiers, for TRL."""
    math_check = create("math")
    fmt = create("format", patterns=tuple(DEMO_REWARD["format"]["patterns"]))
    out = []
    for i, (text, ref) in enumerate(zip(completions, reference, strict=True)):
        sample = Sample(id=str(i), completion=text, reference=ref)
        out.append(0.8 * (math_check(sample).score or 0.0) + 0.2 * (fmt(sample).score or 0.0))
    return out


def trl_run(kind: str, model: str, out: Path, steps: int) -> float:
    """Completions per second of TRL's GRPOTrainer or RLOOTrainer on the same work."""
    import trl
    from datasets import Dataset
    from transformers import AutoModelForCausalLM, AutoTokenizer, TrainerCallback

    tasks = load_tasks(TASKS)
    data = Dataset.from_list([{"prompt": t.prompt, "reference": t.reference} for t in tasks])
    config_cls = trl.GRPOConfig if kind == "grpo" else trl.RLOOConfig
    args = config_cls(
        output_dir=str(out),
        per_device_train_batch_size=PROMPTS * GROUP,
        num_generations=GROUP,
        max_completion_length=NEW_TOKENS,
        max_steps=steps,
        learning_rate=3e-3,
        beta=0.0,
        use_cpu=True,
        report_to=[],
        logging_steps=1,
        save_strategy="no",
        seed=0,
        dataloader_num_workers=0,
        disable_tqdm=True,
    )
    trainer_cls = trl.GRPOTrainer if kind == "grpo" else trl.RLOOTrainer
    trainer = trainer_cls(
        model=AutoModelForCausalLM.from_pretrained(model),
        reward_funcs=trl_reward,
        args=args,
        train_dataset=data,
        processing_class=AutoTokenizer.from_pretrained(model),
    )
    stamps: list[float] = []

    class Stamp(TrainerCallback):
        def on_step_end(self, *args: Any, **kwargs: Any) -> None:
            stamps.append(time.perf_counter())

    trainer.add_callback(Stamp())
    trainer.train()
    return rate(stamps)


def overlap_run(model: str, out: Path, steps: int, overlap: bool) -> dict[str, float]:
    """Median step parts with the slow reward: 8 completions a step, 0.5 s each, scored one
    after another by the inline executor (sleeping needs no CPU, so the reward time holds
    on a loaded machine; a process pool would divide it by its worker count)."""
    grader = Grader(weighted({"slow": SlowVerifier(0.5)}))
    with Executor("inline", cache=False) as executor:
        cfg = demo_config(
            out,
            steps,
            model=model,
            reward_overlap="one_step" if overlap else "off",
            prompts_per_step=2,
            group_size=4,
            minibatch_size=8,
            max_new_tokens=24,
        )
        stamps: list[float] = []
        train(
            cfg,
            reward=GraderReward(grader, executor),
            on_step=lambda step, m: stamps.append(time.perf_counter()),
        )
    rows = read_metrics(out)[1:]
    return {
        "step_s": statistics.median(b - a for a, b in itertools.pairwise(stamps)),
        "generate_s": statistics.median(r["time/generate_s"] for r in rows),
        "update_s": statistics.median(r["time/update_s"] for r in rows),
        "reward_wait_s": statistics.median(r["time/reward_wait_s"] for r in rows),
        "reward_s": 8 * 0.5,
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="fewer steps")
    parser.add_argument("--part", choices=["all", "throughput", "overlap"], default="all")
    args = parser.parse_args()
    steps = 4 if args.quick else 12
    root = Path(tempfile.mkdtemp(prefix="bench-trainer-"))
    model = build_tiny_model(root / "model")
    if args.part in ("all", "throughput"):
        throughput(model, root, steps)
    if args.part in ("all", "overlap"):
        overlaps(model, root, steps)


def throughput(model: str, root: Path, steps: int) -> None:
    print("| run | completions/s |\n|---|---|")
    results = {
        "ours (GRPO)": ours(model, root / "ours", steps),
        "TRL GRPOTrainer": trl_run("grpo", model, root / "trl-grpo", steps),
        "TRL RLOOTrainer": trl_run("rloo", model, root / "trl-rloo", steps),
    }
    for name, rate in results.items():
        ratio = rate / results["TRL GRPOTrainer"]
        print(f"| {name} | {rate:.1f} ({ratio:.2f}x TRL GRPO) |")


def overlaps(model: str, root: Path, steps: int) -> None:
    print(
        "\n| slow reward (0.5 s x 8 per step) | step s | generate s | update s | reward s "
        "| step / max(gen, reward) |\n|---|---|---|---|---|---|"
    )
    for overlap in (False, True):
        r = overlap_run(model, root / f"overlap-{overlap}", steps, overlap)
        bound = max(r["generate_s"], r["reward_s"])
        print(
            f"| overlap={overlap} | {r['step_s']:.2f} | {r['generate_s']:.2f} | "
            f"{r['update_s']:.2f} | {r['reward_s']:.2f} | {r['step_s'] / bound:.2f} |"
        )


if __name__ == "__main__":
    main()
