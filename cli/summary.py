"""Running statistics over a scoring run, for the end-of-run tables.

Kept incrementally (count, sum, sum of squares), so a run of millions of rows does not
hold its rewards in memory.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from dataclasses import dataclass, field

from rich.table import Table

from rewardsmith.graders import Reward
from rewardsmith.verifiers.types import Status, Verdict

__all__ = ["RunStats"]


@dataclass
class _Moments:
    count: int = 0
    total: float = 0.0
    total_sq: float = 0.0

    def add(self, value: float | None) -> None:
        if value is not None:
            self.count += 1
            self.total += value
            self.total_sq += value * value

    @property
    def mean(self) -> float | None:
        return self.total / self.count if self.count else None

    @property
    def std(self) -> float | None:
        if not self.count:
            return None
        mean = self.total / self.count
        return math.sqrt(max(self.total_sq / self.count - mean * mean, 0.0))


@dataclass
class _VerifierStats:
    statuses: Counter[str] = field(default_factory=Counter)
    failures: Counter[str] = field(default_factory=Counter)
    elapsed: _Moments = field(default_factory=_Moments)
    slowest_s: float = 0.0

    def add(self, verdict: Verdict) -> None:
        self.statuses[verdict.status.value] += 1
        if verdict.failure is not None:
            self.failures[f"{verdict.failure.value} ({verdict.fault})"] += 1
        self.elapsed.add(verdict.elapsed_s)
        self.slowest_s = max(self.slowest_s, verdict.elapsed_s)

    @property
    def pass_rate(self) -> float | None:
        decided = sum(self.statuses.values()) - self.statuses[Status.SKIP.value]
        return self.statuses[Status.PASS.value] / decided if decided else None


@dataclass
class RunStats:
    """Reward, component and verifier statistics, added one reward at a time."""

    reward: _Moments = field(default_factory=_Moments)
    infra_failures: int = 0
    components: dict[str, _Moments] = field(default_factory=lambda: defaultdict(_Moments))
    verifiers: dict[str, _VerifierStats] = field(
        default_factory=lambda: defaultdict(_VerifierStats)
    )

    def add(self, reward: Reward) -> None:
        self.reward.add(None if reward.fallback else reward.value)
        self.infra_failures += reward.failed
        for name, component in reward.components.items():
            self.components[name].add(component.raw)
        for key, verdict in reward.verdicts.items():
            self.verifiers[key].add(verdict)

    def component_table(self) -> Table:
        table = Table(title="reward and components")
        for column in ("component", "n", "mean", "std"):
            table.add_column(column, justify="left" if column == "component" else "right")
        table.add_row(
            "reward", str(self.reward.count), _fmt(self.reward.mean), _fmt(self.reward.std)
        )
        for name, m in sorted(self.components.items()):
            table.add_row(name, str(m.count), _fmt(m.mean), _fmt(m.std))
        return table

    def verifier_table(self) -> Table:
        table = Table(title="verifiers, slowest first")
        for column in ("verifier", "pass rate", "statuses", "failures", "mean ms", "max ms"):
            table.add_column(
                column, justify="right" if "ms" in column or "rate" in column else "left"
            )
        by_time = sorted(self.verifiers.items(), key=lambda kv: -(kv[1].elapsed.mean or 0.0))
        for key, s in by_time:
            table.add_row(
                key,
                _fmt(s.pass_rate),
                ", ".join(f"{k} {v}" for k, v in sorted(s.statuses.items())),
                ", ".join(f"{k} {v}" for k, v in s.failures.most_common()) or "–",
                f"{1000 * (s.elapsed.mean or 0.0):.2f}",
                f"{1000 * s.slowest_s:.2f}",
            )
        return table


def _fmt(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"
