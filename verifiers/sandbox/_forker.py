"""A quiet twin of the fork server that forks the waiting jails, so the server never forks.

After a fork, a parent that writes a page its child still maps pays for a copy of it. The
server writes all the time (its event loop, buffers, replies) while waiting jails live, so
forking them from the server cost it hundreds of copied pages per request. The forker is
a copy of the server made once, when everything a jail inherits is ready; it forks jails
on request, waits for them and reports how each ended, and touches few pages doing so.

Messages on a SOCK_SEQPACKET pair: the server sends ``f`` with a jail's cgroup
descriptors (the reply is ``F<pid>`` with the jail's control socket) or ``w<source>``
(trusted harness source for jails forked from now on); the forker sends ``X<pid, wait
status, CPU seconds, peak RSS>`` when a jail's PID 1 has been reaped.
"""

from __future__ import annotations

import array
import contextlib
import gc
import mmap
import os
import selectors
import signal
import socket
import struct
from typing import NoReturn

import _jail
import _linux as L

_FORKED = struct.Struct("=i")
_EXITED = struct.Struct("=iidq")  # pid, wait status, CPU seconds, peak RSS in bytes
_MAX_MESSAGE = 1 << 20
_REPLY_BYTES = 64
"""The forker's messages are a letter and a struct: the server reads them into small
buffers (a read of `_MAX_MESSAGE` mapped and unmapped a fresh mebibyte each time)."""


class Forker:
    """The server's handle on its forker process."""

    def __init__(self, own_pid_ns: int) -> None:
        self.sock, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.pid = os.fork()
        if self.pid == 0:
            self.sock.close()
            _main(theirs, own_pid_ns)
        theirs.close()
        self.exits: dict[int, tuple[int, float, int]] = {}

    def fork(self, join_fds: list[int]) -> tuple[int, socket.socket]:
        """A new waiting jail that joins the cgroup of `join_fds`: its pid and control."""
        socket.send_fds(self.sock, [b"f"], join_fds)
        while True:
            msg, fds, _, _ = socket.recv_fds(self.sock, _REPLY_BYTES, 1)
            if not msg:
                raise OSError("the forker is gone")
            if msg[:1] == b"F":
                return _FORKED.unpack(msg[1:])[0], socket.socket(fileno=fds[0])
            self._note(msg)

    def warm(self, source: str) -> None:
        """Have jails forked from now on start with `source` prepared (see
        `_server.prepare_code`); too large a source is left for each jail to prepare."""
        with contextlib.suppress(OSError):
            self.sock.send(b"w" + source.encode())

    def wait(self, pid: int) -> tuple[int, float, int]:
        """Block until `pid` has been reaped: (wait status, CPU seconds, peak RSS)."""
        while pid not in self.exits:
            msg = self.sock.recv(_REPLY_BYTES)
            if not msg:
                return (0, 0.0, 0)  # the forker is gone, and its children with it
            self._note(msg)
        return self.exits.pop(pid)

    def _note(self, msg: bytes) -> None:
        if msg[:1] == b"X":
            pid, status, cpu, rss = _EXITED.unpack(msg[1:])
            self.exits[pid] = (status, cpu, rss)

    def close(self) -> None:
        self.sock.close()
        with contextlib.suppress(ChildProcessError):
            os.waitpid(self.pid, 0)


def _main(sock: socket.socket, own_pid_ns: int) -> NoReturn:
    """The forker's loop; it ends (and its jails die with it) when the server hangs up."""
    try:
        L.prctl(L.PR_SET_PDEATHSIG, signal.SIGKILL)
        gc.collect()
        gc.freeze()  # its garbage collector never walks (and so copies) the inherited heap
        sel = selectors.DefaultSelector()
        sel.register(sock, selectors.EVENT_READ, None)
        # One buffer for every request, its pages touched only as far as a message goes.
        buffer = mmap.mmap(-1, _MAX_MESSAGE)
        while True:
            for key, _ in sel.select():
                if key.data is None:
                    msg, fds = _receive(sock, buffer)
                    if not msg:
                        os._exit(0)
                    if msg[:1] == b"f":
                        pid, pidfd = _spawn(sock, fds, own_pid_ns)
                        sel.register(pidfd, selectors.EVENT_READ, pid)
                    elif msg == b"w":
                        _jail.Context.warm.clear()
                    elif msg[:1] == b"w":
                        source = msg[1:].decode()
                        with contextlib.suppress(Exception):  # a jail then reports the error
                            _jail.Context.warm[source] = _jail.Context.prepare(source)
                else:
                    sel.unregister(key.fd)
                    os.close(key.fd)
                    _, status, usage = os.wait4(key.data, 0)
                    cpu = usage.ru_utime + usage.ru_stime
                    report = _EXITED.pack(key.data, status, cpu, usage.ru_maxrss * 1024)
                    sock.send(b"X" + report)
    except BaseException:
        os._exit(1)


def _receive(sock: socket.socket, buffer: mmap.mmap) -> tuple[bytes, list[int]]:
    """One request (`socket.recv_fds` without its fresh mebibyte per call) and the
    descriptors that came with it (at most 8)."""
    fds = array.array("i")
    size, ancdata, _, _ = sock.recvmsg_into([buffer], socket.CMSG_SPACE(8 * fds.itemsize))
    for level, kind, data in ancdata:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            fds.frombytes(data[: len(data) - len(data) % fds.itemsize])
    return buffer[:size], list(fds)


def _spawn(sock: socket.socket, join_fds: list[int], own_pid_ns: int) -> tuple[int, int]:
    """Fork a waiting jail as PID 1 of a fresh PID namespace; hand its control socket to
    the server. Its pid and a pidfd to learn when it ends."""
    control, child_sock = socket.socketpair()
    L.unshare(L.CLONE_NEWPID)  # the next child is PID 1 of a fresh PID namespace
    pid = -1
    try:
        pid = os.fork()
    finally:
        if pid != 0:
            L.setns(own_pid_ns, L.CLONE_NEWPID)
    if pid == 0:
        control.close()
        sock.close()
        _jail.zygote(child_sock, join_fds)
    child_sock.close()
    for fd in join_fds:
        os.close(fd)
    pidfd = os.pidfd_open(pid)
    socket.send_fds(sock, [b"F" + _FORKED.pack(pid)], [control.fileno()])
    control.close()
    return pid, pidfd
