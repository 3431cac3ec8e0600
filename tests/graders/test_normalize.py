"""Group (GRPO) and running-window normalisation, with None and infrastructure failures."""

from __future__ import annotations

import math

import pytest
from grader_helpers import A, samples, values

from rewardsmith.graders import Executor, Grader, Scorer, chain, group_normalize, running_normalize

EPS = 1e-6


@pytest.mark.parametrize(
    ("scores", "scale", "expected"),
    [
        ([1.0, 0.0, 1.0, 0.0], "mean_std", [1.0, -1.0, 1.0, -1.0]),  # mean .5, std .5
        ([1.0, 0.0, 1.0, 0.0], "mean", [0.5, -0.5, 0.5, -0.5]),
        ([1.0, 1.0, 1.0], "mean_std", [0.0, 0.0, 0.0]),  # no spread: no signal
        ([1.0, None, 0.0], "mean_std", [1.0, None, -1.0]),  # n/a takes no part
        ([1.0, "infra", 0.0], "mean_std", [1.0, None, -1.0]),  # nor does a failure
        ([0.25], "mean_std", [0.0]),  # a group of one
    ],
)
def test_group_normalize_table(scores, scale, expected):
    got = values(chain(A, group_normalize(scale=scale, eps=EPS)), [{"a": s} for s in scores])
    assert got == [pytest.approx(e, abs=1e-5) if e is not None else None for e in expected]


def test_groups_are_separate_by_prompt_or_meta_key():
    rows = [{"a": 1.0, "prompt": "p"}, {"a": 0.0, "prompt": "p"}, {"a": 1.0, "prompt": "q"}]
    assert values(chain(A, group_normalize(scale="mean")), rows) == [0.5, -0.5, 0.0]
    rows = [{"a": 1.0, "g": 1}, {"a": 0.0, "g": 2}, {"a": 0.0, "g": 1}]
    assert values(chain(A, group_normalize(by="meta.g", scale="mean")), rows) == [0.5, 0.0, -0.5]


def test_group_normalize_rejects_an_unknown_grouping():
    with pytest.raises(ValueError, match="meta"):
        group_normalize(by="promt")


def test_running_normalize_state_is_carried_by_the_scorer():
    grader = Grader(chain(A, running_normalize(window=3)))
    with Scorer(grader, backend="inline", cache=False) as scorer:
        first = scorer.score(samples([{"a": 1.0}, {"a": 0.0}]))
        second = scorer.score(samples([{"a": 1.0}]))
        state2 = scorer.state
        third = scorer.score(samples([{"a": 1.0}]))
    with Scorer(grader, backend="inline", cache=False, state=state2) as resumed:
        third_resumed = resumed.score(samples([{"a": 1.0}]))
    alone = grader.score(samples([{"a": 1.0}]), Executor("inline", cache=False))
    assert [r.value for r in first] == pytest.approx([1.0, -1.0], abs=1e-5)
    # window (1, 0, 1): mean 2/3, std sqrt(2)/3
    assert second[0].value == pytest.approx((1 - 2 / 3) / (math.sqrt(2) / 3 + 1e-6))
    # window of 3 drops the first value: (0, 1, 1)
    assert third[0].value == pytest.approx((1 - 2 / 3) / (math.sqrt(2) / 3 + 1e-6))
    assert state2 == {"grader": {"root/1": [1.0, 0.0, 1.0]}}
    assert third_resumed[0].value == third[0].value  # a restored state continues the window
    assert alone[0].value == 0.0  # a one-off Grader.score: the window is this batch only


def test_running_window_needs_two_values():
    with pytest.raises(ValueError, match="at least 2"):
        running_normalize(window=1)
