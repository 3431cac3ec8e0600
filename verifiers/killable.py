"""Run a trusted function on untrusted data in a separate process that can be killed.

Parsers of model text (sympy, PDF and mesh loaders, diagnostics) can hang or eat memory
on hostile input: ``sympify("9**9**9")`` never returns, and ``signal.alarm`` timeouts break
off the main thread. The only safe limit is enforced from outside: this module keeps warm
worker processes (started once, with the heavy imports done), sends each call to one, and
kills and replaces the worker when the call passes its deadline.

    >>> outcome = call_with_limits(sum, [1, 2, 3], timeout_s=5)
    >>> outcome.ok, outcome.value
    (True, 6)

The workers are `rewardsmith.verifiers.warm` workers, so each call gets what they give:

- wall-clock time: the worker's whole tree is killed at the deadline. Inside an executor
  job, the call's limit is also bounded by what is left of the job (one clock per job,
  `warm.budget`): a call cut short by the job's deadline ends the job (`JobDeadline`)
  instead of coming back as the call's own timeout.
- memory: ``memory_bytes`` bounds the worker's resident memory, checked while the call
  runs and by its peak after; an overrun is `CallOutcome.memory_exceeded` (with ``died``),
  and a worker left holding over half its limit is replaced.
- a worker that dies (segfault, OOM kill, ``os._exit``) costs only its call; its output
  (stdout and stderr) comes back capped in `CallOutcome.output` and never reaches yours.

What it does not cover: isolation. The function is trusted code working on untrusted
*data*; untrusted *code* goes to `rewardsmith.verifiers.sandbox`.

Workers are per process and per (`preload`, ``memory_bytes``), one per concurrent caller;
the pool is dropped in a forked child so no pipe is ever shared between processes. They are
plain subprocesses, not `multiprocessing` children, so they can be started from a daemonic
executor worker and never re-import the caller's main module (no
``if __name__ == "__main__"`` guard is needed); a worker whose parent dies is killed with
its tree within a second, even in the middle of a call that never returns.
"""

from __future__ import annotations

import os
import pickle
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rewardsmith.verifiers.warm import Ending, Layer, Role, WarmProcess, WarmSpec, allowance

__all__ = ["CallOutcome", "call_with_limits"]

ROLE = "rewardsmith.verifiers._killable_worker:serve"
START_TIMEOUT_S = 120.0


@dataclass(frozen=True, slots=True)
class CallOutcome:
    """How a call ended: a value, an exception in the function, a timeout, or a dead worker."""

    value: Any = None
    error: str | None = None
    """``"ExcType: message"`` when the function raised."""
    timed_out: bool = False
    died: bool = False
    """The worker process ended without answering (killed, crashed, out of memory)."""
    elapsed_s: float = 0.0
    memory_exceeded: bool = False
    """The worker went over ``memory_bytes`` during the call (``died`` is set too)."""
    output: str = ""
    """What the call printed (stdout and stderr, capped: head and tail)."""

    @property
    def ok(self) -> bool:
        return self.error is None and not self.timed_out and not self.died


_Key = tuple[tuple[str, ...], int | None]
_lock = threading.Lock()
_idle: dict[_Key, list[WarmProcess]] = {}


def _forget_pool_in_child() -> None:
    global _lock
    _lock = threading.Lock()
    _idle.clear()  # the parent's workers: not ours to use, nor to kill


os.register_at_fork(after_in_child=_forget_pool_in_child)


def call_with_limits(
    fn: Callable[..., Any],
    *args: Any,
    timeout_s: float,
    memory_bytes: int | None = None,
    preload: tuple[str, ...] = (),
    **kwargs: Any,
) -> CallOutcome:
    """Call ``fn(*args, **kwargs)`` in a warm worker process, killed after `timeout_s`.

    `fn` must be importable by name (a module-level function) and its arguments and result
    picklable. `preload` names modules the worker imports once at start (``("sympy",)``),
    so the first call does not pay for them. Safe to call from many threads at once.
    """
    try:
        call = pickle.dumps((fn, args, kwargs), pickle.HIGHEST_PROTOCOL)
    except Exception as exc:
        return CallOutcome(error=f"the call could not be pickled: {type(exc).__name__}: {exc}")
    key = (tuple(preload), memory_bytes)
    worker = _take(key)
    start_error = worker.wait_ready()  # a start counts against a job's clock, not the call's
    if start_error is not None:
        return CallOutcome(error=f"the worker {start_error}")
    try:
        allowed = allowance(timeout_s, Layer.CALL)  # inside a job: at most what it has left
    except BaseException:
        _give_back(key, worker)
        raise
    reply = worker.call((call, allowed.seconds), allowed.seconds)
    if reply.ending is Ending.ANSWER:
        return _answered(key, worker, reply.answer, reply.elapsed_s, reply.output)
    if reply.ending is Ending.TIMEOUT:
        allowed.expired()  # raises JobDeadline if the job's clock, not the call's, ran out
        return CallOutcome(timed_out=True, elapsed_s=reply.elapsed_s, output=reply.output)
    memory = reply.ending is Ending.MEMORY
    return CallOutcome(
        died=True, memory_exceeded=memory, elapsed_s=reply.elapsed_s, output=reply.output
    )


def _take(key: _Key) -> WarmProcess:
    with _lock:
        idle = _idle.setdefault(key, [])
        while idle:
            worker = idle.pop()
            if worker.alive:
                return worker
    preload, memory_bytes = key
    spec = WarmSpec(Role(ROLE, preload), memory_bytes=memory_bytes, start_timeout_s=START_TIMEOUT_S)
    return WarmProcess(spec)


def _give_back(key: _Key, worker: WarmProcess) -> None:
    with _lock:
        _idle.setdefault(key, []).append(worker)


def _answered(
    key: _Key, worker: WarmProcess, answer: Any, elapsed: float, output: str
) -> CallOutcome:
    status, value, unit = answer
    if unit.recycle:
        worker.kill()  # over its limit, or still holding over half of it: a fresh one next
    else:
        _give_back(key, worker)
    if unit.peak_bytes is not None:
        return CallOutcome(died=True, memory_exceeded=True, elapsed_s=elapsed, output=output)
    if status == "ok":
        return CallOutcome(value=value, elapsed_s=elapsed, output=output)
    return CallOutcome(error=value, elapsed_s=elapsed, output=output)
