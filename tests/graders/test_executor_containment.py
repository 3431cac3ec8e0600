"""Executor containment on the pool: memory, the whole tree, output, one clock per job.

Each test attacks one claim of docs/rewards.md's executor section with a verifier that
misbehaves as a buggy one would (containment_kit.py); processes it starts carry the test's
marker and the process table is checked for them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from containment_kit import Allocate, Leak, NestedCall, Say, SpawnHang, WhoAmI
from grader_testkit import Cheap, Hang
from slow_import_kit import ENV as SLOW_IMPORT
from slow_import_kit import SlowToImport

from rewardsmith.graders import Executor, Job
from rewardsmith.verifiers.types import Failure, Sample, Status
from tests.support import warm_kit

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
LIMIT = 400 << 20


def sample(i: int | str) -> Sample:
    return Sample(id=str(i), completion="a", reference="a")


@pytest.fixture
def marker():
    mark = f"rs-exec-{uuid.uuid4().hex[:12]}"
    yield mark
    warm_kit.kill_marked(mark)


@pytest.fixture(scope="module")
def limited():
    with Executor("pool", workers=1, memory_bytes=LIMIT, timeout_s=30, cache=False) as ex:
        yield ex


# --------------------------------------------------------------------------- memory


@pytest.mark.parametrize("hold_s", [5.0, 0.0], ids=["held", "freed-at-once"])
def test_a_memory_overrun_is_its_own_verdict_and_its_worker_is_replaced(limited, hold_s):
    # Held: the watchdog kills it mid-job. Freed at once: the peak after the job says so.
    (first,) = limited.run([Job(WhoAmI(), sample("before"))])
    (result,) = limited.stream([Job(Allocate(800, hold_s), sample("big"))])
    verdict = result.verdict
    assert verdict.failure is Failure.VERIFIER_MEMORY and verdict.score is None
    assert result.attempts == 1  # an overrun usually repeats: not retried by default
    assert f"limit of {LIMIT >> 20} MiB" in verdict.feedback
    (after,) = limited.run([Job(WhoAmI(), sample("after"))])
    assert after.evidence["pid"] != first.evidence["pid"]
    assert after.evidence["resident_mb"] < 150


def test_a_worker_left_holding_memory_is_replaced_without_blame(limited):
    # 250 MB kept: under the 400 MB limit (the job passes), over half of it (replaced).
    (kept,) = limited.run([Job(Leak(250), sample("leak"))])
    assert kept.status is Status.PASS
    (after,) = limited.run([Job(WhoAmI(), sample("after"))])
    assert after.evidence["pid"] != kept.evidence["pid"] and after.evidence["resident_mb"] < 150


def test_the_default_limit_is_there():
    assert Executor("pool").memory_bytes == 4 << 30


# --------------------------------------------------------------------------- the tree


def test_a_timeout_kills_the_verifiers_whole_tree(marker):
    jobs = [Job(SpawnHang("daemon", marker), sample("spawn"), timeout_s=3.0)]
    with Executor("pool", workers=1, cache=False) as ex:
        (verdict,) = ex.run(jobs)
    assert verdict.failure is Failure.VERIFIER_TIMEOUT
    assert verdict.evidence["output"].split() == ["running", "1"]  # it was there at the kill
    assert [d["layer"] for d in verdict.evidence["limits"]] == ["job"]
    assert warm_kit.processes_with(marker) == []


# --------------------------------------------------------------------------- output


def test_each_jobs_output_is_in_its_own_verdict():
    # 40 cheap jobs go out to one worker in bunches; each verdict holds its own lines only.
    jobs = [Job(Say(), sample(i)) for i in range(40)] + [Job(Cheap(), sample("quiet"))]
    with Executor("pool", workers=1, cache=False) as ex:
        verdicts = ex.run(jobs)
    for i, verdict in enumerate(verdicts[:40]):
        assert verdict.evidence["output"] == f"stdout: job {i}\nstderr: job {i}\n"
    assert "output" not in verdicts[40].evidence  # nothing printed, nothing added


FLOOD = """
import json
from containment_kit import Say
from rewardsmith.graders import Executor, Job
from rewardsmith.verifiers.types import Sample

if __name__ == "__main__":
    with Executor("pool", workers=1, cache=False) as ex:
        (v,) = ex.run([Job(Say(megabytes=100), Sample(id="flood", completion="a"))])
    print(json.dumps({"status": v.status.value, "bytes": v.evidence["output_bytes"],
                      "kept": len(v.evidence["output"]), "head": v.evidence["output"][:40]}))
"""


def test_a_100_mb_flood_stays_out_of_the_callers_output(tmp_path):
    script = tmp_path / "flood_main.py"
    script.write_text(FLOOD)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(HERE), str(REPO)])}
    result = subprocess.run(
        [sys.executable, str(script)], env=env, capture_output=True, timeout=240, check=True
    )
    assert len(result.stdout) < 300 and result.stderr == b""
    summary = json.loads(result.stdout)
    assert summary["status"] == "pass" and summary["bytes"] > 100 << 20
    assert summary["kept"] < 10_000 and summary["head"].startswith("stdout: job flood")


# --------------------------------------------------------------------------- one clock


def test_a_nested_call_longer_than_the_job_ends_at_the_jobs_limit():
    jobs = [Job(NestedCall(call_timeout_s=60), sample("nested"), timeout_s=1.5)]
    with Executor("pool", workers=1, cache=False) as ex:
        # A job before it leaves a warm killable worker, so the 1.5 s are the call's only.
        (before,) = ex.run([Job(NestedCall(hang=False), sample("before"))])
        (result,) = ex.stream(jobs)
        (after,) = ex.run([Job(WhoAmI(), sample("after"))])
    verdict = result.verdict
    assert verdict.failure is Failure.VERIFIER_TIMEOUT and result.attempts == 1
    assert "1.5 s time limit of the job (during a call step)" in verdict.feedback
    assert [(d["layer"], d.get("inside")) for d in verdict.evidence["limits"]] == [("job", "call")]
    assert verdict.elapsed_s < 10
    # The nested call stopped in time, so its worker answered and was not replaced.
    assert after.evidence["pid"] == before.evidence["pid"]


def test_a_nested_calls_own_limit_is_named_in_the_verdict():
    with Executor("pool", workers=1, timeout_s=30, cache=False) as ex:
        (verdict,) = ex.run([Job(NestedCall(call_timeout_s=0.5), sample("own"))])
    assert verdict.failure is Failure.VERIFIER_TIMEOUT
    assert "the call stopped after" in verdict.feedback
    (hit,) = verdict.evidence["limits"]
    assert hit["layer"] == "call" and hit["limit_s"] == 0.5


def test_a_slow_verifier_import_is_start_up_not_the_jobs_time(monkeypatch):
    # Each new worker needs 1.5 s to import the verifier's module; the limit is 1 s.
    monkeypatch.setenv(SLOW_IMPORT, f"{os.getpid()}:1.5")
    jobs = [Job(SlowToImport(), sample(i)) for i in range(2)]
    with Executor("pool", workers=1, timeout_s=1.0, cache=False) as ex:
        first = list(ex.stream(jobs))
        ex.run([Job(Hang(), sample("hang"), timeout_s=0.3)])  # killed: a cold worker next
        again = list(ex.stream(jobs))
    assert all(r.verdict.status is Status.PASS and r.attempts == 1 for r in first + again)
