"""A rewardsmith environment driven by willccbb/verifiers 0.4.0 (its ``v1`` stack).

verifiers 0.4.0 runs an episode as ``Env.run(task, agents)``: the env is the control flow
between agents, and ``agent.interaction(task)`` holds the policy's rollout open turn by
turn, with the env as the rollout's user (their ``user-sim`` env relays a simulated user
the same way). Here our environment is that user:

- **taskset** (`EnvironmentTaskset`): one `EnvironmentTask` per task of one of our
  environments; its prompt is the environment's first observation (``reset``'s
  messages), its task, reference included, rides in ``data.rewardsmith_task`` only;
- **env** (`EnvironmentEnv`): ``run`` resets the environment, takes the policy's opening
  reply (``interaction.turn()``), steps the environment with it and sends the observation
  back as the next user turn (``interaction.turn(observation)``), until our episode ends
  (an answer, a turn limit, a token budget). Where verifiers ends the exchange first (the
  policy's ``max_turns``, a token limit, a timeout), the last stepped episode is
  truncated, scored as it stands, as our own driver does;
- **reward** (``EnvironmentTask.environment``): the final reward of the episode, computed
  by the environment's `Scorer` during it (the one path: the value our trainer, CLI and the
  other adapters record for the same actions), kept on the policy trace's state
  (`EpisodeRecord`, with each turn's reward) and recorded as verifiers' reward
  ``environment``;
- **failures**: where the environment itself fails (at ``reset`` or a step), ``run``
  raises `EnvironmentFailure`: verifiers records it on the trace (``ok`` False, no
  reward: their rollout skips scoring after a failure) and on the episode as an
  ``EnvError``; it is never a score of 0;
- **harness** (`ChatHarness`): the policy's default harness sends the conversation to the
  model once per turn, in this process, through verifiers' interception endpoint, so the
  trace records every call. Their ``null`` harness does the same from a ``uv`` script that
  installs its own packages at run time; set ``policy.harness`` to use it or another one.

The verifiers plugin id is `PLUGIN_ID`; verifiers loads tasksets, harnesses and envs by
top-level module name, so importing this module registers it under that name
(`environment_config` builds a config that names it).

Install: 0.4.0 cannot share a venv with 0.3.1 (the ``MultiTurnEnv`` adapter's release).
The Makefile's clients install puts it, with the few modules its import path needs that
0.3.1's install lacks, in ``.venv/verifiers-v1`` (``pip install --no-deps --target``):
put that folder first on PYTHONPATH, and start Python without the repo root on sys.path
(``python -P``, or from another folder).

    >>> config = environment_config("retry_arithmetic", tasks="tasks.jsonl")  # doctest: +SKIP
    >>> env = vf.load_environment(config)                                    # doctest: +SKIP
"""

from __future__ import annotations

import asyncio
import importlib
import sys
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
from pydantic import Field

from rewardsmith.environments.base import EnvironmentFailure, ToolEnvironment
from rewardsmith.environments.episodes import GuardedEnvironment, make_environment, read_tasks
from rewardsmith.environments.integrations._verifiers_common import (
    action_text,
    import_their_verifiers,
)
from rewardsmith.environments.policies import TASK_FILES
from rewardsmith.environments.protocol import EpisodeState, Transition

__all__ = [
    "PLUGIN_ID",
    "ChatHarness",
    "EnvironmentEnv",
    "EnvironmentTask",
    "EnvironmentTaskset",
    "EpisodeRecord",
    "environment_config",
]

PLUGIN_ID = "rewardsmith_environment"
"""The taskset id (and default harness id) verifiers loads this module by."""
_INSTALL = (
    "the verifiers v1 adapter needs willccbb/verifiers 0.4.0: the Makefile's clients "
    "install puts it in .venv/verifiers-v1 (`pip install --no-deps --target`); put that "
    "folder first on PYTHONPATH, without the repo root on sys.path (`python -P`)"
)


def _load_v1() -> ModuleType:
    """verifiers 0.4's ``v1``. 0.3.1 ships an earlier ``v1`` beside ``MultiTurnEnv``, with
    another API and imports its install lacks: refused by version, not half-run."""
    try:
        version = str(getattr(import_their_verifiers(), "__version__", "unknown"))
        if not version.startswith("0.4."):
            raise ImportError(f"found verifiers {version}")
        return importlib.import_module("verifiers.v1")
    except ImportError as exc:  # absent, another release, or our own folder in its place
        raise ImportError(f"{_INSTALL} ({type(exc).__name__}: {exc})") from exc


vf: Any = _load_v1()
from verifiers.v1.dialects.chat import message_to_wire  # noqa: E402  (theirs, loaded above)
from verifiers.v1.runtimes import ProgramResult  # noqa: E402


class EnvironmentTaskData(vf.TaskData):
    rewardsmith_task: dict[str, Any]
    """The task as our environment takes it, reference included: never in the prompt."""


class EpisodeRecord(vf.State):
    """What our environment said about the policy's episode, kept on its trace."""

    final_reward: float | None = None
    """The episode's final reward (None until it ended)."""
    turn_rewards: list[float | None] = Field(default_factory=list)
    """Each stepped turn's reward: None where the turn earned nothing yet."""
    end: str = ""
    """How our episode ended: 'answered', 'turn_limit', or verifiers' stop condition."""


class EnvironmentTask(vf.Task[EnvironmentTaskData, EpisodeRecord]):
    """One task of one of our environments; its reward is the episode's final reward."""

    @vf.reward
    async def environment(self, trace: Any) -> float:
        record: EpisodeRecord = trace.state
        if record.final_reward is None:  # never the model's 0: verifiers records why
            raise ValueError(
                "no episode reward: this task's episode is played by EnvironmentEnv "
                f"(taskset id {PLUGIN_ID!r}), which steps the environment"
            )
        return record.final_reward


class EnvironmentTasksetConfig(vf.TasksetConfig):
    environment: str = "retry_arithmetic"
    """The environment's name, as `make_environment` knows it."""
    tasks: Path | None = None
    """A JSONL file of its tasks (`read_tasks`); None: the environment's bundled tasks."""
    max_turns: int | None = None
    """Replaces the environment's own turn limit where set."""


class EnvironmentTaskset(vf.Taskset[EnvironmentTask, EnvironmentTasksetConfig]):
    """The tasks of one environment; each prompt is that environment's first observation."""

    def environment(self) -> ToolEnvironment:
        return make_environment(self.config.environment, self.config.max_turns)

    def load(self) -> Iterator[EnvironmentTask]:
        environment = self.environment()
        path = self.config.tasks or TASK_FILES.get(self.config.environment)
        if path is None:
            raise ValueError(f"{self.config.environment!r} has no bundled tasks: set tasks")
        try:
            for task in read_tasks(Path(path)):
                state, _ = environment.reset(task)
                yield EnvironmentTask(_task_data(state, task), self.config.task)
        finally:
            environment.close()


def _task_data(state: EpisodeState, task: Mapping[str, Any]) -> EnvironmentTaskData:
    prompt = [{"role": m["role"], "content": m["content"]} for m in state.messages]
    return EnvironmentTaskData(id=str(task["id"]), prompt=prompt, rewardsmith_task=dict(task))


class ChatHarnessConfig(vf.HarnessConfig):
    pass


class ChatHarness(vf.Harness[ChatHarnessConfig]):
    """The policy as a chat model: one model call per turn, in this process, through the
    rollout's interception endpoint (verifiers' contract for an in-process harness); no
    tools of its own (our environments' tools are called in the text and run by the
    environment)."""

    APPENDS_SYSTEM_PROMPT = True
    SUPPORTS_RESUME = True  # each turn is the whole conversation so far, sent again
    EXECUTES_CODE = False
    NEEDS_CONTAINER = False

    async def launch(
        self,
        ctx: Any,
        trace: Any,
        runtime: Any,
        endpoint: str,
        secret: str,
        mcp_urls: dict[str, str],
        data: Any,
        tool_interception_url: str | None = None,
    ) -> Any:
        system, prompt = self.resolve_prompt(data)
        messages = [vf.SystemMessage(content=system)] if system else []
        messages += [vf.UserMessage(content=prompt)] if isinstance(prompt, str) else prompt
        body = {"model": ctx.model, "messages": [message_to_wire(m) for m in messages]}
        async with httpx.AsyncClient(timeout=None) as http:
            response = await http.post(
                f"{endpoint}/chat/completions",
                json=body,
                headers={"Authorization": f"Bearer {secret}"},
            )
        if response.is_error:  # the interception recorded the model's failure on the trace
            return ProgramResult(exit_code=1, stdout="", stderr=response.text[-2000:])
        return ProgramResult(exit_code=0, stdout="", stderr="")


class EnvironmentEnvConfig(vf.EnvConfig):
    policy: vf.AgentConfig = vf.AgentConfig(runtime=vf.SubprocessConfig())
    """The model under evaluation or training. Its harness defaults to the taskset's,
    `ChatHarness`; the subprocess runtime runs nothing here (``ChatHarness`` is in
    process), where verifiers' default would start a remote sandbox."""


class EnvironmentEnv(vf.Env[EnvironmentEnvConfig]):
    """Our environment as the policy's user; see the module doc."""

    def __init__(self, config: EnvironmentEnvConfig) -> None:
        super().__init__(config)
        self.environment = self.taskset.environment()
        self._guarded = GuardedEnvironment(self.environment, {})  # a failure ends one episode

    async def run(self, task: Any, agents: Any) -> None:
        episode = await asyncio.to_thread(self._reset, task.data.rewardsmith_task)
        async with agents.policy.interaction(task) as chat:
            record: EpisodeRecord = chat.trace.state
            final = await self._relay(chat, episode, record)
            record.end = final.state.end
            if final.state.end.startswith("environment_error"):
                raise EnvironmentFailure(final.state.end)
            record.final_reward = None if final.reward is None else final.reward.value

    async def stop(self) -> None:
        self.environment.close()

    def _reset(self, task: Mapping[str, Any]) -> EpisodeState:
        try:
            episode, _ = self.environment.reset(task)
        except Exception as exc:  # the environment's failure, said as one
            raise EnvironmentFailure(f"reset: {type(exc).__name__}: {exc}") from exc
        if episode.end.startswith("environment_error"):  # e.g. a sandbox that did not start
            raise EnvironmentFailure(episode.end)
        return episode

    async def _relay(self, chat: Any, episode: EpisodeState, record: EpisodeRecord) -> Transition:
        """Policy turns to environment steps and observations back, until either ends."""
        calls = 0
        segment = await chat.turn()  # the prompt speaks first: the policy's opening reply
        while not segment.terminated:
            tokens = _completion_tokens(chat.trace.calls[calls:])
            calls = len(chat.trace.calls)
            step = await asyncio.to_thread(
                self._guarded.step, episode, _last_action(segment), tokens
            )
            record.turn_rewards.append(None if step.reward is None else step.reward.value)
            if step.done:
                return step
            episode = step.state
            segment = await chat.turn(step.observation or "")
        # verifiers ended the exchange first (a turn or token limit, a timeout, a failure)
        reason = str(chat.trace.stop_condition or "stopped")
        return await asyncio.to_thread(self._guarded.truncate, episode, reason)


def _last_action(segment: Any) -> str:
    """The policy's action in a segment: its last reply (a harness with tools of its own
    makes several model calls in one segment; the last one answers)."""
    replies = [m for m in segment.messages if isinstance(m, vf.AssistantMessage)]
    return action_text(replies[-1]) if replies else ""


def _completion_tokens(calls: Sequence[Any]) -> int | None:
    """The tokens the policy wrote in `calls`, as the server counted them (None if it
    did not say), for our environment's token budget."""
    counted = [call.usage.completion_tokens for call in calls if call.usage is not None]
    return sum(counted) if counted else None


def environment_config(
    environment: str, tasks: str | Path | None = None, **env: Any
) -> EnvironmentEnvConfig:
    """A verifiers env config that plays `environment`'s `tasks` (a JSONL file; None: its
    bundled tasks); other keyword arguments are `EnvironmentEnvConfig` fields (``policy``,
    ``timeout``, ...)."""
    taskset = {"id": PLUGIN_ID, "environment": environment, "tasks": tasks}
    return EnvironmentEnvConfig(taskset=taskset, **env)


sys.modules.setdefault(PLUGIN_ID, sys.modules[__name__])  # verifiers' plugin lookup
