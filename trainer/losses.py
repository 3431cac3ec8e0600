"""The PPO math as small pure tensor functions.

Shapes: `B` is the number of sequences, `T` the number of completion tokens (padded). A
`mask` is 1.0 on tokens that count and 0.0 on padding (and on completions the trainer
chose to drop). Every function is pure: no module state, no distributed calls, so each is
tested against values worked out by hand.

References:
    Schulman et al. 2016, "High-Dimensional Continuous Control Using Generalized Advantage
    Estimation" (GAE). Schulman et al. 2017, "Proximal Policy Optimization Algorithms"
    (clipped objective). Ziegler et al. 2019, "Fine-Tuning Language Models from Human
    Preferences" (per-token KL penalty). Schulman 2020, "Approximating KL Divergence"
    (the k1 and k3 estimators).

    >>> import torch
    >>> lp, ref = torch.tensor([[-1.0, -2.0]]), torch.tensor([[-1.5, -3.0]])
    >>> kl_penalty(lp, ref, "k1")
    tensor([[0.5000, 1.0000]])
"""

from __future__ import annotations

from typing import Literal

import torch
from torch import Tensor

__all__ = [
    "clipped_policy_loss",
    "clipped_value_loss",
    "entropy_from_logits",
    "gae",
    "kl_penalty",
    "logprobs_from_logits",
    "masked_mean",
    "masked_sum",
    "masked_whiten",
    "token_rewards",
]

KLEstimator = Literal["k1", "k3"]


def masked_sum(x: Tensor, mask: Tensor) -> Tensor:
    """Sum of `x` where `mask` is 1. Shapes: x, mask (B, T) -> scalar."""
    return (x * mask).sum()


def masked_mean(x: Tensor, mask: Tensor) -> Tensor:
    """Mean of `x` over tokens where `mask` is 1 (0 when the mask is empty)."""
    return masked_sum(x, mask) / mask.sum().clamp(min=1.0)


def masked_whiten(x: Tensor, mask: Tensor, shift_mean: bool = True, eps: float = 1e-8) -> Tensor:
    """(x - mean) / std over the masked tokens; masked-out entries come back as 0.

    With `shift_mean=False` only the scale changes (the mean is added back), as is usual
    for rewards, whose sign carries meaning. The variance is the unbiased one (n - 1).
    Shapes: x, mask (B, T) -> (B, T).
    """
    mean = masked_mean(x, mask)
    n = mask.sum()
    var = masked_sum((x - mean) ** 2, mask) / (n - 1).clamp(min=1.0)
    whitened = (x - mean) * torch.rsqrt(var + eps)
    if not shift_mean:
        whitened = whitened + mean
    return whitened * mask


def logprobs_from_logits(logits: Tensor, tokens: Tensor) -> Tensor:
    """log pi(token | context) for each token. Shapes: logits (B, T, V), tokens (B, T) -> (B, T)."""
    logp = torch.log_softmax(logits.float(), dim=-1)
    return logp.gather(-1, tokens.unsqueeze(-1)).squeeze(-1)


def entropy_from_logits(logits: Tensor) -> Tensor:
    """H = -sum_v p_v log p_v at each position. Shapes: (B, T, V) -> (B, T)."""
    logp = torch.log_softmax(logits.float(), dim=-1)
    return -(logp.exp() * logp).sum(-1)


def kl_penalty(logprobs: Tensor, ref_logprobs: Tensor, estimator: KLEstimator = "k1") -> Tensor:
    """Per-token estimate of KL(pi || pi_ref) from tokens sampled from pi.

    With r = log pi_ref(x) - log pi(x):
        k1 = -r                      unbiased, can be negative, high variance;
        k3 = exp(r) - r - 1          unbiased, always >= 0, low variance (Schulman 2020).
    Shapes: (B, T) -> (B, T).
    """
    log_ratio = ref_logprobs - logprobs
    if estimator == "k1":
        return -log_ratio
    if estimator == "k3":
        return torch.exp(log_ratio) - log_ratio - 1.0
    raise ValueError(f"unknown KL estimator {estimator!r}: use 'k1' or 'k3'")


def token_rewards(scores: Tensor, kl: Tensor, kl_coef: float, mask: Tensor) -> Tensor:
    """The per-token reward of RLHF PPO (Ziegler et al. 2019): r_t = -beta * kl_t, and the
    sequence's score added at its last real token.

    Shapes: scores (B,), kl (B, T), mask (B, T) -> (B, T). A row with an empty mask gets
    no score (there is no token to credit).
    """
    rewards = -kl_coef * kl * mask
    lengths = mask.sum(-1).long()
    last = (lengths - 1).clamp(min=0)
    has_tokens = (lengths > 0).to(rewards.dtype)
    rows = torch.arange(rewards.shape[0])
    rewards[rows, last] += scores * has_tokens
    return rewards


def gae(
    rewards: Tensor, values: Tensor, mask: Tensor, gamma: float, lam: float
) -> tuple[Tensor, Tensor]:
    """Generalised advantage estimation (Schulman et al. 2016).

        delta_t = r_t + gamma * V_{t+1} - V_t        (V past the last real token is 0)
        A_t     = delta_t + gamma * lam * A_{t+1}
        R_t     = A_t + V_t                          (the value target)

    Shapes: rewards, values, mask (B, T) -> advantages (B, T), returns (B, T); both 0 on
    masked tokens. Masked tokens must come after the real ones (right padding).
    """
    values = values * mask
    advantages = torch.zeros_like(rewards)
    running = torch.zeros_like(rewards[:, 0])
    next_value = torch.zeros_like(rewards[:, 0])
    for t in reversed(range(rewards.shape[1])):
        m = mask[:, t]
        delta = rewards[:, t] + gamma * next_value - values[:, t]
        running = (delta + gamma * lam * running) * m
        advantages[:, t] = running
        next_value = values[:, t]
    return advantages, (advantages + values) * mask


def clipped_policy_loss(
    logprobs: Tensor, old_logprobs: Tensor, advantages: Tensor, clip: float
) -> tuple[Tensor, Tensor]:
    """The PPO clipped surrogate, per token (Schulman et al. 2017, eq. 7), as a loss:

        ratio = exp(log pi - log pi_old)
        loss  = max(-A * ratio, -A * clip(ratio, 1 - eps, 1 + eps))

    Shapes: (B, T) each -> loss (B, T), clipped (B, T) (1.0 where the clip was active).
    """
    ratio = torch.exp(logprobs - old_logprobs)
    unclipped = -advantages * ratio
    clipped = -advantages * torch.clamp(ratio, 1.0 - clip, 1.0 + clip)
    return torch.maximum(unclipped, clipped), (clipped > unclipped).to(logprobs.dtype)


def clipped_value_loss(
    values: Tensor, old_values: Tensor, returns: Tensor, clip: float
) -> tuple[Tensor, Tensor]:
    """The clipped value loss of PPO implementations (OpenAI baselines), per token:

        V_clip = V_old + clip(V - V_old, -eps, eps)
        loss   = 0.5 * max((V - R)^2, (V_clip - R)^2)

    Shapes: (B, T) each -> loss (B, T), clipped (B, T).
    """
    v_clipped = old_values + torch.clamp(values - old_values, -clip, clip)
    unclipped = (values - returns) ** 2
    clipped = (v_clipped - returns) ** 2
    return 0.5 * torch.maximum(unclipped, clipped), (clipped > unclipped).to(values.dtype)
