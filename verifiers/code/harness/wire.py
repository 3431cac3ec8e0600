"""Length-prefixed JSON messages on a socket: the only channel between judge and candidate.

The judge reads what the candidate sends as hostile data: `recv_msg` with a `max_bytes`
refuses a longer message before reading it, and `loads_bounded` refuses one with more
containers than a value may have (`values.MAX_NODES`) or nested deeper than the JSON
parser can follow, so no message can exhaust the judge's memory or crash it.
"""

from __future__ import annotations

import json
import socket
import struct
from typing import Any

_LEN = struct.Struct("!I")
MAX_MESSAGE = 64 << 20
MAX_REPLY = 16 << 20
"""The most the judge reads from the candidate in one message (a hello or a reply)."""
MAX_CONTAINERS = 2_100_000
"""An encoded value of `values.MAX_NODES` nodes has at most about two lists per node."""


def send_msg(sock: socket.socket, obj: Any) -> None:
    data = json.dumps(obj, separators=(",", ":")).encode()
    sock.sendall(_LEN.pack(len(data)) + data)


def recv_msg(sock: socket.socket, max_bytes: int = MAX_MESSAGE) -> Any:
    """The next message, or None at end of stream; ValueError on a malformed one."""
    head = _recv_exact(sock, _LEN.size)
    if head is None:
        return None
    (size,) = _LEN.unpack(head)
    if size > max_bytes:
        raise ValueError(f"message of {size} bytes is over the {max_bytes} limit")
    body = _recv_exact(sock, size)
    if body is None:
        return None
    return loads_bounded(body)


def loads_bounded(data: bytes) -> Any:
    """`json.loads` for hostile data: ValueError (never RecursionError or a memory blow-up)
    on anything malformed, too nested or with too many containers."""
    if data.count(b"[") + data.count(b"{") > MAX_CONTAINERS:
        raise ValueError("message has too many containers")
    try:
        return json.loads(data)
    except RecursionError:
        raise ValueError("message is nested too deeply") from None


def _recv_exact(sock: socket.socket, n: int) -> bytes | None:
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(min(n - len(buf), 1 << 20))
        if not chunk:
            return None
        buf += chunk
    return bytes(buf)
