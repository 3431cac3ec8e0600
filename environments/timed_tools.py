"""Kept for imports: the time budgets and parallel calls are every `ToolEnvironment`'s now.

`TimedTools` is `ToolEnvironment` itself (one mechanism, `environments.parallel_calls`),
so an environment written against the old mixin keeps working unchanged.
"""

from __future__ import annotations

from rewardsmith.environments.base import ToolEnvironment
from rewardsmith.environments.parallel_calls import episode_tool_seconds

__all__ = ["TimedTools", "episode_tool_seconds"]

TimedTools = ToolEnvironment
