"""Critic-free advantage estimators and the KL coefficient controllers.

Each estimator turns sequence scores into advantages without a value function. A group
is `group_size` completions of the same prompt, laid out consecutively: rows
[g * group_size, (g + 1) * group_size) share a prompt. The trainer calls these on the
batch gathered from every rank, so a group that spans ranks is normalised as a whole.

    >>> import torch
    >>> grpo_advantages(torch.tensor([1.0, 0.0, 0.0, 0.0]), group_size=4, scale_by_std=False)
    tensor([ 0.7500, -0.2500, -0.2500, -0.2500])
    >>> grpo_advantages(torch.tensor([1.0, float("nan"), 0.0, 0.0]), 4, scale_by_std=False)
    tensor([ 0.6667,  0.0000, -0.3333, -0.3333])
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor

from rewardsmith.trainer.losses import masked_whiten

__all__ = [
    "AdaptiveKLController",
    "FixedKLController",
    "TurnReturns",
    "discounted_returns",
    "grpo_advantages",
    "per_turn_grpo_advantages",
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


def _valid_groups(scores: Tensor, group_size: int) -> tuple[Tensor, Tensor, Tensor]:
    """Grouped scores with NaN (no reward) set to 0, the grouped valid mask (float) and
    the count of valid members per group, shapes (G, k), (G, k), (G, 1)."""
    grouped = _groups(scores, group_size)
    valid = (~torch.isnan(grouped)).to(grouped.dtype)
    return torch.nan_to_num(grouped, nan=0.0) * valid, valid, valid.sum(-1, keepdim=True)


def grpo_advantages(
    scores: Tensor, group_size: int, scale_by_std: bool = True, eps: float = 1e-6
) -> Tensor:
    """GRPO (Shao et al. 2024, DeepSeekMath): A_i = (s_i - mean(group)) / (std(group) + eps).

    With `scale_by_std=False` only the group mean is subtracted (Dr. GRPO, Liu et al. 2025).
    The std is the unbiased one. A NaN score (no reward: an infrastructure failure) is left
    out of its group's mean and std, and its own advantage is 0: [1, NaN, 0, 0] is
    normalised as the group [1, 0, 0]. Shapes: scores (B,) -> (B,).
    """
    grouped, valid, count = _valid_groups(scores, group_size)
    mean = grouped.sum(-1, keepdim=True) / count.clamp(min=1)
    centred = torch.where(valid > 0, grouped - mean, 0.0)
    if scale_by_std:
        var = (centred**2).sum(-1, keepdim=True) / (count - 1).clamp(min=1)
        std = torch.where(count > 1, var.sqrt(), torch.ones_like(var))
        centred = centred / (std + eps)
    return centred.reshape(-1)


@dataclass(frozen=True)
class TurnReturns:
    """A multi-turn batch's turns, token by token. Shapes (B, T)."""

    turn: Tensor
    """Long: the model turn each action token belongs to (0, 1, ...); -1 elsewhere."""
    value: Tensor
    """Each action token's turn return, G_k = r_k + turn_discount * G_{k+1} (the last
    turn's G the episode's final reward); NaN elsewhere and where there is no reward."""


def per_turn_grpo_advantages(
    returns: TurnReturns, group_size: int, scale_by_std: bool = True, eps: float = 1e-6
) -> Tensor:
    """GRPO per turn: turn k's tokens get `grpo_advantages` of the turn-k returns G_k,
    compared with the same group's episodes that reached turn k (the others are left out
    of that turn's mean and std, as NaN scores are). Turn-level credit as in MT-GRPO
    (Zeng et al. 2025, "Reinforcing multi-turn reasoning in LLM agents via turn-level
    credit assignment"), with the return's discount in place of their turn-reward weight.

    With one turn per episode it is `grpo_advantages` on every token. With a discount
    below 1, a first answer that needed a retry to succeed earns less than a right first
    answer (G_0 = discount * 1 against 1), which an episode-level advantage cannot tell
    apart. Shapes: (B, T) -> (B, T).

        >>> turn = torch.tensor([[0, 0, -1, 1], [0, -1, -1, -1]])
        >>> value = torch.tensor([[0.5, 0.5, float("nan"), 1.0], [1.0] + [float("nan")] * 3])
        >>> per_turn_grpo_advantages(TurnReturns(turn, value), 2, scale_by_std=False)
        tensor([[-0.2500, -0.2500,  0.0000,  0.0000],
                [ 0.2500,  0.0000,  0.0000,  0.0000]])
    """
    advantages = torch.zeros_like(returns.value)
    turns = int(returns.turn.max()) + 1 if returns.turn.numel() else 0
    for k in range(turns):
        at_k = returns.turn == k
        count = at_k.sum(-1)
        total = torch.where(at_k, returns.value, 0.0).sum(-1)
        g_k = torch.where(count > 0, total / count.clamp(min=1), torch.nan)
        advantages += at_k * grpo_advantages(g_k, group_size, scale_by_std, eps).unsqueeze(-1)
    return advantages


def rloo_advantages(scores: Tensor, group_size: int) -> Tensor:
    """REINFORCE leave-one-out (Kool et al. 2019; Ahmadian et al. 2024):
    A_i = s_i - mean_{j != i} s_j = (k / (k - 1)) * (s_i - mean(group)).

    The baseline averages the *valid* other members: NaN scores are left out, get advantage
    0, and a group with fewer than two valid members has no baseline (advantage 0).
    Shapes: scores (B,) -> (B,). Needs group_size >= 2.
    """
    if group_size < 2:
        raise ValueError("RLOO needs group_size >= 2: the baseline is the other samples")
    grouped, valid, count = _valid_groups(scores, group_size)
    others = (count - 1).clamp(min=1)
    baseline = (grouped.sum(-1, keepdim=True) - grouped) / others
    return torch.where((valid > 0) & (count > 1), grouped - baseline, 0.0).reshape(-1)


def discounted_returns(rewards: Tensor, mask: Tensor, gamma: float) -> Tensor:
    """G_t = sum_{s >= t} gamma^(s - t) r_s over the policy's tokens (masked tokens between
    them, such as observations, are skipped, not counted as steps). Shapes: (B, T) -> (B, T).
    """
    returns = torch.zeros_like(rewards)
    running = torch.zeros_like(rewards[:, 0])
    for t in reversed(range(rewards.shape[1])):
        real = mask[:, t] > 0
        running = torch.where(real, rewards[:, t] + gamma * running, running)
        returns[:, t] = torch.where(real, running, 0.0)
    return returns


def reinforce_pp_advantages(token_rewards: Tensor, mask: Tensor, gamma: float = 1.0) -> Tensor:
    """REINFORCE++ (Hu 2025): the return-to-go of the KL-penalised token rewards, whitened
    over the whole batch (no critic, no group baseline). `mask` is the loss mask: rows
    without a reward are left out of the whitening statistics.

    Shapes: token_rewards, mask (B, T) -> (B, T).
    """
    return masked_whiten(discounted_returns(token_rewards, mask, gamma), mask)


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
