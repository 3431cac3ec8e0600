"""Score statistics: where a reward model's raw scores sit on its training data.

Bradley-Terry fixes only score differences, so every model picks its own offset and
spread. The mean and population standard deviation of a model's raw scores on (a seeded
subset of) its training rows, stored in its spec (``score_mean``, ``score_std``), put
models trained apart on one scale: `RewardModel.normalize` reads ``(r − mean) / std``.
OpenRLHF's ``normalize_reward`` does the same with statistics from its evaluation pass.

The trainer records them in every checkpoint; `record_statistics` measures them for a
model trained elsewhere (``rewardsmith rm stats``) or made by averaging (`warm`). Scores
are measured as they are served: eval mode (no dropout), fp32, no gradients.

    >>> record_statistics(rm, pairs)            # doctest: +SKIP
    >>> rm.spec.score_mean, rm.spec.score_std   # doctest: +SKIP
    (-0.41, 2.07)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import torch

from rewardsmith.reward_models.model import RewardModel
from rewardsmith.reward_models.objectives import Objective, objective_for

__all__ = ["measure", "record_statistics", "seeded_subset", "store"]


def seeded_subset(items: Sequence[Any], count: int, seed: int) -> list[Any]:
    """``count`` items in a seeded random order (all of them if there are fewer)."""
    generator = torch.Generator().manual_seed(seed)
    order = torch.randperm(len(items), generator=generator).tolist()
    return [items[i] for i in order[:count]]


def measure(
    model: RewardModel, objective: Objective, items: Sequence[Any], batch_size: int = 16
) -> tuple[float, float, int] | None:
    """(mean, population std, count) of the finite raw scores of encoded ``items``; None
    when there are none."""
    if not items:
        return None
    device = next(model.parameters()).device
    was_training = model.training
    model.eval()
    try:
        with torch.inference_mode():
            scores = torch.cat(
                [
                    objective.scores(model, items[i : i + batch_size], device).float().cpu()
                    for i in range(0, len(items), batch_size)
                ]
            )
    finally:
        model.train(was_training)
    finite = scores[torch.isfinite(scores)].double()
    if finite.numel() == 0:
        return None
    return float(finite.mean()), float(finite.std(unbiased=False)), int(finite.numel())


def store(model: RewardModel, measured: tuple[float, float, int] | None) -> None:
    """Put measured statistics in the model's spec (saved with it); None leaves it alone."""
    if measured is not None:
        mean, std, count = measured
        model.spec = replace(model.spec, score_mean=mean, score_std=std, score_count=count)


def record_statistics(
    model: RewardModel,
    rows: Sequence[Any],
    objective: str = "pairwise",
    *,
    max_rows: int = 256,
    seed: int = 7,
    batch_size: int = 16,
) -> RewardModel:
    """Measure and store the statistics on up to ``max_rows`` of ``rows`` (the objective's
    row type: `PreferencePair` for ``pairwise``, whose both answers are scored)."""
    chosen = objective_for(objective)
    items = [chosen.encode(model, row) for row in seeded_subset(rows, max_rows, seed)]
    store(model, measure(model, chosen, items, batch_size))
    return model
