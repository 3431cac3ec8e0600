"""Batched inference: sort by length so a batch wastes little padding, no gradients.

Inputs are tokenised once, ordered by token count, cut into batches of `batch_size` and
scored under ``torch.inference_mode()``; results come back in the caller's order. Sorting
matters: with right padding every row in a batch costs as much as its longest, so a random
mix of short and long texts spends most of its compute on padding.

    >>> scores = score_outcomes(rm, [("2+2?", "4"), ("2+2?", "5")])  # doctest: +SKIP
    >>> scores[0].score > scores[1].score                            # doctest: +SKIP
    True
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

from rewardsmith.reward_models.model import Encoded, RewardModel

__all__ = ["Scored", "score_outcomes", "score_steps"]


@dataclass(frozen=True)
class Scored:
    """One input's raw score (or per-step scores), and how its tokenisation went."""

    score: float
    step_scores: tuple[float, ...] = ()
    truncated: bool = False
    tokens: int = 0
    """Tokens before truncation."""


def score_outcomes(
    model: RewardModel, pairs: Sequence[tuple[str, str]], batch_size: int = 32
) -> list[Scored]:
    """Raw outcome scores for (prompt, completion) pairs, in input order."""
    encoded = [model.encode(prompt, completion) for prompt, completion in pairs]

    def run(batch: dict[str, torch.Tensor]) -> list[tuple[float, tuple[float, ...]]]:
        return [(float(s), ()) for s in model(**batch).float().cpu()]

    return _sorted_batches(model, encoded, batch_size, run)


def score_steps(
    model: RewardModel, items: Sequence[tuple[str, Sequence[str]]], batch_size: int = 32
) -> list[Scored]:
    """Per-step scores for (prompt, steps); `score` is the last surviving step's value."""
    encoded = [model.encode_steps(prompt, list(steps)) for prompt, steps in items]

    def run(batch: dict[str, torch.Tensor]) -> list[tuple[float, tuple[float, ...]]]:
        rows = model.step_values(**batch)
        out = []
        for values in rows:
            steps = tuple(float(v) for v in values.float().cpu())
            out.append((steps[-1] if steps else float("nan"), steps))
        return out

    return _sorted_batches(model, encoded, batch_size, run)


def _sorted_batches(
    model: RewardModel,
    encoded: list[Encoded],
    batch_size: int,
    run: Callable[[dict[str, torch.Tensor]], list[tuple[float, tuple[float, ...]]]],
) -> list[Scored]:
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}")
    order = sorted(range(len(encoded)), key=lambda i: len(encoded[i].input_ids))
    device = next(model.parameters()).device
    results: list[Scored | None] = [None] * len(encoded)
    was_training = model.training
    model.eval()
    try:
        with torch.inference_mode():
            for start in range(0, len(order), batch_size):
                chunk = order[start : start + batch_size]
                batch = model.collate([encoded[i] for i in chunk])
                batch = {k: v.to(device) for k, v in batch.items()}
                for i, (score, steps) in zip(chunk, run(batch), strict=True):
                    e = encoded[i]
                    results[i] = Scored(score, steps, e.truncated, e.full_length)
    finally:
        model.train(was_training)
    return [r for r in results if r is not None]
