"""The fork server as a warm worker (`_process` on `rewardsmith.verifiers.warm`): a server
that dies or stalls during a request ends it with an error that says so, leaves nothing
behind, and the next run gets a fresh server; a server that cannot start says why."""

from __future__ import annotations

import os
import signal
import threading
import time

import psutil
import pytest

from rewardsmith.verifiers.sandbox import ForkServer, Limits, Program, _process
from rewardsmith.verifiers.sandbox._process import ServerProcess

SLEEP = Program(python="import time; time.sleep(30)", limits=Limits(wall_s=20, cpu_s=20))
QUICK = Program(python="print('ok')", limits=Limits(wall_s=10))


def _tree(pid: int) -> list[int]:
    return [pid, *(p.pid for p in psutil.Process(pid).children(recursive=True))]


def _gone(pids: list[int], settle_s: float = 3.0) -> bool:
    """Whether every process of `pids` has ended within `settle_s` (a server killed from
    outside takes its jails with it as each one sees its parent die: not at once)."""
    deadline = time.monotonic() + settle_s
    while any(_running(p) for p in pids):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def _running(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


@pytest.fixture
def server():
    with ForkServer() as s:
        if s.error:
            pytest.skip(s.error)
        yield s


def test_a_server_killed_during_a_request_is_an_error_then_replaced(server: ForkServer) -> None:
    assert server._process is not None
    first = server._process.pid
    tree = _tree(first)
    threading.Timer(0.5, os.kill, (first, signal.SIGKILL)).start()
    [result] = server.run_programs([SLEEP])
    assert result.exit_code is None and "fork server: the worker process died" in result.error
    assert _gone(tree)  # its jails went with it
    [again] = server.run_programs([QUICK])
    assert again.stdout == b"ok\n", again
    assert server._process is not None and server._process.pid != first


def test_a_stalled_server_is_killed_at_the_request_deadline(
    server: ForkServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_process, "REPLY_GRACE_S", 0.5)
    assert server._process is not None
    tree = _tree(server._process.pid)
    for pid in tree:  # it will never reply
        os.kill(pid, signal.SIGSTOP)
    [result] = server.run_programs([Program(python="pass", limits=Limits(wall_s=0.5))])
    assert "killed after the 1 s time limit" in result.error, result
    assert _gone(tree)
    [again] = server.run_programs([QUICK])
    assert again.stdout == b"ok\n", again


def test_a_server_that_fails_before_its_hello_shows_what_it_printed() -> None:
    with pytest.raises(RuntimeError) as failure:
        ServerProcess({})  # no config keys: the server raises before it can say why
    message = str(failure.value)
    assert "died while starting (exit code 1)" in message and "KeyError" in message
