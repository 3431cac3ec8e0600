"""How close an attempt is to working: the potential Φ and the repair gain.

**Potential.** A program that parses but fails to type-check is closer to working than one
that does not parse; among programs failing at the same stage, fewer errors is closer; a
program that built and ran is closer than any that did not, and only one whose tests all
passed has arrived. With stages ranked parse 0, type 1, link 2, run 3, tests 4, K = 5,
E errors, W warnings, warning weight w and g = 1 / (1 + w·W):

    Φ = (s + 1 / (1 + E + w·W)) / (K + 1)   an error stopped it at stage s (the earliest);
                                            with test results, only build stages count here
    Φ = (K + g) / (K + 1)                   every test ran and passed, exit 0 (1 if W = 0)
    Φ = (4 + ½·p·g) / (K + 1)               tests ran, a fraction p of them passed, p < 1
    Φ = (4 + ½·g) / (K + 1)                 no error, but no test ran: at most 0.75

so a later stage always outranks an earlier one whatever the counts, a runtime failure
outranks any compile failure, and full credit needs tests that ran and passed: a clean
build without tests is capped below 1, at the top of the tests band (above any attempt
whose tests fail, below any whose tests all pass). An attempt that
**silenced** warnings (added ``#pragma GCC diagnostic ignored``, ``#[allow(...)]``, ...)
gets the worst value of its band's warning term (g = 0, and 1/(1+E+w·W) becomes 0): it
ranks below every attempt of its stage that left its warnings visible. The stage ladder
follows CodeRL's rewards (compile error < runtime error < failed tests < pass; Le et al.,
"CodeRL", NeurIPS 2022, arXiv:2207.01780), refined by the error count and the tests.

**Repair gain.** Over the attempts of a repair trajectory with potentials Φ_0 ... Φ_T,
the score is the normalised gain of the last attempt over the first (Hake, "Interactive-
engagement vs. traditional methods", Am. J. Phys. 66, 1998):

    g = max(0, (Φ_T − Φ_0) / (1 − Φ_0))      (g = 1 if Φ_0 = Φ_T = 1, else 0 when Φ_0 = 1)

It uses the *last* attempt, not the best, so going back is never rewarded: a trajectory that
fixed an error and then broke the build again scores what its final state earns. The
per-step rewards r_t = Φ_t − Φ_{t−1} are potential-based shaping (Ng, Harada and Russell,
ICML 1999): they sum to Φ_T − Φ_0, so shaping per step cannot change which trajectory is best.

    >>> from rewardsmith.verifiers.diagnostics.evidence import TestResults
    >>> from rewardsmith.verifiers.diagnostics.record import Diagnostic, Severity, Stage
    >>> parse_err = Diagnostic("gcc", Severity.ERROR, "expected ';'", stage=Stage.PARSE)
    >>> link_err = Diagnostic("gcc", Severity.ERROR, "undefined reference", stage=Stage.LINK)
    >>> round(potential([parse_err]), 4), round(potential([link_err]), 4), round(potential([]), 4)
    (0.0833, 0.4167, 0.75)
    >>> potential([], tests=TestResults(3, 3)), round(potential([], tests=TestResults(0, 3)), 4)
    (1.0, 0.6667)
    >>> round(repair_gain([potential([parse_err]), potential([], tests=TestResults(3, 3))]), 4)
    1.0
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from rewardsmith.verifiers.diagnostics.evidence import TestResults
from rewardsmith.verifiers.diagnostics.record import Diagnostic, Severity, Stage

__all__ = ["BuildSummary", "potential", "repair_gain", "step_rewards", "summarise"]

_K = len(Stage)
_TESTS = Stage.TEST.rank


@dataclass(frozen=True, slots=True)
class BuildSummary:
    """The counts the potential is computed from."""

    errors: int
    warnings: int
    stage: Stage | None
    """The earliest stage with an error; None when there is no error."""
    tests: TestResults | None = None
    silenced: bool = False

    def to_dict(self) -> dict[str, object]:
        return {
            "errors": self.errors,
            "warnings": self.warnings,
            "failed_stage": self.stage.value if self.stage else None,
            "tests": self.tests.to_dict() if self.tests else None,
            "silenced_warnings": self.silenced,
        }


def summarise(
    diagnostics: Sequence[Diagnostic], tests: TestResults | None = None, silenced: bool = False
) -> BuildSummary:
    """The counts; with test results, errors past the build are the tests' business."""
    errors = [d for d in diagnostics if d.severity is Severity.ERROR]
    if tests is not None:
        errors = [d for d in errors if d.stage.rank < Stage.RUN.rank]
    warnings = sum(d.severity is Severity.WARNING for d in diagnostics)
    stage = min((d.stage for d in errors), key=lambda s: s.rank) if errors else None
    return BuildSummary(len(errors), warnings, stage, tests, silenced)


def potential(
    diagnostics: Sequence[Diagnostic],
    warning_weight: float = 0.1,
    *,
    tests: TestResults | None = None,
    silenced: bool = False,
) -> float:
    """Φ in [0, 1]: the stage reached, refined by the problems and the tests."""
    return potential_of(summarise(diagnostics, tests, silenced), warning_weight)


def potential_of(summary: BuildSummary, warning_weight: float = 0.1) -> float:
    warnings = 0.0 if summary.silenced else 1.0 / (1.0 + warning_weight * summary.warnings)
    if summary.stage is not None:
        penalty = summary.errors + warning_weight * summary.warnings
        within = 0.0 if summary.silenced else 1.0 / (1.0 + penalty)
        return (summary.stage.rank + within) / (_K + 1)
    tests = summary.tests
    if tests is not None and tests.total > 0:
        if tests.all_passed:
            return (_K + warnings) / (_K + 1)
        return (_TESTS + 0.5 * tests.fraction * warnings) / (_K + 1)
    return (_TESTS + 0.5 * warnings) / (_K + 1)


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
