"""The fork server: pool workers forked from one preloaded parent, containment unchanged."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import time
from pathlib import Path

from rewardsmith.graders import Executor, Job
from rewardsmith.verifiers.types import Sample
from rewardsmith.verifiers.warm import Ending, Role, WarmProcess, WarmSpec, forkserver
from rewardsmith.verifiers.warm._tree import running
from rewardsmith.verifiers.warm.process import setup_of
from tests.support.fork_kit import Crash, Hang, Where

KILLABLE = "rewardsmith.verifiers._killable_worker:serve"


def _where(executor: Executor, n: int = 1) -> list[dict]:
    jobs = [Job(Where(), Sample(id=f"w{i}", completion="x")) for i in range(n)]
    return [v.evidence for v in executor.run(jobs)]


def test_pools_of_one_kind_share_one_fork_server_which_ends_with_the_last():
    """In a process of its own: a pool another test left open in this pytest worker (a
    module's fixture) would share the fork server and keep it up (a failure seen under
    four xdist workers, where the tests fall on the workers otherwise)."""
    code = "from tests.verifiers.test_forkserver import share_then_end; share_then_end()"
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=Path(__file__).resolve().parents[2],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]


def share_then_end() -> None:
    with (
        Executor("pool", workers=1, cache=False) as one,
        Executor("pool", workers=1, cache=False) as two,
    ):
        (a,), (b,) = _where(one), _where(two)
        assert a["pid"] != b["pid"] and a["warden"] != b["warden"]
        assert a["above"] == b["above"] != os.getpid()  # one fork server above both
        server = a["above"]
        assert all(w.proc.forked for w in one._backend._workers)  # type: ignore[union-attr]
        assert a["draw"] != b["draw"]  # the random state is not inherited as is
    assert _ended({server})  # it exits on its own once the last pool closes, not at once


def test_a_forked_worker_that_crashes_or_hangs_still_gives_a_verdict():
    with Executor("pool", workers=1, cache=False, timeout_s=1.0, retries=0) as executor:
        (first,) = _where(executor)
        crash, hang, after = executor.run(
            [
                Job(Crash(), Sample(id="crash", completion="x")),
                Job(Hang(), Sample(id="hang", completion="x")),
                Job(Where(), Sample(id="after", completion="x")),
            ]
        )
    assert crash.score is None and crash.failure == "worker_died", crash
    assert "3" in (crash.feedback or ""), crash.feedback  # the worker's exit code
    assert hang.score is None and hang.failure == "verifier_timeout", hang
    assert after.status.value == "pass"
    assert after.evidence["above"] == first["above"]  # replacements forked from the same
    assert after.evidence["pid"] != first["pid"]


def _spec(preload: tuple[str, ...] = ()) -> WarmSpec:
    return WarmSpec(Role(KILLABLE, preload), start_timeout_s=60)


def _call(worker: WarmProcess, function, *args):
    return worker.call((pickle.dumps((function, args, {})), 30.0), timeout_s=30)


def test_a_forked_wardens_exit_code_is_its_workers_and_a_kill_reads_as_sigkill():
    spec = _spec()
    forks = forkserver.acquire(setup_of(spec.launch, spec), 60)  # type: ignore[arg-type]
    try:
        worker = WarmProcess(spec, forks)
        assert worker.forked
        assert _call(worker, sum, [1, 2]).answer[:2] == ("ok", 3)
        reply = _call(worker, os._exit, 5)
        assert reply.ending is Ending.DIED and worker.exit_code(wait_s=5) == 5
        killed = WarmProcess(spec, forks)
        assert killed.wait_ready() is None
        killed.kill()
        assert killed.exit_code() == -9
    finally:
        forkserver.release(forks)


def test_a_fork_server_that_has_a_thread_refuses_and_workers_start_fresh():
    spec = _spec(("tests.support.fork_kit_thread",))
    forks = forkserver.acquire(setup_of(spec.launch, spec), 60)  # type: ignore[arg-type]
    try:
        worker = WarmProcess(spec, forks)
        assert not worker.forked  # a fork with a second thread could inherit a held lock
        assert forks.broken is not None and "threads" in forks.broken
        assert _call(worker, sum, [4, 5]).answer[:2] == ("ok", 9)
        worker.stop()
    finally:
        forkserver.release(forks)


DIES = """
import json, os, sys
from rewardsmith.graders import Executor, Job
from rewardsmith.verifiers.types import Sample
from tests.support.fork_kit import Where

executor = Executor("pool", workers=2, cache=False)
verdicts = executor.run([Job(Where(), Sample(id=str(i), completion="x")) for i in range(2)])
print(json.dumps([v.evidence for v in verdicts]), flush=True)
os._exit(0)  # no close: the fork server and the workers must go by themselves
"""


def test_the_fork_server_and_its_workers_end_when_their_caller_dies(tmp_path):
    repo = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", DIES],
        env={**os.environ, "PYTHONPATH": str(repo)},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    found = json.loads(done.stdout.strip().splitlines()[-1])
    pids = {e["above"] for e in found} | {e["pid"] for e in found} | {e["warden"] for e in found}
    assert len({e["above"] for e in found}) == 1
    assert _ended(pids)


def _ended(pids: set[int], within_s: float = 30.0) -> bool:
    """Whether every process of `pids` ends within `within_s` (on loaded cores a fork
    server's exit after its last client closes can lag)."""
    deadline = time.monotonic() + within_s
    while any(running(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    return not any(running(pid) for pid in pids)
