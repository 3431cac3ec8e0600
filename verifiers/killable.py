"""Run a trusted function on untrusted data in a separate process that can be killed.

Parsers of model text (sympy, PDF and mesh loaders, diagnostics) can hang or eat memory
on hostile input: ``sympify("9**9**9")`` never returns, and ``signal.alarm`` timeouts break
off the main thread. The only safe limit is enforced from outside: this module keeps warm
worker processes (started once, with the heavy imports done), sends each call to one, and
kills and replaces the worker when the call passes its deadline.

    >>> outcome = call_with_limits(sum, [1, 2, 3], timeout_s=5)
    >>> outcome.ok, outcome.value
    (True, 6)

What it covers: wall-clock time (the worker is SIGKILLed at the deadline), address-space
size (``RLIMIT_AS`` in the worker), a worker that dies (segfault, OOM kill, ``os._exit``)
costing only its call. What it does not: isolation. The function is trusted code working on
untrusted *data*; untrusted *code* goes to `rewardsmith.verifiers.sandbox`.

Workers are per process and per `preload` set, one per concurrent caller; the pool is
dropped in a forked child so no pipe is ever shared between processes. They are plain
``python -m`` subprocesses, not `multiprocessing` children, so they can be started from a
daemonic executor worker and never re-import the caller's main module (no
``if __name__ == "__main__"`` guard is needed); a worker whose parent dies exits within a
second, even in the middle of a call that never returns.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

__all__ = ["CallOutcome", "call_with_limits"]


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

    @property
    def ok(self) -> bool:
        return self.error is None and not self.timed_out and not self.died


_START_TIMEOUT_S = 120.0


class _Worker:
    """A warm worker process (see `_killable_worker`) and its two pipes."""

    def __init__(self, preload: tuple[str, ...], memory_bytes: int | None) -> None:
        request_read, self._request_write = os.pipe()
        self._reply_read, reply_write = os.pipe()
        self.process = subprocess.Popen(
            [sys.executable, "-m", "rewardsmith.verifiers._killable_worker",
             str(request_read), str(reply_write)],
            pass_fds=(request_read, reply_write),
            stdin=subprocess.DEVNULL,
        )  # fmt: skip
        os.close(request_read)
        os.close(reply_write)
        self.requests = Connection(self._request_write, readable=False)
        self.replies = Connection(self._reply_read, writable=False)
        self.requests.send_bytes(pickle.dumps((list(sys.path), memory_bytes, preload)))
        self.ready_error = self._await_ready()

    def _await_ready(self) -> str | None:
        if not self.replies.poll(_START_TIMEOUT_S):
            self.kill()
            return f"worker did not start within {_START_TIMEOUT_S} s"
        try:
            status, payload = self.replies.recv()
        except (EOFError, OSError):
            self.kill()
            return "worker exited while starting"
        return None if status == "ready" else str(payload)

    def call(
        self, fn: Callable[..., Any], args: tuple, kwargs: dict, timeout_s: float
    ) -> CallOutcome:
        start = time.perf_counter()
        try:
            self.requests.send_bytes(pickle.dumps((fn, args, kwargs)))
            if not self.replies.poll(timeout_s):
                self.kill()
                return CallOutcome(timed_out=True, elapsed_s=time.perf_counter() - start)
            status, payload = self.replies.recv()
        except (EOFError, OSError):
            self.kill()
            return CallOutcome(died=True, elapsed_s=time.perf_counter() - start)
        elapsed = time.perf_counter() - start
        if status == "ok":
            return CallOutcome(value=payload, elapsed_s=elapsed)
        return CallOutcome(error=payload, elapsed_s=elapsed)

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        for connection in (self.requests, self.replies):
            connection.close()


_lock = threading.Lock()
_idle: dict[tuple[tuple[str, ...], int | None], list[_Worker]] = {}


def _forget_pool_in_child() -> None:
    global _lock
    _lock = threading.Lock()
    _idle.clear()


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
    key = (tuple(preload), memory_bytes)
    with _lock:
        pool = _idle.setdefault(key, [])
        worker = pool.pop() if pool else None
    if worker is None or not worker.alive:
        worker = _Worker(key[0], memory_bytes)
        if worker.ready_error is not None:
            return CallOutcome(error=worker.ready_error)
    outcome = worker.call(fn, args, kwargs, timeout_s)
    if worker.alive and not (outcome.timed_out or outcome.died):
        with _lock:
            _idle.setdefault(key, []).append(worker)
    return outcome
