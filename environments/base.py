"""`ToolEnvironment`: the turn loop every bundled environment shares.

One step: count the turn and its tokens; refuse an over-long action; run the action's tool
calls (each failure, from malformed JSON to a tool past its time limit, is an
observation); otherwise hand the action to the environment's `answer`. After the step,
a turn limit, token budget or time budget ends the episode, scored as it stands.

The calls of one turn run together within a per-turn and per-episode time budget
(`turn_budget_s`, `episode_budget_s`; `environments.parallel_calls`), each call charged
its own running time only (never time queued behind another episode's calls). A tool whose own
infrastructure fails (a sandbox that cannot start) raises `EnvironmentFailure`: the
episode ends as ``environment_error`` with no reward (the environment's failure, never
the model's), instead of the error reaching the model as an observation.

Rewards come only from the environment's `Scorer` (the same object the CLI, the server
and the trainer score with), over a `Sample` whose completion is the episode's trajectory
(`verifiers.types.Step`s). An episode that ends on a tool call, on a limit or on a
driver's truncation has no answer: its trajectory ends with an empty action, so the
answer verifiers score it 0 (the model's failure, never "no reward").
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from rewardsmith.environments.parallel_calls import (
    ToolsBusy,
    call_together,
    episode_tool_seconds,
)
from rewardsmith.environments.protocol import EpisodeLimits, EpisodeState, Transition
from rewardsmith.environments.tools import Tool, ToolCall, has_tool_call, parse_tool_calls
from rewardsmith.graders import Reward, Scorer
from rewardsmith.verifiers.types import Sample, Step

__all__ = ["EnvironmentFailure", "ToolEnvironment"]

_MAX_RESULT_CHARS = 4_000
_NOT_ANSWERS = ("tool", "refused", "given")
"""Kinds of step that are not the model's answer: a tool call, an action refused as too
long, the program a repair task starts from (a truncated episode must not earn it)."""


class EnvironmentFailure(RuntimeError):
    """The environment itself failed (its sandbox did not start): the episode ends as
    ``environment_error`` with no reward, never as an observation the model is blamed for."""


class ToolEnvironment:
    """Subclasses set `name`, `tools`, `prompt` and `answer`; `final_reward` is the spec.

    ``scorer`` settings go to `Scorer` (backend, workers, timeout_s). The default backend
    is ``inline``: the verifiers used here contain their own hostile work (code runs in
    the sandbox, math parsing under its own budget), and an environment step is already
    one episode's work among many.
    """

    name: ClassVar[str] = "tool_environment"
    step_cost_hint: ClassVar[float] = 1.0
    """What a step costs, relative to an in-process check (1): a rollout starts the steps of
    a batch most expensive first (`step_cost`). A sandboxed test run is about 100."""
    tools: Sequence[Tool] = ()
    turn_budget_s: ClassVar[float] = 20.0
    """Seconds a turn's tool calls (run together) may take; a call past it is an error."""
    episode_budget_s: ClassVar[float] = 60.0
    """Seconds of tool time per episode; past it the episode ends as ``time_budget``."""
    _scorers_lock: ClassVar[threading.Lock] = threading.Lock()
    """Episodes step in threads: two first calls must not both start a Scorer."""

    def __init__(
        self,
        final_reward: Any,
        limits: EpisodeLimits | None = None,
        scorer: Mapping[str, Any] | None = None,
    ) -> None:
        self.final_reward = final_reward
        self.limits = limits or EpisodeLimits()
        self.scorer_settings = dict(scorer or {"backend": "inline"})

    # ------------------------------------------------------------------ what subclasses give

    def prompt(self, task: Mapping[str, Any]) -> str:
        """The first observation: what the model is asked."""
        return str(task["prompt"])

    def answer(self, state: EpisodeState, action: str) -> Transition:
        """A non-tool action. By default it is the final answer."""
        return self.finish(state.with_attempt(action, None, kind="answer"), "answered")

    # ------------------------------------------------------------------ the protocol

    def reset(self, task: Mapping[str, Any]) -> tuple[EpisodeState, str]:
        prompt = self.prompt(task)
        state = EpisodeState(task=dict(task), messages=({"role": "user", "content": prompt},))
        return state, prompt

    def step(
        self, state: EpisodeState, action: str, action_tokens: int | None = None
    ) -> Transition:
        """One model turn. `action_tokens` is the driver's token count (else characters)."""
        if state.done:
            raise ValueError(f"episode {state.task.get('id')!r} is done ({state.end})")
        try:
            return self._step(state, action, action_tokens)
        except EnvironmentFailure as exc:
            end = f"environment_error: {exc}"[:500]
            return Transition(state.after_turn(0).ended(end), None, None, True)

    def _step(self, state: EpisodeState, action: str, action_tokens: int | None) -> Transition:
        state = state.after_turn(len(action) if action_tokens is None else action_tokens)
        if len(action) > self.limits.max_action_chars:
            observation = (
                f"error: the action has {len(action)} characters; at most "
                f"{self.limits.max_action_chars} are read"
            )
            state = state.with_messages({"role": "assistant", "content": action[:200]})
            state = state.with_attempt(action[:200], observation, kind="refused")
            return self._continue(state, observation)
        if self.tools and has_tool_call(action):
            return self._continue(*self._run_tools(state, action))
        transition = self.answer(
            state.with_messages({"role": "assistant", "content": action}), action
        )
        if transition.done:
            return transition
        return self._continue(transition.state, transition.observation or "", transition.reward)

    def step_cost(self, state: EpisodeState) -> float:
        """The cost hint of the next step on `state` (the class's `step_cost_hint`)."""
        return self.step_cost_hint

    def truncate(self, state: EpisodeState, reason: str) -> Transition:
        """End the episode now (a driver's token budget): scored as it stands."""
        return self.finish(state, reason)

    # ------------------------------------------------------------------ rewards

    def finish(self, state: EpisodeState, end: str) -> Transition:
        """End the episode and compute its final reward."""
        state = state.ended(end)
        return Transition(state, None, self.score(self.final_reward, state), True)

    def score(self, reward: Any, state: EpisodeState, attempts: int | None = None) -> Reward:
        """The reward `reward` (a spec) gives the trajectory (its first `attempts` steps)."""
        return self._scorer_for(reward).score([self.sample(state, attempts)])[0]

    def sample(self, state: EpisodeState, attempts: int | None = None) -> Sample:
        """The trajectory as the verifiers see it; it ends with an empty action when the
        episode has no answer (its last step is of a kind in `_NOT_ANSWERS`)."""
        chosen = list(state.attempts if attempts is None else state.attempts[:attempts])
        steps = [Step(**a) for a in chosen]
        if not steps or steps[-1].meta.get("kind") in _NOT_ANSWERS:
            steps.append(Step(action="", meta={"kind": "no_answer"}))
        task = state.task
        return Sample(
            id=str(task.get("id", "episode")),
            prompt=self.prompt(task),
            completion=steps,
            reference=task.get("reference"),
            task=task.get("task"),
            meta={"environment": self.name, "end": state.end, "turns": state.turn},
        )

    def _scorer_for(self, reward: Any) -> Scorer:
        # One Scorer per spec, built on first use and never pickled (it restarts anywhere).
        key = json.dumps(reward, sort_keys=True, default=str)
        with self._scorers_lock:
            scorers = self.__dict__.setdefault("_scorers", {})
            if key not in scorers:
                scorers[key] = Scorer(reward, **self.scorer_settings)
            scorer: Scorer = scorers[key]
        return scorer

    def close(self) -> None:
        for scorer in self.__dict__.pop("_scorers", {}).values():
            scorer.close()

    def __getstate__(self) -> dict[str, Any]:
        return {k: v for k, v in self.__dict__.items() if k != "_scorers"}

    # ------------------------------------------------------------------ tools and limits

    def _run_tools(self, state: EpisodeState, action: str) -> tuple[EpisodeState, str]:
        calls = parse_tool_calls(action, self.tools)
        results, meta = self._call_all(state, calls)
        assistant = {
            "role": "assistant",
            "content": action,
            "tool_calls": [c.as_message() for c in calls if not c.error],
        }
        tool_messages = [
            {"role": "tool", "name": c.name or "error", "content": r}
            for c, r in zip(calls, results, strict=True)
        ]
        observation = "\n".join(results)
        state = state.with_messages(assistant, *tool_messages)
        return state.with_attempt(action, observation, kind="tool", **meta), observation

    def _call_all(
        self, state: EpisodeState, calls: list[ToolCall]
    ) -> tuple[list[str], dict[str, Any]]:
        """Each call's result, in order, and what to keep in the step's meta (``tool_s``):
        the calls run together within the turn's budget (`parallel_calls`)."""
        left = self.episode_budget_s - episode_tool_seconds(state)
        budget = max(0.0, min(self.turn_budget_s, left))
        try:
            results, took = call_together(calls, self._call, budget, name=lambda c: c.name)
        except ToolsBusy as exc:  # the machine's overload, never the model's failure
            raise EnvironmentFailure(str(exc)) from exc
        return results, {"tool_s": round(took, 3)}

    def _call(self, call: ToolCall) -> str:
        if call.error:
            return f"error: {call.error}"
        tool = next(t for t in self.tools if t.name == call.name)
        try:
            result = str(tool.function(**call.arguments))
        except EnvironmentFailure:
            raise
        except Exception as exc:  # a tool's own failure is the observation, never a crash
            result = f"error: tool {call.name!r} failed: {type(exc).__name__}: {exc}"
        return result[:_MAX_RESULT_CHARS]

    def _continue(
        self, state: EpisodeState, observation: str, reward: Reward | None = None
    ) -> Transition:
        end = self.limits.exhausted(state)
        if not end and episode_tool_seconds(state) >= self.episode_budget_s:
            end = "time_budget"
        if end:
            return self.finish(state, end)
        return Transition(_with_observation_said(state, observation), observation, reward, False)


def _with_observation_said(state: EpisodeState, observation: str) -> EpisodeState:
    """`state` whose conversation ends with what the model is told next: a step that added
    no message after the model's turn (a refusal, a failed test's log) gets the observation
    as a user message. The messages are the conversation every driver renders (veRL's agent
    loop reads nothing else), so an observation missing there is one the model never sees."""
    if state.messages and state.messages[-1].get("role") == "assistant":
        return state.with_messages({"role": "user", "content": observation})
    return state
