"""Running per-verifier statistics for the end-of-run table."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field

from rich.table import Table

from rewardsmith.verifiers.types import Fault, Verdict

__all__ = ["VerdictStats", "summary_table"]


@dataclass
class VerdictStats:
    """Counts and score moments for one verifier over a run."""

    count: int = 0
    scored: int = 0
    total: float = 0.0
    total_sq: float = 0.0
    statuses: Counter[str] = field(default_factory=Counter)
    failures: Counter[str] = field(default_factory=Counter)
    infra: int = 0
    elapsed_s: float = 0.0

    def add(self, verdict: Verdict) -> None:
        self.count += 1
        self.statuses[verdict.status.value] += 1
        self.elapsed_s += verdict.elapsed_s
        if verdict.failure is not None:
            self.failures[verdict.failure.value] += 1
            self.infra += verdict.fault is Fault.INFRA
        if verdict.score is not None:
            self.scored += 1
            self.total += verdict.score
            self.total_sq += verdict.score * verdict.score

    @property
    def mean(self) -> float | None:
        return self.total / self.scored if self.scored else None

    @property
    def std(self) -> float | None:
        if not self.scored:
            return None
        mean = self.total / self.scored
        return math.sqrt(max(self.total_sq / self.scored - mean * mean, 0.0))

    @property
    def pass_rate(self) -> float | None:
        return self.statuses["pass"] / self.count if self.count else None


def _fmt(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def summary_table(stats: dict[str, VerdictStats], title: str) -> Table:
    table = Table(title=title)
    for column in (
        "verifier",
        "samples",
        "mean",
        "std",
        "pass rate",
        "statuses",
        "failures",
        "ms/sample",
    ):
        table.add_column(
            column, justify="left" if column in ("verifier", "statuses", "failures") else "right"
        )
    for name, s in stats.items():
        statuses = ", ".join(f"{k} {v}" for k, v in sorted(s.statuses.items()))
        failures = ", ".join(f"{k} {v}" for k, v in s.failures.most_common()) or "–"
        per_sample = 1000 * s.elapsed_s / s.count if s.count else 0.0
        table.add_row(
            name,
            str(s.count),
            _fmt(s.mean),
            _fmt(s.std),
            _fmt(s.pass_rate),
            statuses,
            failures,
            f"{per_sample:.2f}",
        )
    return table
