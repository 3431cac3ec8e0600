"""The tool calls of one turn run together, within the turn's and the episode's time budget.

One mechanism for every `ToolEnvironment` (veRL's agent loop runs a turn's calls the same
way): the calls start on a thread pool shared by every episode of the process, each call
may run for the budget (the smaller of the per-turn budget and what is left of the
episode's), and a call still running then is answered with an error saying so (its result
is dropped). The seconds a turn's tools took are kept in the trajectory step's meta
(``tool_s``), so the episode's budget is read from the state itself, never from the
environment object.

A call's budget is its own running time, counted from when a worker starts it: time spent
queued behind other episodes' calls is never charged to this episode. Charging it (the
clock once started at submission) let one episode harm another: ten episodes each
sleeping in four calls filled the pool, and an honest episode's first call, never
started, was answered "did not finish within the turn's budget" and its seconds charged
(red team, issue 24). Under group-relative advantages, harming a sibling pays. A call
that cannot even start within `MAX_QUEUE_S` raises `ToolsBusy`: the machine's failure,
never the model's.

    >>> import time
    >>> results, took = call_together([0.2, 0.2, 0.2], lambda s: (time.sleep(s), "ok")[1],
    ...                               budget_s=5, name=lambda s: "sleep")
    >>> results, took < 0.5
    (['ok', 'ok', 'ok'], True)
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any, TypeVar

__all__ = ["MAX_QUEUE_S", "ToolsBusy", "call_together", "episode_tool_seconds"]

_POOL = ThreadPoolExecutor(max_workers=32, thread_name_prefix="env-tool")
MAX_QUEUE_S = 600.0
"""Seconds a call may wait for a free worker before the turn fails as the machine's fault."""
_POLL_S = 0.05
T = TypeVar("T")


class ToolsBusy(RuntimeError):
    """A call waited `MAX_QUEUE_S` for a worker: the machine is overloaded, not the model."""


def call_together(
    calls: Sequence[T],
    call: Callable[[T], str],
    budget_s: float,
    name: Callable[[T], str],
) -> tuple[list[str], float]:
    """Each call's result in order, and the seconds the turn is charged: the longest own
    running time of its calls, at most `budget_s`.

    A call past `budget_s` of its own running time is answered "did not finish within the
    turn's N s budget". It is not cancelled (a thread cannot be), which is why a tool that
    can hang (model code) runs in the sandbox under its own wall-clock limit, below the
    turn's budget."""
    budget_s = max(0.0, budget_s)
    started: dict[int, float] = {}
    ended: dict[int, float] = {}

    def run(index: int, item: T) -> str:
        started[index] = time.monotonic()
        try:
            return call(item)
        finally:
            ended[index] = time.monotonic()

    submitted = time.monotonic()
    futures = [_POOL.submit(run, i, c) for i, c in enumerate(calls)]
    _wait_own_time(futures, started, budget_s, submitted)
    results = [
        f.result()
        if f.done() and ended.get(i, 0.0) - started.get(i, 0.0) <= budget_s
        else f"error: tool {name(c)!r} did not finish within the turn's {budget_s:.0f} s budget"
        for i, (c, f) in enumerate(zip(calls, futures, strict=True))
    ]
    now = time.monotonic()
    took = max(
        (min(ended.get(i, now), started[i] + budget_s) - started[i] for i in started),
        default=0.0,
    )
    return results, took


def _wait_own_time(
    futures: list[Future[str]], started: dict[int, float], budget_s: float, submitted: float
) -> None:
    """Wait until every call is done or has run `budget_s` since it started."""
    while True:
        now = time.monotonic()
        waiting = [
            i
            for i, f in enumerate(futures)
            if not f.done() and (i not in started or now < started[i] + budget_s)
        ]
        if not waiting:
            return
        if now - submitted > MAX_QUEUE_S and any(i not in started for i in waiting):
            raise ToolsBusy(f"a tool call waited {MAX_QUEUE_S:.0f} s for a free worker")
        deadlines = [started[i] + budget_s - now for i in waiting if i in started]
        queued = len(deadlines) < len(waiting)
        timeout = min([*deadlines, _POLL_S] if queued else deadlines)
        wait([futures[i] for i in waiting], timeout=max(0.0, timeout), return_when=FIRST_COMPLETED)


def episode_tool_seconds(state: Any) -> float:
    """The seconds the episode's tool turns have taken so far (from the steps' meta)."""
    return float(sum(a.get("meta", {}).get("tool_s", 0.0) for a in state.attempts))
