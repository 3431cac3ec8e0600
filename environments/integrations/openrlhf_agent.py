"""A rewardsmith environment as an OpenRLHF agent (OpenRLHF 0.11.x ``--train.agent_func_path``).

OpenRLHF's multi-turn executor (`openrlhf.utils.agent.MultiTurnAgentExecutor`) makes one
agent instance per sample, resets it with the prompt and the dataset row's ``label``, then
alternates: vLLM generates from the running token ids, the instance's ``step`` gets the
action text and gives back a reward tensor, the environment's feedback (appended as
context), and whether the episode is done. It records the sum of the step rewards as the
sample's reward and the last step's ``scores`` as its score.

Here the ``label`` carries the episode: ``{"environment": NAME, "task": {...}}`` as JSON
(`episode_label`; `openrlhf_rows` writes whole dataset rows), so one run can mix
environments and the reference never reaches the prompt. Each step feeds the decoded
action to ``env.step``; every step but the last rewards 0 and the last gives the final
reward the environment's `Scorer` computed, so what OpenRLHF records (reward and score)
is the environment's episode reward. OpenRLHF takes one reward per sequence, so the
environment's per-turn rewards have no place in its loss; ``extra_logs`` carries
``turns`` and ``environment_error``.

Two things the instance cannot see from OpenRLHF's step arguments are taken from the
executor call itself (`EnvironmentAgentExecutor` wraps the engine and keeps them per call):
the tokens the model sampled (the action is their decoding without special tokens, and
their count is the environment's token count) and the tokenizer, to know when the next
turn would have no room in ``max_length``. OpenRLHF's loop would then stop without a last
step, so the environment is truncated on this step instead (``token_budget``) and its
reward for the episode as it stands is recorded.

The first observation is the environment's own (the dataset's prompt column is not used),
and it and each feedback are the environment's text, or what a `Rendering`
makes of the episode: the agent file (`rewardsmith.trainer.openrlhf_agent_func`, above the
environments' layer) renders them with the tokenizer's chat template as rewardsmith's own
rollout does (`trainer.chat`: the environment's messages, tools as schemas).

An environment failure (``environment_error``: its sandbox did not start) has no reward.
OpenRLHF has no "no reward" for a sample (its reward must be a number and enters the
advantage of its group), so by default the step raises `EnvironmentEpisodeError` and the
rollout fails loudly, as OpenRLHF's own remote reward model does after its retries; with
``on_environment_error="zero"`` the episode records 0 and ``extra_logs["environment_error"]``
1, which OpenRLHF logs per batch. Any other exception of the environment (a bug, not a
declared failure) fails the rollout under both settings.

Pass ``rewardsmith.trainer.openrlhf_agent_func.AGENT_FILE`` (a file defining
``AgentExecutor``) as ``--train.agent_func_path``.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

try:
    import torch
    from openrlhf.utils.agent import AgentInstanceBase, MultiTurnAgentExecutor
except ImportError as exc:  # an optional integration: say what to install
    raise ImportError(
        "the OpenRLHF agent needs OpenRLHF: `pip install --no-deps openrlhf==0.11.2` "
        "(see the Makefile's clients install)"
    ) from exc

from rewardsmith.environments.base import ToolEnvironment
from rewardsmith.environments.episodes import make_environment
from rewardsmith.environments.protocol import EpisodeState, Transition

__all__ = [
    "ON_ENVIRONMENT_ERROR",
    "EnvironmentAgent",
    "EnvironmentAgentExecutor",
    "EnvironmentEpisodeError",
    "Rendering",
    "RenderingFor",
    "agent_executor_class",
    "close_environments",
    "episode_label",
    "openrlhf_rows",
]

ON_ENVIRONMENT_ERROR = ("raise", "zero")


class Rendering(Protocol):
    """The text OpenRLHF tokenizes for an episode's first observation and each feedback."""

    def prompt(self, state: EpisodeState, text: str) -> str:
        """The first observation of the episode `state` starts (the environment's `text`)."""
        ...

    def feedback(self, before: EpisodeState, transition: Transition, action: list[int]) -> str:
        """What the environment said after the sampled `action` ids (episode not done)."""
        ...


RenderingFor = Callable[[ToolEnvironment, Any], Rendering | None]
"""(environment, tokenizer) -> its `Rendering`, or None for the environment's own text."""


class EnvironmentEpisodeError(RuntimeError):
    """The environment itself failed on an episode: it has no reward to record."""


def episode_label(environment: str, task: Mapping[str, Any]) -> str:
    """The ``label`` of a dataset row: the environment's name and the task, as JSON."""
    return json.dumps({"environment": environment, "task": dict(task)})


def _episode(label: Any) -> Mapping[str, Any]:
    """The environment and task a row's label carries (a JSON string, or its object where
    the dataset loader parsed it)."""
    try:
        episode = label if isinstance(label, Mapping) else json.loads(label)
        if isinstance(episode, Mapping) and {"environment", "task"} <= set(episode):
            return episode
    except (TypeError, ValueError):
        pass
    raise ValueError(
        f"the row's label must be {{'environment': NAME, 'task': {{...}}}} as JSON "
        f"(openrlhf_agent.episode_label), not {str(label)[:200]!r}"
    )


def openrlhf_rows(environment: str, tasks: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """OpenRLHF dataset rows (``--data.input_key prompt --data.label_key label``): the first
    observation as chat messages, the task (with its reference) in the label only."""
    env = _environment(environment)
    rows = []
    for task in tasks:
        state, _ = env.reset(task)
        rows.append(
            {
                "prompt": [dict(m) for m in state.messages],
                "label": episode_label(environment, task),
            }
        )
    return rows


# ---------------------------------------------------------------------- environments

_ENVIRONMENTS: dict[str, ToolEnvironment] = {}
_ENVIRONMENTS_LOCK = threading.Lock()


def _environment(name: str) -> ToolEnvironment:
    """One environment per name and process: it holds no episode state, and its Scorers
    start once instead of once per sample."""
    with _ENVIRONMENTS_LOCK:
        if name not in _ENVIRONMENTS:
            _ENVIRONMENTS[name] = make_environment(name)
        return _ENVIRONMENTS[name]


def close_environments() -> None:
    """Close the environments this process made (their Scorers' workers)."""
    with _ENVIRONMENTS_LOCK:
        for env in _ENVIRONMENTS.values():
            env.close()
        _ENVIRONMENTS.clear()


# ---------------------------------------------------------------------- one executor call


@dataclass
class _Call:
    """What one `execute` call knows that its agent instance's arguments do not."""

    tokenizer: Any
    max_length: int
    action_ids: list[int] = field(default_factory=list)


_CALL: ContextVar[_Call] = ContextVar("rewardsmith_openrlhf_call")


class _RecordingEngine:
    """OpenRLHF's engine, keeping the token ids of each generation for the agent."""

    def __init__(self, engine: Any, call: _Call) -> None:
        self._engine, self._call = engine, call

    async def generate(self, *args: Any, **kwargs: Any) -> Any:
        output = await self._engine.generate(*args, **kwargs)
        self._call.action_ids = list(output.outputs[0].token_ids)
        return output

    def __getattr__(self, name: str) -> Any:
        return getattr(self._engine, name)


# ---------------------------------------------------------------------- the agent


class EnvironmentAgent(AgentInstanceBase):
    """One episode of the environment its label names; see the module docstring."""

    on_environment_error: ClassVar[str] = "raise"
    rendering_for: ClassVar[RenderingFor | None] = None

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.env: ToolEnvironment | None = None
        self.state: EpisodeState | None = None
        self.rendering: Rendering | None = None
        self.call: _Call | None = None

    async def reset(self, states: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        call = _CALL.get(None)
        if call is None:
            raise RuntimeError(
                "EnvironmentAgent runs under EnvironmentAgentExecutor (the agent file), which "
                "gives it the sampled tokens and the tokenizer"
            )
        label = _episode(states["label"])
        self.call, self.env = call, _environment(str(label["environment"]))
        self.state, prompt = await asyncio.to_thread(self.env.reset, label["task"])
        rendering_for = type(self).rendering_for
        self.rendering = None if rendering_for is None else rendering_for(self.env, call.tokenizer)
        if self.rendering is not None:
            prompt = self.rendering.prompt(self.state, prompt)
        return {**states, "observation": prompt}

    async def step(self, state_dict: dict[str, Any], **kwargs: Any) -> dict[str, Any]:
        env, call, before = self.env, self.call, self.state
        assert env is not None and call is not None and before is not None, "reset first"
        action_ids = call.action_ids
        action = call.tokenizer.decode(action_ids, skip_special_tokens=True)
        transition = await asyncio.to_thread(env.step, before, action, len(action_ids))
        feedback = "" if transition.done else self._feedback(before, transition, action_ids)
        if not transition.done and self._no_room_after(state_dict, action_ids, feedback):
            transition = await asyncio.to_thread(env.truncate, transition.state, "token_budget")
        self.state = transition.state
        return self._result(transition, feedback)

    def _feedback(self, before: EpisodeState, transition: Transition, action: list[int]) -> str:
        """What the environment said, as the text appended after the action."""
        if self.rendering is None:
            return transition.observation or ""
        return self.rendering.feedback(before, transition, action)

    def _no_room_after(self, state_dict: dict[str, Any], action: list[int], feedback: str) -> bool:
        """Whether OpenRLHF's loop stops before the next turn: its context (``max_length``
        less the budget it gave this turn) plus the action and the feedback fills the row."""
        assert self.call is not None
        context = self.call.max_length - int(state_dict["sampling_params"].max_tokens)
        said = self.call.tokenizer(text=feedback, add_special_tokens=False)["input_ids"]
        return context + len(action) + len(said) >= self.call.max_length

    def _result(self, transition: Transition, feedback: str) -> dict[str, Any]:
        state = transition.state
        failed = state.end.startswith("environment_error")
        if failed and self.on_environment_error == "raise":
            raise EnvironmentEpisodeError(
                f"episode {state.task.get('id')!r}: {state.end} (no reward to record; "
                "on_environment_error='zero' records 0 and logs environment_error)"
            )
        ended = transition.done and transition.reward is not None
        final = transition.reward.value if ended and transition.reward is not None else 0.0
        return {
            # float64: OpenRLHF sums the steps' `.item()`s, and 0.2 in float32 is not 0.2.
            "rewards": torch.tensor(final, dtype=torch.float64),
            "scores": final,
            "environment_feedback": feedback,
            "done": transition.done,
            "extra_logs": {"turns": float(state.turn), "environment_error": float(failed)},
        }


class EnvironmentAgentExecutor(MultiTurnAgentExecutor):
    """OpenRLHF's multi-turn executor over `EnvironmentAgent` (``AgentExecutor`` in
    the agent file); each call keeps its tokenizer and sampled tokens for its agent."""

    agent_class: ClassVar[type[EnvironmentAgent]] = EnvironmentAgent

    def __init__(self) -> None:
        super().__init__(self.agent_class)

    async def execute(
        self,
        prompt: Any,
        label: Any,
        sampling_params: Any,
        max_length: int,
        hf_tokenizer: Any,
        llm_engine: Any,
        images: Any = None,
    ) -> Any:
        call = _Call(hf_tokenizer, max_length)
        token = _CALL.set(call)  # per asyncio task: concurrent calls do not share it
        try:
            engine = _RecordingEngine(llm_engine, call)
            return await super().execute(
                prompt, label, sampling_params, max_length, hf_tokenizer, engine, images
            )
        finally:
            _CALL.reset(token)


def agent_executor_class(
    on_environment_error: str = "raise", rendering_for: RenderingFor | None = None
) -> type[EnvironmentAgentExecutor]:
    """An ``AgentExecutor`` class whose episodes treat an environment failure as
    `on_environment_error` says: ``raise`` (fail the rollout) or ``zero`` (record 0, log it),
    and render their texts with `rendering_for` (None: the environment's text)."""
    policy = on_environment_error
    if policy not in ON_ENVIRONMENT_ERROR:
        raise ValueError(
            f"on_environment_error must be one of {ON_ENVIRONMENT_ERROR}, "
            f"not {on_environment_error!r}"
        )

    class Agent(EnvironmentAgent):
        on_environment_error = policy

    Agent.rendering_for = rendering_for  # a class attribute, not a method to bind

    class AgentExecutor(EnvironmentAgentExecutor):
        agent_class = Agent

    return AgentExecutor
