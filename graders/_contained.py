"""What a warm worker's events become in a job's verdict: the output and nested limits it
saw in the evidence, a memory overrun as its own verdict, and the failures of a worker
that never started."""

from __future__ import annotations

import time
from typing import Any

from rewardsmith.graders._backend import Event, Outcome, Task
from rewardsmith.verifiers.types import Failure, Verdict
from rewardsmith.verifiers.warm import WarmProcess
from rewardsmith.verifiers.warm._runtime import Unit


def contained(task: Task, outcome: Outcome, unit: Unit, proc: WarmProcess) -> Outcome:
    """A worker's outcome with what the runtime saw: its output and nested limits in the
    evidence, and a memory overrun as the job's own verdict."""
    evidence = output_evidence(*proc.output.text(*unit.output, proc.spec.output_bytes))
    if unit.limits:
        evidence["limits"] = list(unit.limits)
    if unit.deadline is not None:
        evidence["limits"] = [*evidence.get("limits", []), unit.deadline]
    if unit.peak_bytes is not None:
        limit = (proc.spec.memory_bytes or 0) >> 20
        peak = unit.peak_bytes >> 20
        message = f"the worker's memory peaked at {peak} MiB, over its limit of {limit} MiB"
        evidence["peak_bytes"] = unit.peak_bytes
        return task.infra_verdict(Failure.VERIFIER_MEMORY, message, _elapsed(outcome), evidence)
    if not evidence:
        return outcome
    if isinstance(outcome, list):
        return [_with_evidence(v, evidence) for v in outcome]
    return _with_evidence(outcome, evidence)


def _with_evidence(verdict: Verdict, extra: dict[str, Any]) -> Verdict:
    return Verdict(
        verdict.name,
        verdict.version,
        verdict.status,
        verdict.score,
        verdict.failure,
        {**verdict.evidence, **extra},
        verdict.feedback,
        verdict.elapsed_s,
    )


def output_evidence(text: str, total: int) -> dict[str, Any]:
    return {"output": text, "output_bytes": total} if total else {}


def _elapsed(outcome: Outcome) -> float:
    if isinstance(outcome, list):
        return sum(v.elapsed_s for v in outcome)
    return outcome.elapsed_s


def start_failed(queue: list[Task], born: float, why: str) -> list[Event]:
    """Each job of a worker that never became ready fails as WORKER_DIED, using an attempt:
    none of them ran, but a worker that can never start must end in verdicts, not a loop."""
    message = (
        f"the worker process {why}, before it ran the job. A new worker first imports "
        "the main module of the parent process: check that it imports quickly and cleanly"
    )
    elapsed = time.monotonic() - born
    return [(task, task.infra_verdict(Failure.WORKER_DIED, message, elapsed)) for task in queue]
