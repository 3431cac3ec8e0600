"""Streaming measures for `rewardsmith.graders.stats`: the moments of a stream of numbers
and a histogram of durations, each in constant memory and mergeable."""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass, field

__all__ = ["Moments", "Timing", "ratio"]


def ratio(part: int, whole: int) -> float | None:
    """``part / whole``, or None when there is nothing to divide."""
    return part / whole if whole else None


@dataclass
class Moments:
    """Count, mean, population standard deviation, min and max of a stream of numbers.

    The mean is a compensated (Neumaier) sum over the count, so 24 rewards of 1, 0.5 and 0
    average to exactly 0.5 as `math.fsum` would have it; the spread is Welford's update
    (stable for millions of values). None values are skipped, non-finite ones counted in
    `nonfinite`."""

    count: int = 0
    total: float = 0.0
    compensation: float = 0.0
    running_mean: float = 0.0
    m2: float = 0.0
    low: float = math.inf
    high: float = -math.inf
    nonfinite: int = 0

    def add(self, value: float | None) -> None:
        if value is None:
            return
        if not math.isfinite(value):
            self.nonfinite += 1
            return
        self.count += 1
        self._sum(value)
        delta = value - self.running_mean
        self.running_mean += delta / self.count
        self.m2 += delta * (value - self.running_mean)
        self.low, self.high = min(self.low, value), max(self.high, value)

    def _sum(self, value: float) -> None:
        total = self.total + value
        if abs(self.total) >= abs(value):
            self.compensation += (self.total - total) + value
        else:
            self.compensation += (value - total) + self.total
        self.total = total

    def merge(self, other: Moments) -> None:
        if other.count:
            count = self.count + other.count
            delta = other.running_mean - self.running_mean
            self.m2 += other.m2 + delta * delta * self.count * other.count / count
            self.running_mean += delta * other.count / count
            self.count = count
            self._sum(other.total)
            self.compensation += other.compensation
            self.low, self.high = min(self.low, other.low), max(self.high, other.high)
        self.nonfinite += other.nonfinite

    @property
    def mean(self) -> float | None:
        return (self.total + self.compensation) / self.count if self.count else None

    @property
    def std(self) -> float | None:
        return math.sqrt(max(self.m2 / self.count, 0.0)) if self.count else None

    def to_dict(self) -> dict[str, float | int | None]:
        return {"count": self.count, "mean": self.mean, "std": self.std}


_BUCKETS_PER_DECADE = 10
_SMALLEST_S = 1e-6


@dataclass
class Timing:
    """Elapsed seconds: exact count, total and max; quantiles from log-spaced buckets."""

    count: int = 0
    total_s: float = 0.0
    max_s: float = 0.0
    buckets: Counter[int] = field(default_factory=Counter)

    def add(self, seconds: float) -> None:
        if not math.isfinite(seconds) or seconds < 0:
            return
        self.count += 1
        self.total_s += seconds
        self.max_s = max(self.max_s, seconds)
        self.buckets[_bucket(seconds)] += 1

    def merge(self, other: Timing) -> None:
        self.count += other.count
        self.total_s += other.total_s
        self.max_s = max(self.max_s, other.max_s)
        self.buckets.update(other.buckets)

    @property
    def mean_s(self) -> float | None:
        return self.total_s / self.count if self.count else None

    def quantile(self, q: float) -> float | None:
        """The ``q``-quantile, as the geometric middle of its bucket (capped at max)."""
        if not self.count:
            return None
        rank = q * self.count
        seen = 0
        for index in sorted(self.buckets):
            seen += self.buckets[index]
            if seen >= rank:
                if index < 0:
                    return 0.0
                middle = _SMALLEST_S * 10 ** ((index + 0.5) / _BUCKETS_PER_DECADE)
                return min(middle, self.max_s)
        return self.max_s

    def to_dict(self) -> dict[str, float | int | None]:
        return {
            "count": self.count,
            "total_s": self.total_s,
            "mean_s": self.mean_s,
            "p50_s": self.quantile(0.5),
            "p95_s": self.quantile(0.95),
            "max_s": self.max_s if self.count else None,
        }


def _bucket(seconds: float) -> int:
    if seconds < _SMALLEST_S:
        return -1
    return int(math.log10(seconds / _SMALLEST_S) * _BUCKETS_PER_DECADE)
