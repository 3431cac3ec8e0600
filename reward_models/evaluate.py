"""Measure a reward model on held-out preference pairs, honestly.

Metrics (all computed from the raw scores ``r_c`` of the chosen and ``r_r`` of the rejected
answer of each pair):

- **Pairwise accuracy** (RewardBench, Lambert et al., 2024): the fraction of pairs with
  ``r_c > r_r``. A tie counts one half, so a constant model scores 0.5, not 0 or 1.
- **Per-subset accuracy**: the same within each ``subset`` (RewardBench reports by subset;
  one easy subset can hide a hard one in the mean).
- **Calibration** of the implied preference probability ``p = σ(r_c − r_r)`` (Bradley-Terry).
  Each pair is read as a prediction with confidence ``max(p, 1 − p)`` that is correct when
  ``p > 0.5``. Expected calibration error ``ECE = Σ_b (n_b / n) · |acc_b − conf_b|`` over
  equal-width confidence bins (Guo et al., 2017, "On Calibration of Modern Neural
  Networks"), and the Brier score ``mean((1 − p)²)`` (the chosen answer is the true winner).
- **Score distributions**: mean, standard deviation and quantiles of ``r_c``, ``r_r`` and
  the margin ``r_c − r_r``.

    >>> report = evaluate_pairs(rm, pairs)   # doctest: +SKIP
    >>> report.accuracy, report.by_subset     # doctest: +SKIP
    (0.93, {'arithmetic': 0.93})
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

import torch

from rewardsmith.reward_models.data import PreferencePair
from rewardsmith.reward_models.model import RewardModel
from rewardsmith.reward_models.scoring import score_outcomes

__all__ = [
    "EvalReport",
    "distribution",
    "evaluate_pairs",
    "expected_calibration_error",
    "pairwise_accuracy",
    "report_from_scores",
]


@dataclass(frozen=True)
class EvalReport:
    n_pairs: int
    accuracy: float
    by_subset: dict[str, float]
    subset_sizes: dict[str, int]
    ece: float
    brier: float
    chosen: dict[str, float]
    rejected: dict[str, float]
    margin: dict[str, float]
    truncated: int = 0
    """Texts that were longer than the model's context and lost their beginning."""
    calibration_bins: list[dict[str, float]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def pairwise_accuracy(chosen: torch.Tensor, rejected: torch.Tensor) -> float:
    """Fraction of pairs with ``chosen > rejected``; ties count one half. Shapes (n,)."""
    wins = (chosen > rejected).float() + 0.5 * (chosen == rejected).float()
    return float(wins.mean()) if chosen.numel() else math.nan


def expected_calibration_error(
    p_chosen: torch.Tensor, bins: int = 10
) -> tuple[float, list[dict[str, float]]]:
    """ECE of the implied preference probabilities (see the module docstring). Shape (n,)."""
    confidence = torch.maximum(p_chosen, 1 - p_chosen)
    correct = (p_chosen > 0.5).float() + 0.5 * (p_chosen == 0.5).float()
    edges = torch.linspace(0.5, 1.0, bins + 1)
    total, table = 0.0, []
    for b in range(bins):
        upper = confidence <= edges[b + 1] if b == bins - 1 else confidence < edges[b + 1]
        inside = (confidence >= edges[b]) & upper
        count = int(inside.sum())
        if count == 0:
            continue
        acc, conf = float(correct[inside].mean()), float(confidence[inside].mean())
        total += count / len(p_chosen) * abs(acc - conf)
        table.append({"low": float(edges[b]), "count": count, "accuracy": acc, "confidence": conf})
    return total, table


def distribution(values: torch.Tensor) -> dict[str, float]:
    """Mean, standard deviation, min, max and quartiles of a 1-D tensor."""
    if values.numel() == 0:
        return {}
    q = torch.quantile(values.double(), torch.tensor([0.0, 0.25, 0.5, 0.75, 1.0]).double())
    std = float(values.std()) if values.numel() > 1 else 0.0
    return {
        "mean": float(values.mean()),
        "std": std,
        **dict(zip(("min", "p25", "median", "p75", "max"), map(float, q), strict=True)),
    }


def report_from_scores(
    chosen: Sequence[float], rejected: Sequence[float], subsets: Sequence[str], truncated: int = 0
) -> EvalReport:
    """Every metric of the module docstring from raw scores."""
    c = torch.tensor(list(chosen), dtype=torch.float64)
    r = torch.tensor(list(rejected), dtype=torch.float64)
    by_subset, sizes = {}, {}
    for name in sorted(set(subsets)):
        mask = torch.tensor([s == name for s in subsets])
        by_subset[name] = pairwise_accuracy(c[mask], r[mask])
        sizes[name] = int(mask.sum())
    p = torch.sigmoid(c - r)
    ece, bins = expected_calibration_error(p)
    return EvalReport(
        n_pairs=len(c),
        accuracy=pairwise_accuracy(c, r),
        by_subset=by_subset,
        subset_sizes=sizes,
        ece=ece,
        brier=float(((1 - p) ** 2).mean()) if len(c) else math.nan,
        chosen=distribution(c),
        rejected=distribution(r),
        margin=distribution(c - r),
        truncated=truncated,
        calibration_bins=bins,
    )


def evaluate_pairs(
    model: RewardModel, pairs: Sequence[PreferencePair], batch_size: int = 32
) -> EvalReport:
    """Score both answers of every pair in one sorted, batched pass and report."""
    texts = [(p.prompt, p.chosen) for p in pairs] + [(p.prompt, p.rejected) for p in pairs]
    scored = score_outcomes(model, texts, batch_size=batch_size)
    n = len(pairs)
    return report_from_scores(
        [s.score for s in scored[:n]],
        [s.score for s in scored[n:]],
        [p.subset for p in pairs],
        truncated=sum(s.truncated for s in scored),
    )
