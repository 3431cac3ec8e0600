"""`evidence`: a named number from a leaf's verdict, made a value a grader can use.

A verdict's score is what the grader combines; its evidence is what the verifier saw. Some
of that evidence is itself a signal worth rewarding on: a reward-model ensemble's
``disagreement`` (its members' spread, an uncertainty estimate; Coste et al. 2023), a
code runner's ``passed`` count. This source block reads one such value, by name, so it can
be penalised, gated on or logged like any component, and the verifier runs once:

    >>> from rewardsmith.graders import chain, minimum, threshold, verify
    >>> rm = verify("reward_model_ensemble", model_paths=("a", "b"), reduce="mean_minus_std")
    >>> agreed = chain(evidence("reward_model_ensemble", "disagreement"),
    ...                threshold(0.5, above=0.0, below=1.0))
    >>> reward = minimum({"rm": rm, "agreed": agreed})  # 0 where the members disagree

In YAML: ``{evidence: {on: rm, name: disagreement}}``. The value is None (not applicable)
where the leaf is skipped or the sample excluded, and where the verdict is a failure that
carries no such value (an answer too large to score); a verdict that should carry it and
does not, or carries something that is not a finite number, is a mistake in the spec and
raises, naming the leaf, the name and what the verdict has.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from rewardsmith.graders.nodes import Context, Node, Ref, Values, Verify, _as_ref
from rewardsmith.graders.reward import Component
from rewardsmith.verifiers.protocol import Verifier

__all__ = ["Evidence", "evidence"]


@dataclass(frozen=True)
class Evidence:
    """The number ``name`` in leaf ``on``'s verdict evidence, as a value."""

    source: ClassVar[bool] = True
    on: Verify | Ref
    name: str

    def children(self) -> tuple[Node, ...]:
        return (self.on,)

    def apply(self, values: Values | None, ctx: Context) -> Values:
        out: Values = []
        for i in range(len(ctx)):
            value = self._read(ctx, i)
            if value is not None:
                ctx.record(i, f"evidence.{self.on.key}.{self.name}", Component(value, 1.0, value))
            out.append(value)
        return out

    def _read(self, ctx: Context, i: int) -> float | None:
        verdict = ctx.verdict(i, self.on.key)
        if verdict is None or verdict.score is None:
            return None
        value = verdict.evidence.get(self.name)
        if value is None and verdict.failure is not None:
            return None  # e.g. an answer too large to score: its score (0) already counts
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
        ):
            raise ValueError(
                f"leaf {self.on.key!r} ({verdict.name}): evidence {self.name!r} is "
                f"{value!r}, not a finite number; its evidence has {sorted(verdict.evidence)}"
            )
        return float(value)


def evidence(on: str | Verify | Verifier, name: str) -> Evidence:
    """The evidence value ``name`` of leaf ``on`` (a key, a leaf or a verifier)."""
    return Evidence(_as_ref(on), name)
