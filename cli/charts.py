"""Charts for the report, from counts (so no column of values is held): exact counts of
distinct values while they are few, else fixed-bin histograms filled by a second pass
over the rows; drawn with matplotlib as PNG."""

from __future__ import annotations

import io
import math
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Distribution", "Histogram", "bars_png", "histograms_png"]

BINS = 20
DISTINCT_LIMIT = 4096
"""Distinct values a `Distribution` counts exactly before it gives up."""


@dataclass
class Distribution:
    """Exact counts of each distinct finite value, while there are at most ``limit`` of
    them (rewards are often a handful of values: 0, 1, a few partial scores). Past that it
    stops counting (`overflowed`) and the histogram needs a second pass over the rows."""

    limit: int = DISTINCT_LIMIT
    counts: dict[float, int] = field(default_factory=dict)
    overflowed: bool = False

    def add(self, value: float | None) -> None:
        if self.overflowed or value is None or not math.isfinite(value):
            return
        if value in self.counts:
            self.counts[value] += 1
        elif len(self.counts) < self.limit:
            self.counts[value] = 1
        else:
            self.overflowed, self.counts = True, {}

    def histogram(self, low: float, high: float) -> Histogram:
        histogram = Histogram(low, high)
        for value, n in self.counts.items():
            histogram.add(value, n)
        return histogram


@dataclass
class Histogram:
    """Counts in ``bins`` equal bins over [low, high] (the last bin holds high itself)."""

    low: float
    high: float
    bins: int = BINS
    counts: list[int] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not (math.isfinite(self.low) and math.isfinite(self.high)) or self.high < self.low:
            raise ValueError("a histogram needs a finite range")
        if self.high == self.low:
            self.bins = 1
        self.counts = [0] * self.bins

    def add(self, value: float | None, times: int = 1) -> None:
        if value is None or not math.isfinite(value) or not self.low <= value <= self.high:
            return
        width = (self.high - self.low) / self.bins or 1.0
        self.counts[min(int((value - self.low) / width), self.bins - 1)] += times

    @property
    def edges(self) -> list[float]:
        if self.bins == 1:
            return [self.low - 0.5, self.high + 0.5]
        width = (self.high - self.low) / self.bins
        return [self.low + i * width for i in range(self.bins)] + [self.high]


def _pyplot() -> Any:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def _png(fig: Any) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=90, bbox_inches="tight")
    _pyplot().close(fig)
    return buffer.getvalue()


def histograms_png(series: dict[str, Histogram], xlabel: str) -> bytes | None:
    """One small histogram per series, four to a row."""
    filled = {name: h for name, h in series.items() if sum(h.counts)}
    if not filled:
        return None
    plt = _pyplot()
    columns = min(len(filled), 4)
    rows = math.ceil(len(filled) / columns)
    fig, axes = plt.subplots(rows, columns, figsize=(3.2 * columns, 2.4 * rows), squeeze=False)
    for ax, (name, histogram) in zip(axes.flat, filled.items(), strict=False):
        ax.stairs(histogram.counts, histogram.edges, fill=True, color="#4477aa")
        ax.set_title(name.replace("$", r"\$"), fontsize=9)  # no mathtext from a name
        ax.set_xlabel(xlabel, fontsize=8)
    for ax in list(axes.flat)[len(filled) :]:
        ax.axis("off")
    return _png(fig)


def bars_png(counts: dict[str, float], title: str) -> bytes | None:
    """Horizontal bars, largest first (at most 25)."""
    if not counts:
        return None
    from matplotlib.ticker import MaxNLocator

    plt = _pyplot()
    labels = sorted(counts, key=lambda k: -counts[k])[:25]
    fig, ax = plt.subplots(figsize=(6.4, 0.3 * len(labels) + 1.0))
    ax.barh(labels[::-1], [counts[k] for k in labels][::-1], color="#cc6677")
    ax.set_title(title, fontsize=10)
    ax.tick_params(labelsize=8)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    return _png(fig)
