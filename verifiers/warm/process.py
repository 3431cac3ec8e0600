"""A warm worker process, seen from its caller.

`WarmProcess(spec)` starts a worker and talks to it over two private pipes in frames
(`_frames`); `call` sends one request and waits for its answer under a deadline. The
executor's pool drives many of them at once with the same parts (`handles`, `receive`,
`watch`, `kill`). What every worker gets, whoever starts it:

- **a ready handshake**: the worker's first frame says it is ready (or why it is not); a
  caller starts no clock before it, and a worker not ready ``start_timeout_s`` after its
  start is killed. Clocks time the work, never the start-up.
- **a deadline per call**, enforced by killing: `call` kills the worker's whole tree when
  the time is up, and the caller never blocks on a stalled worker (frames are read and
  written without blocking).
- **the whole tree killed**: a `Role` worker runs under a warden (`_warden`) that is a
  child subreaper, so whatever the worker started, daemons included, stays below the
  warden; `kill` stops the tree, then kills it (`_tree.kill_tree`), and a worker that
  ends by itself takes its leftovers with it.
- **output captured**: fds 1 and 2 are a file the caller holds (`_output`); nothing the
  worker prints reaches the caller's stdout or a server's log. A call's output comes back
  capped (head and tail) with its size; past ``output_limit_bytes`` the call is stopped.
- **a memory limit**: the worker's resident size is checked every ``watch_s`` while it
  works (a worker over ``memory_bytes`` is killed) and its peak after every unit; see
  `_runtime`.

Two ways to start: a `Role` is a Python function served by the warm runtime in a worker
forked from the warden (the pool's and killable's workers); a `Command` is any program
that speaks the frames itself (its hello first), such as the sandbox's fork server.
What it does not cover: isolation. A worker runs trusted code with the caller's rights;
untrusted code belongs in `rewardsmith.verifiers.sandbox`.
"""

from __future__ import annotations

import contextlib
import math
import os
import pickle
import subprocess
import sys
import time
import types
from typing import Any

from rewardsmith.verifiers.warm import _runtime
from rewardsmith.verifiers.warm._frames import FrameReader, FrameWriter, wait_any
from rewardsmith.verifiers.warm._output import OutputFile
from rewardsmith.verifiers.warm._tree import kill_tree, resident_bytes, wait_gone
from rewardsmith.verifiers.warm.forkserver import ForkedWarden, ForkServer
from rewardsmith.verifiers.warm.spec import Command, Ending, Reply, Role, WarmSpec

__all__ = ["SKIP_MAIN_FLAG", "WarmProcess", "defines_nothing_to_send", "main_module_ref"]

_HERE = os.path.dirname(os.path.abspath(__file__))
_WARDEN = f"import sys; sys.path.insert(0, {_HERE!r}); import _warden; _warden.main()"
STOP_WAIT_S = 1.0
"""How long `stop` waits for a worker to exit on its own before killing it."""


class WarmProcess:
    """One warm worker; see the module docstring. Not thread-safe: one caller at a time."""

    def __init__(self, spec: WarmSpec, forks: ForkServer | None = None) -> None:
        """``forks``: fork a `Role` worker from this fork server (`forkserver`) rather than
        start a fresh interpreter; if it cannot, the worker starts fresh."""
        launch = spec.launch
        if isinstance(launch, Role) and launch.main_module and _runtime.IMPORTING_MAIN:
            raise RuntimeError(
                "a worker was started while a worker imported the main module: guard the "
                "main module's entry point with `if __name__ == '__main__':`"
            )
        self.spec = spec
        self.output = OutputFile()
        self.born = time.monotonic()
        self.ready = False
        self.ready_error: str | None = None
        self.info: dict[str, Any] = {}
        self.overrun_bytes: int | None = None
        """The resident size that made `watch` report a memory overrun."""
        self._frames: list[Any] = []
        self._closed = False
        self.forked = False
        """Whether the worker was forked from a fork server (it has its imports done)."""
        self.process: subprocess.Popen[bytes] | ForkedWarden = self._start(launch, forks)
        self.pid = self.worker_pid = self.process.pid
        self.sentinel = os.pidfd_open(self.pid)
        if isinstance(launch, Role) and not self.forked:
            self.requests.write(_setup(launch, spec))

    def _start(
        self, launch: Role | Command, forks: ForkServer | None
    ) -> subprocess.Popen[bytes] | ForkedWarden:
        if forks is None or not isinstance(launch, Role):
            return self._popen(launch)
        request_read, request_write = os.pipe()
        reply_read, reply_write = os.pipe()
        try:
            warden = forks.spawn(request_read, reply_write, self.output.fd)
        finally:
            os.close(request_read)
            os.close(reply_write)
        if warden is None:
            os.close(request_write)
            os.close(reply_read)
            return self._popen(launch)
        self.forked = True
        self.requests = FrameWriter(request_write)
        self.replies = FrameReader(reply_read)
        return warden

    def _popen(self, launch: Role | Command) -> subprocess.Popen[bytes]:
        request_read, request_write = os.pipe()
        reply_read, reply_write = os.pipe()
        if isinstance(launch, Role):
            argv: list[str] = [sys.executable, "-I", "-c", _WARDEN]
            env = None
        else:
            argv, env = list(launch.argv), None if launch.env is None else dict(launch.env)
        fds = {"{request_fd}": str(request_read), "{reply_fd}": str(reply_write)}
        if any(arg in fds for arg in argv):
            argv = [fds.get(arg, arg) for arg in argv]
        else:
            argv += fds.values()
        try:
            process = subprocess.Popen(
                argv,
                pass_fds=(request_read, reply_write),
                stdin=subprocess.DEVNULL,
                stdout=self.output.fd,
                stderr=self.output.fd,
                start_new_session=True,  # no terminal signal reaches it; its own group
                env=env,
            )
        except BaseException:
            for fd in (request_write, reply_read):
                os.close(fd)
            self.output.close()
            raise
        finally:
            os.close(request_read)
            os.close(reply_write)
        self.requests = FrameWriter(request_write)
        self.replies = FrameReader(reply_read)
        return process

    # ------------------------------------------------------------------ state

    @property
    def alive(self) -> bool:
        """Whether the worker can still answer: its warden runs and its reply pipe is open
        (the pipe closes the moment the worker dies; the warden exits just after)."""
        return not self._closed and not self.replies.closed and self.process.poll() is None

    @property
    def start_deadline(self) -> float:
        return self.born + self.spec.start_timeout_s

    def exit_code(self, wait_s: float = 0.0) -> int | None:
        """The worker's exit code (negative: killed by that signal), once it has ended.
        ``wait_s``: how long to wait for it (the warden exits just after its worker)."""
        if self._closed or wait_s <= 0:
            return self.process.poll()
        try:
            return self.process.wait(wait_s)
        except subprocess.TimeoutExpired:
            return None

    def handles(self) -> tuple[list[int], list[int]]:
        """(fds to wait on for reading, for writing): a reply, a death, a drained pipe."""
        if self._closed:
            return [], []
        return [self.replies.fd, self.sentinel], [self.requests.fd] if self.requests.pending else []

    # ------------------------------------------------------------------ messages

    def send(self, message: Any) -> None:
        """Queue a frame for the worker; raises OSError if the worker is gone."""
        self.requests.write(message)

    def flush(self) -> None:
        """Write queued frames as far as the pipe takes them (a worker may be gone)."""
        with contextlib.suppress(OSError):
            self.requests.flush()

    def receive(self) -> list[Any]:
        """The frames that arrived, without blocking; the hello is consumed here."""
        if not self._closed:
            self._frames += [pickle.loads(body) for body in self.replies.read()]
        if not self.ready and self.ready_error is None and self._frames:
            self._hello(self._frames.pop(0))
        frames, self._frames = (self._frames, []) if self.ready else ([], self._frames)
        return frames

    def _hello(self, frame: Any) -> None:
        launch = self.spec.launch
        if isinstance(launch, Command):
            error = launch.hello(frame) if launch.hello is not None else None
        elif isinstance(frame, tuple) and frame[:1] == ("ready",):
            self.info = dict(frame[1])
            self.worker_pid = int(self.info.get("pid", self.pid))
            error = self._over_limit_at_start()
        else:
            why = str(frame[1]) if isinstance(frame, tuple) and len(frame) > 1 else repr(frame)
            error = f"failed to start ({why})"
        self.ready, self.ready_error = error is None, error

    def _over_limit_at_start(self) -> str | None:
        limit, held = self.spec.memory_bytes, self.info.get("resident_bytes") or 0
        if limit is not None and held > limit:
            return (
                f"the worker holds {held >> 20} MiB once started, over its memory limit of "
                f"{limit >> 20} MiB: raise the limit"
            )
        return None

    def check_start(self) -> str | None:
        """Why the worker failed to start (died, or not ready in time), or None so far.
        Reads the hello if it is there; kills a worker past its start deadline."""
        self.receive()
        if self.ready or self.ready_error is not None:
            return self.ready_error
        if self.replies.closed or not self.alive:
            code = self.exit_code(wait_s=1.0)
            self.ready_error = f"died while starting (exit code {_code(code)})"
        elif time.monotonic() >= self.start_deadline:
            self.ready_error = (
                f"was not ready {self.spec.start_timeout_s:g} s after it started and was killed"
            )
        if self.ready_error is not None:
            self.kill()
        return self.ready_error

    def wait_ready(self) -> str | None:
        """Block until the worker is ready (None) or could not start (the reason)."""
        while (error := self.check_start()) is None and not self.ready:
            read, _ = self.handles()
            wait_any(read, (), self.start_deadline - time.monotonic())
        return error

    # ------------------------------------------------------------------ limits

    def watch(self) -> Ending | None:
        """A busy worker's memory and output against its limits: the overrun, or None."""
        limit = self.spec.memory_bytes
        if limit is not None:
            held = resident_bytes(self.worker_pid)
            if held is not None and held > limit:
                self.overrun_bytes = held
                return Ending.MEMORY
        if self.output.size() > self.spec.output_limit_bytes:
            return Ending.OUTPUT
        return None

    def why(self, ending: Ending, limit_s: float | None = None) -> str:
        """The words for an ending that is not an answer."""
        if ending is Ending.TIMEOUT:
            return f"killed after the {limit_s:g} s time limit"
        if ending is Ending.MEMORY:
            held = (self.overrun_bytes or 0) >> 20
            limit = (self.spec.memory_bytes or 0) >> 20
            return f"killed holding {held} MiB, over its memory limit of {limit} MiB"
        if ending is Ending.OUTPUT:
            return f"stopped after writing over {self.spec.output_limit_bytes} bytes of output"
        return f"the worker process died (exit code {_code(self.exit_code(wait_s=1.0))})"

    # ------------------------------------------------------------------ one call

    def call(self, request: Any, timeout_s: float | None) -> Reply:
        """Send ``request``; wait for the answer, at most ``timeout_s`` seconds after the
        worker is ready. Any ending but an answer leaves the worker killed."""
        error = self.wait_ready()
        if error is not None:
            return Reply(Ending.START, detail=error)
        mark = self.output.size()
        start = time.monotonic()
        deadline = math.inf if timeout_s is None else start + timeout_s
        with contextlib.suppress(OSError):  # gone already: reported below
            self.send(request)
        ending = None
        while ending is None:
            try:
                frames = self.receive()
            except Exception as exc:  # an answer this process cannot unpickle
                reply = self._reply(Ending.DIED, None, start, mark, f"unreadable answer: {exc}")
                self.kill()
                return reply
            if frames:
                return self._reply(Ending.ANSWER, frames[0], start, mark)
            if self.replies.closed or not self.alive:
                ending = Ending.DIED
            elif time.monotonic() >= deadline:
                ending = Ending.TIMEOUT
            else:
                ending = self.watch()
            if ending is None:
                self.flush()
                read, write = self.handles()
                wait_any(read, write, min(deadline - time.monotonic(), self.spec.watch_s))
        reply = self._reply(ending, None, start, mark, self.why(ending, timeout_s))
        self.kill()
        return reply

    def _reply(
        self, ending: Ending, answer: Any, start: float, mark: int, detail: str = ""
    ) -> Reply:
        elapsed = time.monotonic() - start
        text, total = self.output.text(mark, self.output.size(), self.spec.output_bytes)
        if ending is Ending.ANSWER:
            self.output.empty_if_large()
        return Reply(ending, answer, elapsed, detail, text, total)

    # ------------------------------------------------------------------ ending

    def kill(self) -> None:
        """Kill the worker's whole tree and release everything it held."""
        if self._closed:
            return
        wait_gone(kill_tree(self.pid))
        self.process.wait()
        self._close()

    def stop(self, wait_s: float = STOP_WAIT_S) -> None:
        """Ask the worker to exit (end of file on its request pipe); kill its tree if it is
        not gone within ``wait_s``."""
        self.begin_stop()
        self.finish_stop(time.monotonic() + wait_s)

    def begin_stop(self) -> None:
        """The first half of `stop`, so that many workers can be stopped together."""
        if not self._closed:
            with contextlib.suppress(OSError):
                os.close(self.requests.fd)
            self.requests.fd = -1

    def finish_stop(self, until: float | None = None) -> None:
        if self._closed:
            return
        try:
            self.process.wait(
                max(0.0, (until or time.monotonic() + STOP_WAIT_S) - time.monotonic())
            )
        except subprocess.TimeoutExpired:
            self.kill()
            return
        wait_gone(kill_tree(self.pid))  # an ended warden leaves nothing, but be sure
        self._close()

    def _close(self) -> None:
        self._closed = True
        for fd in (self.requests.fd, self.replies.fd, self.sentinel):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self.requests.fd = self.replies.fd = self.sentinel = -1


def setup_of(role: Role, spec: WarmSpec) -> dict[str, Any]:
    """What a worker of ``spec`` is told before it starts (what a fork server is told)."""
    return _setup(role, spec)


def _setup(role: Role, spec: WarmSpec) -> dict[str, Any]:
    return {
        "sys_path": list(sys.path),
        "role": role.target,
        "preload": list(role.preload),
        "main": main_module_ref() if role.main_module else None,
        "memory_bytes": spec.memory_bytes,
    }


def main_module_ref() -> tuple[str, str] | None:
    """How a worker finds this process's main module: ("name", module) or ("path", file).

    None when there is nothing to import: an interactive session, ``-c``, or
    ``python -m package`` (its ``__main__`` would run again), as multiprocessing decides;
    and, to spare each worker the main module's imports (a big CLI's), when nothing a job
    could refer to is defined there (`defines_nothing_to_send`).
    """
    main = sys.modules.get("__main__")
    if main is None or defines_nothing_to_send(main):
        return None
    spec = getattr(main, "__spec__", None)
    name = getattr(spec, "name", None)
    if name:
        return None if name == "__main__" or name.endswith(".__main__") else ("name", name)
    path = getattr(main, "__file__", None)
    return ("path", os.path.abspath(path)) if path else None


SKIP_MAIN_FLAG = "REWARDSMITH_WORKERS_SKIP_MAIN"
"""A main module that sets this global to True says that nothing it defines is ever sent
to a worker (``rewardsmith.cli.main``: its verifiers come from specs and the registry)."""


def defines_nothing_to_send(main: types.ModuleType) -> bool:
    """Whether a worker can do without importing ``main``: it says so (`SKIP_MAIN_FLAG`),
    or none of its globals was defined in it. A pickle refers to a function or class by
    its module and name, so one defined in the main module is found in a worker only if
    that module is imported there; objects whose code lives elsewhere (a console script's
    ``app``, imported modules) need nothing from it."""
    namespace = vars(main)
    if namespace.get(SKIP_MAIN_FLAG) is True:
        return True
    for name, value in list(namespace.items()):
        if name.startswith("__") or isinstance(value, types.ModuleType):
            continue
        try:
            home = getattr(value, "__module__", None)
        except Exception:  # an odd object: assume the worst
            return False
        if home in ("__main__", "__mp_main__"):
            return False
    return True


def _code(code: int | None) -> str:
    return "unknown" if code is None else str(code)
