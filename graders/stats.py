"""One definition of every number rewardsmith reports about scored samples.

The score table, ``score --json``, the HTML report, ``diff``, the server's ``/metrics``,
the `Scorer`'s running counts and `batch_stats` all add rewards to a `Stats` and read
these numbers from it, so the same verdicts give the same figures everywhere:

- **Pass rate** of a verifier: passes / decided verdicts. A verdict is *decided* unless
  it is a ``skip`` (the verifier does not apply) or a failure of the infrastructure or of
  the data (nobody checked the model's answer). Skips are never failures.
- **Mean reward**: over the samples whose outcome is ``rewarded`` (`Reward.outcome`): a
  fallback for an infrastructure failure is a stated number, not a measurement, and
  samples with no reward have none to average. Non-finite values are counted apart
  (``nonfinite``), never averaged.
- **Outcomes** per sample (rewarded, fallback, infra_failure, data_error,
  not_applicable); per verifier, verdicts by **status**, by **failure** kind and by
  **fault** (model, infra, data).
- **Timings** per verifier, over the verdicts that are not skips (the checks that ran):
  count, total, mean and max of ``elapsed_s``, and the median and 95th percentile read
  from a histogram of ten buckets per decade (within 12%).
- **Per task**: samples, outcomes, mean reward and pass rate over the task's verdicts.
  At most ``max_tasks`` tasks are kept by name (the first seen); the rest are summed in
  one ``(other tasks)`` row, so a stream of distinct task names cannot grow memory.

Memory is bounded by the number of verifiers, components and ``max_tasks``, never by
the number of samples.

    >>> from rewardsmith.graders.reward import Reward
    >>> from rewardsmith.verifiers.types import Failure, Verdict
    >>> verdicts = [Verdict.passed("v", "1"), Verdict.failed("v", "1"),
    ...             Verdict.skipped("v", "1", "n/a"),
    ...             Verdict.errored("v", "1", Failure.VERIFIER_CRASH, "boom")]
    >>> stats = Stats.of([Reward(str(i), None, {}, {"v": v}) for i, v in enumerate(verdicts)])
    >>> stats.verifiers["v"].pass_rate  # 1 pass of 2 decided: the skip and the crash are not
    0.5
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rewardsmith.graders.measures import Moments, Timing, ratio
from rewardsmith.verifiers.types import Fault, Status, Verdict

if TYPE_CHECKING:
    from rewardsmith.graders.reward import Reward

__all__ = [
    "OTHER_TASKS",
    "Moments",
    "Stats",
    "TaskStats",
    "Timing",
    "VerifierStats",
    "batch_stats",
    "is_decided",
]

OTHER_TASKS = "(other tasks)"
NO_TASK = "(none)"
_UNDECIDED_FAULTS = (Fault.INFRA, Fault.DATA)


def is_decided(status: Status, fault: Fault | None) -> bool:
    """Whether a verdict counts towards a pass rate: it is not a skip, and neither the
    infrastructure nor the data kept the model's answer from being checked."""
    return status is not Status.SKIP and fault not in _UNDECIDED_FAULTS


@dataclass
class VerifierStats:
    """One verifier key's verdicts: statuses, failures, faults, scores, timings."""

    statuses: Counter[str] = field(default_factory=Counter)
    failures: Counter[str] = field(default_factory=Counter)
    faults: Counter[str] = field(default_factory=Counter)
    passes: int = 0
    decided: int = 0
    score: Moments = field(default_factory=Moments)
    """Scores of decided verdicts."""
    timing: Timing = field(default_factory=Timing)

    def add(self, verdict: Verdict) -> None:
        status, fault = verdict.status, verdict.fault
        self.statuses[status.value] += 1
        if verdict.failure is not None:
            self.failures[verdict.failure.value] += 1
        if fault is not None:
            self.faults[fault.value] += 1
        if is_decided(status, fault):
            self.decided += 1
            self.passes += status is Status.PASS
            self.score.add(verdict.score)
        if status is not Status.SKIP:  # a check that ran (routing skips cost nothing)
            self.timing.add(verdict.elapsed_s)

    def merge(self, other: VerifierStats) -> None:
        self.statuses.update(other.statuses)
        self.failures.update(other.failures)
        self.faults.update(other.faults)
        self.passes += other.passes
        self.decided += other.decided
        self.score.merge(other.score)
        self.timing.merge(other.timing)

    @property
    def pass_rate(self) -> float | None:
        return ratio(self.passes, self.decided)

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.score.to_dict(),
            "pass_rate": self.pass_rate,
            "passes": self.passes,
            "decided": self.decided,
            "skipped": self.statuses[Status.SKIP.value],
            "infra_failures": self.faults[Fault.INFRA.value],
            "data_errors": self.faults[Fault.DATA.value],
            "statuses": dict(sorted(self.statuses.items())),
            "failures": dict(sorted(self.failures.items())),
            "faults": dict(sorted(self.faults.items())),
            "timing": self.timing.to_dict(),
        }


@dataclass
class TaskStats:
    """One task's samples: outcomes, mean reward, and pass rate over its verdicts."""

    samples: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)
    reward: Moments = field(default_factory=Moments)
    passes: int = 0
    decided: int = 0

    def merge(self, other: TaskStats) -> None:
        self.samples += other.samples
        self.outcomes.update(other.outcomes)
        self.reward.merge(other.reward)
        self.passes += other.passes
        self.decided += other.decided

    @property
    def pass_rate(self) -> float | None:
        return ratio(self.passes, self.decided)

    def to_dict(self) -> dict[str, Any]:
        return {
            "samples": self.samples,
            "outcomes": dict(sorted(self.outcomes.items())),
            "reward": self.reward.to_dict(),
            "pass_rate": self.pass_rate,
        }


@dataclass
class ComponentStats:
    raw: Moments = field(default_factory=Moments)
    weighted: Moments = field(default_factory=Moments)

    def merge(self, other: ComponentStats) -> None:
        self.raw.merge(other.raw)
        self.weighted.merge(other.weighted)


@dataclass
class Stats:
    """Everything above, for a stream of rewards; `add` one at a time, `merge` two."""

    max_tasks: int = 1000
    samples: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)
    reward: Moments = field(default_factory=Moments)
    """Values of ``rewarded`` samples."""
    infra_failures: int = 0
    """Samples an infrastructure failure decided (fallbacks included)."""
    components: dict[str, ComponentStats] = field(default_factory=dict)
    verifiers: dict[str, VerifierStats] = field(default_factory=dict)
    tasks: dict[str, TaskStats] = field(default_factory=dict)
    other_tasks: TaskStats = field(default_factory=TaskStats)
    """Tasks past ``max_tasks``, summed."""
    faults: Counter[str] = field(default_factory=Counter)
    """Verdicts by fault, over every verifier."""

    @classmethod
    def of(cls, rewards: Iterable[Reward], tasks: Sequence[str | None] | None = None) -> Stats:
        stats = cls()
        for i, reward in enumerate(rewards):
            stats.add(reward, tasks[i] if tasks is not None else None)
        return stats

    def add(self, reward: Reward, task: str | None = None) -> None:
        """Count one sample's reward (``task``: the sample's task, for the task table)."""
        outcome = reward.outcome
        self.samples += 1
        self.outcomes[outcome] += 1
        self.infra_failures += reward.failed
        value = reward.value if outcome == "rewarded" else None
        self.reward.add(value)
        for name, component in reward.components.items():
            stats = self.components.setdefault(name, ComponentStats())
            stats.raw.add(component.raw)
            stats.weighted.add(component.weighted)
        per_task = self._task(task)
        per_task.samples += 1
        per_task.outcomes[outcome] += 1
        per_task.reward.add(value)
        for key, verdict in reward.verdicts.items():
            self.verifiers.setdefault(key, VerifierStats()).add(verdict)
            if is_decided(verdict.status, verdict.fault):
                per_task.decided += 1
                per_task.passes += verdict.status is Status.PASS
            if verdict.fault is not None:
                self.faults[verdict.fault.value] += 1

    def _task(self, task: str | None) -> TaskStats:
        name = NO_TASK if task is None else str(task)
        found = self.tasks.get(name)
        if found is not None:
            return found
        if len(self.tasks) >= self.max_tasks:
            return self.other_tasks
        return self.tasks.setdefault(name, TaskStats())

    def merge(self, other: Stats) -> None:
        self.samples += other.samples
        self.outcomes.update(other.outcomes)
        self.reward.merge(other.reward)
        self.infra_failures += other.infra_failures
        self.faults.update(other.faults)
        for name, component in other.components.items():
            self.components.setdefault(name, ComponentStats()).merge(component)
        for key, verifier in other.verifiers.items():
            self.verifiers.setdefault(key, VerifierStats()).merge(verifier)
        for name, task in other.tasks.items():
            self._task(name).merge(task)
        self.other_tasks.merge(other.other_tasks)

    def pass_rate(self, key: str) -> float | None:
        verifier = self.verifiers.get(key)
        return verifier.pass_rate if verifier is not None else None

    def to_dict(self) -> dict[str, Any]:
        """JSON-serialisable: what ``score --json`` prints under ``counts``, what
        `batch_stats` returns."""
        tasks = {name: t.to_dict() for name, t in sorted(self.tasks.items())}
        if self.other_tasks.samples:
            tasks[OTHER_TASKS] = self.other_tasks.to_dict()
        return {
            "samples": self.samples,
            "outcomes": dict(sorted(self.outcomes.items())),
            "reward": self.reward.to_dict(),
            "infra_failures": self.infra_failures,
            "data_errors": self.outcomes["data_error"],
            "fallbacks": self.outcomes["fallback"],
            "not_applicable": self.outcomes["not_applicable"],
            "faults": dict(sorted(self.faults.items())),
            "components": {
                name: {**c.raw.to_dict(), "weighted_mean": c.weighted.mean}
                for name, c in sorted(self.components.items())
            },
            "verifiers": {key: v.to_dict() for key, v in sorted(self.verifiers.items())},
            "tasks": tasks,
        }


def batch_stats(rewards: Sequence[Reward]) -> dict[str, Any]:
    """`Stats` of one batch as plain data (see `Stats.to_dict`): ``{"samples", "outcomes",
    "reward": {count, mean, std}, "infra_failures", "data_errors", "fallbacks",
    "not_applicable", "faults", "components": {name: {count, mean, std, weighted_mean}},
    "verifiers": {key: {count, mean, std, pass_rate, skipped, infra_failures,
    data_errors, statuses, failures, faults, timing}}, "tasks"}``. Means and standard
    deviations are population ones (ddof=0) and skip None values."""
    return Stats.of(rewards).to_dict()
