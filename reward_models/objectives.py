"""Training objectives: how a batch of rows becomes a loss.

Each objective tokenises its rows once, before training (`encode`), turns a list of
encoded rows into ``(loss, metrics)`` (`loss`), and gives the raw scores of a list of
encoded rows (`scores`, for the statistics a checkpoint records). They are the extension
point of the trainer: anything with these three methods can be trained on.

Every objective reports ``score_std``, the spread of the batch's scores: a model that gives
every input the same score has collapsed, and the trainer watches for it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, Protocol

import torch

from rewardsmith.reward_models.data import PointwiseExample, PreferencePair, StepExample
from rewardsmith.reward_models.losses import (
    bradley_terry_loss,
    centering_penalty,
    length_decorrelation,
    pearson,
    pointwise_loss,
    step_loss,
)
from rewardsmith.reward_models.model import Encoded, RewardModel

__all__ = ["EncodedPair", "Objective", "Pairwise", "PerStep", "Pointwise", "objective_for"]


class Objective(Protocol):
    def encode(self, model: RewardModel, row: Any) -> Any: ...

    def loss(
        self, model: RewardModel, items: Sequence[Any], device: torch.device
    ) -> tuple[torch.Tensor, dict[str, float]]: ...

    def scores(self, model: RewardModel, items: Sequence[Any], device: Any) -> torch.Tensor: ...


def _to(batch: dict[str, torch.Tensor], device: torch.device) -> dict[str, torch.Tensor]:
    return {k: v.to(device) for k, v in batch.items()}


def _spread(scores: torch.Tensor) -> float:
    return float(scores.detach().float().std(unbiased=False)) if scores.numel() > 1 else 0.0


class EncodedPair(NamedTuple):
    chosen: Encoded
    rejected: Encoded
    margin: float
    chosen_length: int
    """Completion tokens (without the prompt): ODIN's length L."""
    rejected_length: int


@dataclass(frozen=True)
class Pairwise:
    """Bradley-Terry on (prompt, chosen, rejected); chosen and rejected share one forward.

    ``center_coef`` adds `centering_penalty`. With a length head (ODIN) the preference is
    modelled by the sum of both heads, ``σ(r_Q + r_L)`` of chosen minus rejected, plus
    ``length_coef`` times `length_decorrelation` and ``ortho_coef`` times
    ``|w_Q · w_L|`` (the heads' weights kept orthogonal); the score is ``r_Q`` alone.
    """

    use_margin: bool = True
    center_coef: float = 0.0
    length_coef: float = 1.0
    ortho_coef: float = 1.0

    def encode(self, model: RewardModel, row: PreferencePair) -> EncodedPair:
        def length(text: str) -> int:
            if model.length_head is None:
                return 0
            return len(model.tokenizer(text, add_special_tokens=False)["input_ids"])

        return EncodedPair(
            model.encode(row.prompt, row.chosen),
            model.encode(row.prompt, row.rejected),
            row.margin,
            length(row.chosen),
            length(row.rejected),
        )

    def scores(self, model: RewardModel, items: Sequence[EncodedPair], device: Any) -> torch.Tensor:
        batch = model.collate([x.chosen for x in items] + [x.rejected for x in items])
        return model(**_to(batch, device)).float()

    def loss(
        self, model: RewardModel, items: Sequence[EncodedPair], device: Any
    ) -> tuple[torch.Tensor, dict[str, float]]:
        b = len(items)
        batch = model.collate([x.chosen for x in items] + [x.rejected for x in items])
        quality, length_value = model.outcome_parts(**_to(batch, device))
        quality = quality.float()
        total = quality if length_value is None else quality + length_value.float()
        margin = None
        if self.use_margin:
            margin = torch.tensor([x.margin for x in items], dtype=torch.float, device=device)
        loss = bradley_terry_loss(total[:b], total[b:], margin)
        metrics = {
            "accuracy": (quality[:b] > quality[b:]).float().mean().item(),
            "score_std": _spread(quality),
        }
        if self.center_coef:
            loss = loss + self.center_coef * centering_penalty(quality[:b], quality[b:])
        if length_value is not None:
            loss = loss + self._odin(model, quality, length_value.float(), items, metrics)
        return loss, metrics

    def _odin(
        self,
        model: RewardModel,
        quality: torch.Tensor,
        length_value: torch.Tensor,
        items: Sequence[EncodedPair],
        metrics: dict[str, float],
    ) -> torch.Tensor:
        lengths = torch.tensor(
            [x.chosen_length for x in items] + [x.rejected_length for x in items],
            dtype=torch.float,
            device=quality.device,
        )
        assert model.head is not None and model.length_head is not None
        ortho = (model.head.weight * model.length_head.weight).sum().abs()
        metrics["quality_length_corr"] = float(pearson(quality.detach(), lengths))
        metrics["length_head_corr"] = float(pearson(length_value.detach(), lengths))
        decorrelation = length_decorrelation(quality, length_value, lengths)
        return self.length_coef * decorrelation + self.ortho_coef * ortho


@dataclass(frozen=True)
class Pointwise:
    """Binary cross-entropy on (prompt, completion, label)."""

    def encode(self, model: RewardModel, row: PointwiseExample) -> tuple[Encoded, float]:
        return model.encode(row.prompt, row.completion), row.label

    def scores(
        self, model: RewardModel, items: Sequence[tuple[Encoded, float]], device: Any
    ) -> torch.Tensor:
        return model(**_to(model.collate([e for e, _ in items]), device)).float()

    def loss(
        self, model: RewardModel, items: Sequence[tuple[Encoded, float]], device: Any
    ) -> tuple[torch.Tensor, dict[str, float]]:
        scores = self.scores(model, items, device)
        labels = torch.tensor([y for _, y in items], dtype=torch.float, device=device)
        accuracy = ((scores > 0).float() == (labels > 0.5).float()).float().mean().item()
        metrics = {"accuracy": accuracy, "score_std": _spread(scores)}
        return pointwise_loss(scores, labels), metrics


@dataclass(frozen=True)
class PerStep:
    """A process reward model's per-step binary cross-entropy."""

    def encode(self, model: RewardModel, row: StepExample) -> tuple[Encoded, tuple[float, ...]]:
        return model.encode_steps(row.prompt, list(row.steps)), row.labels

    def scores(
        self, model: RewardModel, items: Sequence[tuple[Encoded, tuple[float, ...]]], device: Any
    ) -> torch.Tensor:
        values = model.step_values(**_to(model.collate([e for e, _ in items]), device))
        return torch.cat([v.float() for v in values]) if values else torch.zeros(0)

    def loss(
        self, model: RewardModel, items: Sequence[tuple[Encoded, tuple[float, ...]]], device: Any
    ) -> tuple[torch.Tensor, dict[str, float]]:
        values = model.step_values(**_to(model.collate([e for e, _ in items]), device))
        labels = [torch.tensor(y, dtype=torch.float, device=device) for _, y in items]
        values = [v.float() for v in values]
        loss = step_loss(values, labels)
        flat = torch.cat(values) if values else torch.zeros(0)
        return loss, {"score_std": _spread(flat)}


def objective_for(
    name: str,
    use_margin: bool = True,
    *,
    center_coef: float = 0.0,
    length_coef: float = 1.0,
    ortho_coef: float = 1.0,
) -> Objective:
    """The objective called `name`: ``pairwise``, ``pointwise`` or ``step``."""
    if name == "pairwise":
        return Pairwise(use_margin, center_coef, length_coef, ortho_coef)
    if name == "pointwise":
        return Pointwise()
    if name == "step":
        return PerStep()
    raise ValueError(f"unknown objective {name!r}: 'pairwise', 'pointwise' or 'step'")
