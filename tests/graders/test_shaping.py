"""Length and repetition penalties and potential-based shaping, on hand-computed cases."""

from __future__ import annotations

import numpy as np
import pytest
from grader_helpers import A, grade, values

from rewardsmith.graders import (
    Executor,
    Grader,
    chain,
    cosine_length,
    length_penalty,
    overlong_penalty,
    potential_shaping,
    repetition_penalty,
    shaping_terms,
)
from rewardsmith.verifiers.types import Sample, Step


def _one(block, completion, a=1.0, **meta):
    return values(chain(A, block), [{"a": a, "completion": completion, **meta}])[0]


@pytest.mark.parametrize(
    ("length", "expected"),
    [(5, 1.0), (10, 1.0), (15, 0.75), (20, 0.5), (300, 0.5)],
)
def test_linear_length_penalty(length, expected):
    assert _one(length_penalty(free=10, limit=20, coef=0.5), "x" * length) == pytest.approx(
        expected
    )


def test_length_counts_words_or_trainer_tokens():
    assert _one(length_penalty(1, 3, unit="words"), "one two three four") == 0.0
    assert _one(length_penalty(1, 3, unit="tokens"), "x", completion_tokens=2) == 0.5
    with pytest.raises(ValueError, match="completion_tokens"):
        _one(length_penalty(1, 3, unit="tokens"), "x")


@pytest.mark.parametrize(
    ("a", "length", "expected"),
    [
        (1.0, 0, 1.0),  # correct and short: the most
        (1.0, 50, 0.75),  # 0.5 + 0.5 * (1 + cos(pi/2)) / 2
        (1.0, 100, 0.5),
        (1.0, 101, -1.0),  # over the limit
        (0.0, 0, -1.0),  # wrong and short: the worst
        (0.0, 50, -0.75),
        (0.0, 100, -0.5),  # wrong but thought long: less bad
        (None, 10, None),
    ],
)
def test_cosine_length_scaling(a, length, expected):
    got = _one(cosine_length(100), "x" * length, a=a)
    assert got == (pytest.approx(expected) if expected is not None else None)


@pytest.mark.parametrize(
    ("tokens", "expected"),
    [(0, 1.0), (10, 1.0), (15, 0.5), (20, 0.0), (21, 0.0), (10_000, 0.0)],
)
def test_dapo_overlong_penalty(tokens, expected):
    # L_max 20, L_cache 10: free to 10, then (10 - L) / 10, then -1.
    got = _one(overlong_penalty(max_length=20, buffer=10), "x", completion_tokens=tokens)
    assert got == pytest.approx(expected)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a b c a b c", 0.75),  # n-grams abc bca cab abc: 1 - 3/4 repeated
        ("a b c d e f", 1.0),
        ("a b", 1.0),  # no 3-grams at all: nothing to penalise
        ("", 1.0),
        ("x " * 400, 0.0 + 1 / 398),  # 398 identical 3-grams: 1 - 1/398 repeated
    ],
)
def test_repetition_penalty(text, expected):
    assert _one(repetition_penalty(3, coef=1.0), text) == pytest.approx(expected)


def test_repetition_penalty_bounds_work_on_a_huge_completion():
    got = _one(repetition_penalty(3), "spam " * 2_000_000)  # 10 MB of hostile text
    assert got == pytest.approx(0.0, abs=1e-3)


def _trajectory(potentials, sid="t", initial=0.0):
    steps = [Step(action=f"a{i}", meta={"potential": p}) for i, p in enumerate(potentials)]
    return Sample(id=sid, completion=steps, meta={"a": 1.0, "initial_potential": initial})


def test_potential_shaping_hand_computed():
    # phi = [0.1, 0.2, 0.5, 0 (terminal)], gamma 0.9: F = [0.08, 0.25, -0.5];
    # sum gamma^t F_t = 0.08 + 0.225 - 0.405 = -0.1 = gamma^T * 0 - phi(s_0).
    assert shaping_terms([0.1, 0.2, 0.5, 0.0], 0.9) == pytest.approx([0.08, 0.25, -0.5])
    with Executor("inline") as ex:
        (r,) = Grader(chain(A, potential_shaping(0.9))).score(
            [_trajectory([0.2, 0.5, 0.9], initial=0.1)], ex
        )
    assert r.value == pytest.approx(1.0 - 0.1)
    assert r.components["potential_shaping"].raw == pytest.approx(-0.1)


def test_shaped_return_depends_only_on_the_start_not_the_path():
    # With gamma = 1 and a zero terminal potential the shaping telescopes to -phi(s_0):
    # two paths with the same outcome get the same reward, whatever their potentials.
    grader = Grader(chain(A, potential_shaping(1.0)))
    with Executor("inline") as ex:
        rewards = grader.score(
            [_trajectory([5.0, -3.0], "p"), _trajectory([0.1, 0.2, 0.3], "q")], ex
        )
    assert [r.value for r in rewards] == [1.0, 1.0]


def _q_values(P, R, gamma, iters=2000):
    """Optimal Q by value iteration. P: (S, A, S) transition probabilities, R: (S, A, S)."""
    q = np.zeros(P.shape[:2])
    for _ in range(iters):
        v = q.max(axis=1)
        q = (P * (R + gamma * v[None, None, :])).sum(axis=2)
    return q


@pytest.mark.parametrize("seed", range(5))
def test_potential_shaping_leaves_optimal_policy_unchanged(seed):
    """Ng et al. 1999, theorem 1, on a random 6-state, 3-action MDP: with
    R'(s, a, s') = R + gamma * phi(s') - phi(s), Q'* = Q* - phi(s), so argmax_a is unchanged."""
    rng = np.random.default_rng(seed)
    S, A_, gamma = 6, 3, 0.9
    P = rng.random((S, A_, S))
    P /= P.sum(axis=2, keepdims=True)
    R = rng.normal(size=(S, A_, S))
    phi = rng.normal(scale=5.0, size=S)
    F = np.array(
        [
            [[shaping_terms([phi[s], phi[t]], gamma)[0] for t in range(S)] for _ in range(A_)]
            for s in range(S)
        ]
    )
    q, q_shaped = _q_values(P, R, gamma), _q_values(P, R + F, gamma)
    assert np.allclose(q_shaped, q - phi[:, None], atol=1e-6)
    assert (q.argmax(axis=1) == q_shaped.argmax(axis=1)).all()


def test_a_bonus_that_is_not_potential_based_can_change_the_policy():
    # The control for the test above: shaping that is not of the form gamma*phi(s') - phi(s)
    # (a bonus for one action) does change the optimal policy, so the property is not vacuous.
    rng = np.random.default_rng(0)
    P = rng.random((6, 3, 6))
    P /= P.sum(axis=2, keepdims=True)
    R = rng.normal(size=(6, 3, 6))
    q = _q_values(P, R, 0.9)
    bonus = np.zeros_like(R)
    worst = q.argmin(axis=1)
    for s in range(6):
        bonus[s, worst[s], :] = 10.0
    assert (q.argmax(axis=1) != _q_values(P, R + bonus, 0.9).argmax(axis=1)).any()


def test_shaping_rejects_a_discount_outside_0_1():
    with pytest.raises(ValueError, match="gamma"):
        potential_shaping(1.5)


def test_penalties_keep_not_applicable_as_none():
    rewards = grade(
        chain(A, length_penalty(1, 2), repetition_penalty()), [{"a": None, "completion": "x" * 9}]
    )
    assert rewards[0].value is None
