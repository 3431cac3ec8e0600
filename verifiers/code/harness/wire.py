"""Length-prefixed JSON messages on a socket: the only channel between judge and candidate."""

from __future__ import annotations

import json
import socket
import struct
from typing import Any

_LEN = struct.Struct("!I")
MAX_MESSAGE = 64 << 20


def send_msg(sock: socket.socket, obj: Any) -> None:
    data = json.dumps(obj, separators=(",", ":")).encode()
    sock.sendall(_LEN.pack(len(data)) + data)


def recv_msg(sock: socket.socket) -> Any:
    """The next message, or None at end of stream; ValueError on a malformed one."""
    head = _recv_exact(sock, _LEN.size)
    if head is None:
        return None
    (size,) = _LEN.unpack(head)
    if size > MAX_MESSAGE:
        raise ValueError(f"message of {size} bytes is over the {MAX_MESSAGE} limit")
    body = _recv_exact(sock, size)
    if body is None:
        return None
    return json.loads(body)


def _recv_exact(sock: socket.socket, n: int) -> bytes | None:
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(min(n - len(buf), 1 << 20))
        if not chunk:
            return None
        buf += chunk
    return bytes(buf)
