"""From a scored rollout batch to parameter updates: advantages, then PPO epochs.

Every rank holds the whole gathered batch, so advantages (group statistics, whitening)
are computed identically everywhere. Each optimiser step takes one global minibatch;
each rank runs forward and backward on its contiguous share of it, in chunks of
`micro_batch_size` rows (gradient accumulation). The loss is the sum over the share's
tokens divided by the token count of the *global* minibatch, times the world size (DDP's
all-reduce and FSDP's reduce-scatter average gradients over ranks), so the gradient equals
that of one process on the whole minibatch, however it is chunked. Logged statistics are
token sums all-reduced over the ranks before dividing, so they too are the whole
minibatch's, whatever the process count.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import torch
from torch import Tensor, nn

from rewardsmith.trainer import advantages as adv
from rewardsmith.trainer import losses
from rewardsmith.trainer.config import TrainConfig
from rewardsmith.trainer.rollout import Rollout
from rewardsmith.trainer.sharding import to_local

__all__ = ["Targets", "compute_targets", "update"]

SumAcrossRanks = Callable[[Tensor], Tensor]


@dataclass
class Targets:
    """What the update regresses on. Shapes (B, T)."""

    advantages: Tensor
    returns: Tensor
    loss_mask: Tensor
    """The action mask minus rows without a reward and (optionally) truncated rows."""


def compute_targets(
    cfg: TrainConfig,
    batch: Rollout,
    scores: Tensor,
    kl_coef: float,
    turn_rewards: Tensor | None = None,
    turn_returns: adv.TurnReturns | None = None,
) -> Targets:
    """Advantages for the configured algorithm. `scores` (B,) may hold NaN for no reward:
    such rows are out of the loss, of group baselines and of batch whitening.
    `turn_rewards` (B, T), token-level algorithms only: earlier turns' rewards at their
    turns' last tokens (`losses.place_turn_rewards`), credited besides the final score.
    `turn_returns`, grpo only: each turn's return, for advantages per turn
    (`advantages.per_turn_grpo_advantages`) in place of one per sequence."""
    if turn_rewards is not None and cfg.algorithm not in ("ppo", "reinforce_pp"):
        raise ValueError(f"per-turn rewards need ppo or reinforce_pp, not {cfg.algorithm}")
    if turn_returns is not None and cfg.algorithm != "grpo":
        raise ValueError(f"per-turn returns are grpo's, not {cfg.algorithm}'s")
    valid = ~torch.isnan(scores)
    keep = valid.float()
    if cfg.mask_truncated:
        keep = keep * (1.0 - batch.truncated)
    loss_mask = batch.action_mask * keep.unsqueeze(-1)
    returns = torch.zeros_like(loss_mask)
    if cfg.algorithm in ("ppo", "reinforce_pp"):
        kl = losses.kl_penalty(batch.old_logprobs, batch.ref_logprobs, cfg.reward_kl_estimator)
        rewards = losses.token_rewards(
            torch.nan_to_num(scores), kl, kl_coef, loss_mask, placed=turn_rewards
        )
        if cfg.algorithm == "reinforce_pp":
            advantages = adv.reinforce_pp_advantages(rewards, loss_mask, cfg.gamma)
        else:
            if cfg.whiten_rewards:
                rewards = losses.masked_whiten(rewards, loss_mask, shift_mean=False)
            advantages, returns = losses.gae(
                rewards, batch.values, loss_mask, cfg.gamma, cfg.gae_lambda
            )
            if cfg.whiten_advantages:
                advantages = losses.masked_whiten(advantages, loss_mask)
    elif cfg.algorithm == "grpo" and turn_returns is not None:
        advantages = adv.per_turn_grpo_advantages(turn_returns, cfg.group_size, cfg.scale_by_std)
    elif cfg.algorithm == "grpo":
        per_seq = adv.grpo_advantages(scores, cfg.group_size, cfg.scale_by_std)
        advantages = per_seq.unsqueeze(-1) * loss_mask
    else:
        advantages = adv.rloo_advantages(scores, cfg.group_size).unsqueeze(-1) * loss_mask
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
    sum_across_ranks: SumAcrossRanks = lambda t: t,
) -> dict[str, float]:
    """`ppo_epochs` passes of global minibatches over the batch; returns mean statistics."""
    stats: dict[str, list[float]] = {}
    size = batch.action_mask.shape[0]
    # The optimiser's own list: under FSDP, model.parameters() can name the unsharded views
    # between a forward and its backward, whose gradients are not the ones stepped.
    params = [p for group in optimizer.param_groups for p in group["params"]]
    for epoch in range(cfg.ppo_epochs):
        gen = torch.Generator().manual_seed(cfg.seed * 7_919 + step * 101 + epoch)
        order = torch.randperm(size, generator=gen)
        for start in range(0, size, cfg.minibatch_size):
            rows = order[start : start + cfg.minibatch_size]
            share = rows.chunk(world_size)[rank] if world_size > 1 else rows
            total_tokens = targets.loss_mask[rows].sum().clamp(min=1.0)
            optimizer.zero_grad(set_to_none=True)
            sums: dict[str, Tensor] = {}
            chunks = list(_chunks(share, cfg.micro_batch_size))
            for i, chunk in enumerate(chunks):
                with _gradient_sync(model, last=i == len(chunks) - 1):
                    loss, parts = _minibatch_loss(cfg, model, batch, targets, chunk, kl_coef)
                    (loss * world_size / total_tokens).backward()
                for name, value in parts.items():
                    sums[name] = sums.get(name, torch.zeros(())) + value
            norm = nn.utils.clip_grad_norm_(params, cfg.max_grad_norm)
            optimizer.step()
            for name, mean in _global_means(sums, total_tokens, sum_across_ranks).items():
                stats.setdefault(name, []).append(mean)
            stats.setdefault("grad_norm", []).append(float(to_local(norm)))  # FSDP: a DTensor
    return {name: sum(values) / len(values) for name, values in stats.items()}


def _chunks(rows: Tensor, size: int | None) -> Iterator[Tensor]:
    """`rows` in pieces of `size` (one piece when None); an empty share gives one piece."""
    if size is None or rows.numel() <= size:
        yield rows
        return
    yield from rows.split(size)


def _gradient_sync(model: nn.Module, last: bool) -> contextlib.AbstractContextManager[None]:
    """Skip the gradient all-reduce (DDP) or reduce-scatter (FSDP) until the last chunk."""
    no_sync = getattr(model, "no_sync", None)
    if no_sync is not None:
        return contextlib.nullcontext() if last else no_sync()
    set_sync = getattr(model, "set_requires_gradient_sync", None)  # FSDP2
    if set_sync is not None:
        set_sync(last)
    return contextlib.nullcontext()


def _global_means(
    sums: dict[str, Tensor], total_tokens: Tensor, sum_across_ranks: SumAcrossRanks
) -> dict[str, float]:
    """Token sums from every rank, over the global minibatch's token count."""
    names = sorted(sums)
    totals = sum_across_ranks(torch.stack([sums[n].detach().float().cpu() for n in names]))
    return {n: float(v) / float(total_tokens) for n, v in zip(names, totals, strict=True)}


def _minibatch_loss(
    cfg: TrainConfig,
    model: nn.Module,
    batch: Rollout,
    targets: Targets,
    rows: Tensor,
    kl_coef: float,
) -> tuple[Tensor, dict[str, Tensor]]:
    """The summed per-token loss of these rows, and the token sums of its statistics."""
    rows = rows.to(batch.input_ids.device)
    mask = targets.loss_mask[rows]
    n_response = mask.shape[1]
    logits, values = model(
        batch.input_ids[rows], batch.attention_mask[rows], n_response, cfg.temperature
    )
    logprobs = losses.logprobs_from_logits(logits, batch.input_ids[rows, -n_response:])
    old = batch.old_logprobs[rows]
    policy, clipped = losses.clipped_policy_loss(
        logprobs, old, targets.advantages[rows], mask, cfg.clip_coef
    )
    entropy = losses.entropy_from_logits(logits)
    del logits
    per_token = policy - cfg.ent_coef * entropy
    parts = {"loss/policy": policy, "policy/clipfrac": clipped, "policy/entropy": entropy}
    if cfg.kl_in_loss and kl_coef > 0:
        kl = losses.kl_loss(logprobs, old, batch.ref_logprobs[rows], mask)
        per_token = per_token + kl_coef * kl
        parts["loss/kl"] = kl
    if values is not None:
        vloss, vclipped = losses.clipped_value_loss(
            values, batch.values[rows], targets.returns[rows], mask, cfg.value_clip
        )
        per_token = per_token + cfg.vf_coef * vloss
        parts.update({"loss/value": vloss, "value/clipfrac": vclipped})
    with torch.no_grad():
        parts["policy/approx_kl"] = 0.5 * (logprobs - old) ** 2  # Schulman 2020, k2
        summary = {k: losses.masked_sum(v.detach(), mask) for k, v in parts.items()}
    return losses.masked_sum(per_token, mask), summary
