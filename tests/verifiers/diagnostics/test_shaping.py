"""The potential Φ and the repair gain: the orderings they promise, on a table of cases."""

from __future__ import annotations

import itertools

import pytest

from rewardsmith.verifiers.diagnostics import Diagnostic, Severity, Stage
from rewardsmith.verifiers.diagnostics.evidence import TestResults
from rewardsmith.verifiers.diagnostics.shaping import potential, repair_gain, step_rewards

PASSED = TestResults(3, 3)


def _errors(stage: Stage, n: int, warnings: int = 0) -> list[Diagnostic]:
    return [Diagnostic("t", Severity.ERROR, f"e{i}", stage=stage) for i in range(n)] + [
        Diagnostic("t", Severity.WARNING, f"w{i}") for i in range(warnings)
    ]


def test_full_credit_needs_tests_that_ran_and_passed():
    assert potential([], tests=PASSED) == 1.0
    assert potential([Diagnostic("t", Severity.NOTE, "n")], tests=PASSED) == 1.0
    assert 5 / 6 < potential(_errors(Stage.TYPE, 0, warnings=3), tests=PASSED) < 1.0
    assert potential([]) == 0.75  # a clean build that no test ran is capped below 1
    assert potential([], tests=TestResults(3, 3, clean_exit=False)) < 5 / 6


def test_failing_tests_rank_below_an_untested_build_and_above_a_crash():
    failing = [potential([], tests=TestResults(p, 4)) for p in (0, 1, 2, 3)]
    assert failing == sorted(failing) and failing[-1] < potential([]) < potential([], tests=PASSED)
    assert potential(_errors(Stage.RUN, 1)) < failing[0]


def test_silencing_warnings_never_raises_the_potential():
    for diagnostics, tests in [
        (_errors(Stage.TYPE, 2, warnings=3), None),
        (_errors(Stage.LINK, 1), None),
        ([], PASSED),
        (_errors(Stage.TYPE, 0, warnings=4), PASSED),
        ([], None),
    ]:
        loud = potential(diagnostics, tests=tests)
        warnings = sum(d.severity is Severity.WARNING for d in diagnostics)
        for fewer in range(warnings + 1):  # silencing hides some or all of the warnings
            quiet = potential(diagnostics[: len(diagnostics) - fewer], tests=tests, silenced=True)
            assert quiet <= loud


def test_a_later_stage_always_outranks_an_earlier_one():
    stages = list(Stage)
    for early, late in itertools.combinations(stages, 2):
        # the best case of the earlier stage against the worst of the later one
        assert potential(_errors(late, 500, warnings=50)) > potential(_errors(early, 1))
    assert potential(_errors(Stage.TEST, 1)) < potential(_errors(Stage.TEST, 0, 500), tests=PASSED)


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
