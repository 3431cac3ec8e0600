"""What runs inside a warm worker: set-up, the ready handshake, and the frame of each call.

The warden (`_warden`) forks the worker and calls `serve` with the set-up the caller sent:
the caller's ``sys.path``, the role to serve (``"module:function"``), modules to preload,
whether to import the caller's main module, and the memory limit. `serve` prepares, says
``("ready", info)`` (or ``("error", text)``), and hands the channel to the role, which
loops over requests and wraps each unit of work (one job, one call) in `run_unit`.

`run_unit` gives each unit what the caller cannot see from outside:
- its clock: `budget.start_job` with the unit's limit, so nested layers share it;
- its output: stdout and stderr are a file the caller holds (opened for appending), and
  the unit's output is the byte range it added, exact even for a bunch of quick units;
- its memory: the worker's peak resident size (``ru_maxrss``, one system call) against
  the limit. A peak over the limit makes the unit a memory overrun (the caller's watchdog
  catches most overruns while they happen; this catches one between two looks). A worker
  still holding more than half its limit after a unit is recycled: a verifier that
  allocated 4 GB once must not leave a 4 GB worker behind for every later job.
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib
import os
import resource
import runpy
import stat
import sys
import types
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rewardsmith.verifiers.warm import budget
from rewardsmith.verifiers.warm._frames import read_frame, write_frame
from rewardsmith.verifiers.warm._tree import resident_bytes

RECYCLE_FRACTION = 0.5
"""A worker holding more than this share of its memory limit after a unit is replaced."""

IMPORTING_MAIN = False
"""True while this worker imports the caller's main module (see `import_main`)."""

_memory_bytes: int | None = None
_libc: Any = None
_role: Callable[[Channel], None] | None = None


class Channel:
    """The worker's end of its two pipes (blocking: the worker has nothing else to do)."""

    def __init__(self, requests_fd: int, replies_fd: int) -> None:
        self.requests_fd, self.replies_fd = requests_fd, replies_fd

    def recv(self) -> Any:
        """The next request, or None when the caller closed the pipe (time to exit)."""
        try:
            return read_frame(self.requests_fd)
        except (EOFError, OSError):
            return None

    def send(self, reply: Any) -> None:
        write_frame(self.replies_fd, reply)


@dataclass(frozen=True)
class Unit:
    """What the runtime saw of one unit of work; travels back with its result."""

    output: tuple[int, int]
    """Byte range of the output file that the unit wrote."""
    peak_bytes: int | None = None
    """The worker's peak resident size, when it passed the memory limit."""
    recycle: bool = False
    """The worker should be replaced after this unit (over the limit, or bloated)."""
    limits: tuple[dict[str, Any], ...] = ()
    """Nested time limits hit during the unit (`budget.LimitHit.to_dict`)."""
    deadline: dict[str, Any] | None = None
    """Set when the unit's own clock ran out inside a nested layer: the job's limit hit
    (`budget.LimitHit.to_dict`) plus ``"inside"``, the layer that was running."""


def serve(setup: dict[str, Any], requests_fd: int, replies_fd: int) -> None:
    """Prepare as ``setup`` says, say ready, and serve the role until the caller closes."""
    try:
        prepare(setup)
    except BaseException as exc:  # everything: a SystemExit in a main module too
        detail = f"{type(exc).__name__}: {exc}"
        with contextlib.suppress(OSError):
            write_frame(replies_fd, ("error", f"worker set-up failed: {detail}"[-2000:]))
        _flush()
        os._exit(1)
    serve_prepared(requests_fd, replies_fd)


def prepare(setup: dict[str, Any]) -> None:
    """Everything a worker does before it can say ready: the fork server does it once for
    all the workers it forks (`_zygote`), a fresh worker for itself."""
    global _memory_bytes, _libc, _role
    _memory_bytes = setup.get("memory_bytes")
    if setup.get("main") is not None:
        import_main(setup["main"])
    for name in setup.get("preload", ()):
        importlib.import_module(name)
    _role = _resolve(setup["role"])
    _libc = ctypes.CDLL(None)
    # Line by line, as on a terminal: stdout and stderr then interleave in the order
    # the verifier wrote them, and a kill loses at most a partial line.
    sys.stdout.reconfigure(line_buffering=True)  # type: ignore[union-attr]


def serve_prepared(requests_fd: int, replies_fd: int) -> None:
    """Say ready and serve the prepared role until the caller closes; then exit."""
    assert _role is not None, "prepare() first"
    channel = Channel(requests_fd, replies_fd)
    channel.send(("ready", {"pid": os.getpid(), "resident_bytes": resident_bytes(os.getpid())}))
    _role(channel)
    _flush()
    os._exit(0)


def run_unit(work: Callable[[], Any], timeout_s: float | None) -> tuple[Any, Unit]:
    """Run ``work()`` as one unit: its own clock, output range and memory check.

    Returns (result, unit); ``result`` is None when the unit's clock ran out inside a
    nested layer (``unit.deadline`` says so). Other exceptions are ``work``'s to handle.
    """
    _flush()
    start = _output_offset()
    budget.start_job(timeout_s)
    deadline = None
    try:
        result = work()
    except budget.JobDeadline as stop:
        result, deadline = None, {**stop.hit.to_dict(), "inside": stop.inside.value}
    finally:
        hits = budget.end_job()
        _flush()
    peak, recycle = _memory_check()
    unit = Unit(
        (start, _output_offset()), peak, recycle, tuple(h.to_dict() for h in hits), deadline
    )
    return result, unit


def import_main(main: tuple[str, str]) -> None:
    """Import the caller's main module as ``__mp_main__`` and alias it as ``__main__``, as
    multiprocessing's spawn does, so that pickles of objects defined there resolve here.

    ``main`` is ("name", module) for ``python -m module`` and ("path", file) for a script.
    Its ``if __name__ == "__main__":`` block does not run (the name is ``__mp_main__``).
    """
    global IMPORTING_MAIN
    kind, where = main
    IMPORTING_MAIN = True
    try:
        if kind == "name":
            namespace = runpy.run_module(where, run_name="__mp_main__", alter_sys=True)
        else:
            namespace = runpy.run_path(where, run_name="__mp_main__")
    finally:
        IMPORTING_MAIN = False
    module = types.ModuleType("__mp_main__")
    module.__dict__.update(namespace)
    sys.modules["__main__"] = sys.modules["__mp_main__"] = module


def _resolve(target: str) -> Callable[[Channel], None]:
    module, _, name = target.partition(":")
    role: Callable[[Channel], None] = getattr(importlib.import_module(module), name)
    return role


def _flush() -> None:
    """Push buffered output into the file, Python's and C's, so ranges are complete."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    if _libc is not None:
        _libc.fflush(None)


def _output_offset() -> int:
    try:
        info = os.fstat(1)
    except OSError:
        return 0
    return info.st_size if stat.S_ISREG(info.st_mode) else 0


def _memory_check() -> tuple[int | None, bool]:
    """(peak when over the limit, whether to recycle the worker)."""
    if _memory_bytes is None:
        return None, False
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    if peak > _memory_bytes:
        return peak, True
    if peak <= _memory_bytes * RECYCLE_FRACTION:
        return None, False
    now = resident_bytes(os.getpid()) or 0
    return None, now > _memory_bytes * RECYCLE_FRACTION
