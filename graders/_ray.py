"""The Ray backend: one Ray task per job, on a local or remote cluster.

Ray is optional: it is imported only when this backend is chosen. If Ray is not yet
initialised, ``ray.init()`` starts (or joins, via RAY_ADDRESS) a cluster. Ray's own task
retries are off (``max_retries=0``): the executor retries infrastructure failures itself,
so a retry is counted the same way on every backend. A job past its deadline is cancelled
with ``force=True``, which kills the worker process running it.
"""

from __future__ import annotations

import time
from typing import Any

from rewardsmith.graders._backend import Event, Outcome, Task, run_work
from rewardsmith.graders._pool import PREFETCH_BELOW_S
from rewardsmith.verifiers.protocol import Verifier
from rewardsmith.verifiers.types import Failure, Sample

__all__ = ["RayBackend"]

CHEAP_IN_FLIGHT_PER_CPU = 32
"""Cheap jobs (estimated under PREFETCH_BELOW_S) allowed in flight per cluster CPU."""


def _run(verifier: Verifier, work: Sample | list[Sample]) -> Outcome:
    return run_work(verifier, work)


class RayBackend:
    """Submits in the executor's order, holding back expensive jobs so that order holds.

    A job's time limit counts from its submission, so a cheap job that Ray queues behind
    others spends part of its limit waiting (limits are seconds; cheap jobs microseconds).
    """

    def __init__(self, workers: int) -> None:
        try:
            import ray
        except ImportError as exc:  # pragma: no cover - ray is in the dev extra
            raise ImportError("the 'ray' backend needs Ray: pip install 'ray[default]'") from exc
        self._ray = ray
        if not ray.is_initialized():
            ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False)
        self._remote = ray.remote(max_retries=0)(_run)
        self._capacity = max(1, int(ray.cluster_resources().get("CPU", workers)))
        self._inflight: dict[Any, tuple[Task, float]] = {}
        self._unsent: list[Event] = []

    def accepts(self, task: Task) -> bool:
        # Expensive jobs: one per CPU, so the executor's order decides what runs next.
        # Cheap jobs: many in flight, so they do not pay a scheduling round trip each.
        if task.estimate_s < PREFETCH_BELOW_S:
            return len(self._inflight) < self._capacity * CHEAP_IN_FLIGHT_PER_CPU
        expensive = sum(t.estimate_s >= PREFETCH_BELOW_S for t, _ in self._inflight.values())
        return expensive < self._capacity and len(self._inflight) < self._capacity * 2

    def submit(self, task: Task) -> None:
        try:
            ref = self._remote.remote(task.verifier, task.work)
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
        refs = list(self._inflight)
        if not refs:
            return []
        deadlines = [s + t.timeout_s for t, s in self._inflight.values() if t.timeout_s is not None]
        if deadlines:
            until = max(0.0, min(deadlines) - time.monotonic())
            timeout = until if timeout is None else min(timeout, until)
        ready, _ = self._ray.wait(refs, num_returns=1, timeout=timeout)
        if ready:
            ready, _ = self._ray.wait(refs, num_returns=len(refs), timeout=0)
        events = [self._collect(ref) for ref in ready]
        now = time.monotonic()
        for ref, (task, started) in list(self._inflight.items()):
            if task.timeout_s is not None and now - started >= task.timeout_s:
                self._ray.cancel(ref, force=True)
                del self._inflight[ref]
                message = f"killed after the {task.timeout_s} s time limit"
                events.append(
                    (task, task.infra_verdict(Failure.VERIFIER_TIMEOUT, message, now - started))
                )
        return events

    def _collect(self, ref: Any) -> Event:
        task, started = self._inflight.pop(ref)
        try:
            verdict = self._ray.get(ref)
        except self._ray.exceptions.RayError as exc:  # the job's worker died or was lost
            message = f"the Ray worker died: {type(exc).__name__}: {str(exc)[:300]}"
            return task, task.infra_verdict(
                Failure.WORKER_DIED, message, time.monotonic() - started
            )
        return task, verdict

    def abort(self) -> None:
        self._unsent = []
        for ref in self._inflight:
            self._ray.cancel(ref, force=True)
        self._inflight.clear()

    def close(self) -> None:
        self.abort()
