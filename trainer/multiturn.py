"""Multi-turn rollouts: the policy acts, an `Environment` answers, and both go in one row.

    episodes = reset every task
    while some episode is live:
        generate one turn for every live episode (one engine batch, contexts of any length)
        step each live episode's environment on its decoded action (threads: a sandboxed
            test run waits on its jail, not on the GIL)
        append the action tokens (loss mask 1) and the observation tokens (loss mask 0)

An episode's row is its prompt, then every action and observation in order. The loss
mask is 1 only on tokens the policy sampled, so observation tokens are context the policy
attends to and never trains on: every loss and the KL take the mask (trainer/losses.py).
Episodes of different lengths share one batch (right-padded); GRPO groups are the
`group_size` episodes of one task. An episode that would pass the row's width
(`max_new_tokens`, all turns and observations together) is ended by the environment's
`truncate`, scored as it stands, and marked truncated.

    >>> settings = TurnSettings(turn_tokens=3)
    >>> settings.seed_for(episode_seed=11, turn=0) != settings.seed_for(episode_seed=11, turn=1)
    True

`train_multiturn` is the loop: the single-turn trainer's models, targets and updates
(`learn.compute_targets`, `learn.update`) over episode rows, on the HF engine.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field, replace
from typing import Any

import torch

from rewardsmith.environments.protocol import Environment, EpisodeState, Transition
from rewardsmith.graders import Reward
from rewardsmith.trainer import learn
from rewardsmith.trainer.advantages import FixedKLController
from rewardsmith.trainer.chat import ChatRenderer, new_messages
from rewardsmith.trainer.collect import score_rollout
from rewardsmith.trainer.config import TrainConfig
from rewardsmith.trainer.data import prompt_indices, rank_slice, sample_seed
from rewardsmith.trainer.distributed import all_gather_cat, all_reduce_sum, init_distributed
from rewardsmith.trainer.distributed import shutdown as shutdown_distributed
from rewardsmith.trainer.engine import Generation, RolloutEngine, SamplingParams
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
from rewardsmith.trainer.rollout import Rollout, pack_sequences

__all__ = [
    "Episode",
    "TurnSettings",
    "earlier_turn_rewards",
    "episode_rollout",
    "run_episodes",
    "step_cost",
    "train_multiturn",
]

Render = Callable[[str], str]


@dataclass(frozen=True)
class TurnSettings:
    """How a multi-turn rollout samples; the row width is the config's `max_new_tokens`."""

    turn_tokens: int
    """New tokens per model turn at most."""
    render_observation: Render | None = None
    """Observation text -> the text whose tokens are appended (a chat template's tool
    turn, a newline around it); None: the observation as it is."""
    step_threads: int = 8
    """Environment steps run at once (each episode's step is independent)."""
    chat_template: bool = False
    """Render the prompt and every observation with the tokenizer's chat template (the
    environment's messages, its tools as schemas; see `trainer.chat`), as a chat model
    sees them in production. `render_observation` is then not used."""

    def render(self, observation: str) -> str:
        return (
            observation if self.render_observation is None else self.render_observation(observation)
        )

    def seed_for(self, episode_seed: int, turn: int) -> int:
        """Turn t of an episode has its own seed: layout-independent, like single-turn."""
        return episode_seed * 1_000_037 + turn


@dataclass
class Episode:
    """One episode as the trainer sees it: its token row and what the environment said."""

    state: EpisodeState
    prompt_ids: list[int]
    seed: int
    response_ids: list[int] = field(default_factory=list)
    action_mask: list[int] = field(default_factory=list)
    """1 on tokens the policy sampled, 0 on observation tokens."""
    engine_logprobs: list[float] = field(default_factory=list)
    turn_rewards: list[float | None] = field(default_factory=list)
    """Each step's reward value (None where the step had no reward)."""
    turn_ends: list[int] = field(default_factory=list)
    """Per model turn, the response index of its last sampled token (-1: it sampled none)."""
    final: Reward | None = None
    truncated: bool = False
    """The row's width, not the environment, ended it."""

    @property
    def done(self) -> bool:
        return self.state.done

    @property
    def final_value(self) -> float:
        value = None if self.final is None else self.final.value
        return math.nan if value is None else float(value)


def run_episodes(
    engine: RolloutEngine,
    env: Environment,
    tasks: Sequence[Mapping[str, Any]],
    tokenizer: Any,
    seeds: Sequence[int],
    width: int,
    settings: TurnSettings,
    temperature: float = 1.0,
) -> list[Episode]:
    """Roll every task through `env` with `engine`; rows fit in `width` response tokens.

    No barrier per turn: the engine generates the next turn of every episode whose step
    has come back while slower steps are still running, and the steps of a batch start
    expensive first (`step_cost`). Turn t of an episode samples with its own seed, so the
    episodes are the same whatever the order steps finish in."""
    chat = ChatRenderer.for_environment(env, tokenizer) if settings.chat_template else None
    stops = (int(tokenizer.eos_token_id),)
    with ThreadPoolExecutor(settings.step_threads) as pool:
        starts = list(pool.map(env.reset, tasks))
        episodes = [
            Episode(
                state,
                chat.prompt_ids(state.messages) if chat else _encode(tokenizer, prompt),
                seed,
            )
            for (state, prompt), seed in zip(starts, seeds, strict=True)
        ]
        ready = [e for e in episodes if not e.done]
        stepping: dict[Future[Transition], tuple[Episode, list[int], bool]] = {}
        while ready or stepping:
            if ready:
                sampling = SamplingParams(
                    settings.turn_tokens,
                    temperature,
                    tuple(settings.seed_for(e.seed, len(e.turn_ends)) for e in ready),
                    stops,
                )
                contexts = [e.prompt_ids + e.response_ids for e in ready]
                generation = engine.generate(contexts, sampling)
                actions = [_take_action(e, generation, row, width) for row, e in enumerate(ready)]
                texts = tokenizer.batch_decode([a for a, _ in actions], skip_special_tokens=True)
                jobs = sorted(
                    zip(ready, texts, actions, strict=True),
                    key=lambda job: -step_cost(env, job[0].state),
                )
                for episode, text, (action, cut) in jobs:
                    future = pool.submit(env.step, episode.state, text, len(action))
                    stepping[future] = (episode, action, cut)
                ready = []
            finished, _ = wait(stepping, return_when=FIRST_COMPLETED)
            for future in finished:
                episode, action, cut = stepping.pop(future)
                transition = future.result()
                observed = _observation_ids(tokenizer, chat, settings, episode, transition, action)
                _record(env, episode, transition, observed, cut, width)
                if not episode.done:
                    ready.append(episode)
    return episodes


def step_cost(env: Environment, state: EpisodeState) -> float:
    """The environment's estimate of what its next step on `state` costs (larger first),
    from its optional ``step_cost(state)``; 0 when it gives none."""
    estimate = getattr(env, "step_cost", None)
    return float(estimate(state)) if callable(estimate) else 0.0


def _take_action(
    episode: Episode, generation: Generation, row: int, width: int
) -> tuple[list[int], bool]:
    """Append the row's sampled tokens (cut to the room left); True when they were cut."""
    room = width - len(episode.response_ids)
    tokens = generation.token_ids[row][:room]
    episode.response_ids += tokens
    episode.turn_ends.append(len(episode.response_ids) - 1 if tokens else -1)
    episode.action_mask += [1] * len(tokens)
    episode.engine_logprobs += generation.logprobs[row][:room]
    return tokens, len(generation.token_ids[row]) > room


def _observation_ids(
    tokenizer: Any,
    chat: ChatRenderer | None,
    settings: TurnSettings,
    episode: Episode,
    transition: Transition,
    action: list[int],
) -> list[int]:
    """The tokens of what the environment said after this action ([] when it ended)."""
    if transition.done:
        return []
    if chat is None:
        return _encode(tokenizer, settings.render(transition.observation or ""))
    said = new_messages(episode.state.messages, transition.state.messages) or [
        {"role": "user", "content": transition.observation or ""}
    ]
    return chat.observation_ids(said, ended=chat.ends_turn(action))


def _record(
    env: Environment,
    episode: Episode,
    transition: Transition,
    observed: list[int],
    cut: bool,
    width: int,
) -> None:
    """Keep the step's outcome; append the observation, or end the episode that has no room."""
    episode.turn_rewards.append(None if transition.reward is None else transition.reward.value)
    if not transition.done:
        if cut or len(episode.response_ids) + len(observed) >= width:
            transition = env.truncate(transition.state, "token_budget")
            episode.truncated = True
        else:
            episode.response_ids += observed
            episode.action_mask += [0] * len(observed)
            episode.engine_logprobs += [0.0] * len(observed)
    episode.state = transition.state
    if transition.done:
        episode.final = transition.reward


def _encode(tokenizer: Any, text: str) -> list[int]:
    return list(tokenizer(text, add_special_tokens=False)["input_ids"])


def episode_rollout(
    cfg: TrainConfig, models: Models, episodes: Sequence[Episode], device: torch.device
) -> Rollout:
    """Episodes as a `Rollout`: old, reference and engine log-probs, and the loss mask with
    the observation tokens out. Prompts are padded to `cfg.max_prompt_tokens` (the same
    width on every rank), responses to `cfg.max_new_tokens`."""
    contexts = [e.prompt_ids for e in episodes]
    for e in episodes:
        if len(e.prompt_ids) > cfg.max_prompt_tokens:
            raise ValueError(
                f"episode {e.state.task.get('id')!r}: its first observation is "
                f"{len(e.prompt_ids)} tokens, more than max_prompt_tokens={cfg.max_prompt_tokens}"
            )
    generation = Generation(
        [e.response_ids for e in episodes],
        [e.engine_logprobs for e in episodes],
        [not e.truncated for e in episodes],
    )
    rollout = score_rollout(cfg, models, contexts, generation, cfg.max_prompt_tokens, device)
    _, _, actions = pack_sequences(
        contexts,
        generation.token_ids,
        [e.action_mask for e in episodes],
        cfg.max_prompt_tokens,
        cfg.max_new_tokens,
        int(models.tokenizer.pad_token_id),
    )
    return replace(rollout, action_mask=actions.to(device))


def train_multiturn(
    cfg: TrainConfig,
    env: Environment,
    tasks: Sequence[Mapping[str, Any]],
    settings: TurnSettings,
    on_step: Callable[[int, dict[str, float]], None] | None = None,
) -> TrainResult:
    """Train `cfg.model` on `env`'s episodes of `tasks` (GRPO, RLOO, REINFORCE++ or PPO
    over the final reward; with `turn_credit="per_turn"`, PPO and REINFORCE++ also credit
    each earlier turn's reward at the end of that turn). Checkpoints every
    `checkpoint_every` steps and at the end, the policy in ``output_dir/model``, and
    `resume` as in single-turn training. The HF engine only; no reward overlap."""
    ctx = init_distributed(cfg.device)
    torch.manual_seed(cfg.seed)
    models = load_models(cfg, ctx)
    optimizer = torch.optim.Adam(models.parameters_to_train(), lr=cfg.lr)
    state = RunState(FixedKLController(cfg.kl_coef))
    engine, pushes_weights = build_engine(cfg, models, ctx)
    metrics: dict[str, float] = {}
    try:
        start = resume_run(cfg, ctx, models, optimizer, state)
        logger = MetricsLogger(cfg.output_dir, ctx.is_main, cfg.tensorboard, start)
        for step in range(start, cfg.steps):
            t0 = time.perf_counter()
            picks = prompt_indices(len(tasks), step, cfg.prompts_per_step, cfg.seed)
            mine = rank_slice(cfg.global_batch, ctx.rank, ctx.world_size)
            chosen = [tasks[picks[i // cfg.group_size]] for i in mine]
            seeds = [sample_seed(cfg.seed, step, i) for i in mine]
            episodes = run_episodes(
                engine,
                env,
                chosen,
                models.tokenizer,
                seeds,
                cfg.max_new_tokens,
                settings,
                cfg.temperature,
            )
            rollout = episode_rollout(cfg, models, episodes, ctx.device)
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
                save_run(cfg, ctx, models, optimizer, state, step + 1)
        logger.close()
    finally:
        engine.close()
        shutdown_distributed(ctx)
    return TrainResult(cfg.steps, metrics, cfg.output_dir)


def _learn(
    cfg: TrainConfig,
    ctx: Any,
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
    placed = None
    if cfg.turn_credit == "per_turn":
        placed = all_gather_cat(earlier_turn_rewards(episodes, cfg.max_new_tokens, ctx.device), ctx)
    targets = learn.compute_targets(cfg, batch, stats[:, 0], kl_coef, turn_rewards=placed)
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


def _episode_stats(episode: Episode) -> list[float]:
    """Final reward, first step's reward (the final one for a one-turn episode), turns."""
    first = episode.turn_rewards[0] if episode.turn_rewards else None
    if first is None:
        first = episode.final_value
    return [episode.final_value, math.nan if first is None else float(first), episode.state.turn]


def _nanmean(x: torch.Tensor) -> float:
    valid = x[~torch.isnan(x)]
    return float(valid.mean()) if valid.numel() else math.nan
