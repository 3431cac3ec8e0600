"""Shaping transforms: length penalties, a repetition penalty, potential-based shaping.

Each is a transform for `chain`, with its formula and its source beside it. Lengths are
counted in ``unit``: "chars", "words" (whitespace-separated), or "tokens", read from
``sample.meta["completion_tokens"]`` (the trainer knows the token count; a grader has no
tokenizer). A sample without that key is a caller's error and raises `ValueError`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import ClassVar, Literal

from rewardsmith.graders.nodes import Context, Node, Values, map_values
from rewardsmith.graders.reward import Component
from rewardsmith.verifiers.types import Sample, Step

__all__ = [
    "CosineLength",
    "LengthPenalty",
    "OverlongPenalty",
    "PotentialShaping",
    "RepetitionPenalty",
    "cosine_length",
    "length_penalty",
    "overlong_penalty",
    "potential_shaping",
    "repetition_penalty",
    "shaping_terms",
]

Unit = Literal["chars", "words", "tokens"]


def completion_length(sample: Sample, unit: Unit) -> int:
    """The completion's length in ``unit`` (see the module docstring)."""
    if unit == "tokens":
        count = sample.meta.get("completion_tokens")
        if not isinstance(count, int) or isinstance(count, bool) or count < 0:
            raise ValueError(
                f"sample {sample.id!r}: unit='tokens' needs meta['completion_tokens'] as a "
                f"non-negative int; set it when you build the Sample, or use unit='chars'"
            )
        return count
    text = sample.completion_text
    return len(text) if unit == "chars" else len(text.split())


class _Leafless:
    source: ClassVar[bool] = False

    def children(self) -> tuple[Node, ...]:
        return ()


@dataclass(frozen=True)
class LengthPenalty(_Leafless):
    """Linear length penalty: free up to ``free``, then growing linearly to ``coef`` at ``limit``.

    value - coef * clip((L - free) / (limit - free), 0, 1)
    """

    free: int
    limit: int
    coef: float = 1.0
    unit: Unit = "chars"

    def __post_init__(self) -> None:
        if not 0 <= self.free < self.limit:
            raise ValueError(
                f"length penalty needs 0 <= free < limit, got {self.free}, {self.limit}"
            )

    def apply(self, values: Values | None, ctx: Context) -> Values:
        def one(i: int, v: float) -> float:
            length = completion_length(ctx.samples[i], self.unit)
            frac = min(max((length - self.free) / (self.limit - self.free), 0.0), 1.0)
            ctx.record(i, "length_penalty", Component(frac, -self.coef, -self.coef * frac))
            return v - self.coef * frac

        return map_values(values, one)


def length_penalty(free: int, limit: int, coef: float = 1.0, unit: Unit = "chars") -> LengthPenalty:
    return LengthPenalty(int(free), int(limit), float(coef), unit)


@dataclass(frozen=True)
class CosineLength(_Leafless):
    """Cosine-scaled reward by length (Yeo et al. 2025, "Demystifying Long Chain-of-Thought
    Reasoning in LLMs", arXiv:2502.03373, eq. 1).

    The incoming value says whether the answer is correct (value >= ``correct_at``); the
    new value is ``r_L + (r_0 - r_L) * (1 + cos(pi * L / L_max)) / 2``, with (r_0, r_L) =
    ``correct`` for a correct answer (short is better) and ``wrong`` for a wrong one (long
    is less bad, so the model keeps thinking when unsure). Beyond ``max_length``: ``exceed``.
    """

    max_length: int
    correct: tuple[float, float] = (1.0, 0.5)
    wrong: tuple[float, float] = (-1.0, -0.5)
    exceed: float = -1.0
    correct_at: float = 1.0
    unit: Unit = "chars"

    def apply(self, values: Values | None, ctx: Context) -> Values:
        def one(i: int, v: float) -> float:
            length = completion_length(ctx.samples[i], self.unit)
            r0, r_l = self.correct if v >= self.correct_at else self.wrong
            if length > self.max_length:
                new = self.exceed
            else:
                new = r_l + (r0 - r_l) * (1 + math.cos(math.pi * length / self.max_length)) / 2
            ctx.record(i, "cosine_length", Component(float(length), 1.0, new))
            return new

        return map_values(values, one)


def cosine_length(
    max_length: int,
    correct: Sequence[float] = (1.0, 0.5),
    wrong: Sequence[float] = (-1.0, -0.5),
    exceed: float = -1.0,
    correct_at: float = 1.0,
    unit: Unit = "chars",
) -> CosineLength:
    c0, c1 = correct
    w0, w1 = wrong
    return CosineLength(
        int(max_length), (float(c0), float(c1)), (float(w0), float(w1)), float(exceed),
        float(correct_at), unit,
    )  # fmt: skip


@dataclass(frozen=True)
class OverlongPenalty(_Leafless):
    """DAPO's soft overlong punishment (Yu et al. 2025, arXiv:2503.14476, eq. 13), added on.

    With L_max = ``max_length`` and L_cache = ``buffer``:
    0 if L <= L_max - L_cache; ((L_max - L_cache) - L) / L_cache if L_max - L_cache < L <= L_max;
    -1 if L > L_max. Multiplied by ``coef``.
    """

    max_length: int
    buffer: int
    coef: float = 1.0
    unit: Unit = "tokens"

    def __post_init__(self) -> None:
        if not 0 < self.buffer <= self.max_length:
            raise ValueError(f"overlong penalty needs 0 < buffer <= max_length, got {self.buffer}")

    def apply(self, values: Values | None, ctx: Context) -> Values:
        soft_start = self.max_length - self.buffer

        def one(i: int, v: float) -> float:
            length = completion_length(ctx.samples[i], self.unit)
            if length <= soft_start:
                raw = 0.0
            elif length <= self.max_length:
                raw = (soft_start - length) / self.buffer
            else:
                raw = -1.0
            ctx.record(i, "overlong_penalty", Component(raw, self.coef, self.coef * raw))
            return v + self.coef * raw

        return map_values(values, one)


def overlong_penalty(
    max_length: int, buffer: int, coef: float = 1.0, unit: Unit = "tokens"
) -> OverlongPenalty:
    return OverlongPenalty(int(max_length), int(buffer), float(coef), unit)


def repeated_ngram_fraction(text: str, n: int) -> float:
    """1 - unique/total over the word n-grams of ``text`` (0 when there are none)."""
    words = text.split()
    grams = [tuple(words[i : i + n]) for i in range(len(words) - n + 1)]
    if not grams:
        return 0.0
    return 1.0 - len(set(grams)) / len(grams)


@dataclass(frozen=True)
class RepetitionPenalty(_Leafless):
    """N-gram repetition penalty (Yeo et al. 2025, section 5; as in TRL's reward functions).

    value - coef * (1 - unique n-grams / total n-grams), words split on whitespace. The
    completion is capped at ``max_chars`` first (hostile text must not cost unbounded work).
    """

    ngram: int = 3
    coef: float = 1.0
    max_chars: int = 200_000

    def __post_init__(self) -> None:
        if self.ngram < 1:
            raise ValueError(f"repetition penalty needs ngram >= 1, got {self.ngram}")

    def apply(self, values: Values | None, ctx: Context) -> Values:
        def one(i: int, v: float) -> float:
            text = ctx.samples[i].completion_text[: self.max_chars]
            frac = repeated_ngram_fraction(text, self.ngram)
            ctx.record(i, "repetition_penalty", Component(frac, -self.coef, -self.coef * frac))
            return v - self.coef * frac

        return map_values(values, one)


def repetition_penalty(
    ngram: int = 3, coef: float = 1.0, max_chars: int = 200_000
) -> RepetitionPenalty:
    return RepetitionPenalty(int(ngram), float(coef), int(max_chars))


def shaping_terms(potentials: Sequence[float], gamma: float) -> list[float]:
    """Per-step shaping rewards F_t = gamma * Phi(s_{t+1}) - Phi(s_t).

    ``potentials`` is [Phi(s_0), ..., Phi(s_T)]; the result has T terms. Ng, Harada and
    Russell 1999, "Policy invariance under reward transformations" (ICML): adding F to
    every transition leaves the optimal policies of the MDP unchanged.
    """
    return [gamma * potentials[t + 1] - potentials[t] for t in range(len(potentials) - 1)]


@dataclass(frozen=True)
class PotentialShaping(_Leafless):
    """Potential-based shaping over a trajectory's steps (Ng et al. 1999).

    value + sum_t gamma^t * (gamma * Phi(s_{t+1}) - Phi(s_t)), where Phi(s_0) is
    ``sample.meta["initial_potential"]`` (default 0), Phi(s_{t+1}) is the potential of the
    state after step t (``step.meta[potential]`` when ``potential`` is a key, else
    ``potential(step)``), and the terminal state's potential is 0 (``terminal_zero``), which
    keeps the shaped return equal to the true return minus Phi(s_0): a constant per start.
    """

    gamma: float = 1.0
    potential: str | Callable[[Step], float] = "potential"
    terminal_zero: bool = True

    def __post_init__(self) -> None:
        if not 0.0 <= self.gamma <= 1.0:
            raise ValueError(f"gamma must be in [0, 1], got {self.gamma}")

    def _phi(self, step: Step) -> float:
        if callable(self.potential):
            return float(self.potential(step))
        value = step.meta.get(self.potential, 0.0)
        return float(value) if isinstance(value, int | float) else 0.0

    def apply(self, values: Values | None, ctx: Context) -> Values:
        def one(i: int, v: float) -> float:
            sample = ctx.samples[i]
            steps = sample.steps
            phis = [float(sample.meta.get("initial_potential", 0.0))]
            phis += [self._phi(s) for s in steps]
            if self.terminal_zero:
                phis[-1] = 0.0
            terms = shaping_terms(phis, self.gamma)
            total = sum(self.gamma**t * f for t, f in enumerate(terms))
            ctx.record(i, "potential_shaping", Component(total, 1.0, total))
            return v + total

        return map_values(values, one)


def potential_shaping(
    gamma: float = 1.0,
    potential: str | Callable[[Step], float] = "potential",
    terminal_zero: bool = True,
) -> PotentialShaping:
    return PotentialShaping(float(gamma), potential, bool(terminal_zero))
