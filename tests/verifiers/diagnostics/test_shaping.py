"""The potential Φ and the repair gain: the orderings they promise, on a table of cases."""

from __future__ import annotations

import itertools

import pytest

from rewardsmith.verifiers.diagnostics import Diagnostic, Severity, Stage
from rewardsmith.verifiers.diagnostics.shaping import potential, repair_gain, step_rewards


def _errors(stage: Stage, n: int, warnings: int = 0) -> list[Diagnostic]:
    return [Diagnostic("t", Severity.ERROR, f"e{i}", stage=stage) for i in range(n)] + [
        Diagnostic("t", Severity.WARNING, f"w{i}") for i in range(warnings)
    ]


def test_clean_build_is_one_and_warnings_cost_a_little():
    assert potential([]) == 1.0
    assert potential([Diagnostic("t", Severity.NOTE, "n")]) == 1.0
    assert 5 / 6 < potential(_errors(Stage.TYPE, 0, warnings=3)) < 1.0


def test_a_later_stage_always_outranks_an_earlier_one():
    stages = list(Stage)
    for early, late in itertools.combinations(stages, 2):
        # the best case of the earlier stage against the worst of the later one
        assert potential(_errors(late, 500, warnings=50)) > potential(_errors(early, 1))
    assert potential(_errors(Stage.TEST, 1)) < potential(_errors(Stage.TEST, 0, warnings=500))


@pytest.mark.parametrize("stage", list(Stage))
def test_fewer_errors_is_better_within_a_stage(stage):
    values = [potential(_errors(stage, n)) for n in (1, 2, 5, 50)]
    assert values == sorted(values, reverse=True)
    assert len(set(values)) == len(values)


def test_the_earliest_failing_stage_decides():
    mixed = _errors(Stage.PARSE, 1) + _errors(Stage.RUN, 1)
    assert potential(mixed) < potential(_errors(Stage.RUN, 1))


@pytest.mark.parametrize(
    ("phis", "gain"),
    [
        ([0.0, 1.0], 1.0),
        ([0.5, 0.75], 0.5),
        ([0.5, 0.5], 0.0),
        ([0.5, 0.25], 0.0),  # going back is never rewarded
        ([0.2, 0.9, 0.3], 0.125),  # the last attempt counts, not the best
        ([1.0, 1.0], 1.0),
        ([1.0, 0.5], 0.0),
    ],
)
def test_repair_gain(phis, gain):
    assert repair_gain(phis) == pytest.approx(gain)


def test_step_rewards_telescope():
    phis = [0.1, 0.4, 0.3, 0.9]
    assert sum(step_rewards(phis)) == pytest.approx(phis[-1] - phis[0])


def test_repair_gain_needs_two_attempts():
    with pytest.raises(ValueError, match="at least two"):
        repair_gain([0.3])
