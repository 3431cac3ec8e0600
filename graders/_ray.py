"""The Ray backend: a Ray task per job, or per chunk of cheap jobs, on a local cluster or
one it joins.

Ray is optional: it is imported only when this backend is chosen. If Ray is not yet
initialised, the backend joins the cluster at ``address`` (the argument, else
``RAY_ADDRESS``) without asking for any resources of its own, or else starts a local one
with ``workers`` CPUs. How many jobs run at once follows the cluster's CPUs (checked again
every `CAPACITY_REFRESH_S` and after a loss), or ``workers`` if given.

Cheap jobs go in chunks (`CHUNK_JOBS` per Ray task), each job still contained on its own.
Containment is the pool's: each Ray task runs its jobs in a warm worker held by the Ray
worker process (`_run_contained`, a one-worker `PoolBackend`), so a job gets the same
clock, memory limit, output capture and tree kill on Ray as on the pool. In particular
the job's clock starts when that warm worker is ready for it, and a job past its limit
kills the warm worker only, not the Ray worker: no Ray worker restart (seconds) delays the
next jobs, nor counts against their limits. The driver keeps a backstop only, for a Ray
worker that stops answering: ``timeout_s`` (summed over a chunk's jobs) plus the start
allowance plus `BACKSTOP_S` after the submission.

Ray's own task retries are off (``max_retries=0``): the executor retries infrastructure
failures itself, so a retry is counted the same way on every backend. A task lost with its
node or Ray worker (a raylet killed, a node gone) did not fail: it is queued again without
using an attempt, at most `MAX_LOSSES` times.
"""

from __future__ import annotations

import os
import time
from typing import Any

from rewardsmith.graders._backend import Event, Outcome, Task
from rewardsmith.graders._pool import PREFETCH_BELOW_S, PoolBackend, WorkerLimits
from rewardsmith.verifiers.types import Failure
from rewardsmith.verifiers.warm import WarmSpec

__all__ = ["RayBackend"]


def _chunkable(task: Task) -> bool:
    """A cheap job that may share a Ray task (one set to run alone never does)."""
    return task.estimate_s < PREFETCH_BELOW_S and not task.alone


CHEAP_IN_FLIGHT_PER_CPU = 32
"""Cheap jobs (estimated under PREFETCH_BELOW_S) allowed in flight per cluster CPU."""
CHUNK_JOBS = 16
"""At most this many cheap jobs share one Ray task: a Ray task costs about a millisecond of
scheduling and pickling, a cheap job microseconds, so one task per cheap job spent most of
its time in Ray (0.51x plain Ray tasks); each job of a chunk keeps its own clock and
containment in the warm worker."""
CAPACITY_REFRESH_S = 5.0
BACKSTOP_S = 30.0
MAX_LOSSES = 3
"""A job lost with its node this many times is reported as WORKER_DIED."""

_local: dict[WarmSpec, PoolBackend] = {}


def _run_contained(tasks: list[Task], limits: WorkerLimits) -> list[Outcome]:
    """What a Ray task runs: its jobs (one, or a chunk of cheap ones), in this Ray worker's
    own warm worker, each with its own clock and limits; the outcomes in order."""
    backend = _local.get(limits.spec)
    if backend is None:
        backend = _local[limits.spec] = PoolBackend(1, limits)
    pending = list(tasks)
    outcomes: dict[int, Outcome] = {}
    while len(outcomes) < len(tasks):
        while pending and backend.accepts(pending[0]):
            backend.submit(pending.pop(0))
        for done, outcome in backend.poll(None):
            if outcome is None:
                pending.insert(0, done)  # never ran (its worker was replaced first): again
            else:
                outcomes[id(done)] = outcome
    return [outcomes[id(t)] for t in tasks]


class RayBackend:
    """Submits in the executor's order, holding back expensive jobs so that order holds."""

    def __init__(
        self, workers: int | None, limits: WorkerLimits, address: str | None = None
    ) -> None:
        try:
            import ray
        except ImportError as exc:  # pragma: no cover - ray is in the dev extra
            raise ImportError("the 'ray' backend needs Ray: pip install 'ray[default]'") from exc
        self._ray = ray
        if not ray.is_initialized():
            _init(ray, workers, address or os.environ.get("RAY_ADDRESS"))
        self._remote = ray.remote(max_retries=0)(_run_contained)
        self._limits = limits
        self._workers = workers
        self._backstop_s = limits.spec.start_timeout_s + BACKSTOP_S
        self._capacity = self._measure()
        self._measured = time.monotonic()
        self._inflight: dict[Any, tuple[list[Task], float]] = {}
        self._jobs = 0
        """Jobs in flight (a chunk counts each of its jobs)."""
        self._cheap: list[Task] = []
        """Cheap jobs accepted and not yet sent: sent in chunks at the next poll."""
        self._unsent: list[Event] = []

    def _measure(self) -> int:
        cpus = int(self._ray.cluster_resources().get("CPU", 0))
        return max(1, min(cpus, self._workers) if self._workers else cpus)

    def accepts(self, task: Task) -> bool:
        # Expensive jobs: one per CPU, so the executor's order decides what runs next.
        # Cheap jobs: many in flight, in chunks, so they do not pay a Ray task each.
        jobs = self._jobs + len(self._cheap)
        if _chunkable(task):
            return jobs < self._capacity * CHEAP_IN_FLIGHT_PER_CPU
        expensive = sum(not _chunkable(ts[0]) for ts, _ in self._inflight.values() if len(ts) == 1)
        return expensive < self._capacity and jobs < self._capacity * 2

    def submit(self, task: Task) -> None:
        if _chunkable(task):
            self._cheap.append(task)
        else:
            self._send([task])

    def _send(self, tasks: list[Task]) -> None:
        try:
            ref = self._remote.remote(tasks, self._limits)
        except Exception as exc:  # an unpicklable verifier or sample cannot reach a worker
            message = f"job could not be sent to Ray: {type(exc).__name__}: {exc}"
            if len(tasks) > 1:  # find which: each alone
                for task in tasks:
                    self._send([task])
                return
            task = tasks[0]
            self._unsent.append((task, task.infra_verdict(Failure.VERIFIER_CRASH, message)))
            return
        self._inflight[ref] = (tasks, time.monotonic())
        self._jobs += len(tasks)

    def _flush(self) -> None:
        """Send the accepted cheap jobs in chunks of CHUNK_JOBS. While a CPU has no Ray
        task, a short tail goes too, split over the idle CPUs; while every CPU is busy a
        tail waits for more jobs (splitting it would shrink every later chunk)."""
        idle = self._capacity - len(self._inflight)
        while len(self._cheap) >= CHUNK_JOBS or (self._cheap and idle > 0):
            size = CHUNK_JOBS
            if len(self._cheap) < CHUNK_JOBS:
                size = max(1, -(-len(self._cheap) // idle))
            chunk, self._cheap = self._cheap[:size], self._cheap[size:]
            self._send(chunk)
            idle -= 1

    def busy(self) -> bool:
        return bool(self._inflight) or bool(self._unsent) or bool(self._cheap)

    def poll(self, timeout: float | None) -> list[Event]:
        self._flush()
        if self._unsent:
            events, self._unsent = self._unsent, []
            return events
        if time.monotonic() - self._measured >= CAPACITY_REFRESH_S:
            self._refresh()
        refs = list(self._inflight)
        if not refs:
            return []
        until = min(self._backstop(t, s) for t, s in self._inflight.values()) - time.monotonic()
        until = max(0.0, min(until, CAPACITY_REFRESH_S))
        timeout = until if timeout is None else min(timeout, until)
        ready, _ = self._ray.wait(refs, num_returns=1, timeout=timeout)
        if ready:
            ready, _ = self._ray.wait(refs, num_returns=len(refs), timeout=0)
        events = [event for ref in ready for event in self._collect(ref)]
        return events + self._expire()

    def _backstop(self, tasks: list[Task], sent: float) -> float:
        """A chunk runs its jobs one after another: the sum of their limits."""
        if not all(t.timeout_s for t in tasks):
            return float("inf")
        return sent + sum(t.timeout_s or 0.0 for t in tasks) + self._backstop_s

    def _expire(self) -> list[Event]:
        """Backstop: cancel a task whose Ray worker gave no answer long after its limit."""
        now = time.monotonic()
        events: list[Event] = []
        for ref, (tasks, sent) in list(self._inflight.items()):
            if now >= self._backstop(tasks, sent):
                self._ray.cancel(ref, force=True)
                self._forget(ref)
                for task in tasks:
                    message = (
                        f"the Ray task gave no answer within its {task.timeout_s:g} s limit "
                        f"plus {self._backstop_s:g} s for starting and was cancelled"
                    )
                    verdict = task.infra_verdict(Failure.VERIFIER_TIMEOUT, message, now - sent)
                    events.append((task, verdict))
        return events

    def _forget(self, ref: Any) -> tuple[list[Task], float]:
        tasks, sent = self._inflight.pop(ref)
        self._jobs -= len(tasks)
        return tasks, sent

    def _collect(self, ref: Any) -> list[Event]:
        tasks, sent = self._forget(ref)
        try:
            return list(zip(tasks, self._ray.get(ref), strict=True))
        except self._ray.exceptions.RayTaskError as exc:  # our task raised: not a job result
            message = f"the Ray task failed: {type(exc).__name__}: {str(exc)[:300]}"
            elapsed = time.monotonic() - sent
            return [(t, t.infra_verdict(Failure.VERIFIER_CRASH, message, elapsed)) for t in tasks]
        except self._ray.exceptions.RayError as exc:  # its Ray worker or its node was lost
            self._refresh()
            return [self._lost(task, exc, sent) for task in tasks]

    def _lost(self, task: Task, exc: Exception, sent: float) -> Event:
        task.lost += 1
        if task.lost <= MAX_LOSSES:
            return task, None  # it did not fail: run it again, not as a new attempt
        why = f"{type(exc).__name__}: {str(exc)[:300]}"
        message = f"the job was lost with its Ray worker {task.lost} times: {why}"
        return task, task.infra_verdict(Failure.WORKER_DIED, message, time.monotonic() - sent)

    def _refresh(self) -> None:
        self._capacity = self._measure()
        self._measured = time.monotonic()

    def abort(self) -> None:
        self._unsent, self._cheap = [], []
        for ref in self._inflight:
            self._ray.cancel(ref, force=True)
        self._inflight.clear()
        self._jobs = 0

    def close(self) -> None:
        self.abort()


def _init(ray: Any, workers: int | None, address: str | None) -> None:
    """Join the cluster at ``address`` (asking for no resources), or start a local one."""
    if not address:
        ray.init(num_cpus=workers or os.cpu_count(), include_dashboard=False, log_to_driver=False)
        return
    try:
        ray.init(address=address, log_to_driver=False)
    except (ConnectionError, ray.exceptions.AuthenticationError) as exc:
        why = f"{exc} {exc.__cause__}"
        if "InvalidAuthToken" not in why and "AuthenticationError" not in why:
            raise
        raise RuntimeError(
            f"Ray refused to join the cluster at {address!r} (InvalidAuthToken). A cluster "
            "that uses token authentication needs RAY_AUTH_MODE=token and its token "
            "(RAY_AUTH_TOKEN, or RAY_AUTH_TOKEN_PATH) in this process's environment: Ray "
            "turns token mode on by itself only for a cluster it finds on its own (address "
            "'auto'), never for an explicit address"
        ) from exc
