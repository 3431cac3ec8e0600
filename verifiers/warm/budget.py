"""One clock per job: the time a job may take, shared by every layer that runs inside it.

A job of the executor can run a killable call, which can sit beside a sandbox run; each
layer has a time limit of its own. With a clock per layer, an inner limit longer than what
is left of the job is a lie (the executor kills the worker first, and the verdict blames
the job's limit for what the inner layer was doing), and the verdict cannot say which
limit ended the work. So the worker that runs a job keeps its deadline here, and a nested
layer asks for an `allowance`: its own limit, or what is left of the job if that is
shorter. When the layer then stops at its limit it reports it (`Allowance.expired`):

- if the job's deadline was the binding one, the job is over: `JobDeadline` is raised (a
  `BaseException`, so that a verifier's ``except Exception`` does not turn it into a
  wrong answer) and the executor's worker makes it a ``verifier_timeout`` verdict naming
  the job's limit;
- otherwise the layer's own limit ended it: the hit is recorded, and the executor puts it
  in the verdict's evidence (``evidence["limits"]``) beside whatever the verifier decided.

Outside a job (a verifier called in the caller's process, the "inline" backend) there is
no job deadline and every layer keeps its own limit.

    >>> allowance(5.0, Layer.CALL).seconds     # no job running here: the call's own limit
    5.0
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

__all__ = ["Allowance", "JobDeadline", "Layer", "LimitHit", "allowance", "current_job"]


class Layer(StrEnum):
    """Who set a time limit."""

    JOB = "job"
    """The executor's limit for one job (``Executor(timeout_s=...)`` or ``Job.timeout_s``)."""
    CALL = "call"
    """A killable call's ``timeout_s`` (`rewardsmith.verifiers.killable`)."""
    SANDBOX = "sandbox"
    """A sandbox run's wall-clock limit (``Limits.wall_s``)."""


@dataclass(frozen=True)
class LimitHit:
    """A time limit that stopped some work: whose, how long it was, when it struck."""

    layer: Layer
    limit_s: float
    elapsed_s: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "layer": self.layer.value,
            "limit_s": self.limit_s,
            "elapsed_s": round(self.elapsed_s, 6),
        }


class JobDeadline(BaseException):
    """The job's time ran out while a nested layer (``inside``) was working."""

    def __init__(self, hit: LimitHit, inside: Layer) -> None:
        super().__init__(f"the job's {hit.limit_s:g} s limit ran out during a {inside} step")
        self.hit = hit
        self.inside = inside


@dataclass
class _Job:
    limit_s: float
    started: float
    hits: list[LimitHit] = field(default_factory=list)

    @property
    def deadline(self) -> float:
        return self.started + self.limit_s


_job: _Job | None = None


def margin_s(limit_s: float) -> float:
    """How much earlier than the job's deadline a nested layer must stop, so that it is
    killed and the worker answers before the executor kills the worker itself."""
    return min(0.25, 0.1 * limit_s)


def current_job() -> tuple[float, float] | None:
    """(limit, seconds left) of the job this process is running, or None."""
    job = _job
    if job is None:
        return None
    return job.limit_s, job.deadline - time.monotonic()


def start_job(limit_s: float | None) -> None:
    """Start the clock of a job (None: no limit). Called by the worker runtime."""
    global _job
    _job = None if limit_s is None else _Job(limit_s, time.monotonic())


def end_job() -> list[LimitHit]:
    """Stop the job's clock; return the nested limits that were hit during it."""
    global _job
    job, _job = _job, None
    return [] if job is None else job.hits


@dataclass(frozen=True)
class Allowance:
    """The time a nested layer may take, and whose limit that is."""

    layer: Layer
    """The asking layer."""
    own_limit_s: float | None
    seconds: float | None
    """Seconds the layer may use (None: no limit at all)."""
    binding: Layer
    """`Layer.JOB` when what is left of the job is shorter than the layer's own limit."""
    started: float = field(default_factory=time.monotonic)

    def expired(self) -> LimitHit:
        """Report that the layer stopped at ``seconds``: raises `JobDeadline` when the job's
        deadline was binding (the job is over), else records and returns the layer's hit."""
        elapsed = time.monotonic() - self.started
        job = _job
        if self.binding is Layer.JOB and job is not None:
            hit = LimitHit(Layer.JOB, job.limit_s, time.monotonic() - job.started)
            raise JobDeadline(hit, self.layer)
        hit = LimitHit(self.layer, self.own_limit_s or 0.0, elapsed)
        if job is not None:
            job.hits.append(hit)
        return hit


def allowance(limit_s: float | None, layer: Layer) -> Allowance:
    """The time ``layer`` may use: its own ``limit_s``, or less if the job has less left.
    Raises `JobDeadline` at once if the job has no time left at all."""
    job = _job
    if job is None:
        return Allowance(layer, limit_s, limit_s, layer)
    left = job.deadline - margin_s(job.limit_s) - time.monotonic()
    if limit_s is not None and limit_s <= left:
        return Allowance(layer, limit_s, limit_s, layer)
    if left <= 0:
        hit = LimitHit(Layer.JOB, job.limit_s, time.monotonic() - job.started)
        raise JobDeadline(hit, layer)
    return Allowance(layer, limit_s, left, Layer.JOB)
