"""How close a build is to working, from its diagnostics: the potential Φ and the repair gain.

**Potential.** A program that parses but fails to type-check is closer to working than one
that does not parse; among programs failing at the same stage, fewer errors is closer. With
stages ranked parse 0, type 1, link 2, run 3, tests 4 and K = 5:

    Φ = (s + 1 / (1 + E + w·W)) / (K + 1)     if there are errors
    Φ = (K + 1 / (1 + w·W)) / (K + 1)         if there are none

where s is the rank of the earliest stage with an error (it stopped the pipeline), E the
number of errors, W of warnings and w the warning weight. A failing build scores below
(s + 1/2)/(K + 1), so a later stage always outranks an earlier one whatever the counts, and
any clean build outranks any failing one; a clean build without warnings has Φ = 1.
The stage ladder follows CodeRL's rewards (compile error < runtime error < failed tests <
pass; Le et al., "CodeRL", NeurIPS 2022, arXiv:2207.01780), refined by the error count.

**Repair gain.** Over the attempts of a repair trajectory with potentials Φ_0 ... Φ_T,
the score is the normalised gain of the last attempt over the first (Hake, "Interactive-
engagement vs. traditional methods", Am. J. Phys. 66, 1998):

    g = max(0, (Φ_T − Φ_0) / (1 − Φ_0))      (g = 1 if Φ_0 = Φ_T = 1, else 0 when Φ_0 = 1)

It uses the *last* attempt, not the best, so going back is never rewarded: a trajectory that
fixed an error and then broke the build again scores what its final state earns. The
per-step rewards r_t = Φ_t − Φ_{t−1} are potential-based shaping (Ng, Harada and Russell,
ICML 1999): they sum to Φ_T − Φ_0, so shaping per step cannot change which trajectory is best.

    >>> from rewardsmith.verifiers.diagnostics.record import Diagnostic, Severity, Stage
    >>> parse_err = Diagnostic("gcc", Severity.ERROR, "expected ';'", stage=Stage.PARSE)
    >>> link_err = Diagnostic("gcc", Severity.ERROR, "undefined reference", stage=Stage.LINK)
    >>> round(potential([parse_err]), 4), round(potential([link_err]), 4), potential([])
    (0.0833, 0.4167, 1.0)
    >>> round(repair_gain([potential([parse_err]), potential([link_err]), potential([])]), 4)
    1.0
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from rewardsmith.verifiers.diagnostics.record import Diagnostic, Severity, Stage

__all__ = ["BuildSummary", "potential", "repair_gain", "step_rewards", "summarise"]

_K = len(Stage)


@dataclass(frozen=True, slots=True)
class BuildSummary:
    """The counts the potential is computed from."""

    errors: int
    warnings: int
    stage: Stage | None
    """The earliest stage with an error; None when there is no error."""

    def to_dict(self) -> dict[str, object]:
        return {
            "errors": self.errors,
            "warnings": self.warnings,
            "failed_stage": self.stage.value if self.stage else None,
        }


def summarise(diagnostics: Sequence[Diagnostic]) -> BuildSummary:
    errors = [d for d in diagnostics if d.severity is Severity.ERROR]
    warnings = sum(d.severity is Severity.WARNING for d in diagnostics)
    stage = min((d.stage for d in errors), key=lambda s: s.rank) if errors else None
    return BuildSummary(len(errors), warnings, stage)


def potential(diagnostics: Sequence[Diagnostic], warning_weight: float = 0.1) -> float:
    """Φ in [0, 1]: the stage reached, refined by the weighted count of problems."""
    return potential_of(summarise(diagnostics), warning_weight)


def potential_of(summary: BuildSummary, warning_weight: float = 0.1) -> float:
    penalty = summary.errors + warning_weight * summary.warnings
    rank = summary.stage.rank if summary.stage is not None else _K
    return (rank + 1.0 / (1.0 + penalty)) / (_K + 1)


def repair_gain(potentials: Sequence[float]) -> float:
    """The normalised gain of the last attempt over the first, floored at 0."""
    if len(potentials) < 2:
        raise ValueError("a repair gain needs at least two attempts")
    first, last = potentials[0], potentials[-1]
    if first >= 1.0:
        return 1.0 if last >= 1.0 else 0.0
    return min(1.0, max(0.0, (last - first) / (1.0 - first)))


def step_rewards(potentials: Sequence[float]) -> list[float]:
    """r_t = Φ_t − Φ_{t−1} for t = 1..T (potential-based shaping)."""
    return [b - a for a, b in itertools.pairwise(potentials)]
