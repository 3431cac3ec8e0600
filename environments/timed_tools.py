"""Tool calls of one turn run in parallel under a per-turn and a per-episode time budget.

`TimedTools` is a `ToolEnvironment` mixin: the calls of one action start together, the
turn waits at most `turn_budget_s` for them (a call still running is answered with an
error saying so and its result is dropped), and the seconds each turn's tools took are
kept in the trajectory step's meta (``tool_s``), so the episode budget is read from the
state itself, never from the environment object. An episode past `episode_budget_s` ends
as ``time_budget``, scored as it stands.
"""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor, wait
from typing import Any, ClassVar

from rewardsmith.environments.base import ToolEnvironment
from rewardsmith.environments.protocol import EpisodeState, Transition
from rewardsmith.environments.tools import ToolCall
from rewardsmith.graders import Reward

__all__ = ["TimedTools", "episode_tool_seconds"]

_POOL = ThreadPoolExecutor(max_workers=16, thread_name_prefix="env-tool")


def episode_tool_seconds(state: EpisodeState) -> float:
    return float(sum(a.get("meta", {}).get("tool_s", 0.0) for a in state.attempts))


class TimedTools(ToolEnvironment):
    """Parallel tool calls with time budgets (see the module doc)."""

    turn_budget_s: ClassVar[float] = 20.0
    episode_budget_s: ClassVar[float] = 60.0

    def _call_all(
        self, state: EpisodeState, calls: list[ToolCall]
    ) -> tuple[list[str], dict[str, Any]]:
        left = self.episode_budget_s - episode_tool_seconds(state)
        budget = max(0.0, min(self.turn_budget_s, left))
        started = time.monotonic()
        futures = [_POOL.submit(self._call, c) for c in calls]
        wait(futures, timeout=budget)
        took = time.monotonic() - started
        results = [
            f.result()
            if f.done()
            else f"error: tool {c.name!r} did not finish within the turn's {budget:.0f} s budget"
            for c, f in zip(calls, futures, strict=True)
        ]
        return results, {"tool_s": round(took, 3)}

    def _continue(
        self, state: EpisodeState, observation: str, reward: Reward | None = None
    ) -> Transition:
        if episode_tool_seconds(state) >= self.episode_budget_s:
            return self.finish(state, "time_budget")
        return super()._continue(state, observation, reward)
