"""Training objectives: how a batch of rows becomes a loss.

Each objective tokenises its rows once, before training (`encode`), and turns a list of
encoded rows into ``(loss, metrics)`` (`loss`). They are the extension point of the trainer:
anything with these two methods can be trained on.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import torch

from rewardsmith.reward_models.data import PointwiseExample, PreferencePair, StepExample
from rewardsmith.reward_models.losses import bradley_terry_loss, pointwise_loss, step_loss
from rewardsmith.reward_models.model import Encoded, RewardModel

__all__ = ["Objective", "Pairwise", "PerStep", "Pointwise", "objective_for"]


class Objective(Protocol):
    def encode(self, model: RewardModel, row: Any) -> Any: ...

    def loss(
        self, model: RewardModel, items: Sequence[Any], device: torch.device
    ) -> tuple[torch.Tensor, dict[str, float]]: ...


def _to(batch: dict[str, torch.Tensor], device: torch.device) -> dict[str, torch.Tensor]:
    return {k: v.to(device) for k, v in batch.items()}


@dataclass(frozen=True)
class Pairwise:
    """Bradley-Terry on (prompt, chosen, rejected); chosen and rejected share one forward."""

    use_margin: bool = True

    def encode(self, model: RewardModel, row: PreferencePair) -> tuple[Encoded, Encoded, float]:
        return (
            model.encode(row.prompt, row.chosen),
            model.encode(row.prompt, row.rejected),
            (row.margin),
        )

    def loss(
        self, model: RewardModel, items: Sequence[tuple[Encoded, Encoded, float]], device: Any
    ) -> tuple[torch.Tensor, dict[str, float]]:
        b = len(items)
        batch = model.collate([c for c, _, _ in items] + [r for _, r, _ in items])
        scores = model(**_to(batch, device)).float()
        chosen, rejected = scores[:b], scores[b:]
        margin = None
        if self.use_margin:
            margin = torch.tensor([m for _, _, m in items], dtype=torch.float, device=device)
        loss = bradley_terry_loss(chosen, rejected, margin)
        accuracy = (chosen > rejected).float().mean().item()
        return loss, {"accuracy": accuracy}


@dataclass(frozen=True)
class Pointwise:
    """Binary cross-entropy on (prompt, completion, label)."""

    def encode(self, model: RewardModel, row: PointwiseExample) -> tuple[Encoded, float]:
        return model.encode(row.prompt, row.completion), row.label

    def loss(
        self, model: RewardModel, items: Sequence[tuple[Encoded, float]], device: Any
    ) -> tuple[torch.Tensor, dict[str, float]]:
        scores = model(**_to(model.collate([e for e, _ in items]), device)).float()
        labels = torch.tensor([y for _, y in items], dtype=torch.float, device=device)
        accuracy = ((scores > 0).float() == (labels > 0.5).float()).float().mean().item()
        return pointwise_loss(scores, labels), {"accuracy": accuracy}


@dataclass(frozen=True)
class PerStep:
    """A process reward model's per-step binary cross-entropy."""

    def encode(self, model: RewardModel, row: StepExample) -> tuple[Encoded, tuple[float, ...]]:
        return model.encode_steps(row.prompt, list(row.steps)), row.labels

    def loss(
        self, model: RewardModel, items: Sequence[tuple[Encoded, tuple[float, ...]]], device: Any
    ) -> tuple[torch.Tensor, dict[str, float]]:
        values = model.step_values(**_to(model.collate([e for e, _ in items]), device))
        labels = [torch.tensor(y, dtype=torch.float, device=device) for _, y in items]
        values = [v.float() for v in values]
        return step_loss(values, labels), {}


def objective_for(name: str, use_margin: bool = True) -> Objective:
    """The objective called `name`: ``pairwise``, ``pointwise`` or ``step``."""
    if name == "pairwise":
        return Pairwise(use_margin)
    if name == "pointwise":
        return Pointwise()
    if name == "step":
        return PerStep()
    raise ValueError(f"unknown objective {name!r}: 'pairwise', 'pointwise' or 'step'")
