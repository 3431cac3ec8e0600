"""The training loop, top to bottom.

    for step in steps:
        rollout k   = generate on every rank with the engine (already done when overlapping)
        rewards k   = reward plugin (in a background thread; retried, or the step skipped)
        rollout k+1 = generate while rewards k are computed          (reward_overlap=one_step)
        gather rollout k and its rewards from all ranks
        targets     = advantages (GAE, GRPO, RLOO or REINFORCE++) on the whole batch
        update      = PPO epochs of clipped-loss minibatches, DDP-averaged
        push the new weights to the engine (vLLM), log, adapt the KL coefficient, checkpoint

Run it with `train(config)` in one process, or under ``torchrun`` (see distributed.py).
"""

from __future__ import annotations

import logging
import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeAlias

import torch

from rewardsmith.trainer import checkpoint as ckpt
from rewardsmith.trainer import learn
from rewardsmith.trainer.advantages import AdaptiveKLController, FixedKLController
from rewardsmith.trainer.collect import Pending, collect
from rewardsmith.trainer.config import TrainConfig
from rewardsmith.trainer.data import encode_prompts, load_tasks
from rewardsmith.trainer.distributed import (
    DistContext,
    all_gather_cat,
    all_reduce_sum,
    init_distributed,
    shutdown,
)
from rewardsmith.trainer.engine import RolloutEngine
from rewardsmith.trainer.hf_engine import HFEngine
from rewardsmith.trainer.metrics import MetricsLogger
from rewardsmith.trainer.models import Models, load_models
from rewardsmith.trainer.reward_guard import DeadlineSource, await_rewards
from rewardsmith.trainer.rewards import (
    RewardBatch,
    RewardPipeline,
    RewardSource,
    build_reward_source,
)
from rewardsmith.trainer.rollout import Rollout
from rewardsmith.verifiers.types import Sample

__all__ = ["TrainResult", "train"]

StepCallback = Callable[[int, dict[str, float]], None]
KLController: TypeAlias = AdaptiveKLController | FixedKLController
log = logging.getLogger("rewardsmith.trainer")


@dataclass
class TrainResult:
    """What a finished run leaves: the last step's metrics and where things are."""

    steps: int
    metrics: dict[str, float]
    output_dir: str


@dataclass
class RunState:
    """What the loop carries from step to step besides the models (all checkpointed)."""

    kl: KLController
    skipped_batches: int = 0
    pending: Pending | None = None
    episodes: list[dict[str, Any]] | None = None
    """Multi-turn with reward overlap: the batch begun for the next step, as
    `Episode.to_dict` rows (saved where a single-turn run saves its pending batch)."""


def train(
    cfg: TrainConfig, reward: RewardSource | None = None, on_step: StepCallback | None = None
) -> TrainResult:
    """Run PPO (or a critic-free variant) as `cfg` says; returns the final metrics."""
    ctx = init_distributed(cfg.device)
    torch.manual_seed(cfg.seed)
    tasks = load_tasks(cfg.prompts)
    models = load_models(cfg, ctx)
    prompts = encode_prompts(tasks, models.tokenizer, cfg.max_prompt_tokens, cfg.prompt_truncation)
    optimizer = torch.optim.Adam(models.parameters_to_train(), lr=cfg.lr)
    state = RunState(_kl_controller(cfg))
    source = reward or build_reward_source(
        cfg.reward, cfg.reward_spec, cfg.reward_executor, cfg.reward_workers, cfg.reward_timeout_s
    )
    guard = DeadlineSource(source, cfg.reward_batch_timeout_s)
    pipeline = RewardPipeline(guard)
    engine, pushes_weights = build_engine(cfg, models, ctx)
    metrics: dict[str, float] = {}
    try:
        start = resume_run(cfg, ctx, models, optimizer, state, guard.load_state, pipeline)
        if start and pushes_weights:
            engine.update_weights(models.lm_state())
        logger = MetricsLogger(cfg.output_dir, ctx.is_main, cfg.tensorboard, start)

        def generate(step: int) -> Pending:
            return collect(cfg, ctx, models, engine, tasks, prompts, step, pipeline)

        for step in range(start, cfg.steps):
            current = state.pending or generate(step)
            state.pending = None
            if cfg.reward_overlap == "one_step" and step + 1 < cfg.steps:
                state.pending = generate(step + 1)
            metrics = _step(cfg, ctx, models, optimizer, state, current, pipeline)
            if pushes_weights and "skipped" not in metrics:
                metrics["time/weight_sync_s"] = push_weights(engine, models)
            logger.log(step, metrics)
            if on_step is not None and ctx.is_main:
                on_step(step, metrics)
            last = step + 1 == cfg.steps
            if last or (cfg.checkpoint_every and (step + 1) % cfg.checkpoint_every == 0):
                # The reward's state (this rank's running normalisation) as of the last batch
                # trained on: the pending batch, already scored, is scored again on resume.
                reward_state = guard.state_through(step)
                save_run(cfg, ctx, models, optimizer, state, step + 1, reward_state)
        logger.close()
    finally:
        engine.close()
        pipeline.close()
        if reward is None:  # we built it, so we stop its worker processes
            source.close()
        shutdown(ctx)
    return TrainResult(cfg.steps, metrics, cfg.output_dir)


def _kl_controller(cfg: TrainConfig) -> KLController:
    if cfg.kl_target:
        return AdaptiveKLController(cfg.kl_coef, cfg.kl_target, cfg.kl_horizon)
    return FixedKLController(cfg.kl_coef)


def build_engine(cfg: TrainConfig, models: Models, ctx: DistContext) -> tuple[RolloutEngine, bool]:
    """The configured engine, and whether it needs the weights pushed after each update
    (the HF engine samples with the live policy module itself)."""
    if cfg.engine == "hf":
        policy = models.policy_module
        pad = int(models.tokenizer.pad_token_id)
        return HFEngine(policy.lm, pad, forward=policy.lm_forward), False
    from rewardsmith.trainer.vllm_engine import VLLMEngine

    dtype = cfg.dtype if cfg.vllm_dtype == "auto" else cfg.vllm_dtype
    engine = VLLMEngine(
        cfg.model,
        dtype=dtype,
        max_model_len=cfg.max_prompt_tokens + cfg.max_new_tokens,
        kv_cache_gb=cfg.vllm_kv_cache_gb,
        seed=cfg.seed + ctx.rank,
        python=cfg.vllm_python,
        threads=max(1, (os.cpu_count() or 1) // _ranks_on_this_node(ctx)),
        log_path=f"{cfg.output_dir}/vllm-rank{ctx.rank}.log",
    )
    if cfg.lora_rank:  # the server loaded the base; the adapters start at zero, but be exact
        engine.update_weights(models.lm_state())
    return engine, True


def _ranks_on_this_node(ctx: DistContext) -> int:
    """Each rank has its own vLLM server: they share the node's cores."""
    return int(os.environ.get("LOCAL_WORLD_SIZE", ctx.world_size))


def push_weights(engine: RolloutEngine, models: Models) -> float:
    """Send the policy's weights to an engine that samples from its own copy; seconds."""
    t0 = time.perf_counter()
    engine.update_weights(models.lm_state())  # under FSDP a collective: every rank calls it
    return time.perf_counter() - t0


def _step(
    cfg: TrainConfig,
    ctx: DistContext,
    models: Models,
    optimizer: torch.optim.Optimizer,
    state: RunState,
    current: Pending,
    pipeline: RewardPipeline,
) -> dict[str, float]:
    """Wait for the rewards (retrying a failed batch), then learn, or skip the step."""
    t0 = time.perf_counter()
    rewards, retries = await_rewards(
        current.rewards, current.samples, pipeline, cfg.reward_retries, current.step
    )
    failed = all_reduce_sum(torch.tensor([float(rewards is None), float(retries)]), ctx)
    wait_s = time.perf_counter() - t0
    if failed[0] > 0:  # every rank skips together, whichever rank's rewards failed
        state.skipped_batches += 1
        return {
            "skipped": 1.0,
            "reward/mean": math.nan,
            "reward/retries": float(failed[1]),
            "reward/skipped_batches": float(state.skipped_batches),
            "time/reward_wait_s": wait_s,
        }
    assert rewards is not None
    metrics = _learn(cfg, ctx, models, optimizer, state.kl, current, rewards)
    metrics.update(
        {
            "reward/retries": float(failed[1]),
            "reward/skipped_batches": float(state.skipped_batches),
            "prompt/truncated": float(current.prompts_cut),
            "time/generate_s": current.gen_s,
            "time/reward_wait_s": wait_s,
        }
    )
    return metrics


def _learn(
    cfg: TrainConfig,
    ctx: DistContext,
    models: Models,
    optimizer: torch.optim.Optimizer,
    kl: KLController,
    current: Pending,
    rewards: RewardBatch,
) -> dict[str, float]:
    """Gather the batch and its rewards from all ranks and update the policy."""
    local = _reward_tensor(rewards, ctx.device)
    batch = current.rollout.map(lambda t: all_gather_cat(t, ctx))
    scores = all_gather_cat(local, ctx)
    targets = learn.compute_targets(cfg, batch, scores[:, 0], kl.value)
    t1 = time.perf_counter()
    stats = learn.update(
        cfg,
        models.trainable,
        optimizer,
        batch,
        targets,
        kl.value,
        ctx.rank,
        ctx.world_size,
        current.step,
        lambda t: all_reduce_sum(t, ctx),
    )
    seq_kl = 0.0  # KL(pi_old || pi_ref) per sequence (k1, summed over tokens); 0 with no reference
    if models.reference is not None:
        seq_kl = float(
            ((batch.old_logprobs - batch.ref_logprobs) * batch.action_mask).sum(-1).mean()
        )
    metrics = _step_metrics(batch, scores, rewards, stats, seq_kl, kl.value)
    metrics["time/update_s"] = time.perf_counter() - t1
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
    tokens = batch.action_mask.sum().clamp(min=1.0)
    gap = ((batch.engine_logprobs - batch.old_logprobs).abs() * batch.action_mask).sum() / tokens
    out.update(
        {
            "response/length": float(batch.action_mask.sum(-1).mean()),
            "response/truncated_frac": float(batch.truncated.mean()),
            "rollout/engine_logprob_gap": float(gap),
            "kl/seq": seq_kl,
            "kl/coef": kl_coef,
        }
    )
    out.update(stats)
    return out


def _nanmean(x: torch.Tensor) -> float:
    valid = x[~torch.isnan(x)]
    return float(valid.mean()) if valid.numel() else math.nan


def save_run(
    cfg: TrainConfig,
    ctx: DistContext,
    models: Models,
    optimizer: torch.optim.Optimizer,
    state: RunState,
    step: int,
    reward_state: Any = None,
) -> None:
    """Checkpoint the run after `step` steps (every rank takes part), and write the
    policy as a Hugging Face model to ``output_dir/model``."""
    pending = state.pending
    own: dict[str, Any] = {"rng": ckpt.rng_state(), "pending": None, "reward": reward_state}
    if pending is not None:
        own["pending"] = {
            "step": pending.step,
            "rollout": pending.rollout.map(lambda t: t.cpu()),
            "samples": [s.model_dump() for s in pending.samples],
            "gen_s": pending.gen_s,
            "prompts_cut": pending.prompts_cut,
        }
    if state.episodes is not None:
        own["pending"] = {"step": step, "episodes": state.episodes}
    model_state = models.full_state()  # under FSDP, gathered: every rank takes part
    shared = {
        "model": model_state,
        "optimizer": models.optimizer_state(optimizer),
        "step": step,
        "kl_coef": state.kl.value,
        "skipped_batches": state.skipped_batches,
        "config": cfg.to_dict(),
    }
    ckpt.save_checkpoint(cfg.output_dir, step, ctx.rank, shared, own, models.barrier)
    if ctx.is_main:
        lm = models.policy_module.lm
        base = lm.get_base_model() if models.lora else lm
        base.save_pretrained(f"{cfg.output_dir}/model", state_dict=models.lm_state(model_state))
        models.tokenizer.save_pretrained(f"{cfg.output_dir}/model")


def resume_run(
    cfg: TrainConfig,
    ctx: DistContext,
    models: Models,
    optimizer: torch.optim.Optimizer,
    state: RunState,
    load_reward_state: Callable[[Any], None] | None = None,
    pipeline: RewardPipeline | None = None,
) -> int:
    """Load the newest intact checkpoint (every rank agreeing on which); returns its step
    (0 without `cfg.resume`). A saved pending batch needs the `pipeline` to rescore it."""
    if not cfg.resume:
        return 0
    problems = []
    for folder in ckpt.candidates(cfg.output_dir):
        try:
            shared = ckpt.load_state(folder)
            own = ckpt.load_rank_state(folder, ctx.rank)
            intact = 1.0
        except ckpt.CheckpointError as exc:
            log.warning("cannot resume from %s: %s; trying the one before", folder.name, exc)
            problems.append(str(exc))
            intact = 0.0
        if float(all_reduce_sum(torch.tensor([1.0 - intact]), ctx)[0]) == 0.0:
            if load_reward_state is not None:
                load_reward_state(own.get("reward"))
            return _restore(ctx, models, optimizer, state, pipeline, shared, own)
    if problems:
        raise ckpt.CheckpointError(
            "resume: no intact checkpoint in " + f"{cfg.output_dir}: " + "; ".join(problems)
        )
    return 0


def _restore(
    ctx: DistContext,
    models: Models,
    optimizer: torch.optim.Optimizer,
    state: RunState,
    pipeline: RewardPipeline | None,
    shared: dict[str, Any],
    own: dict[str, Any],
) -> int:
    models.load_full_state(shared["model"])
    models.load_optimizer_state(optimizer, shared["optimizer"])
    state.kl.value = shared["kl_coef"]
    state.skipped_batches = int(shared.get("skipped_batches", 0))
    ckpt.set_rng_state(own["rng"])
    saved = own["pending"]
    if saved is not None and "episodes" in saved:
        state.episodes = saved["episodes"]
    elif saved is not None:
        if pipeline is None:
            raise ckpt.CheckpointError(
                "the checkpoint holds a pending batch and no reward pipeline"
            )
        samples = [Sample.model_validate(s) for s in saved["samples"]]
        rollout = saved["rollout"].map(lambda t: t.to(ctx.device))
        state.pending = Pending(
            saved["step"],
            rollout,
            samples,
            pipeline.submit(samples, saved["step"]),
            saved["gen_s"],
            saved.get("prompts_cut", 0),
        )
    return int(shared["step"])
