"""The executor on real worker processes: timeouts, deaths, retries, order, cache, async."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import threading
import time
from pathlib import Path

import pytest
from grader_testkit import (
    BatchLength,
    Cheap,
    CheapDie,
    CheapDieOnce,
    CheapHang,
    Counting,
    Crash,
    Die,
    DieOnce,
    Hang,
    PidThenSleep,
    Segfault,
    Sleep,
    Unpicklable,
)

from rewardsmith.graders import Executor, Job, JobResult
from rewardsmith.graders.cache import SqliteCache
from rewardsmith.graders.executor import HISTORY_JOBS
from rewardsmith.graders.scorer import ScorerSettings
from rewardsmith.graders.scorer import _executor as scorer_executor
from rewardsmith.verifiers.text import ExactMatch
from rewardsmith.verifiers.types import Failure, Sample, Status


def sample(i: int | str, seconds: float = 0.0, completion: str = "a") -> Sample:
    return Sample(id=str(i), completion=completion, reference="a", meta={"seconds": seconds})


@pytest.fixture(scope="module")
def pool():
    with Executor("pool", workers=2, timeout_s=30, cache=False) as ex:
        yield ex


def test_pool_gives_the_same_verdicts_as_inline(pool):
    jobs = [Job(ExactMatch(), sample(i, completion=c)) for i, c in enumerate(["a", "A.", "b", ""])]
    with Executor("inline") as inline:
        expected = inline.run(jobs)
    got = pool.run(jobs)
    assert [(v.status, v.score, v.failure) for v in got] == [
        (v.status, v.score, v.failure) for v in expected
    ]


def test_a_hanging_verifier_is_killed_and_only_its_job_fails(pool):
    jobs = [
        Job(Hang(), sample(0), timeout_s=0.5),
        Job(Cheap(), sample(1)),
        Job(Sleep(), sample(2, 0.2)),
    ]
    start = time.monotonic()
    results = {r.index: r for r in pool.stream(jobs)}
    assert results[0].verdict.status is Status.TIMEOUT
    assert results[0].verdict.failure is Failure.VERIFIER_TIMEOUT
    assert results[0].verdict.score is None and results[0].attempts == 1  # timeouts are not retried
    assert results[1].verdict.status is Status.PASS and results[2].verdict.status is Status.PASS
    assert (
        time.monotonic() - start < 20
    )  # killed at ~0.5 s, not after an hour (loose: busy machine)
    assert pool.run([Job(Cheap(), sample(3))])[0].status is Status.PASS  # the pool refilled


@pytest.mark.parametrize("verifier", [Die(), Segfault()], ids=["os._exit", "segfault"])
def test_a_dying_worker_costs_only_its_job_after_one_retry(pool, verifier):
    jobs = [Job(verifier, sample(0))] + [Job(Sleep(), sample(i, 0.05)) for i in range(1, 6)]
    results = {r.index: r for r in pool.stream(jobs)}
    dead = results[0]
    assert dead.verdict.failure is Failure.WORKER_DIED and dead.verdict.score is None
    assert dead.attempts == 2  # tried, died, retried once, died again
    assert all(results[i].verdict.status is Status.PASS for i in range(1, 6))


def test_a_worker_killed_from_outside_mid_job(tmp_path):
    # As the OOM killer would: SIGKILL the worker while it runs a job.
    def killer():
        for _ in range(600):
            files = list(tmp_path.glob("victim"))
            if files:
                os.kill(int(files[0].read_text()), signal.SIGKILL)
                return
            time.sleep(0.05)

    thread = threading.Thread(target=killer)
    thread.start()
    with Executor("pool", workers=2, retries=0, cache=False) as ex:
        jobs = [
            Job(PidThenSleep(str(tmp_path)), sample("victim")),
            Job(Sleep(), sample("other", 0.1)),
        ]
        verdicts = ex.run(jobs)
    thread.join()
    assert verdicts[0].failure is Failure.WORKER_DIED
    assert "exit code -9" in verdicts[0].feedback
    assert verdicts[1].status is Status.PASS


def _wait_until_dead(pid: int) -> None:
    """Until the process is a zombie (or gone): a killed process takes a moment to die."""
    for _ in range(200):
        try:
            if Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] == "Z":
                return
        except (FileNotFoundError, ProcessLookupError):  # reaped while being read
            return
        time.sleep(0.05)


def test_a_worker_that_died_while_idle_is_replaced_without_blame():
    with Executor("pool", workers=1, cache=False) as ex:
        (first,) = ex.run([Job(Sleep(), sample("a", 0.01))])
        pid = first.evidence["pid"]
        os.kill(pid, signal.SIGKILL)
        _wait_until_dead(pid)
        (result,) = ex.stream([Job(Sleep(), sample("b", 0.01))])
    assert result.verdict.status is Status.PASS and result.attempts == 1
    assert result.verdict.evidence["pid"] != first.evidence["pid"]


def test_a_death_that_does_not_repeat_is_healed_by_the_retry(pool, tmp_path):
    results = list(pool.stream([Job(DieOnce(str(tmp_path)), sample("once"))]))
    assert results[0].verdict.status is Status.PASS and results[0].attempts == 2


def _bunch(first: Job, n: int = 30) -> list[JobResult]:
    """``first`` then n cheap jobs on one worker: they go out together, results in bunches."""
    jobs = [first] + [Job(Cheap(), sample(i)) for i in range(n)]
    with Executor("pool", workers=1, cache=False) as ex:
        return sorted(ex.stream(jobs), key=lambda r: r.index)


def test_a_death_among_cheap_jobs_costs_only_the_culprit():
    results = _bunch(Job(CheapDie(), sample("killer")))
    assert results[0].verdict.failure is Failure.WORKER_DIED and results[0].attempts == 2
    assert all(r.verdict.status is Status.PASS and r.attempts == 1 for r in results[1:])


def test_a_death_among_cheap_jobs_that_does_not_repeat_costs_nothing(tmp_path):
    # Unattributed (results come in bunches), so no job used up an attempt on it.
    results = _bunch(Job(CheapDieOnce(str(tmp_path)), sample("first")))
    assert all(r.verdict.status is Status.PASS and r.attempts == 1 for r in results)


def test_a_hang_among_cheap_jobs_is_named_and_killed():
    results = _bunch(Job(CheapHang(), sample("hang"), timeout_s=0.5))
    assert results[0].verdict.failure is Failure.VERIFIER_TIMEOUT
    assert all(r.verdict.status is Status.PASS for r in results[1:])


def test_a_crashing_verifier_is_retried_once_then_reported(pool):
    (result,) = pool.stream([Job(Crash(), sample(0))])
    assert result.verdict.failure is Failure.VERIFIER_CRASH and result.attempts == 2
    assert "verifier bug" in result.verdict.feedback


def test_an_unpicklable_verifier_is_a_verdict_not_an_exception(pool):
    (verdict,) = pool.run([Job(Unpicklable(), sample(0))])
    assert verdict.failure is Failure.VERIFIER_CRASH and "pickled" in verdict.feedback


def test_results_stream_as_they_finish(pool):
    jobs = [Job(Sleep(), sample(0, 1.0))] + [Job(Cheap(), sample(i)) for i in range(1, 5)]
    order = [r.index for r in pool.stream(jobs)]
    assert order[-1] == 0  # the slow job is last although it was submitted first
    assert sorted(order) == [0, 1, 2, 3, 4]


def test_expensive_jobs_start_first_by_cost_hint():
    jobs = [Job(Cheap(), sample(i)) for i in range(3)] + [Job(Sleep(), sample(9, 0.05))]
    for schedule, first in (("expensive_first", 3), ("fifo", 0)):
        with Executor("pool", workers=1, schedule=schedule, cache=False) as ex:
            assert next(iter(ex.stream(jobs))).index == first


def test_measured_history_reorders_the_next_run():
    # The same verifier (one cost hint) on a short and a long sample: the first run knows
    # nothing and keeps job order; the second uses the measured times.
    jobs = [Job(Sleep(), sample("short", 0.02)), Job(Sleep(), sample("long", 0.3))]
    with Executor("pool", workers=1, cache=False) as ex:
        assert [r.index for r in ex.stream(jobs)] == [0, 1]
        assert [r.index for r in ex.stream(jobs)] == [1, 0]


def test_history_jobs_zero_keeps_no_per_sample_times():
    # A reward server sees every sample once: what it remembers per sample only grows.
    jobs = [Job(ExactMatch(), sample(i)) for i in range(20)]
    for history_jobs, kept in ((HISTORY_JOBS, 20), (5, 5), (0, 0)):
        with Executor("inline", cache=False, history_jobs=history_jobs) as ex:
            ex.run(jobs)
            assert len(ex.history.per_job) == kept
            assert ex.history.per_verifier  # the verifier's mean time is kept either way


def test_a_scorer_without_a_cache_remembers_nothing_per_sample():
    for cache, history_jobs in ((True, HISTORY_JOBS), (False, 0)):
        executor = scorer_executor(ScorerSettings(backend="inline", cache=cache))
        assert (executor.cache is not None, executor.history.max_jobs) == (cache, history_jobs)


def test_cache_makes_a_rescore_free_and_keys_on_config(tmp_path):
    log = tmp_path / "runs.log"
    jobs = [Job(Counting(str(log)), sample(i)) for i in range(4)]
    with Executor("pool", workers=2) as ex:
        first = list(ex.stream(jobs))
        second = list(ex.stream(jobs))
        assert not any(r.cached for r in first) and all(r.cached for r in second)
        assert [r.verdict for r in sorted(second, key=lambda r: r.index)] == ex.run(jobs)
        other_log = tmp_path / "other.log"  # another config: another key, runs again
        ex.run([Job(Counting(str(other_log)), sample(0))])
    assert len(log.read_text().split()) == 4
    assert len(other_log.read_text().split()) == 1


def test_infra_failures_are_never_cached():
    with Executor("inline") as ex:
        first = list(ex.stream([Job(Crash(), sample(0))]))
        second = list(ex.stream([Job(Crash(), sample(0))]))
    assert not first[0].cached and not second[0].cached


def test_sqlite_cache_survives_a_new_executor(tmp_path):
    log = tmp_path / "runs.log"
    jobs = [Job(Counting(str(log)), sample(i)) for i in range(3)]
    for _ in range(2):
        cache = SqliteCache(tmp_path / "cache.sqlite")
        with Executor("inline", cache=cache) as ex:
            verdicts = ex.run(jobs)
        cache.close()
    assert [v.status for v in verdicts] == [Status.PASS] * 3
    assert len(log.read_text().split()) == 3


VERIFIER_SOURCE = """
from dataclasses import dataclass
from typing import ClassVar

@dataclass(frozen=True)
class Fixed:
    name: ClassVar[str] = "fixed"
    version: ClassVar[str] = "1"

    def __call__(self, sample):
        raise NotImplementedError
"""


def test_a_verifiers_code_is_in_its_cache_key(tmp_path, monkeypatch):
    """A fix that changes verdicts but forgets the version must not replay old verdicts."""
    import importlib

    from rewardsmith.graders.cache import code_digest, verifier_key

    module = tmp_path / "my_verifier.py"
    monkeypatch.syspath_prepend(str(tmp_path))
    keys = []
    for body in ("", "    threshold = 0.5\n"):  # the same name, version and config
        module.write_text(VERIFIER_SOURCE + body)
        monkeypatch.delitem(sys.modules, "my_verifier", raising=False)
        code_digest.cache_clear()
        keys.append(verifier_key(importlib.import_module("my_verifier").Fixed()))
    assert keys[0] != keys[1]
    code_digest.cache_clear()
    own = verifier_key(ExactMatch())
    assert own == verifier_key(ExactMatch())  # stable within a process and code
    assert code_digest("rewardsmith.verifiers.text") == code_digest("rewardsmith.verifiers.math")


def test_a_consumer_that_stops_early_leaves_no_stray_results(pool):
    stream = pool.stream(
        [Job(Cheap(), sample(0))] + [Job(Sleep(), sample(i, 0.5)) for i in range(1, 5)]
    )
    next(stream)
    stream.close()
    assert [v.status for v in pool.run([Job(ExactMatch(), sample(7, completion="b"))])] == [
        Status.FAIL
    ]


def test_astream_and_arun(pool):
    jobs = [Job(Sleep(), sample(i, 0.05)) for i in range(4)]

    async def main():
        streamed = [r.index async for r in pool.astream(jobs)]
        return streamed, await pool.arun(jobs)

    streamed, verdicts = asyncio.run(main())
    assert sorted(streamed) == [0, 1, 2, 3]
    assert [v.status for v in verdicts] == [Status.PASS] * 4


def test_hostile_sizes_pass_through_workers(pool):
    huge = sample(0, completion="a" * 5_000_000)
    (verdict,) = pool.run([Job(ExactMatch(), huge)])
    assert verdict.failure is Failure.INPUT_TOO_LARGE


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"backend": "threads"}, "backend must be"),
        ({"schedule": "random"}, "schedule must be"),
        ({"start_timeout_s": 0}, "start_timeout_s must be > 0"),
    ],
)
def test_bad_executor_settings(kwargs, message):
    with pytest.raises(ValueError, match=message):
        Executor(**kwargs)


def test_a_grader_without_an_executor_uses_the_shared_pool():
    from grader_helpers import A, samples

    from rewardsmith.graders import Grader, weighted

    rewards = Grader(weighted({"a": A})).score(samples([{"a": 0.5}, {"a": None}]))
    assert [r.value for r in rewards] == [0.5, None]


def test_a_batch_verifier_runs_in_batches_with_per_sample_verdicts(pool, tmp_path):
    log = tmp_path / "batches.log"
    jobs = [Job(BatchLength(str(log)), sample(i, completion="x" * i)) for i in range(70)]
    expected = [BatchLength()(j.sample) for j in jobs]  # one at a time, in this process
    verdicts = pool.run(jobs)
    assert [v.score for v in verdicts] == [v.score for v in expected]
    assert sorted(int(n) for n in log.read_text().split()) == [6, 32, 32]


@pytest.mark.parametrize(("mode", "words"), [("crash", "out of memory"), ("short", "items for")])
def test_a_failing_batch_call_fails_each_job_after_one_retry(pool, tmp_path, mode, words):
    log = tmp_path / "batches.log"
    results = list(pool.stream([Job(BatchLength(str(log), mode), sample(i)) for i in range(5)]))
    assert len(results) == 5
    for r in results:
        assert r.verdict.failure is Failure.VERIFIER_CRASH and r.attempts == 2
        assert words in r.verdict.feedback
    assert log.read_text().split() == ["5", "5"]  # tried once, retried once
