"""`rewardsmith serve` against slow and vanishing clients (loopback only; a few
connections, each bounded in time): body and header timeouts, in-flight counting, one log
line per hang-up, and SIGTERM with bodies still arriving."""

from __future__ import annotations

import re
import signal
import socket
import time
from pathlib import Path
from urllib.parse import urlparse

import httpx
import pytest

from tests.cli.test_server_shutdown import SPEC, start_server

pytestmark = pytest.mark.slow

BODY = b'{"samples": [{"id": "a", "completion": "ok", "reference": "ok"}]}'


def _serve(tmp_path: Path, *extra: str) -> tuple[object, str]:
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC)
    return start_server(tmp_path, spec, "--lanes", "1", *extra)


def _slow_client(url: str, sent: bytes = BODY[:10]) -> socket.socket:
    """A connection that sends its headers and part of its body, then stalls."""
    where = urlparse(url)
    sock = socket.create_connection((where.hostname, where.port), timeout=60)
    head = (
        f"POST /score HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(BODY)}\r\n\r\n"
    )
    sock.sendall(head.encode() + sent)
    return sock


def _status(sock: socket.socket) -> int:
    reply = b""
    while b"\r\n" not in reply:
        chunk = sock.recv(4096)
        if not chunk:
            break
        reply += chunk
    return int(reply.split()[1]) if reply else 0


def _in_flight(url: str) -> int:
    text = httpx.get(f"{url}/metrics", timeout=10).text
    return int(re.search(r"^rewardsmith_requests_in_flight (\d+)", text, re.M).group(1))  # type: ignore[union-attr]


def _stop(process: object) -> None:
    process.send_signal(signal.SIGTERM)  # type: ignore[attr-defined]
    process.wait(timeout=60)  # type: ignore[attr-defined]


def test_slow_bodies_get_408_and_are_not_in_flight_meanwhile(tmp_path: Path) -> None:
    process, url = _serve(tmp_path, "--body-timeout", "2")
    try:
        slow = [_slow_client(url) for _ in range(5)]
        time.sleep(0.5)
        assert _in_flight(url) == 0  # five bodies arriving hold nothing
        assert httpx.post(f"{url}/score", content=BODY, timeout=30).status_code == 200
        assert [_status(s) for s in slow] == [408] * 5
        for s in slow:
            s.close()
    finally:
        _stop(process)
    log = (tmp_path / "server.log").read_text()
    assert "Traceback" not in log and log.count("sent no whole body within 2 s") == 5


def test_a_connection_without_headers_is_closed(tmp_path: Path) -> None:
    process, url = _serve(tmp_path, "--header-timeout", "1")
    try:
        where = urlparse(url)
        sock = socket.create_connection((where.hostname, where.port), timeout=60)
        sock.sendall(b"POST /score HTTP/1.1\r\nHost: x\r\n")  # and never the blank line
        assert sock.recv(4096) == b""  # closed by the server
        sock.close()
        assert httpx.get(f"{url}/health", timeout=10).status_code == 200
    finally:
        _stop(process)
    assert "sent no request headers within 1 s: closed" in (tmp_path / "server.log").read_text()


def test_a_client_that_hangs_up_is_one_log_line(tmp_path: Path) -> None:
    process, url = _serve(tmp_path, "--body-timeout", "30")
    try:
        for _ in range(5):
            _slow_client(url).close()
        time.sleep(1.0)
        assert httpx.post(f"{url}/score", content=BODY, timeout=30).status_code == 200
    finally:
        _stop(process)
    log = (tmp_path / "server.log").read_text()
    assert "Traceback" not in log, log[-3000:]
    assert log.count("hung up before its /score request was answered") == 5


def test_sigterm_with_bodies_arriving_answers_them_503_within_the_grace(tmp_path: Path) -> None:
    process, url = _serve(tmp_path, "--body-timeout", "60", "--grace", "3")
    slow = [_slow_client(url) for _ in range(5)]
    time.sleep(0.5)
    signalled = time.monotonic()
    process.send_signal(signal.SIGTERM)  # type: ignore[attr-defined]
    statuses = [_status(s) for s in slow]
    process.wait(timeout=60)  # type: ignore[attr-defined]
    exited = time.monotonic() - signalled
    for s in slow:
        s.close()
    assert statuses == [503] * 5
    log = (tmp_path / "server.log").read_text()
    assert "Traceback" not in log, log[-3000:]
    print(f"exited {exited:.2f} s after SIGTERM with 5 bodies arriving (grace 3 s)")


def test_a_client_that_hangs_up_while_its_request_is_scored_leaves_no_traceback(
    tmp_path: Path,
) -> None:
    process, url = _serve(tmp_path, "--timeout", "2")  # the hanging check is killed at 2 s
    body = {"samples": [{"id": "h", "completion": "HANG", "reference": "ok"}]}
    try:
        for _ in range(3):
            with pytest.raises(httpx.TimeoutException):
                httpx.post(f"{url}/score", json=body, timeout=0.5)
        time.sleep(3.0)  # the checks end and their answers meet closed connections
        assert httpx.post(f"{url}/score", content=BODY, timeout=30).status_code == 200
    finally:
        _stop(process)
    log = (tmp_path / "server.log").read_text()
    assert "Traceback" not in log and "Exception" not in log, log[-3000:]
