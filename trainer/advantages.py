"""Critic-free advantage estimators and the KL coefficient controllers.

Each estimator turns sequence scores into advantages without a value function. A group
is `group_size` completions of the same prompt, laid out consecutively: rows
[g * group_size, (g + 1) * group_size) share a prompt. The trainer calls these on the
batch gathered from every rank, so a group that spans ranks is normalised as a whole.

    >>> import torch
    >>> grpo_advantages(torch.tensor([1.0, 0.0, 0.0, 0.0]), group_size=4, scale_by_std=False)
    tensor([ 0.7500, -0.2500, -0.2500, -0.2500])
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from rewardsmith.trainer.losses import masked_whiten

__all__ = [
    "AdaptiveKLController",
    "FixedKLController",
    "discounted_returns",
    "fill_invalid_scores",
    "grpo_advantages",
    "reinforce_pp_advantages",
    "rloo_advantages",
]


def _groups(scores: Tensor, group_size: int) -> Tensor:
    if scores.ndim != 1 or scores.numel() % group_size:
        raise ValueError(
            f"{scores.numel()} scores do not split into groups of {group_size}: the batch "
            "must be a whole number of groups"
        )
    return scores.view(-1, group_size)


def grpo_advantages(
    scores: Tensor, group_size: int, scale_by_std: bool = True, eps: float = 1e-6
) -> Tensor:
    """GRPO (Shao et al. 2024, DeepSeekMath): A_i = (s_i - mean(group)) / (std(group) + eps).

    With `scale_by_std=False` only the group mean is subtracted (Dr. GRPO, Liu et al. 2025).
    The std is the unbiased one. Shapes: scores (B,) -> (B,).
    """
    grouped = _groups(scores, group_size)
    centred = grouped - grouped.mean(-1, keepdim=True)
    if scale_by_std:
        std = grouped.std(-1, keepdim=True) if group_size > 1 else torch.ones_like(centred)
        centred = centred / (std + eps)
    return centred.reshape(-1)


def rloo_advantages(scores: Tensor, group_size: int) -> Tensor:
    """REINFORCE leave-one-out (Kool et al. 2019; Ahmadian et al. 2024):
    A_i = s_i - mean_{j != i} s_j = (k / (k - 1)) * (s_i - mean(group)).

    Shapes: scores (B,) -> (B,). Needs group_size >= 2.
    """
    if group_size < 2:
        raise ValueError("RLOO needs group_size >= 2: the baseline is the other samples")
    grouped = _groups(scores, group_size)
    baseline = (grouped.sum(-1, keepdim=True) - grouped) / (group_size - 1)
    return (grouped - baseline).reshape(-1)


def discounted_returns(rewards: Tensor, mask: Tensor, gamma: float) -> Tensor:
    """G_t = sum_{s >= t} gamma^(s - t) r_s over real tokens. Shapes: (B, T) -> (B, T)."""
    returns = torch.zeros_like(rewards)
    running = torch.zeros_like(rewards[:, 0])
    for t in reversed(range(rewards.shape[1])):
        running = (rewards[:, t] + gamma * running) * mask[:, t]
        returns[:, t] = running
    return returns


def reinforce_pp_advantages(token_rewards: Tensor, mask: Tensor, gamma: float = 1.0) -> Tensor:
    """REINFORCE++ (Hu 2025): the return-to-go of the KL-penalised token rewards, whitened
    over the whole batch (no critic, no group baseline).

    Shapes: token_rewards, mask (B, T) -> (B, T).
    """
    return masked_whiten(discounted_returns(token_rewards, mask, gamma), mask)


def fill_invalid_scores(scores: Tensor, group_size: int) -> tuple[Tensor, Tensor]:
    """Replace NaN scores (no reward: an infrastructure failure) by their group's mean of the
    valid ones, so they carry no advantage and do not move the group's statistics much.

    Returns (filled scores, valid mask), shapes (B,) and (B,). A group with no valid score
    is filled with 0; the trainer also drops invalid rows from the loss.
    """
    valid = ~torch.isnan(scores)
    grouped = _groups(scores, group_size)
    vgrouped = valid.view(-1, group_size)
    sums = torch.where(vgrouped, grouped, torch.zeros_like(grouped)).sum(-1, keepdim=True)
    means = sums / vgrouped.sum(-1, keepdim=True).clamp(min=1)
    filled = torch.where(vgrouped, grouped, means.expand_as(grouped))
    return filled.reshape(-1), valid


@dataclass
class FixedKLController:
    """A constant KL coefficient beta."""

    value: float

    def update(self, current_kl: float, n_steps: int) -> None:
        """Constant: nothing to do."""


@dataclass
class AdaptiveKLController:
    """The proportional controller of Ziegler et al. 2019 (section 2.2):

        e     = clip((KL - target) / target, -0.2, 0.2)
        beta <- beta * (1 + e * n_steps / horizon)

    It raises beta when the policy drifts past `target` nats and lowers it when under.
    Its state (`value`) is saved in checkpoints.
    """

    value: float
    target: float
    horizon: int

    def update(self, current_kl: float, n_steps: int) -> None:
        error = min(max(current_kl / self.target - 1.0, -0.2), 0.2)
        self.value *= 1.0 + error * n_steps / self.horizon
