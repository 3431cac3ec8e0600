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
dropped in a forked child so no pipe is ever shared between processes.
"""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing as mp
import os
import pickle
import resource
import signal
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

__all__ = ["CallOutcome", "call_with_limits"]

_PR_SET_PDEATHSIG = 1


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


def _worker_main(conn: Connection, preload: tuple[str, ...], memory_bytes: int | None) -> None:
    # Die with the parent, so a killed scorer leaves no worker behind.
    with contextlib.suppress(OSError):
        ctypes.CDLL(None).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if memory_bytes:
        resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    for module in preload:
        __import__(module)
    while True:
        try:
            request = conn.recv_bytes()
        except EOFError:
            return
        try:
            fn, args, kwargs = pickle.loads(request)
            reply: tuple[str, Any] = ("ok", fn(*args, **kwargs))
        except BaseException as exc:  # everything, RecursionError and MemoryError included
            detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
            reply = ("error", detail[-2000:])
        try:
            conn.send(reply)
        except Exception as exc:  # an unpicklable result is the function's error
            conn.send(("error", f"result could not be sent back: {exc}"))


class _Worker:
    def __init__(self, preload: tuple[str, ...], memory_bytes: int | None) -> None:
        ctx = mp.get_context("spawn")  # a clean interpreter: no inherited threads or locks
        self.conn, child_conn = ctx.Pipe()
        self.process = ctx.Process(
            target=_worker_main, args=(child_conn, preload, memory_bytes), daemon=True
        )
        self.process.start()
        child_conn.close()

    def call(
        self, fn: Callable[..., Any], args: tuple, kwargs: dict, timeout_s: float
    ) -> CallOutcome:
        start = time.perf_counter()
        try:
            self.conn.send((fn, args, kwargs))
            if not self.conn.poll(timeout_s):
                self.kill()
                return CallOutcome(timed_out=True, elapsed_s=time.perf_counter() - start)
            status, payload = self.conn.recv()
        except (EOFError, OSError, BrokenPipeError):
            self.kill()
            return CallOutcome(died=True, elapsed_s=time.perf_counter() - start)
        elapsed = time.perf_counter() - start
        if status == "ok":
            return CallOutcome(value=payload, elapsed_s=elapsed)
        return CallOutcome(error=payload, elapsed_s=elapsed)

    @property
    def alive(self) -> bool:
        return self.process.is_alive()

    def kill(self) -> None:
        if self.process.is_alive():
            self.process.kill()
        self.process.join(timeout=5)
        self.conn.close()


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
    outcome = worker.call(fn, args, kwargs, timeout_s)
    if worker.alive and not (outcome.timed_out or outcome.died):
        with _lock:
            _idle.setdefault(key, []).append(worker)
    return outcome
