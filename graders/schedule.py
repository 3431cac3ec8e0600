"""Weights that change with the training step, as optax schedules do for learning rates.

A schedule is a frozen, picklable callable ``step -> float``. Anywhere a grader takes a
weight it takes a number or a schedule; `Grader.score(..., step=k)` says which step it is.

    >>> w = linear_schedule(1.0, 0.0, steps=100)
    >>> w(0), w(50), w(100), w(500)
    (1.0, 0.5, 0.0, 0.0)
    >>> piecewise_schedule({0: 0.0, 10: 1.0})(9), piecewise_schedule({0: 0.0, 10: 1.0})(10)
    (0.0, 1.0)

A typical use: a format reward that matters early and fades out once the model has
learned the format (weight ``linear_schedule(1.0, 0.1, steps=500)``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

__all__ = [
    "LinearSchedule",
    "PiecewiseSchedule",
    "Schedule",
    "linear_schedule",
    "piecewise_schedule",
    "weight_at",
]


@runtime_checkable
class Schedule(Protocol):
    def __call__(self, step: int) -> float: ...


@dataclass(frozen=True)
class LinearSchedule:
    """``start`` until step ``begin``, then linearly to ``end`` over ``steps`` steps, then ``end``.

    w(t) = start + (end - start) * clip((t - begin) / steps, 0, 1)
    """

    start: float
    end: float
    steps: int
    begin: int = 0

    def __post_init__(self) -> None:
        if self.steps <= 0:
            raise ValueError(f"linear schedule needs steps > 0, got {self.steps}")

    def __call__(self, step: int) -> float:
        frac = min(max((step - self.begin) / self.steps, 0.0), 1.0)
        return self.start + (self.end - self.start) * frac


@dataclass(frozen=True)
class PiecewiseSchedule:
    """Constant pieces: the value of the last boundary at or before the step.

    ``boundaries`` is a tuple of (step, value) pairs sorted by step; before the first
    boundary the first value holds.
    """

    boundaries: tuple[tuple[int, float], ...]

    def __post_init__(self) -> None:
        if not self.boundaries:
            raise ValueError("piecewise schedule needs at least one (step, value) pair")
        steps = [s for s, _ in self.boundaries]
        if steps != sorted(steps) or len(set(steps)) != len(steps):
            raise ValueError(f"piecewise schedule steps must increase strictly, got {steps}")

    def __call__(self, step: int) -> float:
        value = self.boundaries[0][1]
        for boundary, v in self.boundaries:
            if step >= boundary:
                value = v
        return value


def linear_schedule(start: float, end: float, steps: int, begin: int = 0) -> LinearSchedule:
    """See `LinearSchedule`."""
    return LinearSchedule(float(start), float(end), int(steps), int(begin))


def piecewise_schedule(values: dict[int, float]) -> PiecewiseSchedule:
    """See `PiecewiseSchedule`; ``{0: 1.0, 1000: 0.5}`` is 1.0 until step 1000, then 0.5."""
    return PiecewiseSchedule(tuple(sorted((int(k), float(v)) for k, v in values.items())))


def weight_at(weight: float | Schedule, step: int) -> float:
    """A number as is; a schedule evaluated at ``step``."""
    return float(weight(step)) if callable(weight) else float(weight)
