"""Weight-averaged reward models (WARM; Ramé et al. 2024, "WARM: On the Benefits of Weight
Averaged Reward Models").

Reward models fine-tuned from one pre-trained backbone stay linearly connected in weight
space, so the average of their weights, ``θ = (1/k) Σ θ_i``, is itself a reward model,
usually as accurate as the best member and more robust to the members' separate mistakes,
at the cost of one model at scoring time where an ensemble costs k. It is the cheap
alternative to `EnsembleVerifier`; it gives no disagreement to gate on.

Members must share the backbone they were fine-tuned from and the head layout (kind,
pooling, length head, every parameter's name and shape); anything else is refused with
what differs. Statistics measured on the members do not describe the average: pass the
training rows to measure the averaged model's own (`statistics.record_statistics`).

    >>> average_weights(["runs/s0/checkpoint-0000240", "runs/s1/checkpoint-0000240"],
    ...                 "runs/warm", rows=train_pairs)                   # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from rewardsmith.reward_models.model import RewardModel
from rewardsmith.reward_models.statistics import record_statistics

__all__ = ["average_weights"]


def average_weights(
    paths: Sequence[str | Path],
    output: str | Path | None = None,
    *,
    rows: Sequence[Any] | None = None,
    objective: str = "pairwise",
) -> RewardModel:
    """The weight average of the reward models at ``paths``, saved to ``output`` if given;
    with ``rows``, its score statistics are measured on them."""
    if len(paths) < 2:
        raise ValueError("weight averaging needs at least two models")
    first = RewardModel.load(paths[0])
    total = {k: v.detach().clone().double() for k, v in first.state_dict().items()}
    for path in paths[1:]:
        member = RewardModel.load(path)
        _check_compatible(first, member, str(paths[0]), str(path))
        for key, value in member.state_dict().items():
            total[key] += value.detach().double()
    state = {
        key: (value / len(paths)).to(first.state_dict()[key].dtype)
        if first.state_dict()[key].is_floating_point()
        else first.state_dict()[key]  # integer buffers (position ids) are not averaged
        for key, value in total.items()
    }
    first.load_state_dict(state)
    first.spec = replace(first.spec, score_mean=None, score_std=None, score_count=0)
    if rows is not None:
        record_statistics(first, rows, objective)
    if output is not None:
        first.save(output)
    return first


def _check_compatible(a: RewardModel, b: RewardModel, path_a: str, path_b: str) -> None:
    differs = [
        f"{k}: {getattr(a.spec, k)!r} vs {getattr(b.spec, k)!r}"
        for k in ("kind", "pooling", "length_head")
        if getattr(a.spec, k) != getattr(b.spec, k)
    ]
    shapes_a = {k: tuple(v.shape) for k, v in a.state_dict().items()}
    shapes_b = {k: tuple(v.shape) for k, v in b.state_dict().items()}
    if shapes_a != shapes_b:
        names = sorted(set(shapes_a) ^ set(shapes_b))[:3]
        shapes = [k for k in shapes_a if k in shapes_b and shapes_a[k] != shapes_b[k]][:3]
        differs.append(f"parameters differ (names {names}, shapes {shapes})")
    if differs:
        raise ValueError(
            f"cannot average {path_a} and {path_b}: {'; '.join(differs)}. Average only "
            "models fine-tuned from the same backbone with the same head"
        )
