"""A multi-turn training step of a Qwen2.5-0.5B-architecture model on a GPU (issue 25).

The model is Qwen2.5-0.5B's architecture with random weights (`build_random_model`: 24
layers, hidden 896, a 151,936-token vocabulary, 494M parameters) and a ChatML chat template,
so prompts and observations go through `apply_chat_template` as a Qwen chat model's would.
The environment is `RetryArithmetic` with up to `--max-turns` turns: a random model never
answers right, so every episode runs all its turns, `--turn-tokens` new tokens each, with the
environment's "wrong, try again" rendered as a user turn between them. Each step is a full
`train_multiturn` step: rollout on the trainer's HF engine (the live policy on the GPU), the
old and reference log-probabilities, and the GRPO update.

The issue asks for the vLLM engine. It cannot run on the lent GPU machine: vLLM 0.33.0's CUDA
wheel is 336 MB (a call carries at most 64 MiB) and pins torch 2.14.0, where the machine has
torch 2.11 and installs nothing. So the engine here is the HF one, and the figures are the
trainer's own GPU path.

Run on the GPU machine (its python3 holds torch; the few packages it lacks travel as wheels,
see docs/benchmarks.md for the whole command):

    python3 benchmarks/gpu_multiturn.py --out results/     # about 3 minutes on one H100

Prints one Markdown row per configuration and step and writes them to `results.jsonl`.
Tokens/s counts the tokens the policy generated (action tokens) over the rollout's wall time.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import tempfile
import time
import traceback
from pathlib import Path
from typing import Any

import torch
from transformers import AutoTokenizer

from rewardsmith.environments import RetryArithmetic
from rewardsmith.environments.episodes import read_tasks
from rewardsmith.environments.protocol import EpisodeLimits
from rewardsmith.trainer.config import TrainConfig
from rewardsmith.trainer.multiturn import TurnSettings, train_multiturn
from rewardsmith.trainer.random_model import build_random_model

ROOT = Path(__file__).resolve().parents[1]
TASKS = ROOT / "datasets" / "arithmetic" / "tasks.jsonl"
# ChatML, the format of Qwen2.5's own template, without its system-prompt default.
CHATML = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
# A small variant for checking the script on a CPU (--small).
SMALL = {
    "num_hidden_layers": 2,
    "hidden_size": 64,
    "intermediate_size": 128,
    "num_attention_heads": 2,
    "num_key_value_heads": 1,
    "vocab_size": 600,
}


def build_chat_model(path: Path, dtype: str, small: bool) -> str:
    """The random model at `path`, saved with the ChatML template."""
    model = build_random_model(path, dtype=dtype, **(SMALL if small else {}))
    tokenizer = AutoTokenizer.from_pretrained(model)
    tokenizer.chat_template = CHATML
    tokenizer.save_pretrained(model)
    return model


def run_config(args: argparse.Namespace, dtype: str, episodes: int, out: Path) -> list[dict]:
    """`args.steps` multi-turn steps of one configuration; one row per step."""
    work = Path(tempfile.mkdtemp(prefix=f"mt-{dtype}-{episodes}-"))
    t0 = time.perf_counter()
    model = build_chat_model(work / "model", dtype, args.small)
    build_s = time.perf_counter() - t0
    group = 8
    max_new = args.max_turns * (args.turn_tokens + 32)
    cfg = TrainConfig(
        model=model,
        prompts=str(TASKS),
        output_dir=str(work / "run"),
        algorithm="grpo",
        steps=args.steps,
        prompts_per_step=episodes // group,
        group_size=group,
        minibatch_size=min(episodes, 32),
        micro_batch_size=args.micro_batch or None,
        max_prompt_tokens=64,
        max_new_tokens=max_new,
        lr=1e-6,
        kl_coef=0.0,
        temperature=1.0,
        tensorboard=False,
        reward_executor="inline",
        device=args.device,
        dtype=dtype,
    )
    env = RetryArithmetic(limits=EpisodeLimits(max_turns=args.max_turns, max_tokens=max_new))
    rows: list[dict] = []
    marks = [time.perf_counter()]

    def on_step(step: int, metrics: dict[str, float]) -> None:
        marks.append(time.perf_counter())
        step_s = marks[-1] - marks[-2]
        rollout_s = metrics["time/rollout_s"]
        generated = metrics["response/action_tokens"] * episodes
        row = {
            "dtype": dtype,
            "episodes": episodes,
            "step": step,
            "step_s": round(step_s, 3),
            "rollout_s": round(rollout_s, 3),
            "learn_s": round(step_s - rollout_s, 3),
            "turns": metrics["episode/turns"],
            "action_tokens": round(generated),
            "observation_tokens": round(metrics["response/observation_tokens"] * episodes),
            "generated_tok_per_s": round(generated / rollout_s, 1),
            "peak_gib": round(_peak_gib(), 2),
            "model_build_s": round(build_s, 1),
        }
        rows.append(row)
        print(_markdown(row), flush=True)
        with open(out / "results.jsonl", "a") as f:
            f.write(json.dumps(row) + "\n")

    if torch.cuda.is_available():
        torch.cuda.reset_peak_memory_stats()
    marks[0] = time.perf_counter()
    try:
        train_multiturn(
            cfg,
            env,
            list(read_tasks(TASKS)),
            TurnSettings(args.turn_tokens, chat_template=True),
            on_step,
        )
    finally:
        env.close()
    return rows


def _peak_gib() -> float:
    return torch.cuda.max_memory_allocated() / 2**30 if torch.cuda.is_available() else 0.0


COLUMNS = (
    "dtype",
    "episodes",
    "step",
    "step_s",
    "rollout_s",
    "learn_s",
    "turns",
    "action_tokens",
    "generated_tok_per_s",
    "peak_gib",
)


def _markdown(row: dict[str, Any]) -> str:
    return "| " + " | ".join(str(row[c]) for c in COLUMNS) + " |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=Path("build/bench/gpu_multiturn"))
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--dtypes", default="bfloat16,float32")
    parser.add_argument("--episodes", default="64,128", help="episodes per step, each config")
    parser.add_argument("--steps", type=int, default=3, help="the first is the warm-up")
    parser.add_argument("--turn-tokens", type=int, default=64)
    parser.add_argument("--max-turns", type=int, default=4)
    parser.add_argument(
        "--micro-batch", type=int, default=0, help="rows per forward pass (0: a whole minibatch)"
    )
    parser.add_argument("--small", action="store_true", help="a tiny variant, to check on CPU")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    print(_machine(), flush=True)
    print("| " + " | ".join(COLUMNS) + " |\n|" + "---|" * len(COLUMNS), flush=True)
    summary = [engine_only(args)]
    for dtype in args.dtypes.split(","):
        for episodes in (int(n) for n in args.episodes.split(",")):
            try:
                rows = run_config(args, dtype, episodes, args.out)
            except Exception:  # one configuration failing must not lose the others' figures
                traceback.print_exc()
                continue
            warm = rows[1:] or rows
            step_s = statistics.median(r["step_s"] for r in warm)
            tok_s = statistics.median(r["generated_tok_per_s"] for r in warm)
            summary.append(
                f"{dtype}, {episodes} episodes: step {step_s:.2f} s, {tok_s:.0f} generated "
                "tok/s (medians of the steps after the first)"
            )
    print("\n".join(summary))


def engine_only(args: argparse.Namespace) -> str:
    """The HF engine alone (no environment, no scoring): 64 contexts of 32 tokens, one
    generation of `max_turns * turn_tokens` new tokens, bfloat16, the second of two runs."""
    from rewardsmith.trainer.engine import SamplingParams
    from rewardsmith.trainer.hf_engine import HFEngine

    model = build_chat_model(Path(tempfile.mkdtemp(prefix="engine-")), "bfloat16", args.small)
    engine = HFEngine.from_pretrained(model, "bfloat16", args.device)
    new = args.max_turns * args.turn_tokens
    prompts = [[(7 * i + j) % 500 + 10 for j in range(32)] for i in range(64)]
    sampling = SamplingParams(max_new_tokens=new, seeds=tuple(range(64)))
    for _ in range(2):
        _sync()
        t0 = time.perf_counter()
        tokens = sum(len(t) for t in engine.generate(prompts, sampling).token_ids)
        _sync()
        seconds = time.perf_counter() - t0
    rate = tokens / seconds
    return f"engine only: 64 x {new} new tokens, {tokens} in {seconds:.2f} s, {rate:.0f} tok/s"


def _sync() -> None:
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def _machine() -> str:
    gpu = torch.cuda.get_device_name() if torch.cuda.is_available() else "no GPU"
    return f"{gpu}; torch {torch.__version__}; Python {platform.python_version()}"


if __name__ == "__main__":
    main()
