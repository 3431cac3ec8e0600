"""The Ray backend: one Ray task per job, on a local cluster or one it joins.

Ray is optional: it is imported only when this backend is chosen. If Ray is not yet
initialised, the backend joins the cluster at ``address`` (the argument, else
``RAY_ADDRESS``) without asking for any resources of its own, or else starts a local one
with ``workers`` CPUs. How many jobs run at once follows the cluster's CPUs (checked again
every `CAPACITY_REFRESH_S` and after a loss), or ``workers`` if given.

Containment is the pool's: each Ray task runs its job in a warm worker held by the Ray
worker process (`_run_contained`, a one-worker `PoolBackend`), so a job gets the same
clock, memory limit, output capture and tree kill on Ray as on the pool. In particular
the job's clock starts when that warm worker is ready for it, and a job past its limit
kills the warm worker only, not the Ray worker: no Ray worker restart (seconds) delays the
next jobs, nor counts against their limits. The driver keeps a backstop only, for a Ray
worker that stops answering: ``timeout_s`` plus the start allowance plus `BACKSTOP_S`
after the submission.

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

CHEAP_IN_FLIGHT_PER_CPU = 32
"""Cheap jobs (estimated under PREFETCH_BELOW_S) allowed in flight per cluster CPU."""
CAPACITY_REFRESH_S = 5.0
BACKSTOP_S = 30.0
MAX_LOSSES = 3
"""A job lost with its node this many times is reported as WORKER_DIED."""

_local: dict[WarmSpec, PoolBackend] = {}


def _run_contained(task: Task, limits: WorkerLimits) -> Outcome:
    """What a Ray task runs: the job, in this Ray worker's own warm worker."""
    backend = _local.get(limits.spec)
    if backend is None:
        backend = _local[limits.spec] = PoolBackend(1, limits)
    pending = [task]
    while True:
        if pending and backend.accepts(pending[0]):
            backend.submit(pending.pop())
        for done, outcome in backend.poll(None):
            if outcome is None:
                pending.append(done)  # never ran (its worker was replaced first): again
            else:
                return outcome


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
        self._inflight: dict[Any, tuple[Task, float]] = {}
        self._unsent: list[Event] = []

    def _measure(self) -> int:
        cpus = int(self._ray.cluster_resources().get("CPU", 0))
        return max(1, min(cpus, self._workers) if self._workers else cpus)

    def accepts(self, task: Task) -> bool:
        # Expensive jobs: one per CPU, so the executor's order decides what runs next.
        # Cheap jobs: many in flight, so they do not pay a scheduling round trip each.
        if task.estimate_s < PREFETCH_BELOW_S:
            return len(self._inflight) < self._capacity * CHEAP_IN_FLIGHT_PER_CPU
        expensive = sum(t.estimate_s >= PREFETCH_BELOW_S for t, _ in self._inflight.values())
        return expensive < self._capacity and len(self._inflight) < self._capacity * 2

    def submit(self, task: Task) -> None:
        try:
            ref = self._remote.remote(task, self._limits)
        except Exception as exc:  # an unpicklable verifier or sample cannot reach a worker
            message = f"job could not be sent to Ray: {type(exc).__name__}: {exc}"
            self._unsent.append((task, task.infra_verdict(Failure.VERIFIER_CRASH, message)))
            return
        self._inflight[ref] = (task, time.monotonic())

    def busy(self) -> bool:
        return bool(self._inflight) or bool(self._unsent)

    def poll(self, timeout: float | None) -> list[Event]:
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
        events = [self._collect(ref) for ref in ready]
        return events + self._expire()

    def _backstop(self, task: Task, sent: float) -> float:
        return sent + (task.timeout_s or 0.0) + self._backstop_s if task.timeout_s else float("inf")

    def _expire(self) -> list[Event]:
        """Backstop: cancel a task whose Ray worker gave no answer long after its limit."""
        now = time.monotonic()
        events: list[Event] = []
        for ref, (task, sent) in list(self._inflight.items()):
            if now >= self._backstop(task, sent):
                self._ray.cancel(ref, force=True)
                del self._inflight[ref]
                message = (
                    f"the Ray task gave no answer within its {task.timeout_s:g} s limit plus "
                    f"{self._backstop_s:g} s for starting and was cancelled"
                )
                verdict = task.infra_verdict(Failure.VERIFIER_TIMEOUT, message, now - sent)
                events.append((task, verdict))
        return events

    def _collect(self, ref: Any) -> Event:
        task, sent = self._inflight.pop(ref)
        try:
            return task, self._ray.get(ref)
        except self._ray.exceptions.RayTaskError as exc:  # our task raised: not a job result
            message = f"the Ray task failed: {type(exc).__name__}: {str(exc)[:300]}"
            return task, task.infra_verdict(
                Failure.VERIFIER_CRASH, message, time.monotonic() - sent
            )
        except self._ray.exceptions.RayError as exc:  # its Ray worker or its node was lost
            self._refresh()
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
        self._unsent = []
        for ref in self._inflight:
            self._ray.cancel(ref, force=True)
        self._inflight.clear()

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
