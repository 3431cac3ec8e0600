"""The training loop, top to bottom.

    for step in steps:
        rollout k   = generate on every rank (already done when overlapping)
        rewards k   = reward plugin (in a background thread)
        rollout k+1 = generate while rewards k are computed          (overlap=True)
        gather rollout k and its rewards from all ranks
        targets     = advantages (GAE, GRPO, RLOO or REINFORCE++) on the whole batch
        update      = PPO epochs of clipped-loss minibatches, DDP-averaged
        log, adapt the KL coefficient, checkpoint

Run it with `train(config)` in one process, or under ``torchrun`` (see distributed.py).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any

import torch

from rewardsmith.trainer import checkpoint as ckpt
from rewardsmith.trainer import learn
from rewardsmith.trainer.advantages import AdaptiveKLController, FixedKLController
from rewardsmith.trainer.config import TrainConfig
from rewardsmith.trainer.data import Task, load_tasks, prompt_indices, rank_slice, sample_seed
from rewardsmith.trainer.distributed import (
    DistContext,
    all_gather_cat,
    init_distributed,
    shutdown,
)
from rewardsmith.trainer.metrics import MetricsLogger
from rewardsmith.trainer.models import Models, load_models
from rewardsmith.trainer.rewards import (
    RewardBatch,
    RewardPipeline,
    RewardSource,
    build_reward_source,
)
from rewardsmith.trainer.rollout import Rollout, gumbel_noise, sample_completions, score_tokens
from rewardsmith.verifiers.types import Sample

__all__ = ["TrainResult", "train"]

StepCallback = Callable[[int, dict[str, float]], None]


@dataclass
class TrainResult:
    """What a finished run leaves: the last step's metrics and where things are."""

    steps: int
    metrics: dict[str, float]
    output_dir: str


@dataclass
class Pending:
    """A generated rollout whose rewards are being computed."""

    step: int
    rollout: Rollout
    samples: list[Sample]
    rewards: Future[RewardBatch]
    gen_s: float


def train(
    cfg: TrainConfig, reward: RewardSource | None = None, on_step: StepCallback | None = None
) -> TrainResult:
    """Run PPO (or a critic-free variant) as `cfg` says; returns the final metrics."""
    ctx = init_distributed(cfg.device)
    torch.manual_seed(cfg.seed)
    tasks = load_tasks(cfg.prompts)
    models = load_models(cfg, ctx)
    optimizer = torch.optim.Adam(models.trainable.parameters(), lr=cfg.lr)
    kl = (
        AdaptiveKLController(cfg.kl_coef, cfg.kl_target, cfg.kl_horizon)
        if cfg.kl_target
        else FixedKLController(cfg.kl_coef)
    )
    source = reward or build_reward_source(
        cfg.reward, cfg.reward_spec, cfg.reward_executor, cfg.reward_workers, cfg.reward_timeout_s
    )
    pipeline = RewardPipeline(source)
    metrics: dict[str, float] = {}
    try:
        start, pending = _resume(cfg, ctx, models, optimizer, kl, pipeline)
        logger = MetricsLogger(cfg.output_dir, ctx.is_main, cfg.tensorboard, start)
        for step in range(start, cfg.steps):
            if pending is None:
                pending = _generate(cfg, ctx, models, tasks, step, pipeline)
            current, pending = pending, None
            if cfg.overlap and step + 1 < cfg.steps:
                pending = _generate(cfg, ctx, models, tasks, step + 1, pipeline)
            metrics = _learn(cfg, ctx, models, optimizer, kl, current, step)
            logger.log(step, metrics)
            if on_step is not None and ctx.is_main:
                on_step(step, metrics)
            last = step + 1 == cfg.steps
            if last or (cfg.checkpoint_every and (step + 1) % cfg.checkpoint_every == 0):
                _save(cfg, ctx, models, optimizer, kl, step + 1, pending)
        logger.close()
    finally:
        pipeline.close()
        if reward is None:  # we built it, so we stop its worker processes
            source.close()
        shutdown(ctx)
    return TrainResult(cfg.steps, metrics, cfg.output_dir)


def _generate(
    cfg: TrainConfig,
    ctx: DistContext,
    models: Models,
    tasks: list[Task],
    step: int,
    pipeline: RewardPipeline,
) -> Pending:
    """Sample this rank's share of step `step`, score its tokens, submit it for rewards."""
    t0 = time.perf_counter()
    picks = prompt_indices(len(tasks), step, cfg.prompts_per_step, cfg.seed)
    mine = rank_slice(cfg.global_batch, ctx.rank, ctx.world_size)
    rows = [tasks[picks[i // cfg.group_size]] for i in mine]
    tok = models.tokenizer
    enc = tok(
        [t.prompt for t in rows],
        padding="max_length",
        truncation=True,
        max_length=cfg.max_prompt_tokens,
        return_tensors="pt",
    )
    prompt_ids, prompt_mask = enc["input_ids"].to(ctx.device), enc["attention_mask"].to(ctx.device)
    noise = gumbel_noise(
        [sample_seed(cfg.seed, step, i) for i in mine], cfg.max_new_tokens, models.vocab_size
    )
    policy = models.policy_module
    completion, response_mask, truncated = sample_completions(
        policy.lm_forward,
        prompt_ids,
        prompt_mask,
        noise,
        cfg.temperature,
        tok.eos_token_id,
        tok.pad_token_id,
    )
    input_ids = torch.cat([prompt_ids, completion], dim=-1)
    attention = torch.cat([prompt_mask, response_mask.long()], dim=-1)
    old_logprobs, values = score_tokens(
        policy, input_ids, attention, cfg.max_new_tokens, cfg.temperature
    )
    ref_logprobs = torch.zeros_like(old_logprobs)
    if models.reference is not None:
        ref_logprobs, _ = score_tokens(
            models.reference, input_ids, attention, cfg.max_new_tokens, cfg.temperature
        )
    rollout = Rollout(
        input_ids,
        attention,
        response_mask,
        truncated.float(),
        old_logprobs,
        ref_logprobs,
        torch.zeros_like(old_logprobs) if values is None else values,
    )
    texts = tok.batch_decode(completion.tolist(), skip_special_tokens=True)
    samples = [
        Sample(
            id=f"{step}-{i}",
            prompt=task.prompt,
            completion=text,
            reference=task.reference,
            task=task.task,
            meta={"task_id": task.id},
        )
        for i, task, text in zip(mine, rows, texts, strict=True)
    ]
    return Pending(step, rollout, samples, pipeline.submit(samples), time.perf_counter() - t0)


def _learn(
    cfg: TrainConfig,
    ctx: DistContext,
    models: Models,
    optimizer: torch.optim.Optimizer,
    kl: FixedKLController | AdaptiveKLController,
    current: Pending,
    step: int,
) -> dict[str, float]:
    """Wait for the rewards, gather the batch from all ranks and update the policy."""
    t0 = time.perf_counter()
    rewards = current.rewards.result()
    wait_s = time.perf_counter() - t0
    local = _reward_tensor(rewards, ctx.device)
    batch = current.rollout.map(lambda t: all_gather_cat(t, ctx))
    scores = all_gather_cat(local, ctx)
    targets = learn.compute_targets(cfg, batch, scores[:, 0], kl.value)
    t1 = time.perf_counter()
    stats = learn.update(
        cfg, models.trainable, optimizer, batch, targets, kl.value, ctx.rank, ctx.world_size, step
    )
    seq_kl = 0.0  # KL(pi_old || pi_ref) per sequence (k1, summed over tokens); 0 with no reference
    if models.reference is not None:
        seq_kl = float(
            ((batch.old_logprobs - batch.ref_logprobs) * batch.response_mask).sum(-1).mean()
        )
    metrics = _step_metrics(cfg, batch, scores, rewards, stats, seq_kl, kl.value)
    metrics.update(
        {
            "time/generate_s": current.gen_s,
            "time/reward_wait_s": wait_s,
            "time/update_s": time.perf_counter() - t1,
        }
    )
    kl.update(seq_kl, cfg.global_batch)
    return metrics


def _reward_tensor(rewards: RewardBatch, device: torch.device) -> torch.Tensor:
    """Rewards and components as one (B, 1 + C) tensor, NaN where there is none."""
    columns = [rewards.values, *rewards.components.values()]
    return torch.tensor(
        [[math.nan if v is None else float(v) for v in col] for col in columns],
        dtype=torch.float32,
        device=device,
    ).T.contiguous()


def _step_metrics(
    cfg: TrainConfig,
    batch: Rollout,
    scores: torch.Tensor,
    rewards: RewardBatch,
    stats: dict[str, float],
    seq_kl: float,
    kl_coef: float,
) -> dict[str, float]:
    """Reward, every component, lengths and losses, averaged over the global batch."""
    out = {
        "reward/mean": _nanmean(scores[:, 0]),
        "reward/none_frac": float(torch.isnan(scores[:, 0]).float().mean()),
    }
    for j, name in enumerate(rewards.components, start=1):
        out[f"reward/{name}"] = _nanmean(scores[:, j])
    out.update(
        {
            "response/length": float(batch.response_mask.sum(-1).mean()),
            "response/truncated_frac": float(batch.truncated.mean()),
            "kl/seq": seq_kl,
            "kl/coef": kl_coef,
        }
    )
    out.update(stats)
    return out


def _nanmean(x: torch.Tensor) -> float:
    valid = x[~torch.isnan(x)]
    return float(valid.mean()) if valid.numel() else math.nan


def _save(
    cfg: TrainConfig,
    ctx: DistContext,
    models: Models,
    optimizer: torch.optim.Optimizer,
    kl: Any,
    step: int,
    pending: Pending | None,
) -> None:
    own: dict[str, Any] = {"rng": ckpt.rng_state(), "pending": None}
    if pending is not None:
        own["pending"] = {
            "step": pending.step,
            "rollout": pending.rollout.map(lambda t: t.cpu()),
            "samples": [s.model_dump() for s in pending.samples],
            "gen_s": pending.gen_s,
        }
    model_state = models.full_state()  # under FSDP, gathered: every rank takes part
    shared = {
        "model": model_state,
        "optimizer": models.optimizer_state(optimizer),
        "step": step,
        "kl_coef": kl.value,
        "config": cfg.to_dict(),
    }
    ckpt.save_checkpoint(cfg.output_dir, step, ctx.rank, shared, own, models.barrier)
    if ctx.is_main:
        lm_state = {k[3:]: v for k, v in model_state.items() if k.startswith("lm.")}
        models.policy_module.lm.save_pretrained(f"{cfg.output_dir}/model", state_dict=lm_state)
        models.tokenizer.save_pretrained(f"{cfg.output_dir}/model")


def _resume(
    cfg: TrainConfig,
    ctx: DistContext,
    models: Models,
    optimizer: torch.optim.Optimizer,
    kl: Any,
    pipeline: RewardPipeline,
) -> tuple[int, Pending | None]:
    folder = ckpt.latest_checkpoint(cfg.output_dir) if cfg.resume else None
    if folder is None:
        return 0, None
    shared, own = ckpt.load_state(folder), ckpt.load_rank_state(folder, ctx.rank)
    models.load_full_state(shared["model"])
    models.load_optimizer_state(optimizer, shared["optimizer"])
    kl.value = shared["kl_coef"]
    ckpt.set_rng_state(own["rng"])
    saved = own["pending"]
    if saved is None:
        return shared["step"], None
    samples = [Sample.model_validate(s) for s in saved["samples"]]
    rollout = saved["rollout"].map(lambda t: t.to(ctx.device))
    return shared["step"], Pending(
        saved["step"], rollout, samples, pipeline.submit(samples), saved["gen_s"]
    )
