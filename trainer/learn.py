"""From a scored rollout batch to parameter updates: advantages, then PPO epochs.

Every rank holds the whole gathered batch, so advantages (group statistics, whitening)
are computed identically everywhere. Each optimiser step takes one global minibatch;
each rank runs forward and backward on its contiguous share of it. The loss is the sum
over the share's tokens divided by the token count of the *global* minibatch, times the
world size (DDP's all-reduce and FSDP's reduce-scatter average gradients over ranks), so
the gradient equals that of one process on the whole minibatch.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import Tensor, nn

from rewardsmith.trainer import advantages as adv
from rewardsmith.trainer import losses
from rewardsmith.trainer.config import TrainConfig
from rewardsmith.trainer.rollout import Rollout
from rewardsmith.trainer.sharding import to_local

__all__ = ["Targets", "compute_targets", "update"]


@dataclass
class Targets:
    """What the update regresses on. Shapes (B, T)."""

    advantages: Tensor
    returns: Tensor
    loss_mask: Tensor
    """response mask minus rows without a reward and (optionally) truncated rows."""


def compute_targets(cfg: TrainConfig, batch: Rollout, scores: Tensor, kl_coef: float) -> Targets:
    """Advantages for the configured algorithm. `scores` (B,) may hold NaN for no reward."""
    scores, valid = adv.fill_invalid_scores(scores, cfg.group_size)
    keep = valid.float()
    if cfg.mask_truncated:
        keep = keep * (1.0 - batch.truncated)
    mask = batch.response_mask
    loss_mask = mask * keep.unsqueeze(-1)
    returns = torch.zeros_like(mask)
    if cfg.algorithm in ("ppo", "reinforce_pp"):
        kl = losses.kl_penalty(batch.old_logprobs, batch.ref_logprobs, cfg.kl_estimator)
        rewards = losses.token_rewards(scores, kl, kl_coef, mask)
        if cfg.algorithm == "reinforce_pp":
            advantages = adv.reinforce_pp_advantages(rewards, mask, cfg.gamma)
        else:
            if cfg.whiten_rewards:
                rewards = losses.masked_whiten(rewards, mask, shift_mean=False)
            advantages, returns = losses.gae(rewards, batch.values, mask, cfg.gamma, cfg.gae_lambda)
            if cfg.whiten_advantages:
                advantages = losses.masked_whiten(advantages, loss_mask)
    elif cfg.algorithm == "grpo":
        per_seq = adv.grpo_advantages(scores, cfg.group_size, cfg.scale_by_std)
        advantages = per_seq.unsqueeze(-1) * mask
    else:
        advantages = adv.rloo_advantages(scores, cfg.group_size).unsqueeze(-1) * mask
    return Targets(advantages * loss_mask, returns, loss_mask)


def update(
    cfg: TrainConfig,
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    batch: Rollout,
    targets: Targets,
    kl_coef: float,
    rank: int,
    world_size: int,
    step: int,
) -> dict[str, float]:
    """`ppo_epochs` passes of global minibatches over the batch; returns mean statistics."""
    stats: dict[str, list[float]] = {}
    n_response = batch.response_mask.shape[1]
    size = batch.response_mask.shape[0]
    for epoch in range(cfg.ppo_epochs):
        gen = torch.Generator().manual_seed(cfg.seed * 7_919 + step * 101 + epoch)
        order = torch.randperm(size, generator=gen)
        for start in range(0, size, cfg.minibatch_size):
            rows = order[start : start + cfg.minibatch_size]
            share = rows.chunk(world_size)[rank] if world_size > 1 else rows
            total_tokens = targets.loss_mask[rows].sum().clamp(min=1.0)
            loss, parts = _minibatch_loss(cfg, model, batch, targets, share, n_response, kl_coef)
            optimizer.zero_grad(set_to_none=True)
            (loss * world_size / total_tokens).backward()
            norm = nn.utils.clip_grad_norm_(model.parameters(), cfg.max_grad_norm)
            optimizer.step()
            parts["grad_norm"] = float(to_local(norm))  # FSDP: a DTensor
            for name, value in parts.items():
                stats.setdefault(name, []).append(value)
    return {name: sum(values) / len(values) for name, values in stats.items()}


def _minibatch_loss(
    cfg: TrainConfig,
    model: nn.Module,
    batch: Rollout,
    targets: Targets,
    share: Tensor,
    n_response: int,
    kl_coef: float,
) -> tuple[Tensor, dict[str, float]]:
    """The summed per-token loss of this rank's share, and its (local) statistics."""
    device = batch.input_ids.device
    share = share.to(device)
    mask = targets.loss_mask[share]
    logits, values = model(
        batch.input_ids[share], batch.attention_mask[share], n_response, cfg.temperature
    )
    logprobs = losses.logprobs_from_logits(logits, batch.input_ids[share, -n_response:])
    policy, clipped = losses.clipped_policy_loss(
        logprobs, batch.old_logprobs[share], targets.advantages[share], cfg.clip_coef
    )
    entropy = losses.entropy_from_logits(logits)
    per_token = policy - cfg.ent_coef * entropy
    parts = {"loss/policy": policy, "policy/clipfrac": clipped, "policy/entropy": entropy}
    if cfg.algorithm in ("grpo", "rloo") and kl_coef > 0:
        kl = losses.kl_penalty(logprobs, batch.ref_logprobs[share], cfg.kl_estimator)
        per_token = per_token + kl_coef * kl
        parts["loss/kl"] = kl
    if values is not None:
        vloss, vclipped = losses.clipped_value_loss(
            values, batch.values[share], targets.returns[share], cfg.value_clip
        )
        per_token = per_token + cfg.vf_coef * vloss
        parts.update({"loss/value": vloss, "value/clipfrac": vclipped})
    with torch.no_grad():
        log_ratio = logprobs - batch.old_logprobs[share]
        parts["policy/approx_kl"] = 0.5 * log_ratio**2  # Schulman 2020, k2
        summary = {k: float(losses.masked_mean(v.detach(), mask)) for k, v in parts.items()}
    return losses.masked_sum(per_token, mask), summary
