"""The killable worker: time and memory limits enforced from outside, crashes contained."""

from __future__ import annotations

import os
import threading
import time

from rewardsmith.verifiers.killable import call_with_limits


def _sleep_forever() -> None:
    while True:
        time.sleep(1)


def _allocate(megabytes: int) -> int:
    return len(bytearray(megabytes * 1024 * 1024))


def _die() -> None:
    os._exit(3)


def _boom() -> None:
    raise ValueError("bad input")


def _pid() -> int:
    return os.getpid()


def test_value_comes_back() -> None:
    outcome = call_with_limits(sum, [1, 2, 3], timeout_s=30)
    assert outcome.ok and outcome.value == 6


def test_hang_is_killed_and_reported() -> None:
    start = time.monotonic()
    outcome = call_with_limits(_sleep_forever, timeout_s=0.5)
    assert outcome.timed_out and not outcome.ok
    assert time.monotonic() - start < 30  # generous: the limit is enforced, not the speed


def test_exception_is_reported_not_raised() -> None:
    outcome = call_with_limits(_boom, timeout_s=30)
    assert outcome.error is not None and "ValueError: bad input" in outcome.error


def test_worker_death_costs_only_its_call() -> None:
    outcome = call_with_limits(_die, timeout_s=30)
    assert outcome.died
    assert call_with_limits(sum, [4, 5], timeout_s=30).value == 9


def test_memory_limit_stops_large_allocation() -> None:
    outcome = call_with_limits(_allocate, 2048, timeout_s=30, memory_bytes=512 * 1024 * 1024)
    assert not outcome.ok
    assert (outcome.error and "MemoryError" in outcome.error) or outcome.died


def test_worker_is_reused_and_replaced_after_timeout() -> None:
    first = call_with_limits(_pid, timeout_s=30).value
    assert call_with_limits(_pid, timeout_s=30).value == first
    call_with_limits(_sleep_forever, timeout_s=0.2)
    pids = {call_with_limits(_pid, timeout_s=30).value for _ in range(2)}
    assert first not in pids or len(pids) == 1


def test_concurrent_callers_get_their_own_workers() -> None:
    results: list[int] = []

    def call() -> None:
        results.append(call_with_limits(sum, [1, 1], timeout_s=30).value)

    threads = [threading.Thread(target=call) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [2, 2, 2, 2]
