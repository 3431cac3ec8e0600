"""Episodes as dump rows, the environments by name, and their task files.

`episode_row` keeps what a policy did in one episode (`rewardsmith.trainer.env_rollout.
roll_out` rolls a model through an environment and gives one row per episode):

- ``messages``: the chat as the model saw it, in transformers' convention: the first
  observation as the user turn, each action as an assistant turn (its ``tool_calls``
  parsed), each tool result as a ``tool`` turn, any other observation (a test log, "wrong,
  try again", a refusal) as a user turn; an episode with no answer ends with `NO_ANSWER`;
- ``prompt``, ``steps``, ``reference``, ``task``: the trajectory exactly as the
  environment's `Scorer` scored it (`ToolEnvironment.sample`), so scoring ``steps`` as
  the completion with `spec_document(env.final_reward)` gives the same final reward;
- ``final_reward`` (null only when the environment itself failed), ``turn_rewards`` (one
  per model turn, null where the step earned nothing yet), ``turns``, ``end``,
  ``truncated`` and ``reason``: how the episode ended, in words.

A model that never stops, floods its turn or writes malformed tool calls gives a row
saying so; an environment that raises on one episode ends that episode, not the run.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import replace
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

from rewardsmith.environments.arithmetic import RetryArithmetic
from rewardsmith.environments.base import ToolEnvironment
from rewardsmith.environments.cad_part import CadPart
from rewardsmith.environments.code_repair import CodeRepair
from rewardsmith.environments.finance_document import FinanceDocument
from rewardsmith.environments.math_tool import MathWithPython
from rewardsmith.environments.protocol import EpisodeState, Transition

__all__ = [
    "ENTRY_POINT_GROUP",
    "ENVIRONMENTS",
    "NO_ANSWER",
    "GuardedEnvironment",
    "available_environments",
    "episode_messages",
    "episode_row",
    "make_environment",
    "read_tasks",
    "spec_document",
]


def _blender_scene(*args: Any, **kwargs: Any) -> ToolEnvironment:
    """`BlenderSceneEnv`, imported on first use: its scene checks pull numpy and image
    code, which the CLI and the servers need not carry."""
    from rewardsmith.environments.blender_scene import BlenderSceneEnv

    return BlenderSceneEnv(*args, **kwargs)


ENVIRONMENTS: dict[str, Callable[..., ToolEnvironment]] = {
    **{
        env.name: env
        for env in (MathWithPython, CodeRepair, RetryArithmetic, FinanceDocument, CadPart)
    },
    "blender_scene": _blender_scene,
}
"""The environments the command runs, by their own names."""

_ENDS = {
    "answered": "the model answered",
    "turn_limit": "the model used all {turns} turns without a final answer",
    "token_budget": "the episode ran out of tokens (the model's turns and the observations "
    "filled the row, or a turn was cut at its token limit) before a final answer",
}


ENTRY_POINT_GROUP = "rewardsmith.environments"
"""Installed packages add environments here; in their ``pyproject.toml``::

    [project.entry-points."rewardsmith.environments"]
    my_env = "my_package.envs:MyEnvironment"

after which ``rewardsmith env run my_env``, ``env spec my_env`` and a trainer config's
``environment: my_env`` find it. A bundled name always wins over a plugin's."""


def _plugins() -> dict[str, Any]:
    return {ep.name: ep for ep in entry_points(group=ENTRY_POINT_GROUP)}


def available_environments() -> list[str]:
    """Every environment name that can be made: bundled ones and installed plugins."""
    return sorted(set(ENVIRONMENTS) | set(_plugins()))


def make_environment(name: str, max_turns: int | None = None) -> ToolEnvironment:
    """The environment called `name` (bundled, or an installed plugin's), with its own
    limits (its turn limit replaced)."""
    factory = ENVIRONMENTS.get(name)
    if factory is None:
        plugin = _plugins().get(name)
        if plugin is None:
            raise ValueError(
                f"unknown environment {name!r}; choose one of "
                f"{', '.join(available_environments())} (plugins register under the "
                f"entry-point group {ENTRY_POINT_GROUP!r})"
            )
        try:
            factory = plugin.load()
        except Exception as exc:  # a broken plugin is named, never a bare traceback
            raise ValueError(
                f"environment {name!r} ({plugin.value}) could not be loaded: "
                f"{type(exc).__name__}: {exc}"
            ) from exc
    env = factory()
    if not all(callable(getattr(env, method, None)) for method in ("reset", "step")):
        raise ValueError(f"environment {name!r} built {type(env).__name__}, not an Environment")
    if max_turns is not None:
        env.limits = replace(env.limits, max_turns=max_turns)
    return env


class GuardedEnvironment:
    """An environment whose failure on one episode ends that episode with a reason saying
    so (its reward None: the environment's failure, not the model's), not the whole run.
    Its episodes start from `starts` (task id -> `reset`'s result), reset once beforehand
    to measure the prompts."""

    def __init__(self, env: ToolEnvironment, starts: Mapping[str, tuple[EpisodeState, str]]):
        self.env = env
        self.starts = starts
        self.name = env.name
        self.limits = env.limits

    def reset(self, task: Mapping[str, Any]) -> tuple[EpisodeState, str]:
        return self.starts[str(task["id"])]

    def step(
        self, state: EpisodeState, action: str, action_tokens: int | None = None
    ) -> Transition:
        return self._guard(state, lambda: self.env.step(state, action, action_tokens))

    def truncate(self, state: EpisodeState, reason: str) -> Transition:
        return self._guard(state, lambda: self.env.truncate(state, reason))

    @staticmethod
    def _guard(state: EpisodeState, call: Callable[[], Transition]) -> Transition:
        try:
            return call()
        except Exception as exc:  # the environment's own bug or infrastructure: said, not hidden
            end = f"environment_error: {type(exc).__name__}: {exc}"[:500]
            return Transition(state.ended(end), None, None, True)


# ---------------------------------------------------------------------- rows


NO_ANSWER: dict[str, Any] = {"role": "assistant", "content": "", "name": "no_answer"}
"""The last message of an episode that ended without an answer (on a tool call, a refused
action, a limit): the environment's empty final action. Without it, a reader that takes
the last assistant message as the answer would pay an answer hidden in a tool call."""


def episode_messages(state: EpisodeState, prompt: str, answered: bool) -> list[dict[str, Any]]:
    """The chat the model saw: `prompt`, then each turn's action and what answered it,
    then `NO_ANSWER` unless the episode was `answered`.

    The environment's own `messages` hold the actions (tool calls parsed), the tool
    results and any user turn it added; an observation they lack (a test log, a refusal)
    is added as a user turn. The last action's observation is left out: the episode ended
    there and the model never saw it.
    """
    turns = [a for a in state.attempts if a["meta"].get("kind") != "given"]
    recorded = [dict(m) for m in state.messages[1:]]
    out: list[dict[str, Any]] = [{"role": "user", "content": prompt}]
    for index, attempt in enumerate(turns):
        out.append(recorded.pop(0) if recorded else {"role": "assistant", "content": ""})
        answers = []
        while recorded and recorded[0].get("role") != "assistant":
            answers.append(recorded.pop(0))
        seen = index < len(turns) - 1
        if not answers and attempt.get("observation") is not None and seen:
            answers = [{"role": "user", "content": attempt["observation"]}]
        out.extend(answers)
    return out if answered else [*out, dict(NO_ANSWER)]


def episode_row(
    env: ToolEnvironment,
    name: str,
    state: EpisodeState,
    prompt: str,
    final: Any,
    turn_rewards: Sequence[float | None],
    truncated: bool,
) -> dict[str, Any]:
    """One dump row for a finished episode (see the module doc); `final` is its `Reward`."""
    sample = env.sample(state)
    answered = sample.steps[-1].meta.get("kind") != "no_answer"
    return {
        "id": sample.id,
        "environment": name,
        "messages": episode_messages(state, prompt, answered),
        "prompt": sample.prompt,
        "steps": [step.model_dump(mode="json") for step in sample.completion],
        "reference": sample.reference,
        "task": sample.task,
        "final_reward": None if final is None else final.value,
        "turn_rewards": list(turn_rewards),
        "turns": state.turn,
        "end": state.end,
        "truncated": truncated,
        "reason": _reason(state, final, env.limits.max_turns),
    }


def _reason(state: EpisodeState, final: Any, max_turns: int) -> str:
    how = _ENDS.get(state.end, state.end).format(turns=max_turns)
    if final is None:
        return f"{how}; no reward: the environment failed on this episode"
    detail = f" ({final.reason})" if final.reason else ""
    return f"{how}; final reward {final.value}{detail}"


def read_tasks(path: Path) -> Iterator[dict[str, Any]]:
    """The tasks of a JSONL file; a line that is not a JSON object is an error naming it."""
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            task = json.loads(line)
        except ValueError as exc:
            raise ValueError(f"{path}:{number}: not JSON ({exc})") from None
        if not isinstance(task, dict):
            raise ValueError(f"{path}:{number}: a task is a JSON object")
        task.setdefault("id", f"{path.stem}:{number}")
        yield task


def spec_document(reward: Mapping[str, Any]) -> dict[str, Any]:
    """`reward` (an environment's `final_reward`) as a YAML spec file holds it: a spec
    (``grader: ...``) as it is; a mapping of verifiers ``{key: {weight, verify, ...}}`` as
    the weighted mean `graders.build` makes of it (``build`` gives equal graders)."""
    if "grader" in reward:
        return dict(reward)
    components, weights = {}, {}
    for key, raw in reward.items():
        settings = dict(raw or {})
        weights[key] = settings.pop("weight", 1.0)
        components[key] = {"verify": settings.pop("verify", key), **settings}
    total = sum(weights.values())
    normalised = {key: weight / total for key, weight in weights.items()}
    return {"grader": {"weighted": {"components": components, "weights": normalised}}}
