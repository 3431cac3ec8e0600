"""Length-prefixed pickle frames on a pipe: an 8-byte big-endian length, then the pickle.

The same wire format as the sandbox's fork server, so a `Command` worker speaking it (that
server, say) needs no change to run under `WarmProcess`. Standard library only: the warden
script imports this module by path before anything of rewardsmith is importable.

The worker side reads and writes blocking (`read_frame`, `write_frame`). The caller side
must never block on a worker that stalls, so it reads with a `FrameReader` (whatever bytes
are there, complete frames out) and writes with a `FrameWriter` (what the pipe takes now,
the rest when it is writable again), both on non-blocking descriptors.
"""

from __future__ import annotations

import math
import os
import pickle
import select
import struct
from collections import deque
from collections.abc import Iterable
from typing import Any

HEADER = struct.Struct("!Q")
CHUNK = 1 << 20
READ_BYTES = 1 << 16
"""What a `FrameReader` takes from its pipe per read: a Linux pipe's default capacity, so a
read never finds more there."""


def encode(obj: Any) -> bytes:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    return HEADER.pack(len(data)) + data


def write_frame(fd: int, obj: Any) -> None:
    """Write one frame, blocking until all of it is in the pipe."""
    view = memoryview(encode(obj))
    while view:
        view = view[os.write(fd, view) :]


def read_frame(fd: int) -> Any:
    """Read one frame, blocking; None at end of file (the other side closed)."""
    header = _read_exact(fd, HEADER.size)
    if header is None:
        return None
    body = _read_exact(fd, HEADER.unpack(header)[0])
    return None if body is None else pickle.loads(body)


def _read_exact(fd: int, n: int) -> bytes | None:
    chunks, got = [], 0
    while got < n:
        chunk = os.read(fd, min(n - got, CHUNK))
        if not chunk:
            return None
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


class FrameReader:
    """Complete frames out of a non-blocking descriptor, however the bytes arrive."""

    def __init__(self, fd: int) -> None:
        os.set_blocking(fd, False)
        self.fd = fd
        self._buffer = bytearray()
        # Each read lands here, not in a new bytes object: ``os.read(fd, n)`` allocates n
        # bytes, then shrinks them to what came. At n = 1 MiB, every reply had malloc find
        # a free mebibyte in the reading thread's arena, and the reward server's lanes'
        # arenas grew by about 390 bytes a request in free space (live memory flat) for as
        # long as it ran (docs/benchmarks.md, "Reward server memory").
        self._scratch = bytearray(READ_BYTES)
        self.closed = False
        """The other side closed its end: no frame will come any more."""

    def read(self) -> list[bytes]:
        """Read what is there now; return the bodies of the frames it completed."""
        while not self.closed:
            try:
                count = os.readv(self.fd, [self._scratch])
            except BlockingIOError:
                break
            except OSError:
                count = 0
            if not count:
                self.closed = True
            self._buffer += memoryview(self._scratch)[:count]
            if count < READ_BYTES:
                break
        return self._split()

    def _split(self) -> list[bytes]:
        bodies: list[bytes] = []
        buffer = self._buffer
        start = 0
        while len(buffer) - start >= HEADER.size:
            (size,) = HEADER.unpack_from(buffer, start)
            end = start + HEADER.size + size
            if len(buffer) < end:
                break
            bodies.append(bytes(buffer[start + HEADER.size : end]))
            start = end
        del buffer[:start]
        return bodies


class FrameWriter:
    """Frames into a non-blocking descriptor: what the pipe does not take now waits here."""

    def __init__(self, fd: int) -> None:
        os.set_blocking(fd, False)
        self.fd = fd
        self._pending: deque[memoryview] = deque()

    @property
    def pending(self) -> bool:
        return bool(self._pending)

    def write(self, obj: Any) -> None:
        self._pending.append(memoryview(encode(obj)))
        self.flush()

    def flush(self) -> None:
        """Write as much as the pipe takes; raises OSError (EPIPE) if the reader is gone."""
        while self._pending:
            head = self._pending[0]
            try:
                written = os.write(self.fd, head)
            except BlockingIOError:
                return
            if written == len(head):
                self._pending.popleft()
            else:
                self._pending[0] = head[written:]


def wait_any(
    read: Iterable[int], write: Iterable[int], timeout_s: float | None
) -> tuple[set[int], set[int]]:
    """Wait until one of ``read`` is readable (or closed) or one of ``write`` writable, at
    most ``timeout_s`` seconds (None: no limit); the ready ones."""
    poller = select.poll()
    masks: dict[int, int] = {}
    for fd in read:
        masks[fd] = masks.get(fd, 0) | select.POLLIN
    for fd in write:
        masks[fd] = masks.get(fd, 0) | select.POLLOUT
    for fd, mask in masks.items():
        if fd >= 0:
            poller.register(fd, mask)
    if timeout_s is None or math.isinf(timeout_s):
        events = poller.poll()
    else:
        events = poller.poll(max(0, math.ceil(timeout_s * 1000)))
    closed = select.POLLHUP | select.POLLERR | select.POLLNVAL
    readable = {fd for fd, ev in events if ev & (select.POLLIN | closed)}
    writable = {fd for fd, ev in events if ev & (select.POLLOUT | closed)}
    return readable, writable
