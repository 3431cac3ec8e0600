"""A rewardsmith environment as a willccbb/verifiers ``MultiTurnEnv`` (verifiers 0.3.x).

verifiers rolls one episode per dataset row: it sends the row's prompt to an
OpenAI-compatible server, hands each assistant message to the environment's
``env_response``, asks its stop conditions whether the rollout is over, and finally has the
environment's `Rubric` score the whole rollout. `EnvironmentMultiTurnEnv` plays those parts
with one of our environments:

- **rows** (`verifiers_rows`): the prompt is the environment's first observation
  (``reset``'s messages); the task, reference included, rides in ``info`` only
  (``info[TASK]``, as JSON);
- **setup_state**: ``reset(task)`` again; the episode's `EpisodeState` lives in that
  rollout's own verifiers state (``state["rewardsmith_episode"]``), never on the
  environment object, so concurrent rollouts share nothing mutable;
- **env_response**: the assistant message (its text, and any native tool calls written back
  as our ``<tool_call>`` blocks) goes to ``step``; the observation comes back as the next
  user message, or as ``tool`` messages answering the model's native tool calls; the
  step's reward is kept on verifiers' trajectory step;
- **stop**: the episode is over when our state says so (an answer, a turn limit, a token
  budget, an environment failure); a rollout that verifiers stops first (its timeout, its
  token budget) is finished in cleanup: the last action is stepped if it was not, then the
  episode is truncated, scored as it stands, as our own driver does;
- **Rubric**: ``environment_reward`` records the final reward of the episode, computed by
  the environment's `Scorer` (the one path: the same value our trainer, CLI and veRL loop
  record for the same actions); ``environment_error`` is 1 where the environment itself
  failed: that rollout also carries verifiers' ``InfraError``, and its reward 0 is not the
  model's score.

verifiers 0.4.0 dropped ``MultiTurnEnv`` (its ``v1`` stack of tasksets and harnesses
replaced it); 0.3.1, the release pinned in constraints.txt, keeps it as ``verifiers.legacy``
and answers ``import verifiers as vf``. Install it as the Makefile's clients install does:
``pip install --no-deps verifiers==0.3.1`` plus the light modules its import path needs.

    >>> vf_env = EnvironmentMultiTurnEnv("retry_arithmetic", tasks)  # doctest: +SKIP
    >>> vf_env.evaluate(client, model="my-model")                    # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping, Sequence
from types import ModuleType
from typing import Any

from rewardsmith.environments.base import ToolEnvironment
from rewardsmith.environments.episodes import GuardedEnvironment, make_environment
from rewardsmith.environments.integrations._verifiers_common import (
    action_text,
    import_their_verifiers,
)
from rewardsmith.environments.protocol import EpisodeState, Transition

__all__ = [
    "EPISODE",
    "TASK",
    "EnvironmentMultiTurnEnv",
    "action_text",
    "environment_error",
    "environment_reward",
    "verifiers_rows",
]

EPISODE = "rewardsmith_episode"
"""The verifiers state key holding the rollout's `EpisodeState`."""
TASK = "rewardsmith_task"
"""The ``info`` key holding the task. Not verifiers' own ``info["task"]``: a row with one
is rolled from that task's fields (its ``prompt`` text), not from the row's prompt."""
_FINAL = "rewardsmith_final"
_STEPPED = "rewardsmith_stepped"
_INSTALL = (
    "the verifiers adapter needs willccbb/verifiers 0.3.x: `pip install --no-deps "
    "verifiers==0.3.1` and the light modules its import path needs (the Makefile's "
    "clients install; pins in constraints.txt)"
)


def _load_verifiers() -> ModuleType:
    """willccbb/verifiers' package, past the checkout's own ``verifiers/`` folder (see
    `import_their_verifiers`); 0.3.x only (0.4.0 has no ``MultiTurnEnv``)."""
    try:
        module = import_their_verifiers()
        module.MultiTurnEnv  # noqa: B018  (0.4.0 has none; a missing module fails here)
    except (ImportError, AttributeError) as exc:
        raise ImportError(f"{_INSTALL} ({type(exc).__name__}: {exc})") from exc
    return module


vf: Any = _load_verifiers()


def verifiers_rows(
    environment: ToolEnvironment, tasks: Sequence[Mapping[str, Any]]
) -> list[dict[str, Any]]:
    """verifiers dataset rows for `tasks`: the prompt is the environment's chat record of
    its first observation (``reset``'s messages, as our chat-template rollout and the veRL
    loop send it); the task, with its reference, only in ``info``, as JSON (tasks of
    different shapes in one Arrow column would not fit one schema)."""
    rows = []
    for index, task in enumerate(tasks):
        state, _ = environment.reset(task)
        rows.append(
            {
                "prompt": [dict(m) for m in state.messages],
                "info": json.dumps({TASK: dict(task)}),
                "example_id": index,
            }
        )
    return rows


def environment_reward(state: Any) -> float:
    """The episode's final reward, from the environment's `Scorer` (0 where the environment
    itself failed: that rollout carries an ``InfraError`` and ``environment_error`` 1)."""
    final: Transition | None = state.get(_FINAL)
    if final is None or final.reward is None:
        return 0.0
    return float(final.reward.value)


def environment_error(state: Any) -> float:
    """1 where the episode ended as ``environment_error`` (no reward: not the model's)."""
    episode: EpisodeState | None = state.get(EPISODE)
    return float(episode is not None and episode.end.startswith("environment_error"))


class EnvironmentMultiTurnEnv(vf.MultiTurnEnv):
    """One of our environments, with `tasks`, as a verifiers environment; see the module
    doc. `environment` is an environment or a name `make_environment` knows; other keyword
    arguments go to verifiers' ``MultiTurnEnv`` (``max_turns`` defaults to -1: the
    environment's own limits end its episodes)."""

    def __init__(
        self,
        environment: ToolEnvironment | str,
        tasks: Sequence[Mapping[str, Any]],
        **kwargs: Any,
    ) -> None:
        # Hugging Face's; mypy, run from the repo root, sees our datasets/ folder instead.
        from datasets import Dataset  # type: ignore[attr-defined]

        env = make_environment(environment) if isinstance(environment, str) else environment
        self.environment = env
        self._guarded = GuardedEnvironment(env, {})  # a failing step ends its episode only
        kwargs.setdefault("max_turns", -1)
        kwargs.setdefault(
            "rubric", vf.Rubric(funcs=[environment_reward, environment_error], weights=[1, 0])
        )
        tools = [vf.Tool(**_tool_def(tool.schema)) for tool in getattr(env, "tools", ())]
        rows = Dataset.from_list(verifiers_rows(env, tasks))
        kwargs.setdefault("eval_dataset", rows)  # `evaluate` rolls the same tasks
        super().__init__(dataset=rows, tool_defs=tools or None, **kwargs)

    async def setup_state(self, state: Any) -> Any:
        info = state["info"]
        task = (json.loads(info) if isinstance(info, str) else info)[TASK]
        try:
            episode, _ = await asyncio.to_thread(self.environment.reset, task)
        except Exception as exc:  # the environment's own failure: this episode ends, said
            episode = EpisodeState(task=task).ended(
                f"environment_error: {type(exc).__name__}: {exc}"[:500]
            )
        state[EPISODE], state[_STEPPED], state[_FINAL] = episode, 0, None
        if episode.done:  # reset already failed (a repair task's sandbox did not start)
            self._record(state, Transition(episode, None, None, True))
        return state

    async def env_response(self, messages: Any, state: Any, **kwargs: Any) -> Any:
        before = state[EPISODE]
        transition = await self._step_last_action(state)
        if transition.done:
            state["final_env_response"] = []  # verifiers' own "the environment ended it"
            return []
        return _observation(before, transition, messages[-1])

    @vf.stop
    async def episode_over(self, state: Any) -> bool:
        return bool(state.get(EPISODE) is not None and state[EPISODE].done)

    @vf.cleanup
    async def finish_episode(self, state: Any) -> None:
        """A rollout verifiers stopped first (timeout, token budget, max_turns): its last
        action is stepped if it was not, then the episode is scored as it stands."""
        episode: EpisodeState | None = state.get(EPISODE)
        if episode is None or episode.done:
            return
        unstepped = state[_STEPPED] < len(state["trajectory"])
        if unstepped and (await self._step_last_action(state)).done:
            return
        reason = str(state.get("stop_condition") or "stopped")
        transition = await asyncio.to_thread(self._guarded.truncate, state[EPISODE], reason)
        self._record(state, transition)

    @vf.teardown
    async def close_environment(self) -> None:
        self.environment.close()

    async def _step_last_action(self, state: Any) -> Transition:
        step = state["trajectory"][-1]
        usage = step["response"].usage
        tokens = None if usage is None else int(usage.completion_tokens)
        action = action_text(step["completion"][-1])
        transition = await asyncio.to_thread(self._guarded.step, state[EPISODE], action, tokens)
        state[_STEPPED] += 1
        if transition.reward is not None:  # a per-turn reward, where the step earned one
            step["reward"] = transition.reward.value
        self._record(state, transition)
        return transition

    @staticmethod
    def _record(state: Any, transition: Transition) -> None:
        state[EPISODE] = transition.state
        if transition.done:
            state[_FINAL] = transition
            if transition.state.end.startswith("environment_error"):
                state["error"] = vf.InfraError(transition.state.end)


def _observation(before: EpisodeState, transition: Transition, assistant: Any) -> list[Any]:
    """What the model sees next: the environment's tool results as ``tool`` messages when
    they answer the model's native tool calls one for one, else the observation as a
    user message (a retry note, a test log, tool results of tool calls written in text)."""
    added = transition.state.messages[len(before.messages) :]
    results = [m for m in added if m.get("role") == "tool"]
    native = list(assistant.tool_calls or ())
    if native and len(native) == len(results):
        return [
            vf.ToolMessage(tool_call_id=call.id, content=str(result["content"]))
            for call, result in zip(native, results, strict=True)
        ]
    return [vf.UserMessage(content=transition.observation or "")]


def _tool_def(schema: Mapping[str, Any]) -> dict[str, Any]:
    """verifiers' provider-neutral tool from a transformers tool schema."""
    function = schema["function"]
    return {
        "name": function["name"],
        "description": function.get("description", ""),
        "parameters": dict(function.get("parameters", {})),
    }
