"""Reward-model losses as small pure tensor functions.

>>> import torch
>>> round(bradley_terry_loss(torch.tensor([2.0]), torch.tensor([0.0])).item(), 4)
0.1269
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

__all__ = [
    "bradley_terry_loss",
    "centering_penalty",
    "length_decorrelation",
    "pearson",
    "pointwise_loss",
    "step_loss",
]


def bradley_terry_loss(
    chosen: torch.Tensor, rejected: torch.Tensor, margin: torch.Tensor | None = None
) -> torch.Tensor:
    """Pairwise loss ``-log σ(r_c − r_r − m)``, averaged over the batch.

    Under the Bradley-Terry model the probability that the chosen answer is preferred is
    ``σ(r_c − r_r)`` (Bradley & Terry, 1952; Ouyang et al., 2022, eq. 1). The optional margin
    ``m`` asks for a larger gap on pairs rated as clearly different (Touvron et al., 2023,
    Llama 2, eq. 2). Shapes: chosen, rejected, margin (b,); returns a scalar.
    """
    diff = chosen - rejected
    if margin is not None:
        diff = diff - margin
    return -F.logsigmoid(diff).mean()


def centering_penalty(chosen: torch.Tensor, rejected: torch.Tensor) -> torch.Tensor:
    """``mean((r_c + r_r)²)``: pulls the scores of each pair towards a zero mean.

    Bradley-Terry sees only differences, so nothing fixes where scores sit; models trained
    apart drift to different offsets, and a reward that mixes them (an ensemble's min) is
    then decided by the offsets. Eisenstein et al. 2023 ("Helping or Herding? Reward Model
    Ensembles Mitigate but do not Eliminate Reward Hacking") add this term; TRL calls its
    weight ``center_rewards_coefficient``. Shapes (b,) -> scalar.
    """
    return ((chosen + rejected) ** 2).mean()


def pearson(x: torch.Tensor, y: torch.Tensor, eps: float = 1e-8) -> torch.Tensor:
    """Pearson correlation of two (n,) tensors (0 where either is constant)."""
    dx, dy = x - x.mean(), y - y.mean()
    return (dx * dy).sum() / (dx.norm() * dy.norm() + eps)


def length_decorrelation(
    quality: torch.Tensor, length_value: torch.Tensor, lengths: torch.Tensor
) -> torch.Tensor:
    """ODIN's correlation term ``|ρ(r_Q, L)| − ρ(r_L, L)`` over a batch (Chen et al. 2024,
    "ODIN: Disentangled Reward Mitigates Hacking in RLHF", eq. 4): the quality head's
    score should not follow the answer's length ``L``, the length head's should. Shapes
    (n,) -> scalar.
    """
    return pearson(quality, lengths).abs() - pearson(length_value, lengths)


def pointwise_loss(scores: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """Binary cross-entropy of ``σ(score)`` against labels in [0, 1]; shapes (b,) -> scalar."""
    return F.binary_cross_entropy_with_logits(scores, labels)


def step_loss(values: list[torch.Tensor], labels: list[torch.Tensor]) -> torch.Tensor:
    """A process reward model's loss: binary cross-entropy of each step's ``σ(value)``
    against that step's label, averaged over all steps in the batch (Lightman et al., 2023,
    "Let's Verify Step by Step"). One (n_i,) tensor per row in each list; steps that
    truncation removed are absent from `values` and dropped from the front of `labels`.
    """
    kept_values, kept_labels = [], []
    for v, y in zip(values, labels, strict=True):
        n = min(v.shape[0], y.shape[0])
        if n:
            # Left truncation removes the earliest steps, so the surviving values are the last.
            kept_values.append(v[v.shape[0] - n :])
            kept_labels.append(y[y.shape[0] - n :])
    if not kept_values:
        raise ValueError("no step survived truncation in this batch; raise max_length")
    return F.binary_cross_entropy_with_logits(torch.cat(kept_values), torch.cat(kept_labels))
