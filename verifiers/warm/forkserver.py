"""The caller's side of the fork server (`_zygote`): workers forked from one preloaded parent.

A `WarmSpec` with ``fork_server=True`` (the executor's pool) starts its `Role` workers
from a fork server shared by every worker of that kind in this process: the reward
server's lanes, each with its own pool, fork theirs from one parent, so their imports
are in memory once, and a replacement worker costs a fork instead of an interpreter
start and its imports. What a worker gets is unchanged (the warden, the tree kill, the
captured output, the limits, the ready handshake): only who forks the warden changes.

The fork server lives while some pool holds it (`acquire` / `release`); it exits when the
last lets go, or when this process dies. It is not this process's child's child in the
usual way (the wardens it forks are its children), so a warden's exit code comes back on
a status pipe (`ForkedWarden`). Anything that keeps it from serving (it cannot start, an
import started a thread, it died) makes the caller start workers the old way, fresh
interpreters, with the same guarantees.
"""

from __future__ import annotations

import contextlib
import os
import select
import socket
import subprocess
import sys
import threading
from typing import Any

from rewardsmith.verifiers.warm._frames import read_frame, write_frame

__all__ = ["ForkServer", "ForkedWarden", "acquire", "release"]

_HERE = os.path.dirname(os.path.abspath(__file__))
_BOOT = f"import sys; sys.path.insert(0, {_HERE!r}); import _zygote; _zygote.main()"
_lock = threading.Lock()
_servers: dict[tuple[int, str], ForkServer] = {}


class ForkedWarden:
    """A warden forked by the fork server, with the parts of `subprocess.Popen` that
    `WarmProcess` uses: ``pid``, ``poll``, ``wait``. Its exit code comes on ``status_fd``
    (nothing there: it was killed, reported as -9, SIGKILL)."""

    def __init__(self, pid: int, status_fd: int) -> None:
        self.pid = pid
        self.returncode: int | None = None
        self._status_fd = status_fd
        try:
            self._pidfd = os.pidfd_open(pid)
        except ProcessLookupError:  # gone already
            self._pidfd = -1
            self._finish()

    def poll(self) -> int | None:
        if self.returncode is None and select.select([self._pidfd], [], [], 0)[0]:
            self._finish()
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if self.returncode is None:
            if not select.select([self._pidfd], [], [], timeout)[0]:
                raise subprocess.TimeoutExpired(f"warden {self.pid}", timeout or 0.0)
            self._finish()
        assert self.returncode is not None
        return self.returncode

    def _finish(self) -> None:
        os.set_blocking(self._status_fd, False)
        try:
            data = os.read(self._status_fd, 32)
        except OSError:
            data = b""
        self.returncode = int(data) if data.strip().lstrip(b"-").isdigit() else -9
        for fd in (self._status_fd, self._pidfd):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._status_fd = self._pidfd = -1


class ForkServer:
    """One fork server process for one kind of worker (one set-up)."""

    def __init__(self, setup: dict[str, Any], start_timeout_s: float) -> None:
        self.users = 0
        self.broken: str | None = None
        ours, theirs = socket.socketpair()
        self._sock = ours
        self._spawn_lock = threading.Lock()
        try:
            self.process: subprocess.Popen[bytes] | None = subprocess.Popen(
                [sys.executable, "-I", "-c", _BOOT, str(theirs.fileno())],
                pass_fds=(theirs.fileno(),),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
        finally:
            theirs.close()
        self.timeout_s = start_timeout_s
        try:
            write_frame(self._sock.fileno(), setup)
            hello = self._answer()
        except (OSError, EOFError) as exc:
            hello = ("error", f"no answer: {exc}")
        if not (isinstance(hello, tuple) and hello[:1] == ("ready",)):
            self._break(f"the fork server did not start: {hello!r}"[:500])

    def spawn(self, request_fd: int, reply_fd: int, output_fd: int) -> ForkedWarden | None:
        """Fork a warden serving these pipes (their ends are the warden's after this); None
        when the fork server cannot (the caller then starts a fresh warden)."""
        with self._spawn_lock:
            if self.broken is not None:
                return None
            status_read, status_write = os.pipe()
            try:
                socket.send_fds(self._sock, [b"S"], [request_fd, reply_fd, output_fd, status_write])
                answer = self._answer()
            except (OSError, EOFError) as exc:
                answer = ("error", f"the fork server is gone: {exc}")
            finally:
                os.close(status_write)
            if isinstance(answer, tuple) and answer[:1] == ("spawned",):
                return ForkedWarden(int(answer[1]), status_read)
            os.close(status_read)
            # No more forks from it, but it stays up until released: the workers it forked
            # (other lanes' too) are its children and would be killed with it.
            self.broken = str(answer[1] if isinstance(answer, tuple) else answer)
            return None

    def _answer(self) -> Any:
        """The fork server's next frame, waiting at most ``timeout_s``."""
        if not select.select([self._sock], [], [], self.timeout_s)[0]:
            raise OSError(f"no answer within {self.timeout_s:g} s")
        return read_frame(self._sock.fileno())

    def _break(self, why: str) -> None:
        self.broken = why
        self.close()

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._sock.close()  # its end of file: the fork server exits
        if self.process is not None:
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
            self.process = None


def _key(setup: dict[str, Any]) -> tuple[int, str]:
    # Per process (a forked child must not talk on its parent's socket) and per set-up.
    return os.getpid(), repr(sorted(setup.items()))


def acquire(setup: dict[str, Any], start_timeout_s: float) -> ForkServer:
    """The fork server for this set-up, started on first use; `release` it when done."""
    with _lock:
        server = _servers.get(_key(setup))
        if server is None or server.broken is not None:
            server = _servers[_key(setup)] = ForkServer(setup, start_timeout_s)
        server.users += 1
        return server


def release(server: ForkServer) -> None:
    """One user fewer; the last one stops the fork server."""
    with _lock:
        server.users -= 1
        if server.users > 0:
            return
        for key, known in list(_servers.items()):
            if known is server:
                del _servers[key]
    server.close()
