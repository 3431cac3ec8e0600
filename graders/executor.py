"""The executor: runs (verifier, sample) jobs inline, on a process pool, or on Ray.

    >>> from rewardsmith.verifiers.text import ExactMatch
    >>> from rewardsmith.verifiers.types import Sample
    >>> samples = [Sample(id=str(i), completion="4", reference="4") for i in range(3)]
    >>> jobs = [Job(ExactMatch(), s) for s in samples]
    >>> with Executor("inline") as ex:
    ...     [v.status.value for v in ex.run(jobs)]
    ['pass', 'pass', 'pass']

What it guarantees, whatever the backend:

- **Failures are verdicts.** A verifier that raises is a VERIFIER_CRASH verdict
  (`run_verifier`); on "pool" and "ray" a job past its ``timeout_s`` has its process
  killed and is a VERIFIER_TIMEOUT verdict, and a worker that dies is a WORKER_DIED
  verdict for the one job it was running. Infrastructure failures in ``retry_on`` (by
  default a dead worker, a crashed verifier, a sandbox that did not start) are retried
  ``retries`` times (default once) before they are reported. Timeouts are not retried by
  default: a hang usually hangs again, and each try costs the whole limit.
- **A limit times the job, not the start-up.** On "pool" and "ray", a job's clock starts
  when its worker is ready for it, not when the job is handed over: a new worker (and
  each replacement of a killed one) first imports the caller's main module and the
  verifier's module, which for a large CLI can outlast a short limit. A worker not ready
  ``start_timeout_s`` after it started is killed, and each of its jobs is a WORKER_DIED
  verdict (retried like any).
- **Contained.** Pool and Ray jobs run in warm workers (`rewardsmith.verifiers.warm`): a
  kill takes the worker's whole tree; a worker over ``memory_bytes`` is killed (its job a
  VERIFIER_MEMORY verdict) and one left holding over half of it is replaced; what a job
  prints goes into its verdict (``evidence["output"]``), never to the caller's stdout;
  nested limits (a killable call, a sandbox run) share the job's clock, and the verdict
  names the limit that ended the work (``evidence["limits"]``).
- **Streaming.** `stream` yields results as they finish; `run` returns them in job order;
  `astream` and `arun` are the asyncio forms (the work runs on a helper thread).
- **Expensive first.** Jobs start in decreasing order of estimated cost: the measured
  time of the same (verifier, sample) if seen before, else the verifier's mean measured
  time, else a prior from its `Cost` hint. Longest-processing-time-first keeps the
  makespan within 4/3 of the optimum (Graham 1969); first-in-first-out can leave one
  two-second job to the very end.
- **Batches.** Jobs of a `BatchVerifier` (a reward model) run ``batch_size`` samples
  per task through ``verifier.batch`` (one limit of ``timeout_s`` for the whole call);
  a batch call that crashes, dies or times out is every one of its jobs' failure, and
  is retried as one.
- **Cache.** Verdicts are cached by a content hash of (verifier name, version, config,
  sample), so rescoring the same dump is nearly free; infrastructure failures are never
  cached.

The "inline" backend runs jobs in the calling process: no timeouts, no isolation; use it
for tests and for trusted checks that take microseconds. One `stream` at a time runs on
an executor (a lock serialises callers).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
import warnings
from collections import OrderedDict, defaultdict, deque
from collections.abc import AsyncIterator, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from rewardsmith.graders._backend import Backend, InlineBackend, Outcome, Task
from rewardsmith.graders._pool import WorkerLimits
from rewardsmith.graders.cache import Cache, MemoryCache, job_key, verifier_key
from rewardsmith.verifiers.protocol import BatchVerifier, Cost, Verifier
from rewardsmith.verifiers.types import Failure, Sample, Verdict

__all__ = ["COST_PRIOR_S", "DEFAULT_MEMORY_BYTES", "HISTORY_JOBS", "Executor", "Job", "JobResult"]

BackendName = Literal["inline", "pool", "ray"]

COST_PRIOR_S: dict[str, float] = {
    Cost.CHEAP: 0.0005,
    Cost.CPU: 0.1,
    Cost.SANDBOX: 0.5,
    Cost.GPU: 1.0,
}
"""Seconds assumed for a verifier never measured, by its cost hint."""

DEFAULT_MEMORY_BYTES = 4 << 30
"""A pool or Ray worker's resident memory limit by default (4 GiB)."""

DEFAULT_RETRY_ON = frozenset({Failure.WORKER_DIED, Failure.VERIFIER_CRASH, Failure.SANDBOX_ERROR})


@dataclass(frozen=True)
class Job:
    """One verifier to run on one sample; ``timeout_s`` overrides the executor's limit."""

    verifier: Verifier
    sample: Sample
    timeout_s: float | None = None


@dataclass(frozen=True)
class JobResult:
    """A finished job: its position in the submitted list, its verdict, how it was got."""

    index: int
    verdict: Verdict
    attempts: int = 1
    cached: bool = False


HISTORY_JOBS = 200_000
"""(verifier, sample) pairs whose measured time an executor remembers, newest kept."""


@dataclass
class _History:
    """Measured seconds per (verifier, sample) and per verifier (exponential mean)."""

    per_job: OrderedDict[tuple[str, str], float] = field(default_factory=OrderedDict)
    per_verifier: dict[str, float] = field(default_factory=dict)
    max_jobs: int = HISTORY_JOBS

    def estimate(self, vkey: str, sample_id: str, cost: Any) -> float:
        seen = self.per_job.get((vkey, sample_id))
        if seen is not None:
            return seen
        mean = self.per_verifier.get(vkey)
        return mean if mean is not None else COST_PRIOR_S.get(cost, COST_PRIOR_S[Cost.CPU])

    def record(self, vkey: str, sample_id: str, seconds: float) -> None:
        if self.max_jobs > 0:
            self.per_job[(vkey, sample_id)] = seconds
            if len(self.per_job) > self.max_jobs:
                self.per_job.popitem(last=False)
        old = self.per_verifier.get(vkey)
        self.per_verifier[vkey] = seconds if old is None else 0.8 * old + 0.2 * seconds


class Executor:
    """Runs jobs; see the module docstring. Use as a context manager, or call `close`."""

    def __init__(
        self,
        backend: BackendName = "pool",
        workers: int | None = None,
        timeout_s: float | None = 60.0,
        retries: int = 1,
        retry_on: Iterable[Failure] = DEFAULT_RETRY_ON,
        cache: Cache | bool = True,
        schedule: Literal["expensive_first", "fifo"] = "expensive_first",
        start_method: str | None = None,
        batch_size: int = 32,
        start_timeout_s: float = 60.0,
        memory_bytes: int | None = DEFAULT_MEMORY_BYTES,
        output_bytes: int = 8192,
        ray_address: str | None = None,
        history_jobs: int = HISTORY_JOBS,
    ) -> None:
        if backend not in ("inline", "pool", "ray"):
            raise ValueError(f"backend must be 'inline', 'pool' or 'ray', got {backend!r}")
        if schedule not in ("expensive_first", "fifo"):
            raise ValueError(f"schedule must be 'expensive_first' or 'fifo', got {schedule!r}")
        if not start_timeout_s > 0:
            raise ValueError(f"start_timeout_s must be > 0 seconds, got {start_timeout_s}")
        if memory_bytes is not None and memory_bytes <= 0:
            raise ValueError(f"memory_bytes must be > 0 (or None for no limit), got {memory_bytes}")
        if start_method is not None:
            warnings.warn(
                "Executor(start_method=...) is ignored: pool workers are warm workers "
                "(rewardsmith.verifiers.warm), each a fresh interpreter",
                DeprecationWarning,
                stacklevel=2,
            )
        self.backend_name = backend
        self._workers_asked = workers
        self.workers = workers or os.cpu_count() or 1
        self.timeout_s = timeout_s
        self.retries = retries
        self.retry_on = frozenset(retry_on)
        self.cache: Cache | None = MemoryCache() if cache is True else (cache or None)
        self.schedule = schedule
        self.batch_size = batch_size
        self.start_timeout_s = start_timeout_s
        self.memory_bytes = memory_bytes
        self.output_bytes = output_bytes
        self.ray_address = ray_address
        self.history = _History(max_jobs=history_jobs)
        self._backend: Backend | None = None
        self._lock = threading.Lock()
        self._run_ids = 0

    # ------------------------------------------------------------------ lifecycle

    def _get_backend(self) -> Backend:
        if self._backend is None:
            if self.backend_name == "inline":
                self._backend = InlineBackend()
            elif self.backend_name == "pool":
                from rewardsmith.graders._pool import PoolBackend

                self._backend = PoolBackend(self.workers, self._limits(main_module=True))
            else:
                from rewardsmith.graders._ray import RayBackend

                limits = self._limits(main_module=False)
                self._backend = RayBackend(self._workers_asked, limits, self.ray_address)
        return self._backend

    def _limits(self, main_module: bool) -> WorkerLimits:
        return WorkerLimits(
            self.memory_bytes, self.output_bytes, self.start_timeout_s, main_module=main_module
        )

    def close(self) -> None:
        """Stop the workers. The executor starts new ones if used again."""
        with self._lock:
            if self._backend is not None:
                self._backend.close()
                self._backend = None

    def __enter__(self) -> Executor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ------------------------------------------------------------------ running

    def run(self, jobs: Sequence[Job]) -> list[Verdict]:
        """Every job's verdict, in job order."""
        out: list[Verdict | None] = [None] * len(jobs)
        for result in self.stream(jobs):
            out[result.index] = result.verdict
        return _complete(out)

    def stream(self, jobs: Sequence[Job]) -> Iterator[JobResult]:
        """Yield each job's result as soon as it is known (cache hits first)."""
        with self._lock:
            yield from self._stream(list(jobs))

    def _stream(self, jobs: list[Job]) -> Iterator[JobResult]:
        vkeys: dict[int, str] = {}
        batchable: dict[str, bool] = {}
        keys: list[str | None] = []
        tasks: list[Task] = []
        batches: dict[tuple[str, float | None], list[Task]] = defaultdict(list)
        for index, job in enumerate(jobs):
            vkey = vkeys.get(id(job.verifier))
            if vkey is None:  # hashing a config costs; do it once per verifier object
                vkey = vkeys[id(job.verifier)] = verifier_key(job.verifier)
                batchable[vkey] = self.batch_size > 1 and isinstance(job.verifier, BatchVerifier)
            key = job_key(job.verifier, job.sample, vkey) if self.cache is not None else None
            keys.append(key)
            hit = self.cache.get(key) if self.cache is not None and key is not None else None
            if hit is not None:
                yield JobResult(index, hit, attempts=0, cached=True)
                continue
            task = self._task(index, job, vkey)
            if batchable[vkey]:  # a Protocol isinstance check is slow: once per verifier
                batches[(vkey, task.timeout_s)].append(task)
            else:
                tasks.append(task)
        for group in batches.values():
            tasks += [
                _batched(group[i : i + self.batch_size])
                for i in range(0, len(group), self.batch_size)
            ]
        if self.schedule == "expensive_first":
            tasks.sort(key=lambda t: -t.estimate_s)  # stable: ties keep job order
        self._run_ids += 1
        for task in tasks:
            task.run_id = self._run_ids * 10_000_000 + task.index
        for task, outcome in self._drive(tasks):
            vkey = vkeys[id(jobs[task.index].verifier)]
            for index, sample, verdict in _expand(task, outcome):
                self.history.record(vkey, sample.id, verdict.elapsed_s)
                key = keys[index]
                if self.cache is not None and key is not None and not verdict.is_infra_failure:
                    self.cache.put(key, verdict)
                yield JobResult(index, verdict, task.attempt)

    def _task(self, index: int, job: Job, vkey: str) -> Task:
        timeout = job.timeout_s if job.timeout_s is not None else self.timeout_s
        cost = getattr(job.verifier, "cost", Cost.CPU)
        estimate = self.history.estimate(vkey, job.sample.id, cost)
        return Task(index, job.verifier, job.sample, timeout, estimate)

    def _drive(self, tasks: list[Task]) -> Iterator[tuple[Task, Outcome]]:
        backend = self._get_backend()
        pending = deque(tasks)
        try:
            while pending or backend.busy():
                while pending and backend.accepts(pending[0]):
                    backend.submit(pending.popleft())
                for task, verdict in backend.poll(None):
                    if verdict is None:
                        pending.appendleft(task)  # never started: not an attempt
                    elif self._should_retry(task, verdict):
                        task.attempt += 1
                        pending.appendleft(task)
                    else:
                        yield task, verdict
        finally:
            if pending or backend.busy():
                backend.abort()  # a consumer that stopped early leaves no stray work

    def _should_retry(self, task: Task, verdict: Outcome) -> bool:
        # A batch whose verifier answered per sample is final; one whose whole call
        # failed (a single infra verdict) is retried like any job.
        return (
            isinstance(verdict, Verdict)
            and verdict.failure in self.retry_on
            and verdict.is_infra_failure
            and task.attempt <= self.retries
        )

    # ------------------------------------------------------------------ asyncio

    async def astream(self, jobs: Sequence[Job]) -> AsyncIterator[JobResult]:
        """`stream` for asyncio: the work runs on a helper thread, the loop stays free."""
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[Any] = asyncio.Queue()
        stop = threading.Event()
        done = object()

        def put(item: object) -> None:
            with contextlib.suppress(RuntimeError):  # the loop closed: nobody is waiting
                loop.call_soon_threadsafe(queue.put_nowait, item)

        def pump() -> None:
            try:
                for result in self.stream(jobs):
                    put(result)
                    if stop.is_set():
                        break
            except BaseException as exc:  # handed to the awaiting side, raised there
                put(exc)
            finally:
                put(done)

        thread = threading.Thread(target=pump, name="rewardsmith-executor", daemon=True)
        thread.start()
        try:
            while (item := await queue.get()) is not done:
                if isinstance(item, BaseException):
                    raise item
                yield item
        finally:
            stop.set()

    async def arun(self, jobs: Sequence[Job]) -> list[Verdict]:
        """`run` for asyncio."""
        out: list[Verdict | None] = [None] * len(jobs)
        async for result in self.astream(jobs):
            out[result.index] = result.verdict
        return _complete(out)


def _batched(tasks: list[Task]) -> Task:
    """One task running a `BatchVerifier` on several samples (its jobs' estimates summed)."""
    first = tasks[0]
    batch = [(t.index, t.sample) for t in tasks]
    estimate = sum(t.estimate_s for t in tasks)
    return Task(first.index, first.verifier, first.sample, first.timeout_s, estimate, batch=batch)


def _expand(task: Task, outcome: Outcome) -> list[tuple[int, Sample, Verdict]]:
    """(job index, sample, verdict) for each job a task ran; a whole-batch failure is each
    job's failure."""
    if task.batch is None:
        assert isinstance(outcome, Verdict)
        return [(task.index, task.sample, outcome)]
    verdicts = outcome if isinstance(outcome, list) else [outcome] * len(task.batch)
    return [(i, s, v) for (i, s), v in zip(task.batch, verdicts, strict=True)]


def _complete(verdicts: list[Verdict | None]) -> list[Verdict]:
    missing = [i for i, v in enumerate(verdicts) if v is None]
    if missing:  # a bug in a backend, never a silent gap in the rewards
        raise RuntimeError(f"the executor lost jobs {missing[:10]}")
    return [v for v in verdicts if v is not None]
