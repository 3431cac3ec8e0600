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

An `EpisodeRunner` keeps its step pool from batch to batch, so a batch can be begun (turn 0
generated, its first steps running) while the previous one is still finishing, and carried
across a learning update: that is the trainer's reward overlap (`trainer.multiturn`).

    >>> settings = TurnSettings(turn_tokens=3)
    >>> settings.seed_for(episode_seed=11, turn=0) != settings.seed_for(episode_seed=11, turn=1)
    True
"""

from __future__ import annotations

import itertools
import math
import queue
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, wait
from dataclasses import dataclass, field
from typing import Any, TypeVar

from rewardsmith.environments.protocol import Environment, EpisodeState, Transition
from rewardsmith.graders import Reward
from rewardsmith.trainer.chat import ChatRenderer, new_messages
from rewardsmith.trainer.engine import Generation, RolloutEngine, SamplingParams

__all__ = [
    "Batch",
    "Episode",
    "EpisodeRunner",
    "StepPool",
    "TurnSettings",
    "run_episodes",
    "step_cost",
]

Render = Callable[[str], str]
T = TypeVar("T")


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
        """Turn t of an episode has its own seed: layout-independent, like single-turn.

        Turn 0 takes the episode's own seed, the one single-turn collection gives the same
        sample (`trainer.data.sample_seed`), so a one-turn environment trained by
        `train_multiturn` draws `train`'s tokens; later turns take seeds derived from it."""
        return episode_seed if turn == 0 else episode_seed * 1_000_037 + turn


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
    old_logprobs: list[float] = field(default_factory=list)
    """The old log-probs of the first response tokens when an update came between their
    sampling and the episode's end (reward overlap: turn 0 of the next batch), computed
    with the weights that sampled them; the trainer computes the rest at the end."""
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

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable form (a checkpoint keeps the batch carried over a step)."""
        return {
            "state": self.state.to_dict(),
            "prompt_ids": self.prompt_ids,
            "seed": self.seed,
            "response_ids": self.response_ids,
            "action_mask": self.action_mask,
            "engine_logprobs": self.engine_logprobs,
            "old_logprobs": self.old_logprobs,
            "turn_rewards": self.turn_rewards,
            "turn_ends": self.turn_ends,
            "final": None if self.final is None else self.final.to_dict(),
            "truncated": self.truncated,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Episode:
        final = data["final"]
        fields_ = {k: v for k, v in data.items() if k not in ("state", "final")}
        return cls(
            state=EpisodeState.from_dict(data["state"]),
            final=None if final is None else Reward.from_dict(final),
            **fields_,
        )


Step = tuple[Episode, list[int], bool]
"""A running environment step: its episode, the action's tokens, whether they were cut."""
Opening = tuple[Sequence[Mapping[str, Any]], Sequence[int]]
"""The tasks and episode seeds of a batch to open."""


@dataclass
class Batch:
    """Episodes on their way; those whose environment step is running are in `stepping`."""

    episodes: list[Episode]
    order: int = 0
    """Batches opened before this one; the step pool runs an older batch's work first."""
    stepping: dict[Future[Transition], Step] = field(default_factory=dict)

    def ready(self) -> list[Episode]:
        """Live episodes waiting for their next turn (none of their steps running)."""
        busy = {id(episode) for episode, _, _ in self.stepping.values()}
        return [e for e in self.episodes if not e.done and id(e) not in busy]


class StepPool:
    """Threads that run the queued call of the lowest priority first, in submission order
    among equals: the batch being finished steps before the one begun for the next step,
    so overlap fills idle threads and never delays the older batch."""

    def __init__(self, threads: int) -> None:
        self._queue: queue.PriorityQueue[tuple[int, int, Any]] = queue.PriorityQueue()
        self._order = itertools.count()
        self._threads = [threading.Thread(target=self._work, daemon=True) for _ in range(threads)]
        for thread in self._threads:
            thread.start()

    def submit(self, priority: int, fn: Callable[..., T], *args: Any) -> Future[T]:
        future: Future[T] = Future()
        self._queue.put((priority, next(self._order), (future, fn, args)))
        return future

    def shutdown(self) -> None:
        """Cancel the calls not started, wait for those running."""
        while True:
            try:
                job = self._queue.get_nowait()[2]
            except queue.Empty:
                break
            job[0].cancel()
        for _ in self._threads:
            self._queue.put((sys.maxsize, next(self._order), None))
        for thread in self._threads:
            thread.join()

    def _work(self) -> None:
        while (job := self._queue.get()[2]) is not None:
            future, fn, args = job
            if future.set_running_or_notify_cancel():
                try:
                    future.set_result(fn(*args))
                except BaseException as exc:  # the caller's `result()` raises it
                    future.set_exception(exc)


class EpisodeRunner:
    """Rolls batches of episodes through `env` with `engine`; rows fit in `width` response
    tokens. Its step pool outlives a batch: close it (or use it as a context manager).

    No barrier per turn: the engine generates the next turn of every episode whose step
    has come back while slower steps are still running, and the steps of a batch start
    expensive first (`step_cost`). Turn t of an episode samples with its own seed, so the
    episodes are the same whatever the order steps finish in."""

    def __init__(
        self,
        engine: RolloutEngine,
        env: Environment,
        tokenizer: Any,
        width: int,
        settings: TurnSettings,
        temperature: float = 1.0,
    ) -> None:
        self.engine, self.env, self.tokenizer = engine, env, tokenizer
        self.width, self.settings, self.temperature = width, settings, temperature
        self.chat = ChatRenderer.for_environment(env, tokenizer) if settings.chat_template else None
        self.stops = (int(tokenizer.eos_token_id),)
        self.pool = StepPool(settings.step_threads)
        self._opened_batches = itertools.count()

    def __enter__(self) -> EpisodeRunner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.pool.shutdown()

    def start(self, tasks: Sequence[Mapping[str, Any]], seeds: Sequence[int]) -> Batch:
        """Reset every task: a batch whose episodes wait for their first turn."""
        order = next(self._opened_batches)
        return self._opened(order, self._reset(order, tasks), seeds)

    def resume(self, episodes: list[Episode]) -> Batch:
        """A batch of saved episodes (a checkpoint's carried batch): its steps come first."""
        return Batch(episodes, next(self._opened_batches))

    def finish(
        self, batch: Batch, then: Opening | None = None
    ) -> tuple[list[Episode], Batch | None]:
        """Run `batch` to its end; its episodes, and the batch `then` (tasks, seeds) opens.

        The next batch's resets run in the pool at once; its turn 0 is generated in one
        engine call at the engine's first free moment after them (every live episode of
        `batch` waiting on its step, or none left), and its first steps are left running
        in the pool for the next `finish` (or `drain`) to collect."""
        order = next(self._opened_batches) if then else -1
        resets = self._reset(order, then[0]) if then else []
        following = None
        ready = batch.ready()
        while True:
            if ready:
                self._generate(batch, ready)
            if then and resets and all(r.done() for r in resets):
                following = self._opened(order, resets, then[1])
                self._generate(following, following.ready())
                resets = []
            if not batch.stepping and not resets:
                return batch.episodes, following
            ready = self._collect(batch, resets)

    def drain(self, batch: Batch) -> None:
        """Wait for every running step of `batch` and record it: the batch is then whole
        episodes and states, which a checkpoint can keep."""
        while batch.stepping:
            self._collect(batch)

    def _generate(self, batch: Batch, ready: list[Episode]) -> None:
        """One engine call for the next turn of `ready`; their steps go to the pool."""
        sampling = SamplingParams(
            self.settings.turn_tokens,
            self.temperature,
            tuple(self.settings.seed_for(e.seed, len(e.turn_ends)) for e in ready),
            self.stops,
        )
        generation = self.engine.generate([e.prompt_ids + e.response_ids for e in ready], sampling)
        actions = [_take_action(e, generation, row, self.width) for row, e in enumerate(ready)]
        texts = self.tokenizer.batch_decode([a for a, _ in actions], skip_special_tokens=True)
        jobs = sorted(
            zip(ready, texts, actions, strict=True),
            key=lambda job: -step_cost(self.env, job[0].state),
        )
        for episode, text, (action, cut) in jobs:
            future = self.pool.submit(batch.order, self.env.step, episode.state, text, len(action))
            batch.stepping[future] = (episode, action, cut)

    def _reset(
        self, order: int, tasks: Sequence[Mapping[str, Any]]
    ) -> list[Future[tuple[EpisodeState, str]]]:
        return [self.pool.submit(order, self.env.reset, task) for task in tasks]

    def _opened(
        self, order: int, resets: list[Future[tuple[EpisodeState, str]]], seeds: Sequence[int]
    ) -> Batch:
        """The batch of these resets' episodes (waiting for them)."""
        episodes = []
        for reset, seed in zip(resets, seeds, strict=True):
            state, prompt = reset.result()
            episodes.append(Episode(state, self._prompt_ids(state, prompt), seed))
        return Batch(episodes, order)

    def _prompt_ids(self, state: EpisodeState, prompt: str) -> list[int]:
        if self.chat is None:
            return _encode(self.tokenizer, prompt)
        return self.chat.prompt_ids(state.messages)

    def _collect(self, batch: Batch, also: Sequence[Future[Any]] = ()) -> list[Episode]:
        """Record the steps that have finished, waiting for one of them or of `also`; the
        episodes they leave live."""
        finished, _ = wait([*batch.stepping, *also], return_when=FIRST_COMPLETED)
        live = []
        for future in finished:
            if future not in batch.stepping:
                continue
            episode, action, cut = batch.stepping.pop(future)
            transition = future.result()
            observed = _observation_ids(
                self.tokenizer, self.chat, self.settings, episode, transition, action
            )
            _record(self.env, episode, transition, observed, cut, self.width)
            if not episode.done:
                live.append(episode)
        return live


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
    """Roll every task through `env` with `engine` (an `EpisodeRunner` for one batch)."""
    with EpisodeRunner(engine, env, tokenizer, width, settings, temperature) as runner:
        episodes, _ = runner.finish(runner.start(tasks, seeds))
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
