"""The warden: the first process of a warm worker, and the last of its tree to exit.

Started by `WarmProcess` as ``python -I -c "...; _warden.main()" REQUEST_FD REPLY_FD``
(by path, so that it imports nothing but the standard library and its two siblings). It
makes itself a child subreaper, forks the worker, and then only waits:

- the worker (the fork) reads its set-up from REQUEST_FD, imports what it needs and serves
  (`rewardsmith.verifiers.warm._runtime`);
- every process the worker's tree leaves behind (a daemon that double-forked, a child
  whose parent died) is reparented to the warden rather than to init, so the tree stays
  below it: killing the warden's tree kills all of it, and when the worker ends the warden
  kills whatever is left before it exits itself;
- the warden exits as its worker did (same code, or the same signal), so the caller reads
  the worker's fate from the warden's exit status;
- if the caller dies, the warden kills the tree within `PARENT_POLL_S` and exits.

It stays small (a bare interpreter, about 8 MB) because it forks before any import.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import resource
import select
import signal
import sys
from typing import Any

import _frames
import _tree

PR_SET_CHILD_SUBREAPER = 36
PARENT_POLL_S = 0.5


def main() -> None:
    request_fd, reply_fd = int(sys.argv[1]), int(sys.argv[2])
    exit_like(become_warden(request_fd, reply_fd, None, caller=os.getppid()))


def become_warden(request_fd: int, reply_fd: int, runtime: Any, caller: int) -> int:
    """Fork the worker, wait for it, kill what it left; its wait status. ``runtime``: the
    fork server's prepared `_runtime` (the worker serves at once), or None (the worker
    reads its set-up and imports what it needs)."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        _frames.write_frame(reply_fd, ("error", "prctl(PR_SET_CHILD_SUBREAPER) failed"))
        os._exit(1)
    worker = os.fork()
    if worker == 0:
        if runtime is None:
            _worker(request_fd, reply_fd)
        try:
            runtime.serve_prepared(request_fd, reply_fd)
        finally:
            os._exit(1)
    os.close(request_fd)  # the channel is the worker's: its end of file is the worker's
    os.close(reply_fd)
    status = _watch(worker, caller)
    _tree.kill_tree(os.getpid(), include_root=False)  # whatever the tree left behind
    _reap_all()
    return status


def _worker(request_fd: int, reply_fd: int) -> None:
    try:
        setup = _frames.read_frame(request_fd)
        if setup is None:
            os._exit(0)
        sys.path[:] = setup["sys_path"]
        from rewardsmith.verifiers.warm._runtime import serve
    except BaseException as exc:  # reported as the hello, so the caller says why
        try:
            _frames.write_frame(reply_fd, ("error", f"worker set-up failed: {exc!r}"))
        finally:
            os._exit(1)
    serve(setup, request_fd, reply_fd)
    os._exit(0)


def _watch(worker: int, caller: int) -> int:
    """Wait for the worker to end (reaping adopted orphans meanwhile); its wait status."""
    pidfd = os.pidfd_open(worker)
    while True:
        select.select([pidfd], [], [], PARENT_POLL_S)
        status = _reap_all(worker)
        if status is not None:
            return status
        if os.getppid() != caller:  # the caller is gone: nobody will read this tree's work
            _tree.kill_tree(os.getpid(), include_root=False)


def _reap_all(worker: int | None = None) -> int | None:
    """Reap every dead child without blocking; the worker's wait status if it was one."""
    found = None
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return found
        if pid == 0:
            return found
        if pid == worker:
            found = status


def exit_like(status: int) -> None:
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))  # the worker's fate, not a core file
        with contextlib.suppress(OSError, ValueError):  # SIGKILL has no handler to reset
            signal.signal(number, signal.SIG_DFL)
        os.kill(os.getpid(), number)
        os._exit(128 + number)  # a signal that does not end a process
    os._exit(os.waitstatus_to_exitcode(status))


if __name__ == "__main__":
    main()
