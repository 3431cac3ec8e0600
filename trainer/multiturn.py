"""Multi-turn training: the single-turn trainer's models, targets and updates
(`learn.compute_targets`, `learn.update`) over episode rows (`trainer.turns`), on either
engine.

    for step k:
        episodes k  = run batch k to its end (carried from step k-1 when overlapping)
        batch k+1   = turn 0 generated with the weights of step k, first steps submitted
                      (reward_overlap=one_step, at the engine's first free moment)
        learn k     while batch k+1's environment steps run in the step pool
        push the new weights to the engine (vLLM), log, checkpoint (batch k+1 drained, saved)

With `reward_overlap: one_step` a slow environment step of batch k+1 (a sandboxed test
run, a Blender render) runs while step k learns, as a slow reward does in single-turn
training. Turn 0 of batch k+1 always comes from the weights before update k (the turns
after it from the updated ones), so the tokens do not depend on timing; its old log-probs
are computed with those weights before the update (`Episode.old_logprobs`), as the
single-turn trainer scores its one-step-stale batch when it is generated.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import Any

import torch

from rewardsmith.environments.protocol import Environment, resumable
from rewardsmith.trainer import checkpoint as ckpt
from rewardsmith.trainer import learn
from rewardsmith.trainer.advantages import FixedKLController, TurnReturns
from rewardsmith.trainer.collect import score_rollout
from rewardsmith.trainer.config import TrainConfig
from rewardsmith.trainer.data import prompt_indices, rank_slice, sample_seed
from rewardsmith.trainer.distributed import (
    DistContext,
    all_gather_cat,
    all_reduce_sum,
    init_distributed,
)
from rewardsmith.trainer.distributed import shutdown as shutdown_distributed
from rewardsmith.trainer.engine import Generation
from rewardsmith.trainer.loop import (
    RunState,
    TrainResult,
    build_engine,
    push_weights,
    resume_run,
    save_run,
)
from rewardsmith.trainer.losses import place_turn_rewards
from rewardsmith.trainer.metrics import MetricsLogger
from rewardsmith.trainer.models import Models, load_models
from rewardsmith.trainer.rollout import Rollout, pack_sequences, score_tokens
from rewardsmith.trainer.turns import (
    Batch,
    Episode,
    EpisodeRunner,
    Opening,
    TurnSettings,
    run_episodes,
    step_cost,
)

__all__ = [
    "Episode",
    "TurnSettings",
    "earlier_turn_rewards",
    "episode_rollout",
    "run_episodes",
    "step_cost",
    "train_multiturn",
    "turn_returns",
]


def episode_rollout(
    cfg: TrainConfig, models: Models, episodes: Sequence[Episode], device: torch.device
) -> Rollout:
    """Episodes as a `Rollout`: old, reference and engine log-probs, and the loss mask with
    the observation tokens out. Prompts are padded to `cfg.max_prompt_tokens` (the same
    width on every rank), responses to `cfg.max_new_tokens`. Old log-probs an episode
    already holds (`score_heads`) are kept: they are those of the weights that sampled."""
    contexts = _contexts(cfg, episodes)
    generation = Generation(
        [e.response_ids for e in episodes],
        [e.engine_logprobs for e in episodes],
        [not e.truncated for e in episodes],
    )
    rollout = score_rollout(cfg, models, contexts, generation, cfg.max_prompt_tokens, device)
    for row, e in enumerate(episodes):
        if e.old_logprobs:
            held = torch.tensor(e.old_logprobs, device=device)
            rollout.old_logprobs[row, : len(e.old_logprobs)] = held
    _, _, actions = pack_sequences(
        contexts,
        generation.token_ids,
        [e.action_mask for e in episodes],
        cfg.max_prompt_tokens,
        cfg.max_new_tokens,
        int(models.tokenizer.pad_token_id),
    )
    return replace(rollout, action_mask=actions.to(device))


def score_heads(
    cfg: TrainConfig, models: Models, episodes: Sequence[Episode], device: torch.device
) -> None:
    """Keep, in each episode's `old_logprobs`, the log-probs of what it has sampled so far
    under the policy now: called before an update comes between these tokens and the
    episode's end (reward overlap), so the PPO ratio is taken against the weights that
    sampled them, as for a single-turn batch generated one step ahead."""
    ids, attention, _ = pack_sequences(
        _contexts(cfg, episodes),
        [e.response_ids for e in episodes],
        None,
        cfg.max_prompt_tokens,
        cfg.max_new_tokens,
        int(models.tokenizer.pad_token_id),
    )
    old, _ = score_tokens(
        models.policy_module,
        ids.to(device),
        attention.to(device),
        cfg.max_new_tokens,
        cfg.temperature,
        cfg.micro_batch_size,
    )
    for row, e in enumerate(episodes):
        e.old_logprobs = old[row, : len(e.response_ids)].tolist()


def _contexts(cfg: TrainConfig, episodes: Sequence[Episode]) -> list[list[int]]:
    """The episodes' prompts, each checked to fit `max_prompt_tokens`."""
    for e in episodes:
        if len(e.prompt_ids) > cfg.max_prompt_tokens:
            raise ValueError(
                f"episode {e.state.task.get('id')!r}: its first observation is "
                f"{len(e.prompt_ids)} tokens, more than max_prompt_tokens={cfg.max_prompt_tokens}"
            )
    return [e.prompt_ids for e in episodes]


def train_multiturn(
    cfg: TrainConfig,
    env: Environment,
    tasks: Sequence[Mapping[str, Any]],
    settings: TurnSettings,
    on_step: Callable[[int, dict[str, float]], None] | None = None,
) -> TrainResult:
    """Train `cfg.model` on `env`'s episodes of `tasks` (GRPO, RLOO, REINFORCE++ or PPO
    over the final reward; with `turn_credit="per_turn"`, PPO and REINFORCE++ also credit
    each earlier turn's reward at the end of that turn, and GRPO gives each turn an
    advantage of its own from the turn's return, discounted by `turn_discount`), with
    either engine (`cfg.engine`) and `cfg.reward_overlap` (see the module doc).
    Checkpoints every `checkpoint_every` steps and at the end (with the batch carried to
    the next step), the policy in ``output_dir/model``, and `resume` as in single-turn
    training."""
    _check_resumable(cfg, env)
    ctx = init_distributed(cfg.device)
    torch.manual_seed(cfg.seed)
    models = load_models(cfg, ctx)
    optimizer = torch.optim.Adam(models.parameters_to_train(), lr=cfg.lr)
    state = RunState(FixedKLController(cfg.kl_coef))
    engine, pushes_weights = build_engine(cfg, models, ctx)
    runner = EpisodeRunner(
        engine, env, models.tokenizer, cfg.max_new_tokens, settings, cfg.temperature
    )
    metrics: dict[str, float] = {}
    try:
        start = resume_run(cfg, ctx, models, optimizer, state)
        if start and pushes_weights:
            engine.update_weights(models.lm_state())
        carried = _restored_batch(state, env, runner)
        logger = MetricsLogger(cfg.output_dir, ctx.is_main, cfg.tensorboard, start)
        for step in range(start, cfg.steps):
            t0 = time.perf_counter()
            batch = carried or runner.start(*_batch_of(cfg, ctx, tasks, step))
            episodes, carried = runner.finish(batch, _overlap(cfg, ctx, tasks, step))
            rollout = episode_rollout(cfg, models, episodes, ctx.device)
            if carried is not None:
                score_heads(cfg, models, carried.episodes, ctx.device)
            gen_s = time.perf_counter() - t0
            metrics = _learn(cfg, ctx, models, optimizer, state.kl.value, step, rollout, episodes)
            metrics["time/rollout_s"] = gen_s
            if pushes_weights:
                metrics["time/weight_sync_s"] = push_weights(engine, models)
            logger.log(step, metrics)
            if on_step is not None and ctx.is_main:
                on_step(step, metrics)
            if step + 1 == cfg.steps or (
                cfg.checkpoint_every and (step + 1) % cfg.checkpoint_every == 0
            ):
                _checkpoint(cfg, ctx, models, optimizer, state, step + 1, runner, carried)
        logger.close()
    finally:
        runner.close()
        engine.close()
        shutdown_distributed(ctx)
    return TrainResult(cfg.steps, metrics, cfg.output_dir)


def _batch_of(
    cfg: TrainConfig, ctx: DistContext, tasks: Sequence[Mapping[str, Any]], step: int
) -> tuple[list[Mapping[str, Any]], list[int]]:
    """This rank's tasks of step `step`, and their episodes' seeds."""
    picks = prompt_indices(len(tasks), step, cfg.prompts_per_step, cfg.seed)
    mine = rank_slice(cfg.global_batch, ctx.rank, ctx.world_size)
    chosen = [tasks[picks[i // cfg.group_size]] for i in mine]
    return chosen, [sample_seed(cfg.seed, step, i) for i in mine]


def _overlap(
    cfg: TrainConfig,
    ctx: DistContext,
    tasks: Sequence[Mapping[str, Any]],
    step: int,
) -> Opening | None:
    """With reward overlap, the batch step `step` opens for the next (none after the last)."""
    if cfg.reward_overlap != "one_step" or step + 1 >= cfg.steps:
        return None
    return _batch_of(cfg, ctx, tasks, step + 1)


def _checkpoint(
    cfg: TrainConfig,
    ctx: DistContext,
    models: Models,
    optimizer: torch.optim.Optimizer,
    state: RunState,
    step: int,
    runner: EpisodeRunner,
    carried: Batch | None,
) -> None:
    """`save_run`, with the carried batch's running steps drained and recorded first, so
    the rank's checkpoint holds its episodes whole (states, tokens, rewards)."""
    if carried is not None:
        runner.drain(carried)
    state.episodes = None if carried is None else [e.to_dict() for e in carried.episodes]
    save_run(cfg, ctx, models, optimizer, state, step)
    state.episodes = None


def _check_resumable(cfg: TrainConfig, env: Environment) -> None:
    if cfg.resume and cfg.reward_overlap == "one_step" and not resumable(env):
        raise ValueError(
            f"environment {env.name!r} keeps part of an episode outside its state "
            "(resumable = False), so the batch reward overlap carries across a checkpoint "
            "cannot be resumed: train and resume it with reward_overlap: off"
        )


def _restored_batch(state: RunState, env: Environment, runner: EpisodeRunner) -> Batch | None:
    """The batch a checkpoint carried to its next step, its episodes ready for a turn."""
    saved, state.episodes = state.episodes, None
    if saved is None:
        return None
    if not resumable(env):
        raise ckpt.CheckpointError(
            f"the checkpoint carries episodes of {env.name!r}, which keeps part of an "
            "episode outside its state (resumable = False): they cannot continue after a "
            "restart. Train it with reward_overlap: off to checkpoint and resume"
        )
    return runner.resume([Episode.from_dict(e) for e in saved])


def _learn(
    cfg: TrainConfig,
    ctx: DistContext,
    models: Models,
    optimizer: torch.optim.Optimizer,
    kl_coef: float,
    step: int,
    rollout: Rollout,
    episodes: Sequence[Episode],
) -> dict[str, float]:
    local = torch.tensor([_episode_stats(e) for e in episodes], device=ctx.device)
    batch = rollout.map(lambda t: all_gather_cat(t, ctx))
    stats = all_gather_cat(local, ctx)
    placed = returns = None
    if cfg.turn_credit == "per_turn" and cfg.algorithm == "grpo":
        mine = turn_returns(episodes, cfg.max_new_tokens, cfg.turn_discount, ctx.device)
        returns = TurnReturns(all_gather_cat(mine.turn, ctx), all_gather_cat(mine.value, ctx))
    elif cfg.turn_credit == "per_turn":
        placed = all_gather_cat(earlier_turn_rewards(episodes, cfg.max_new_tokens, ctx.device), ctx)
    targets = learn.compute_targets(
        cfg, batch, stats[:, 0], kl_coef, turn_rewards=placed, turn_returns=returns
    )
    losses = learn.update(
        cfg,
        models.trainable,
        optimizer,
        batch,
        targets,
        kl_coef,
        ctx.rank,
        ctx.world_size,
        step,
        lambda t: all_reduce_sum(t, ctx),
    )
    observed = (batch.attention_mask[:, -cfg.max_new_tokens :] > 0) & (batch.action_mask == 0)
    tokens = batch.action_mask.sum().clamp(min=1.0)
    gap = ((batch.engine_logprobs - batch.old_logprobs).abs() * batch.action_mask).sum() / tokens
    out = {
        "reward/final": _nanmean(stats[:, 0]),
        "reward/first_turn": _nanmean(stats[:, 1]),
        "episode/turns": float(stats[:, 2].mean()),
        "episode/truncated_frac": float(batch.truncated.mean()),
        "response/action_tokens": float(batch.action_mask.sum(-1).mean()),
        "response/observation_tokens": float(observed.sum(-1).float().mean()),
        "rollout/engine_logprob_gap": float(gap),
    }
    out.update(losses)
    return out


def earlier_turn_rewards(
    episodes: Sequence[Episode], width: int, device: torch.device
) -> torch.Tensor:
    """Every turn's reward but the last, at the last token of that turn's action (B, width).

    The last turn's credit is the episode's final reward, which `compute_targets` places at
    the last action token as in single-turn training; a truncated episode's final reward
    comes from the truncation, not from its last step."""
    turns = max((len(e.turn_ends) for e in episodes), default=0)
    rewards = torch.full((len(episodes), max(turns - 1, 0)), math.nan)
    ends = torch.full(rewards.shape, -1, dtype=torch.long)
    for row, episode in enumerate(episodes):
        for turn in range(len(episode.turn_ends) - 1):
            value = episode.turn_rewards[turn] if turn < len(episode.turn_rewards) else None
            rewards[row, turn] = math.nan if value is None else float(value)
            ends[row, turn] = episode.turn_ends[turn]
    return place_turn_rewards(rewards, ends, width).to(device)


def turn_returns(
    episodes: Sequence[Episode], width: int, discount: float, device: torch.device
) -> TurnReturns:
    """Each action token's turn, and that turn's return G_k = r_k + discount * G_{k+1}:
    r_k the step's reward (none: 0), the last turn's G the final reward (NaN: none, and the
    row is out of the loss), as `earlier_turn_rewards` credits them. Shapes (B, width)."""
    turn = torch.full((len(episodes), width), -1, dtype=torch.long)
    value = torch.full((len(episodes), width), math.nan)
    for row, episode in enumerate(episodes):
        start, ret = 0, math.nan
        returns = [math.nan] * len(episode.turn_ends)
        for k in reversed(range(len(episode.turn_ends))):
            last = k == len(episode.turn_ends) - 1
            reward = episode.turn_rewards[k] if k < len(episode.turn_rewards) else None
            ret = episode.final_value if last else (reward or 0.0) + discount * ret
            returns[k] = ret
        for k, end in enumerate(episode.turn_ends):
            if end < 0:
                continue
            actions = torch.tensor(episode.action_mask[start : end + 1], dtype=torch.bool)
            turn[row, start : end + 1][actions] = k
            value[row, start : end + 1][actions] = returns[k]
            start = end + 1
    return TurnReturns(turn.to(device), value.to(device))


def _episode_stats(episode: Episode) -> list[float]:
    """Final reward, first step's reward (the final one for a one-turn episode), turns."""
    first = episode.turn_rewards[0] if episode.turn_rewards else None
    if first is None:
        first = episode.final_value
    return [episode.final_value, math.nan if first is None else float(first), episode.state.turn]


def _nanmean(x: torch.Tensor) -> float:
    valid = x[~torch.isnan(x)]
    return float(valid.mean()) if valid.numel() else math.nan
