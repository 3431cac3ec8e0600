"""The killable worker: time and memory limits enforced from outside, crashes contained."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

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


def _call_in_daemon(queue: Any) -> None:
    queue.put(call_with_limits(sum, [2, 3], timeout_s=60).value)


def test_works_inside_a_daemonic_worker_process() -> None:
    # Executor pool workers are daemonic; multiprocessing refuses them children.
    import multiprocessing

    context = multiprocessing.get_context("forkserver")
    queue = context.Queue()
    process = context.Process(target=_call_in_daemon, args=(queue,), daemon=True)
    process.start()
    assert queue.get(timeout=120) == 5
    process.join(30)


SCRIPT_WITHOUT_GUARD = """
import os, sys, time
from rewardsmith.verifiers.killable import call_with_limits
print(call_with_limits(sum, [1, 2], timeout_s=60).value, flush=True)
# Start a call that never returns, say who the worker is, then die mid-call.
import threading
threading.Thread(target=call_with_limits, args=(time.sleep, 3600), kwargs={"timeout_s": 3600},
                 daemon=True).start()
time.sleep(3)
def ppid(pid):
    try:
        return int(open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[1])
    except OSError:
        return None
children = [p for p in os.listdir("/proc") if p.isdigit() and ppid(p) == os.getpid()]
print(" ".join(children), flush=True)
os._exit(0)
"""


def test_script_without_main_guard_and_no_orphans(tmp_path: Path) -> None:
    script = tmp_path / "user_script.py"
    script.write_text(SCRIPT_WITHOUT_GUARD)
    result = subprocess.run(
        [sys.executable, str(script)], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    first, workers = result.stdout.splitlines()[:2]
    assert first == "3"
    pids = [int(p) for p in workers.split()]
    assert pids  # the warm worker, now stuck in the endless call
    deadline = time.monotonic() + 30
    while any(Path(f"/proc/{p}").exists() for p in pids) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not [p for p in pids if Path(f"/proc/{p}").exists()], "a worker outlived its parent"
