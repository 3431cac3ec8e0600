"""What the executor asks of a backend, and the simplest backend: inline.

A backend runs tasks and reports events. The executor owns everything else: the order
of tasks (expensive first), retries, the cache and the history of costs. ``poll`` returns
``(task, verdict)`` pairs; a verdict of None means "not run, queue it again" (a job that
sat behind a killed one on a dead worker).
"""

from __future__ import annotations

import pickle
import sys
import time
import traceback
from dataclasses import dataclass, field
from typing import Any, Protocol, TypeAlias

from rewardsmith.verifiers.protocol import BatchVerifier, Verifier, run_verifier
from rewardsmith.verifiers.types import Failure, Sample, Verdict

__all__ = ["Backend", "Event", "InlineBackend", "Outcome", "Task", "run_batch", "run_work"]


Outcome: TypeAlias = Verdict | list[Verdict]
"""A task's result: one verdict, or one per sample of a batch task."""


@dataclass
class Task:
    """One job on its way through a backend: a verifier on one sample, or, for a
    `BatchVerifier`, on a batch (``batch`` holds the (job index, sample) pairs)."""

    index: int
    verifier: Verifier
    sample: Sample
    timeout_s: float | None
    estimate_s: float
    attempt: int = 1
    run_id: int = 0
    batch: list[tuple[int, Sample]] | None = None
    alone: bool = False
    """Run with nothing queued behind it (set after an unattributed worker death)."""
    lost: int = 0
    """Times the task was lost with its node or Ray worker (not attempts: it did not fail)."""
    _payload: bytes | None = field(default=None, repr=False)

    @property
    def work(self) -> Sample | list[Sample]:
        """What the worker runs the verifier on: a sample, or a list for a batch."""
        return self.sample if self.batch is None else [s for _, s in self.batch]

    @property
    def module(self) -> str:
        """The module that defines the verifier's class (a worker imports it first)."""
        return type(self.verifier).__module__

    def payload(self) -> bytes:
        """The pickled (verifier, work), made once (a retried task reuses it)."""
        if self._payload is None:
            self._payload = _pickle((self.verifier, self.work))
        return self._payload

    def infra_verdict(
        self,
        failure: Failure,
        message: str,
        elapsed_s: float = 0.0,
        evidence: dict[str, Any] | None = None,
    ) -> Verdict:
        name = getattr(self.verifier, "name", type(self.verifier).__name__)
        version = getattr(self.verifier, "version", "?")
        kw: dict[str, Any] = {"elapsed_s": elapsed_s, "evidence": evidence or {}}
        if failure is Failure.VERIFIER_TIMEOUT:
            return Verdict.timed_out(name, version, failure, message, **kw)
        return Verdict.errored(name, version, failure, message, **kw)


def _pickle(job: tuple[Verifier, Sample | list[Sample]]) -> bytes:
    """Plain pickle; Ray's cloudpickle where Ray rebuilt a class by value (one defined in
    the driver's main module, which no other process can import)."""
    try:
        return pickle.dumps(job, pickle.HIGHEST_PROTOCOL)
    except (pickle.PicklingError, AttributeError, TypeError):
        cloudpickle = sys.modules.get("ray.cloudpickle")
        # Only for that case: whether anything else ships must not depend on whether some
        # earlier code imported Ray.
        if cloudpickle is None or _importable(type(job[0])):
            raise
        data: bytes = cloudpickle.dumps(job, pickle.HIGHEST_PROTOCOL)
        return data


def _importable(cls: type) -> bool:
    """Whether `cls` is found again by its module and name, as plain pickle needs."""
    found: Any = sys.modules.get(cls.__module__)
    for part in cls.__qualname__.split("."):
        found = getattr(found, part, None)
    return found is cls


Event = tuple[Task, Outcome | None]


def run_work(verifier: Verifier, work: Sample | list[Sample]) -> Outcome:
    """What a worker does: `run_verifier` on a sample, `run_batch` on a list."""
    if isinstance(work, list):
        assert isinstance(verifier, BatchVerifier), "the executor batches only BatchVerifiers"
        return run_batch(verifier, work)
    return run_verifier(verifier, work)


def run_batch(verifier: BatchVerifier, samples: list[Sample]) -> Outcome:
    """``verifier.batch(samples)``, with a crash or a malformed answer as one infra verdict
    (the executor then retries the batch) and each verdict's elapsed time its share."""
    start = time.perf_counter()
    name = getattr(verifier, "name", type(verifier).__name__)
    version = getattr(verifier, "version", "?")
    try:
        verdicts = list(verifier.batch(samples))
    except Exception as exc:  # a crashing verifier is data, never a silent 0
        message = f"{type(exc).__name__}: {exc}"
        evidence = {"traceback": traceback.format_exc(limit=8)[-4000:]}
        return Verdict.errored(name, version, Failure.VERIFIER_CRASH, message, evidence=evidence)
    if len(verdicts) != len(samples) or not all(isinstance(v, Verdict) for v in verdicts):
        message = (
            f"batch() returned {len(verdicts)} items for {len(samples)} samples, or non-Verdicts"
        )
        return Verdict.errored(name, version, Failure.VERIFIER_CRASH, message)
    share = (time.perf_counter() - start) / max(1, len(samples))
    return [v if v.elapsed_s else v.with_elapsed(share) for v in verdicts]


class Backend(Protocol):
    def accepts(self, task: Task) -> bool:
        """Whether ``task`` can be submitted now without waiting."""
        ...

    def submit(self, task: Task) -> None: ...

    def busy(self) -> bool:
        """Whether any submitted task has not been reported yet."""
        ...

    def poll(self, timeout: float | None) -> list[Event]:
        """Wait up to ``timeout`` seconds for at least one event; return all that are ready."""
        ...

    def abort(self) -> None:
        """Forget every task in flight (kill what runs them)."""
        ...

    def close(self) -> None: ...


class InlineBackend:
    """Runs each task in this process at submit time. For tests and trusted, cheap checks:
    it cannot enforce a timeout (nothing to kill) and a verifier that kills its process
    kills the caller."""

    def __init__(self) -> None:
        self._done: list[Event] = []

    def accepts(self, task: Task) -> bool:
        return not self._done

    def submit(self, task: Task) -> None:
        self._done.append((task, run_work(task.verifier, task.work)))

    def busy(self) -> bool:
        return bool(self._done)

    def poll(self, timeout: float | None) -> list[Event]:
        done, self._done = self._done, []
        return done

    def abort(self) -> None:
        self._done = []

    def close(self) -> None:
        self._done = []
