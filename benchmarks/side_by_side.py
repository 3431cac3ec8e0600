"""Helpers for timing two implementations over the same samples, interleaved (A, B, A, B).

Used by `benchmarks/mesh.py` and `benchmarks/mesh_cad.py`; not a benchmark itself.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from rewardsmith.verifiers.types import Sample, Verdict

__all__ = ["agreement", "interleaved", "row", "timed_map"]


def timed_map(
    fn: Callable[[Sample], Verdict], samples: list[Sample], workers: int
) -> tuple[list[Verdict], float]:
    start = time.perf_counter()
    with ThreadPoolExecutor(workers) as pool:
        verdicts = list(pool.map(fn, samples))
    return verdicts, time.perf_counter() - start


def row(label: str, seconds: float, n: int) -> str:
    return f"| {label} | {seconds:.2f} | {n / seconds:.2f} | {1000 * seconds / n:.0f} |"


def interleaved(
    warm: Callable[[Sample], Verdict],
    fresh: Callable[[Sample], Verdict],
    samples: list[Sample],
    workers: int,
    chunk: int = 10,
) -> tuple[list[Verdict], float, list[Verdict], float]:
    """Both sides over the same samples, alternating chunk by chunk (A, B, A, B, ...)."""
    warm_verdicts: list[Verdict] = []
    fresh_verdicts: list[Verdict] = []
    warm_s = fresh_s = 0.0
    for start in range(0, len(samples), chunk):
        part = samples[start : start + chunk]
        verdicts, seconds = timed_map(warm, part, workers)
        warm_verdicts += verdicts
        warm_s += seconds
        verdicts, seconds = timed_map(fresh, part, workers)
        fresh_verdicts += verdicts
        fresh_s += seconds
    return warm_verdicts, warm_s, fresh_verdicts, fresh_s


def agreement(warm: list[Verdict], fresh: list[Verdict]) -> int:
    def key(v: Verdict) -> tuple[Any, ...]:
        return v.status, None if v.score is None else round(v.score, 9), v.failure

    return sum(key(a) == key(b) for a, b in zip(warm, fresh, strict=True))
