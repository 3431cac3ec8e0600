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

A `loss_mask` (B, T) is explicit in every loss: 1.0 on tokens the policy sampled, 0.0 on
padding, on dropped rows and on the observation tokens of a multi-turn episode. Masked
entries of a loss are exactly 0 and carry no gradient, whatever the inputs hold there.

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
    "kl_loss",
    "kl_penalty",
    "logprobs_from_logits",
    "masked_mean",
    "masked_sum",
    "masked_whiten",
    "place_turn_rewards",
    "token_rewards",
]

KLEstimator = Literal["k1", "k3"]


def masked_sum(x: Tensor, mask: Tensor) -> Tensor:
    """Sum of `x` where `mask` is 1. Shapes: x, mask (B, T) -> scalar."""
    return _masked(x, mask).sum()


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
    """Per-token estimate of KL(pi || pi_ref) from tokens sampled from pi, as a *value*
    (for a KL penalty in the reward, and for logging).

    With r = log pi_ref(x) - log pi(x):
        k1 = -r                      unbiased, can be negative, high variance;
        k3 = exp(r) - r - 1          unbiased, always >= 0, low variance (Schulman 2020).
    Neither is a correct *loss* on its own: differentiated, k1 has zero expected gradient
    and k3's expected gradient is that of KL(pi_ref || pi). Put the KL in the loss with
    `kl_loss`. Shapes: (B, T) -> (B, T).
    """
    log_ratio = ref_logprobs - logprobs
    if estimator == "k1":
        return -log_ratio
    if estimator == "k3":
        return torch.exp(log_ratio) - log_ratio - 1.0
    raise ValueError(f"unknown KL estimator {estimator!r}: use 'k1' or 'k3'")


def kl_loss(
    logprobs: Tensor, old_logprobs: Tensor, ref_logprobs: Tensor, loss_mask: Tensor
) -> Tensor:
    """The KL term of a loss (GRPO, RLOO): k3 weighted by the importance ratio, per token,

        rho = exp(log pi - log pi_old),   loss_t = rho_t * k3_t

    Over tokens sampled from pi_old, E[rho * k3] = E_pi[k3] = KL(pi || pi_ref) as a function
    of the parameters, so its gradient is the true gradient of the KL, on-policy and after
    earlier minibatch updates alike. Without rho, k3's expected gradient is
    grad KL(pi_ref || pi) (DeepSeekMath's form), and k1's is zero. Tested on a 3-way
    categorical in tests/trainer/test_kl_gradient.py. Shapes: (B, T) each -> (B, T),
    0 where `loss_mask` is 0.
    """
    logprobs, old_logprobs, ref_logprobs = _inputs(loss_mask, logprobs, old_logprobs, ref_logprobs)
    ratio = torch.exp(logprobs - old_logprobs.detach())
    per_token = ratio * kl_penalty(logprobs, ref_logprobs.detach(), "k3")
    return _masked(per_token, loss_mask)


def token_rewards(
    scores: Tensor, kl: Tensor, kl_coef: float, mask: Tensor, placed: Tensor | None = None
) -> Tensor:
    """The per-token reward of RLHF PPO (Ziegler et al. 2019): r_t = -beta * kl_t on the
    policy's tokens, and the sequence's score added at its last policy token.

    `placed` (B, T), optional: rewards already at their tokens (a multi-turn episode's
    earlier turns, each at the last token of its action; see `place_turn_rewards`), added
    where the mask is on. Shapes: scores (B,), kl (B, T), mask (B, T) -> (B, T). A row with
    an empty mask gets no score (there is no token to credit).
    """
    rewards = _masked(-kl_coef * kl, mask)
    if placed is not None:
        rewards = rewards + _masked(torch.nan_to_num(placed), mask)
    columns = torch.arange(mask.shape[1], device=mask.device).expand_as(mask)
    last = torch.where(mask > 0, columns, -1).max(-1).values
    has_tokens = (last >= 0).to(rewards.dtype)
    rows = torch.arange(rewards.shape[0], device=rewards.device)
    rewards[rows, last.clamp(min=0)] += scores * has_tokens
    return rewards


def place_turn_rewards(rewards: Tensor, ends: Tensor, width: int) -> Tensor:
    """Each turn's reward at the last token of that turn's action, as a (B, T) tensor.

    `rewards` (B, K): turn k's reward (NaN: none); `ends` (B, K) long: the response column
    of turn k's last action token (-1: no such turn, or a turn that sampled nothing). Turns
    without a reward or a token add nothing.

        >>> place_turn_rewards(torch.tensor([[0.5, 1.0]]), torch.tensor([[1, 4]]), 6)
        tensor([[0.0000, 0.5000, 0.0000, 0.0000, 1.0000, 0.0000]])
    """
    placed = torch.zeros((rewards.shape[0], width), dtype=rewards.dtype, device=rewards.device)
    real = (ends >= 0) & ~torch.isnan(rewards)
    rows = torch.arange(rewards.shape[0], device=rewards.device).unsqueeze(-1).expand_as(ends)
    placed.index_put_((rows[real], ends[real]), rewards[real], accumulate=True)
    return placed


def gae(
    rewards: Tensor, values: Tensor, mask: Tensor, gamma: float, lam: float
) -> tuple[Tensor, Tensor]:
    """Generalised advantage estimation (Schulman et al. 2016) over the policy's tokens.

        delta_t = r_t + gamma * V_{t'} - V_t         (t' the next policy token; V after the
        A_t     = delta_t + gamma * lam * A_{t'}      last one is 0)
        R_t     = A_t + V_t                          (the value target)

    Masked tokens (padding, observations between turns) are skipped, not treated as the
    end: the recursion runs from one policy token to the next across them. Shapes: rewards,
    values, mask (B, T) -> advantages (B, T), returns (B, T); both 0 on masked tokens.
    """
    advantages = torch.zeros_like(rewards)
    running = torch.zeros_like(rewards[:, 0])
    next_value = torch.zeros_like(rewards[:, 0])
    for t in reversed(range(rewards.shape[1])):
        real = mask[:, t] > 0
        delta = rewards[:, t] + gamma * next_value - values[:, t]
        running = torch.where(real, delta + gamma * lam * running, running)
        advantages[:, t] = torch.where(real, running, 0.0)
        next_value = torch.where(real, values[:, t], next_value)
    return advantages, _masked(advantages + values, mask)


def clipped_policy_loss(
    logprobs: Tensor, old_logprobs: Tensor, advantages: Tensor, loss_mask: Tensor, clip: float
) -> tuple[Tensor, Tensor]:
    """The PPO clipped surrogate, per token (Schulman et al. 2017, eq. 7), as a loss:

        ratio = exp(log pi - log pi_old)
        loss  = max(-A * ratio, -A * clip(ratio, 1 - eps, 1 + eps))

    Shapes: (B, T) each -> loss (B, T), clipped (B, T) (1.0 where the clip was active);
    both 0 where `loss_mask` is 0.
    """
    logprobs, old_logprobs, advantages = _inputs(loss_mask, logprobs, old_logprobs, advantages)
    ratio = torch.exp(logprobs - old_logprobs)
    unclipped = -advantages * ratio
    clipped = -advantages * torch.clamp(ratio, 1.0 - clip, 1.0 + clip)
    loss = _masked(torch.maximum(unclipped, clipped), loss_mask)
    return loss, _masked((clipped > unclipped).to(logprobs.dtype), loss_mask)


def clipped_value_loss(
    values: Tensor, old_values: Tensor, returns: Tensor, loss_mask: Tensor, clip: float
) -> tuple[Tensor, Tensor]:
    """The clipped value loss of PPO implementations (OpenAI baselines), per token:

        V_clip = V_old + clip(V - V_old, -eps, eps)
        loss   = 0.5 * max((V - R)^2, (V_clip - R)^2)

    Shapes: (B, T) each -> loss (B, T), clipped (B, T); both 0 where `loss_mask` is 0.
    """
    values, old_values, returns = _inputs(loss_mask, values, old_values, returns)
    v_clipped = old_values + torch.clamp(values - old_values, -clip, clip)
    unclipped = (values - returns) ** 2
    clipped = (v_clipped - returns) ** 2
    loss = _masked(0.5 * torch.maximum(unclipped, clipped), loss_mask)
    return loss, _masked((clipped > unclipped).to(values.dtype), loss_mask)


def _masked(x: Tensor, mask: Tensor) -> Tensor:
    """`x` where `mask` is set, else exactly 0 (no NaN or gradient leaks from masked entries)."""
    return torch.where(mask > 0, x, torch.zeros_like(x))


def _inputs(mask: Tensor, *tensors: Tensor) -> tuple[Tensor, ...]:
    """Inputs zeroed where masked *before* any arithmetic: a NaN or inf there would
    otherwise reach the gradient (0 x NaN) through the branch `torch.where` discards."""
    return tuple(_masked(t, mask) for t in tensors)
