"""Transforms that change a value: gate, threshold, clip, scale, penalize.

Each is a frozen, picklable block for `chain`; a value of None (not applicable) passes
through unchanged.

    >>> from rewardsmith.graders import Executor, Grader, chain, verify
    >>> from rewardsmith.verifiers.types import Sample
    >>> g = Grader(chain("exact_match", gate(verify("format", required_tags=("a",)))))
    >>> with Executor("inline") as ex:
    ...     g.score([Sample(id="1", completion="<a>x</a>", reference="<a>x</a>")], ex)[0].value
    1.0
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rewardsmith.graders.nodes import Context, Node, Ref, Values, Verify, _as_ref, map_values
from rewardsmith.graders.reward import Component
from rewardsmith.graders.schedule import Schedule, weight_at
from rewardsmith.verifiers.protocol import Verifier
from rewardsmith.verifiers.types import Status

__all__ = [
    "Clip",
    "Gate",
    "Penalize",
    "Scale",
    "Threshold",
    "clip",
    "gate",
    "penalize",
    "scale",
    "threshold",
]


@dataclass(frozen=True)
class Gate:
    """The value counts only if leaf ``on`` passed (or scored at least ``threshold``).

    Closed gate: the value becomes ``otherwise`` (0 by default). A gate whose leaf does not
    apply (skip) is closed too: a reward is never let through on a check that did not run.
    """

    source: ClassVar[bool] = False
    on: Verify | Ref
    threshold: float | None = None
    otherwise: float = 0.0

    def children(self) -> tuple[Node, ...]:
        return (self.on,)

    def apply(self, values: Values | None, ctx: Context) -> Values:
        def one(i: int, v: float) -> float:
            verdict = ctx.verdict(i, self.on.key)
            if verdict is None or verdict.score is None:
                is_open = False
            elif self.threshold is None:
                is_open = verdict.status is Status.PASS
            else:
                is_open = verdict.score >= self.threshold
            ctx.record(i, f"gate.{self.on.key}", Component(float(is_open), 1.0, float(is_open)))
            return v if is_open else self.otherwise

        return map_values(values, one)


def gate(
    on: str | Verify | Verifier, threshold: float | None = None, otherwise: float = 0.0
) -> Gate:
    """Let the value through only when ``on`` passed (or its score >= ``threshold``)."""
    return Gate(_as_ref(on), threshold, otherwise)


@dataclass(frozen=True)
class Threshold:
    """``above`` if value >= ``at`` else ``below`` (turns a partial score into pass/fail)."""

    source: ClassVar[bool] = False
    at: float
    above: float = 1.0
    below: float = 0.0

    def children(self) -> tuple[Node, ...]:
        return ()

    def apply(self, values: Values | None, ctx: Context) -> Values:
        return map_values(values, lambda i, v: self.above if v >= self.at else self.below)


def threshold(at: float, above: float = 1.0, below: float = 0.0) -> Threshold:
    return Threshold(float(at), float(above), float(below))


@dataclass(frozen=True)
class Clip:
    """``min(max(value, low), high)``."""

    source: ClassVar[bool] = False
    low: float
    high: float

    def __post_init__(self) -> None:
        if self.low > self.high:
            raise ValueError(f"clip low {self.low} is above high {self.high}")

    def children(self) -> tuple[Node, ...]:
        return ()

    def apply(self, values: Values | None, ctx: Context) -> Values:
        return map_values(values, lambda i, v: min(max(v, self.low), self.high))


def clip(low: float, high: float) -> Clip:
    return Clip(float(low), float(high))


@dataclass(frozen=True)
class Scale:
    """``value * factor`` (factor may be a schedule)."""

    source: ClassVar[bool] = False
    factor: float | Schedule

    def children(self) -> tuple[Node, ...]:
        return ()

    def apply(self, values: Values | None, ctx: Context) -> Values:
        factor = weight_at(self.factor, ctx.step)
        return map_values(values, lambda i, v: v * factor)


def scale(factor: float | Schedule) -> Scale:
    return Scale(factor if callable(factor) else float(factor))


@dataclass(frozen=True)
class Penalize:
    """Subtract ``amount * (1 - score)`` of leaf ``on`` (a format penalty, for example).

    A leaf that does not apply costs nothing. ``amount`` may be a schedule.
    """

    source: ClassVar[bool] = False
    on: Verify | Ref
    amount: float | Schedule = 1.0

    def children(self) -> tuple[Node, ...]:
        return (self.on,)

    def apply(self, values: Values | None, ctx: Context) -> Values:
        amount = weight_at(self.amount, ctx.step)

        def one(i: int, v: float) -> float:
            score = ctx.score(i, self.on.key)
            if score is None:
                return v
            term = -amount * (1.0 - score)
            ctx.record(i, f"penalty.{self.on.key}", Component(1.0 - score, -amount, term))
            return v + term

        return map_values(values, one)


def penalize(on: str | Verify | Verifier, amount: float | Schedule = 1.0) -> Penalize:
    """Subtract ``amount * (1 - score of on)`` from the value."""
    return Penalize(_as_ref(on), amount if callable(amount) else float(amount))
