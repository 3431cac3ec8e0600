"""Reward-model losses as small pure tensor functions.

>>> import torch
>>> round(bradley_terry_loss(torch.tensor([2.0]), torch.tensor([0.0])).item(), 4)
0.1269
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

__all__ = ["bradley_terry_loss", "pointwise_loss", "step_loss"]


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
