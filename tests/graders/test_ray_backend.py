"""The Ray backend on a real local cluster (ray.init(num_cpus=2)): same rewards as the pool,
timeouts kill, a dead worker is an infrastructure failure, the pool's containment holds on
Ray too. Ray starts slowly: few tests. (Joining a cluster started apart, with a node
lost mid-run: test_ray_cluster.py.)"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from containment_kit import Allocate, Say
from grader_testkit import Die, Hang, MetaScore, Sleep
from slow_import_kit import ENV as SLOW_IMPORT
from slow_import_kit import SlowToImport

from rewardsmith.graders import (
    Executor,
    Grader,
    Job,
    chain,
    gate,
    group_normalize,
    verify,
    weighted,
)
from rewardsmith.graders._pool import PREFETCH_BELOW_S
from rewardsmith.verifiers.types import Failure, Sample, Status

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def ray_cluster():
    ray = pytest.importorskip("ray")
    here = str(Path(__file__).resolve().parent)
    repo = str(Path(here).parents[1])
    old = os.environ.get("PYTHONPATH")
    # Ray's worker processes must import grader_testkit, as the pool's workers do; and the
    # slow verifier module is slow in every process but this one.
    os.environ["PYTHONPATH"] = os.pathsep.join([here, repo, *([old] if old else [])])
    os.environ[SLOW_IMPORT] = f"{os.getpid()}:1.5"
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        yield ray
    finally:
        ray.shutdown()
        del os.environ[SLOW_IMPORT]
        if old is None:
            del os.environ["PYTHONPATH"]
        else:
            os.environ["PYTHONPATH"] = old


def test_ray_gives_the_same_rewards_as_the_pool(ray_cluster):
    grader = Grader(
        chain(
            weighted(
                {"correct": "exact_match", "a": verify(MetaScore("a"), key="a")},
                weights={"correct": 0.7, "a": 0.3},
            ),
            gate("correct", threshold=1.0, otherwise=-0.1),
            group_normalize(scale="mean"),
        )
    )
    rows = [
        Sample(id=str(i), prompt=f"p{i % 3}", completion=c, reference="paris", meta={"a": a})
        for i, (c, a) in enumerate(
            [
                ("Paris", 1.0),
                ("paris.", 0.5),
                ("London", 1.0),
                ("PARIS", None),
                ("x", "infra"),
                ("Rome", 0.0),
            ]
        )
    ]
    with Executor("ray", timeout_s=60) as ex:
        on_ray = grader.score(rows, ex)
    with Executor("pool", workers=2) as ex:
        on_pool = grader.score(rows, ex)
    assert [r.value for r in on_ray] == [r.value for r in on_pool]
    assert [r.infra_failure for r in on_ray] == [None] * 4 + [Failure.SANDBOX_ERROR, None]
    assert on_ray[0].value is not None


def test_ray_kills_a_hang_and_reports_a_dead_worker(ray_cluster):
    jobs = [
        Job(Hang(), Sample(id="hang", completion="x"), timeout_s=2.0),
        Job(Die(), Sample(id="die", completion="x")),
        Job(Sleep(), Sample(id="ok", completion="x", meta={"seconds": 0.1})),
    ]
    with Executor("ray", cache=False) as ex:
        results = {r.index: r for r in ex.stream(jobs)}
    assert results[0].verdict.failure is Failure.VERIFIER_TIMEOUT
    assert results[1].verdict.failure is Failure.WORKER_DIED and results[1].attempts == 2
    assert results[2].verdict.status is Status.PASS


def test_on_ray_a_jobs_clock_starts_when_its_worker_is_ready(ray_cluster):
    # A hang is killed at 1 s; the jobs after it need a new warm worker, whose import of
    # the verifier's module takes 1.5 s, over their 1 s limit: they must still pass.
    hang = [Job(Hang(), Sample(id="hang", completion="x"), timeout_s=1.0)]
    slow = [Job(SlowToImport(), Sample(id=str(i), completion="x")) for i in range(4)]
    with Executor("ray", timeout_s=1.0, cache=False) as ex:
        (killed,) = ex.run(hang)
        results = list(ex.stream(slow))
    assert killed.failure is Failure.VERIFIER_TIMEOUT
    assert [(r.verdict.status, r.attempts) for r in results] == [(Status.PASS, 1)] * 4


def test_on_ray_memory_and_output_are_contained(ray_cluster):
    jobs = [
        Job(Allocate(800, 5.0), Sample(id="big", completion="x")),
        Job(Say(), Sample(id="talk", completion="x")),
    ]
    with Executor("ray", memory_bytes=400 << 20, cache=False) as ex:
        big, talk = ex.run(jobs)
    assert big.failure is Failure.VERIFIER_MEMORY and "400 MiB" in big.feedback
    assert talk.evidence["output"] == "stdout: job talk\nstderr: job talk\n"


def test_on_ray_cheap_jobs_share_tasks_and_keep_their_own_limits(ray_cluster):
    # Sleep(0) jobs teach the executor that this verifier is cheap, so the next ones go in
    # chunks (several jobs per Ray task); one of them sleeps past its limit: it alone is
    # killed, the jobs chunked with it pass, in order, and none is lost or run twice.
    warm = [Job(Sleep(0.0), Sample(id=f"w{i}", completion="x")) for i in range(8)]
    jobs = [Job(Sleep(0.0), Sample(id=f"c{i}", completion="x")) for i in range(200)]
    jobs[57] = Job(
        Sleep(0.0), Sample(id="late", completion="x", meta={"seconds": 30.0}), timeout_s=1.0
    )
    with Executor("ray", timeout_s=20.0, cache=False) as ex:
        # Until the executor has seen them cheap: its estimate is a moving mean of measured
        # times, and one Sleep(0) preempted on a loaded machine reads over the 5 ms mark.
        for _ in range(20):
            ex.run(warm)
            if max(ex.history.per_verifier.values()) < PREFETCH_BELOW_S:
                break
        backend = ex._backend
        sizes: list[int] = []
        send = backend._send

        def counted(tasks):
            sizes.append(len(tasks))
            send(tasks)

        backend._send = counted
        results = sorted(ex.stream(jobs), key=lambda r: r.index)
    assert max(sizes) > 1 and sum(sizes) == 200, sizes
    assert [r.index for r in results] == list(range(200))
    late = results[57].verdict
    assert late.failure is Failure.VERIFIER_TIMEOUT, late
    others = [r for r in results if r.index != 57]
    assert all(r.verdict.status is Status.PASS and r.attempts == 1 for r in others)
