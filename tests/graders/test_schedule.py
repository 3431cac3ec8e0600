"""Weight schedules by training step."""

from __future__ import annotations

import pickle

import pytest

from rewardsmith.graders import linear_schedule, piecewise_schedule


@pytest.mark.parametrize(
    ("step", "expected"),
    [(0, 1.0), (100, 1.0), (150, 0.6), (200, 0.2), (10_000, 0.2), (-5, 1.0)],
)
def test_linear_schedule(step, expected):
    assert linear_schedule(1.0, 0.2, steps=100, begin=100)(step) == pytest.approx(expected)


@pytest.mark.parametrize(
    ("step", "expected"), [(0, 0.0), (9, 0.0), (10, 1.0), (99, 1.0), (100, 0.5)]
)
def test_piecewise_schedule(step, expected):
    assert piecewise_schedule({0: 0.0, 10: 1.0, 100: 0.5})(step) == expected


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: linear_schedule(1, 0, steps=0), "steps > 0"),
        (lambda: piecewise_schedule({}), "at least one"),
    ],
)
def test_bad_schedules(build, message):
    with pytest.raises(ValueError, match=message):
        build()


def test_schedules_pickle():
    for schedule in (linear_schedule(1, 0, 10), piecewise_schedule({0: 1.0})):
        assert pickle.loads(pickle.dumps(schedule)) == schedule
