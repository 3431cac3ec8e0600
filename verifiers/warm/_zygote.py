"""The fork server: one preloaded interpreter that forks warm workers with their imports done.

Started by `forkserver.ForkServer` as ``python -I -c "...; _zygote.main()" CONTROL_FD`` (by
path, like the warden). It reads the workers' set-up (the same as a warden's worker gets),
imports what every worker needs (the warm runtime, the role, its preloads, the caller's
main module where needed), freezes those objects out of the garbage collector's reach
(so collections do not write to the pages the workers share) and says ready. Then, for
each request (one byte with four descriptors: the worker's request and reply pipes, its
output file, and a status pipe), it forks a *warden* and answers its pid:

- the warden is the same as a fresh one (`_warden`): a child subreaper in its own session,
  fds 1 and 2 its output file, forking the worker and waiting, its leftovers killed, its
  exit the worker's; it writes the worker's exit code on the status pipe before it exits
  (the caller is not its parent, so cannot wait for it). A warden killed writes nothing,
  which the caller reads as killed;
- the worker it forks serves as a fresh one would, with its imports already there: its
  pages are the fork server's until it writes them (copy on write), so N workers of one
  kind hold one copy of their code and modules, and a new worker costs a fork, not an
  interpreter start and its imports.

Fork safety: the fork server runs no thread (it imports, then waits on one socket); before
each fork it checks that it still has exactly one, and refuses (the caller then starts a
fresh interpreter) if an import started one, since a lock held by another thread at the
fork would stay held forever in the child. It exits when the caller closes the control
socket or dies, and kills the wardens it forked on the way out.
"""

from __future__ import annotations

import contextlib
import gc
import os
import select
import signal
import socket
import sys
import threading

import _frames
import _tree
import _warden

PARENT_POLL_S = 0.5


def main() -> None:
    control = socket.socket(fileno=int(sys.argv[1]))
    caller = os.getppid()
    setup = _frames.read_frame(control.fileno())
    if setup is None:
        os._exit(0)
    try:
        serve_setup = _prepare(setup)
    except BaseException as exc:  # the caller falls back to fresh workers and says why
        with contextlib.suppress(OSError):
            _frames.write_frame(control.fileno(), ("error", f"{type(exc).__name__}: {exc}"))
        os._exit(1)
    _frames.write_frame(control.fileno(), ("ready", {"pid": os.getpid()}))
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # wardens are reaped by the kernel
    wardens: set[int] = set()
    try:
        _loop(control, caller, serve_setup, wardens)
    finally:
        for pid in wardens:
            _tree.kill_tree(pid)
        os._exit(0)


def _prepare(setup: dict) -> object:
    """Import what every worker needs; the runtime's `serve`, bound to ``setup``."""
    sys.path[:] = setup["sys_path"]
    from rewardsmith.verifiers.warm import _runtime

    _runtime.prepare(setup)
    gc.collect()
    gc.freeze()  # what is here now is shared: keep the collector from writing to it
    return _runtime


def _loop(control: socket.socket, caller: int, runtime: object, wardens: set[int]) -> None:
    while True:
        ready, _, _ = select.select([control], [], [], PARENT_POLL_S)
        if os.getppid() != caller:
            return  # the caller is gone: nobody will use these workers
        if not ready:
            continue
        try:
            _, fds, _, _ = socket.recv_fds(control, 1, 4)
        except OSError:
            return
        if len(fds) != 4:  # end of file (the caller closed), or a malformed request
            for fd in fds:
                os.close(fd)
            if not fds:
                return
            continue
        wardens &= {pid for pid in wardens if _tree.running(pid)}
        warden, error = _spawn(fds, runtime)
        if warden is not None:
            wardens.add(warden)
        _frames.write_frame(control.fileno(), ("spawned", warden) if error is None else error)


def _spawn(fds: list[int], runtime: object) -> tuple[int | None, tuple[str, str] | None]:
    """(the warden's pid, None), or (None, the error to answer)."""
    threads = _threads()
    if threads != 1:
        for fd in fds:
            os.close(fd)
        return None, ("error", f"the fork server runs {threads} threads: a fork is not safe")
    with contextlib.suppress(Exception):
        sys.stdout.flush()
        sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        _warden_child(fds, runtime)
    for fd in fds:
        os.close(fd)
    return pid, None


def _threads() -> int:
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return threading.active_count()


def _warden_child(fds: list[int], runtime: object) -> None:
    """In the forked warden: become a fresh warden, fork the worker, wait, exit like it."""
    request_fd, reply_fd, output_fd, status_fd = fds
    try:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # the warden reaps its worker itself
        os.setsid()
        os.dup2(output_fd, 1)
        os.dup2(output_fd, 2)
        os.close(output_fd)
        code = _warden.become_warden(request_fd, reply_fd, runtime, caller=os.getppid())
        with contextlib.suppress(OSError):
            os.write(status_fd, str(os.waitstatus_to_exitcode(code)).encode())
        _warden.exit_like(code)
    finally:
        os._exit(70)
