"""Several environments in one batch: each task names the environment it belongs to.

Training on many task types at once means one rollout batch holding, say, one-turn math
episodes beside four-turn code repairs whose every step runs tests in the sandbox. A
`MixedEnvironment` routes each episode to the environment its task names
(``task["environment"]``), and reports each step's cost hint so the rollout starts the
expensive steps first. It keeps no per-episode state: the state says which task it is.

    >>> from rewardsmith.environments import RetryArithmetic
    >>> mixed = MixedEnvironment({"retry_arithmetic": RetryArithmetic()})
    >>> state, prompt = mixed.reset({"id": "a", "prompt": "3+4=", "reference": "7",
    ...                              "environment": "retry_arithmetic"})
    >>> mixed.step(state, "7").reward.value, mixed.step_cost(state)
    (1.0, 1.0)
    >>> mixed.close()
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, ClassVar

from rewardsmith.environments.episode_exploits import EpisodeExploit
from rewardsmith.environments.protocol import Environment, EpisodeState, Transition, resumable

__all__ = ["MixedEnvironment"]


class MixedEnvironment:
    """Route each episode to the environment its task names; see the module docstring."""

    name: ClassVar[str] = "mixed"
    tools: tuple[Any, ...] = ()

    def __init__(self, environments: Mapping[str, Environment], key: str = "environment"):
        self.environments = dict(environments)
        self.key = key

    def _for(self, task: Mapping[str, Any]) -> Environment:
        name = task.get(self.key)
        env = self.environments.get(str(name))
        if env is None:
            raise ValueError(
                f"task {task.get('id')!r} names environment {name!r}; this batch has "
                f"{', '.join(sorted(self.environments))} (set the task's {self.key!r})"
            )
        return env

    def reset(self, task: Mapping[str, Any]) -> tuple[EpisodeState, str]:
        return self._for(task).reset(task)

    def step(
        self, state: EpisodeState, action: str, action_tokens: int | None = None
    ) -> Transition:
        return self._for(state.task).step(state, action, action_tokens)

    def truncate(self, state: EpisodeState, reason: str) -> Transition:
        return self._for(state.task).truncate(state, reason)

    def step_cost(self, state: EpisodeState) -> float:
        estimate = getattr(self._for(state.task), "step_cost", None)
        return float(estimate(state)) if callable(estimate) else 1.0

    @property
    def resumable(self) -> bool:
        """Its episodes resume when every environment's do (`protocol.resumable`)."""
        return all(resumable(env) for env in self.environments.values())

    def exploits(self, tasks: Sequence[Mapping[str, Any]]) -> Iterator[EpisodeExploit]:
        """Each environment's own exploit classes, on the tasks routed to it, played
        through this router (so a class cannot pay through the mix what it cannot alone)."""
        for name, env in self.environments.items():
            routed = [t for t in tasks if str(t.get(self.key)) == name]
            exploits_of = getattr(env, "exploits", None)
            if routed and callable(exploits_of):
                yield from exploits_of(routed)

    def close(self) -> None:
        for env in self.environments.values():
            close = getattr(env, "close", None)
            if callable(close):
                close()
