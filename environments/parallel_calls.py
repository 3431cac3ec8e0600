"""The tool calls of one turn run together, within the turn's and the episode's time budget.

One mechanism for every `ToolEnvironment` (veRL's agent loop runs a turn's calls the same
way): the calls start at once on a shared thread pool, the turn waits at most its budget
(the smaller of the per-turn budget and what is left of the episode's), and a call still
running then is answered with an error saying so (its result is dropped). The seconds a
turn's tools took are kept in the trajectory step's meta (``tool_s``), so the episode's
budget is read from the state itself, never from the environment object.

    >>> import time
    >>> results, took = call_together([0.2, 0.2, 0.2], lambda s: (time.sleep(s), "ok")[1],
    ...                               budget_s=5, name=lambda s: "sleep")
    >>> results, took < 0.5
    (['ok', 'ok', 'ok'], True)
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, wait
from typing import Any, TypeVar

__all__ = ["call_together", "episode_tool_seconds"]

_POOL = ThreadPoolExecutor(max_workers=32, thread_name_prefix="env-tool")
T = TypeVar("T")


def call_together(
    calls: Sequence[T],
    call: Callable[[T], str],
    budget_s: float,
    name: Callable[[T], str],
) -> tuple[list[str], float]:
    """Each call's result in order, and the seconds the turn waited.

    A call past `budget_s` is answered "did not finish within the turn's N s budget". It is
    not cancelled (a thread cannot be), which is why a tool that can hang (model code) runs
    in the sandbox under its own wall-clock limit, below the turn's budget."""
    started = time.monotonic()
    futures = [_POOL.submit(call, c) for c in calls]
    wait(futures, timeout=max(0.0, budget_s))
    took = time.monotonic() - started
    results = [
        f.result()
        if f.done()
        else f"error: tool {name(c)!r} did not finish within the turn's {budget_s:.0f} s budget"
        for c, f in zip(calls, futures, strict=True)
    ]
    return results, took


def episode_tool_seconds(state: Any) -> float:
    """The seconds the episode's tool turns have taken so far (from the steps' meta)."""
    return float(sum(a.get("meta", {}).get("tool_s", 0.0) for a in state.attempts))
