"""`Scorer`: the one object behind every door (the CLI, the server, the trainer, TRL, veRL,
OpenRLHF), as httpx's `Client` is behind its helpers.

A Scorer holds a `Grader`, the executor(s) it runs verifiers on, the grader's state
(running normalisation), the infrastructure-failure policy and the statistics of what it
scored (`rewardsmith.graders.stats`). What it gives:

- `score(samples)`: one batch, one `Reward` per sample; `ascore` is the asyncio form;
  `stream(samples)` scores any iterable in chunks of ``chunk_size`` and yields rewards in
  order (group normalisation sees one chunk, as documented).
- **State carried.** Running normalisation continues from batch to batch and chunk to
  chunk; `state` is a JSON-serialisable snapshot and `load_state` restores it, so a run
  saved and resumed equals an uninterrupted one.
- **Thread-safe and lazily started.** veRL calls ``compute_score`` from a thread pool,
  OpenRLHF from ``asyncio.to_thread``, one sample per call. The first call starts the
  Scorer's lanes (threads, each driving one executor; one lane unless asked); calls that
  arrive while a lane is busy are queued and run *together* as one executor batch, so many
  single-sample calls cost about what one batch does. Each call's verdicts are combined
  as their own batch (its group, its step), under one lock, in the order calls complete.
- **Picklable by its settings.** Pickling keeps the grader, the settings and the state;
  the executor is started again wherever the Scorer lands.

    >>> from rewardsmith.verifiers.types import Sample
    >>> with Scorer(["exact_match"], backend="inline") as scorer:
    ...     [r.value for r in scorer.score([Sample(id="1", completion="4", reference="4")])]
    [1.0]

A door that must hand its trainer a number (veRL, OpenRLHF's reward file) calls
`require_value`, which raises a `NoRewardError` naming the sample where there is none.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Any, Literal

from rewardsmith.graders.executor import HISTORY_JOBS, Executor, Job
from rewardsmith.graders.fingerprint import Fingerprint
from rewardsmith.graders.grader import Grader
from rewardsmith.graders.reward import Reward
from rewardsmith.graders.stats import Stats
from rewardsmith.verifiers.types import Sample, Verdict

__all__ = [
    "DataError",
    "InfraFailureError",
    "NoRewardError",
    "NotApplicableError",
    "Scorer",
    "ScorerSettings",
]

Backend = Literal["inline", "pool", "ray"]
Progress = Callable[[float], None]
"""Called with the fraction of one sample done as each job finishes (for progress bars)."""


class NoRewardError(RuntimeError):
    """A door that must give its trainer a number has a sample with no reward."""


class InfraFailureError(NoRewardError):
    """The infrastructure could not score the sample and no fallback is stated."""


class DataError(NoRewardError):
    """The sample's own data (its reference) is unusable."""


class NotApplicableError(NoRewardError):
    """No component of the reward applies to the sample (its task is covered by no leaf)."""


@dataclass(frozen=True)
class ScorerSettings:
    """How a Scorer runs its verifiers: everything it needs to start again elsewhere."""

    backend: Backend = "pool"
    """pool (worker processes, killable), ray, or inline (in process: tests, trusted checks)."""
    workers: int | None = None
    """Worker processes per lane (None: one per core)."""
    timeout_s: float | None = 60.0
    """Seconds one verifier may take on one sample before its process is killed."""
    lanes: int = 1
    """Batches run at once, each on its own executor (a server uses several, so one
    hanging check holds one lane while the others go on)."""
    cache: bool = True
    """Remember each sample: its verdicts by content hash (rescoring it is nearly free) and
    its measured time (a rescore schedules it by that). Off where samples are all new (the
    reward server), so that nothing grows with the samples seen."""
    chunk_size: int = 256
    """Samples per batch in `Scorer.stream` (group normalisation sees one chunk)."""
    max_batch_jobs: int = 4096
    """Queued calls run together on a free lane up to this many jobs."""

    def __post_init__(self) -> None:
        if self.backend not in ("inline", "pool", "ray"):
            raise ValueError(f"backend must be 'inline', 'pool' or 'ray', got {self.backend!r}")
        if self.lanes < 1 or self.chunk_size < 1 or self.max_batch_jobs < 1:
            raise ValueError("lanes, chunk_size and max_batch_jobs must be at least 1")


class Scorer:
    """Scores samples with one grader, one set of executors, one state; see the module doc.

    ``reward`` is a `Grader` or anything `rewardsmith.graders.build` takes (a YAML path or
    text, a list of verifier names, a mapping). ``fallback`` overrides the spec's policy:
    an infrastructure failure then gives that number (marked ``fallback``). ``executor``
    lends an executor the caller owns (one lane; the Scorer does not close it).
    """

    def __init__(
        self,
        reward: Any,
        *,
        backend: Backend = "pool",
        workers: int | None = None,
        timeout_s: float | None = 60.0,
        lanes: int = 1,
        cache: bool = True,
        chunk_size: int = 256,
        fallback: float | None = None,
        executor: Executor | None = None,
        state: Mapping[str, Any] | None = None,
    ) -> None:
        from rewardsmith.graders.build import build

        self.grader: Grader = build(reward)
        if executor is not None:
            backend, workers, timeout_s, lanes = (
                executor.backend_name,
                executor.workers,
                executor.timeout_s,
                1,
            )
        self.settings = ScorerSettings(backend, workers, timeout_s, lanes, cache, chunk_size)
        self._fallback_override = fallback
        self.fallback: float | None = fallback if fallback is not None else self.grader.fallback
        self._lent = executor
        self._core = _Core(self.grader, self.fallback)
        if state is not None:
            self.load_state(state)
        self._lanes: _Lanes | None = None
        self._start_lock = threading.Lock()

    # ------------------------------------------------------------------ scoring

    def score(
        self, samples: Sequence[Sample], *, step: int = 0, progress: Progress | None = None
    ) -> list[Reward]:
        """One `Reward` per sample, in order, scored as one batch (``step`` drives
        scheduled weights; ``progress`` hears of each finished job)."""
        return self._submit(list(samples), step, progress).result()

    async def ascore(self, samples: Sequence[Sample], *, step: int = 0) -> list[Reward]:
        """`score` for asyncio: the event loop stays free while verifiers run."""
        return await asyncio.wrap_future(self._submit(list(samples), step, None))

    def stream(
        self, samples: Iterable[Sample], *, step: int = 0, progress: Progress | None = None
    ) -> Iterator[Reward]:
        """Rewards for any iterable of samples, in order: `score` on each chunk of
        ``chunk_size`` (one chunk in flight, so state flows from chunk to chunk in order)."""
        chunk: list[Sample] = []
        for sample in samples:
            chunk.append(sample)
            if len(chunk) == self.settings.chunk_size:
                yield from self._submit(chunk, step, progress).result()
                chunk = []
        if chunk:
            yield from self._submit(chunk, step, progress).result()

    def require_value(self, reward: Reward) -> float:
        """The reward's number, for doors that cannot pass on "no reward"; else raises the
        `NoRewardError` that says why (infrastructure, data, or nothing applies)."""
        if reward.value is not None:
            return reward.value
        where = f"sample {reward.sample_id!r}: {reward.reason}"
        if reward.infra_failure is not None:
            raise InfraFailureError(
                f"{where} (state a fallback in the spec, on_infra_failure: fallback, "
                "to train on a number instead)"
            )
        if reward.data_error is not None:
            raise DataError(where)
        raise NotApplicableError(
            f"{where}: give the sample a task that a leaf covers, or set default_task in the spec"
        )

    # ------------------------------------------------------------------ state

    @property
    def state(self) -> dict[str, Any]:
        """A JSON-serialisable snapshot of the grader's state (running normalisation)."""
        return self._core.snapshot()

    def load_state(self, state: Mapping[str, Any]) -> None:
        """Continue from a snapshot taken with `state` (a saved run, a checkpoint)."""
        self._core.restore(state)

    @property
    def counts(self) -> dict[str, Any]:
        """What became of every sample scored so far, as plain data (`Stats.to_dict`)."""
        return self.stats.to_dict()

    @property
    def stats(self) -> Stats:
        """A copy of the statistics of every sample scored so far (see
        `rewardsmith.graders.stats`: pass rates, mean reward, outcomes, timings)."""
        return self._core.stats_copy()

    def fingerprint(self, mapping: Any = None) -> Fingerprint:
        """What determines these rewards: the spec, each verifier's name, version and
        settings, the failure policy, and the dump's column ``mapping``."""
        return Fingerprint.of(self.grader, fallback=self.fallback, mapping=mapping)

    # ------------------------------------------------------------------ lifecycle

    def close(self, timeout_s: float | None = None) -> None:
        """Stop the lanes and the executors the Scorer started (it restarts if used
        again). With ``timeout_s``, a lane still busy after that long is abandoned (its
        thread is a daemon: it ends with the process) rather than waited for."""
        with self._start_lock:
            lanes, self._lanes = self._lanes, None
        if lanes is not None:
            lanes.close(timeout_s)

    def __enter__(self) -> Scorer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __reduce__(self) -> tuple[Any, ...]:
        settings = dataclasses.asdict(self.settings)
        del settings["max_batch_jobs"]
        return (_restore, (self.grader, settings, self._fallback_override, self.state))

    # ------------------------------------------------------------------ internals

    def _submit(self, samples: list[Sample], step: int, progress: Progress | None) -> Future:
        request = _Request(samples, self.grader.jobs(samples), step, progress)
        if not request.jobs:  # nothing applies: no executor needed
            self._core.finish(request)
        else:
            self._started().submit(request)
        return request.future

    def _started(self) -> _Lanes:
        with self._start_lock:
            if self._lanes is None:
                self._lanes = _Lanes(self._executors(), self._core, self.settings.max_batch_jobs)
                weakref.finalize(self, self._lanes.close)
            return self._lanes

    def _executors(self) -> list[tuple[Executor, bool]]:
        """(executor, owned) per lane."""
        if self._lent is not None:
            return [(self._lent, False)]
        s = self.settings
        return [(_executor(s), True) for _ in range(s.lanes)]


def _executor(settings: ScorerSettings) -> Executor:
    """One lane's executor; without the cache it keeps no per-sample history either (see
    `ScorerSettings.cache`)."""
    return Executor(
        settings.backend,
        workers=settings.workers,
        timeout_s=settings.timeout_s,
        cache=settings.cache,
        history_jobs=HISTORY_JOBS if settings.cache else 0,
    )


def _restore(
    grader: Grader, settings: dict[str, Any], fallback: float | None, state: dict[str, Any]
) -> Scorer:
    return Scorer(grader, **settings, fallback=fallback, state=state)


class _Request:
    """One call: its samples and jobs, the verdicts as they arrive, its future."""

    def __init__(
        self, samples: list[Sample], jobs: list[Job], step: int, progress: Progress | None
    ) -> None:
        self.samples, self.jobs, self.step, self.progress = samples, jobs, step, progress
        self.verdicts: list[Verdict | None] = [None] * len(jobs)
        self.remaining = len(jobs)
        self.per_job = len(samples) / len(jobs) if jobs else 0.0
        self.future: Future[list[Reward]] = Future()


class _Core:
    """What lanes share: the grader, its state, the policy and the statistics, under one
    lock."""

    def __init__(self, grader: Grader, fallback: float | None) -> None:
        self.grader, self.fallback = grader, fallback
        self.lock = threading.Lock()
        self.state: dict[str, Any] = {}
        self.stats = Stats()

    def finish(self, request: _Request) -> None:
        """Combine a request whose verdicts are all in, and resolve its future."""
        try:
            verdicts = [v for v in request.verdicts if v is not None]
            with self.lock:
                rewards, changed = self.grader.combine(
                    request.samples, verdicts, self.state, request.step
                )
                self.state.update(changed)
                rewards = [self._policy(r) for r in rewards]
                for sample, reward in zip(request.samples, rewards, strict=True):
                    self.stats.add(reward, sample.task)
        except Exception as exc:  # a grader error (e.g. a missing token count) is the caller's
            request.future.set_exception(exc)
        else:
            request.future.set_result(rewards)

    def _policy(self, reward: Reward) -> Reward:
        if reward.infra_failure is None or self.fallback is None:
            return reward
        return dataclasses.replace(reward, value=self.fallback, fallback=True)

    def snapshot(self) -> dict[str, Any]:
        with self.lock:
            return {"grader": {path: _jsonable(v) for path, v in sorted(self.state.items())}}

    def restore(self, state: Mapping[str, Any]) -> None:
        grader_state = state.get("grader", {})
        if not isinstance(grader_state, Mapping):
            raise ValueError("a Scorer state is {'grader': {block path: value}}")
        with self.lock:
            self.state = {
                path: tuple(v) if isinstance(v, list) else copy.deepcopy(v)
                for path, v in grader_state.items()
            }

    def stats_copy(self) -> Stats:
        with self.lock:
            return copy.deepcopy(self.stats)


def _jsonable(value: Any) -> Any:
    return list(value) if isinstance(value, tuple) else copy.deepcopy(value)


class _Lanes:
    """Threads, each driving one executor. Calls queued while every lane is busy run
    together on the next free lane (up to ``max_batch_jobs`` jobs)."""

    def __init__(
        self, executors: list[tuple[Executor, bool]], core: _Core, max_batch_jobs: int
    ) -> None:
        self.core, self.max_batch_jobs = core, max_batch_jobs
        self.executors = executors
        self.queue: deque[_Request] = deque()
        self.cond = threading.Condition()
        self.closed = False
        self.batches_run = 0
        """Executor batches started (calls queued together count once)."""
        self.threads = [
            threading.Thread(
                target=self._serve, args=(ex,), name=f"rewardsmith-scorer-{i}", daemon=True
            )
            for i, (ex, _) in enumerate(executors)
        ]
        for thread in self.threads:
            thread.start()

    def submit(self, request: _Request) -> None:
        with self.cond:
            if self.closed:
                raise RuntimeError("this Scorer was closed while the call was being made")
            self.queue.append(request)
            self.cond.notify()

    def _take(self) -> list[_Request] | None:
        with self.cond:
            while not self.queue and not self.closed:
                self.cond.wait()
            if not self.queue:
                return None
            batch = [self.queue.popleft()]
            jobs = len(batch[0].jobs)
            while self.queue and jobs + len(self.queue[0].jobs) <= self.max_batch_jobs:
                jobs += len(self.queue[0].jobs)
                batch.append(self.queue.popleft())
            return batch

    def _serve(self, executor: Executor) -> None:
        while (batch := self._take()) is not None:
            self._run(executor, batch)

    def _run(self, executor: Executor, batch: list[_Request]) -> None:
        self.batches_run += 1
        owners = [(request, i) for request in batch for i in range(len(request.jobs))]
        try:
            for result in executor.stream([job for request in batch for job in request.jobs]):
                request, i = owners[result.index]
                request.verdicts[i] = result.verdict
                request.remaining -= 1
                if request.progress is not None:
                    request.progress(request.per_job)
                if request.remaining == 0:
                    self.core.finish(request)
        except BaseException as exc:  # an executor bug: every waiting caller hears of it
            for request in batch:
                if not request.future.done():
                    request.future.set_exception(exc)

    def close(self, timeout_s: float | None = None) -> None:
        with self.cond:
            self.closed = True
            self.cond.notify_all()
        deadline = None if timeout_s is None else time.monotonic() + timeout_s
        for thread, (executor, owned) in zip(self.threads, self.executors, strict=True):
            if thread is not threading.current_thread():
                thread.join(None if deadline is None else max(deadline - time.monotonic(), 0))
            if owned and not thread.is_alive():  # a busy executor cannot be closed under it
                executor.close()
