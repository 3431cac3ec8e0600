"""The real server under concurrent load with poisoned requests (loopback only).

The full 2,000-request run with latency figures is `benchmarks/server_load.py`; this test
sends fewer requests with the same mix and checks only correctness: every good request gets
the right reward, every bad one a clear error, and the server stays up.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from benchmarks.server_load import drive, start_server


@pytest.mark.slow
def test_poisoned_load_is_contained(tmp_path: Path) -> None:
    process, url = start_server(tmp_path, lanes=4, timeout_s=3.0)
    try:
        result = asyncio.run(drive(url, requests=400, clients=32))
    finally:
        process.terminate()
        process.wait(timeout=30)
    assert result.requests == 400
    assert result.wrong_rewards == []
    assert set(result.bad_statuses["malformed"]) == {400}
    assert set(result.bad_statuses["huge"]) == {413}
    assert result.hang_rewards and all(
        r == {"value": None, "failure": "verifier_timeout"} for r in result.hang_rewards
    )
    assert result.server_alive
