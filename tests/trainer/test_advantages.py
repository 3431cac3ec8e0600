"""Critic-free estimators and KL controllers against hand-computed values."""

from __future__ import annotations

import math

import pytest
import torch

from rewardsmith.trainer import advantages as adv

T = torch.tensor


def close(a: torch.Tensor, b: list, tol: float = 1e-4) -> None:
    assert torch.allclose(a, T(b, dtype=a.dtype), atol=tol), (a, b)


def test_grpo_normalises_each_group() -> None:
    scores = T([1.0, 0.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0])
    # group 1: mean 0.25, unbiased std 0.5; group 2: mean 0.5, std sqrt(1/3)
    s3 = 0.5 / math.sqrt(1 / 3)
    close(adv.grpo_advantages(scores, 4, eps=0.0), [1.5, -0.5, -0.5, -0.5, s3, s3, -s3, -s3])
    close(
        adv.grpo_advantages(scores, 4, scale_by_std=False),
        [0.75, -0.25, -0.25, -0.25, 0.5, 0.5, -0.5, -0.5],
    )


def test_grpo_uniform_group_gives_zero_not_nan() -> None:
    close(adv.grpo_advantages(T([1.0, 1.0, 1.0]), 3), [0.0, 0.0, 0.0])


def test_rloo_is_leave_one_out() -> None:
    # i=0: 1 - mean(0, 0, 0) = 1; others: 0 - mean(1, 0, 0) = -1/3
    close(adv.rloo_advantages(T([1.0, 0.0, 0.0, 0.0]), 4), [1.0, -1 / 3, -1 / 3, -1 / 3])
    with pytest.raises(ValueError, match="group_size >= 2"):
        adv.rloo_advantages(T([1.0]), 1)


def test_batch_must_be_whole_groups() -> None:
    with pytest.raises(ValueError, match="groups of 4"):
        adv.grpo_advantages(T([1.0, 0.0, 1.0]), 4)


def test_discounted_returns_and_reinforce_pp() -> None:
    rewards, mask = T([[0.0, 0.0, 1.0], [0.0, 2.0, 0.0]]), T([[1.0, 1.0, 1.0], [1.0, 1.0, 0.0]])
    returns = adv.discounted_returns(rewards, mask, 0.5)
    close(returns, [[0.25, 0.5, 1.0], [1.0, 2.0, 0.0]])
    got = adv.reinforce_pp_advantages(rewards, mask, 0.5)
    real = returns[mask.bool()]  # whitened over the 5 real tokens
    expected = ((returns - real.mean()) / real.std()) * mask
    close(got, expected.tolist())


NAN = math.nan


def test_grpo_baseline_uses_only_the_valid_members() -> None:
    # [1, None, 0, 0]: the group is [1, 0, 0] (mean 1/3, unbiased std sqrt(1/3)); the None
    # member gets 0. Filling it with the group mean first would give std 0.4714, not 0.5774.
    got = adv.grpo_advantages(T([1.0, NAN, 0.0, 0.0]), 4, eps=0.0)
    s = math.sqrt(1 / 3)
    close(got, [(2 / 3) / s, 0.0, -(1 / 3) / s, -(1 / 3) / s])
    close(
        adv.grpo_advantages(T([1.0, NAN, 0.0, 0.0]), 4, scale_by_std=False),
        [2 / 3, 0, -1 / 3, -1 / 3],
    )


def test_rloo_baseline_uses_only_the_valid_others() -> None:
    # valid [1, 0, 0]: 1 - mean(0, 0) = 1; 0 - mean(1, 0) = -0.5
    close(adv.rloo_advantages(T([1.0, NAN, 0.0, 0.0]), 4), [1.0, 0.0, -0.5, -0.5])


@pytest.mark.parametrize(
    "scores",
    [[NAN, NAN, NAN, NAN], [NAN, 1.0, NAN, NAN], [NAN, NAN, 0.0, 1.0]],
    ids=["none", "one", "two"],
)
def test_groups_with_few_valid_members_give_no_nan(scores: list[float]) -> None:
    for got in (adv.grpo_advantages(T(scores), 4), adv.rloo_advantages(T(scores), 4)):
        assert torch.isfinite(got).all()
        assert all(float(g) == 0.0 for g, sc in zip(got, scores, strict=True) if math.isnan(sc))
    if sum(not math.isnan(x) for x in scores) < 2:  # nothing to compare against
        assert adv.rloo_advantages(T(scores), 4).abs().sum() == 0


def test_discounted_returns_skip_observation_tokens() -> None:
    rewards, mask = T([[0.0, 5.0, 1.0]]), T([[1.0, 0.0, 1.0]])
    close(adv.discounted_returns(rewards, mask, 0.5), [[0.5, 0.0, 1.0]])


@pytest.mark.parametrize(("kl", "expected"), [(12.0, 0.102), (6.0, 0.1), (3.0, 0.098)])
def test_adaptive_kl_controller(kl: float, expected: float) -> None:
    # error = clip(kl / 6 - 1, -0.2, 0.2); beta *= 1 + error * 1000 / 10000
    ctl = adv.AdaptiveKLController(0.1, target=6.0, horizon=10_000)
    ctl.update(kl, n_steps=1000)
    assert ctl.value == pytest.approx(expected)


def test_fixed_kl_controller_stays() -> None:
    ctl = adv.FixedKLController(0.05)
    ctl.update(100.0, 1000)
    assert ctl.value == 0.05


def _turns(rows: list[list[int]], values: list[list[float]]) -> adv.TurnReturns:
    return adv.TurnReturns(T(rows), T(values))


def test_per_turn_grpo_credits_a_first_answer_by_its_own_turns_return() -> None:
    # A group of three two-token turns: right first (G_0 = 1), wrong then right with a
    # turn discount of 0.5 (G_0 = 0.5, G_1 = 1), wrong twice (G_0 = 0, G_1 = 0). -1: an
    # observation token or padding.
    nan = math.nan
    returns = _turns(
        [[0, 0, -1, -1, -1], [0, 0, -1, 1, 1], [0, 0, -1, 1, 1]],
        [[1.0, 1.0, nan, nan, nan], [0.5, 0.5, nan, 1.0, 1.0], [0.0, 0.0, nan, 0.0, 0.0]],
    )
    a = adv.per_turn_grpo_advantages(returns, 3, scale_by_std=False)
    # turn 0 against the whole group (mean 0.5); turn 1 against the two that retried (0.5)
    close(a, [[0.5, 0.5, 0, 0, 0], [0.0, 0.0, 0, 0.5, 0.5], [-0.5, -0.5, 0, -0.5, -0.5]])


def test_per_turn_grpo_of_one_turn_episodes_is_grpo() -> None:
    scores = T([1.0, 0.2, 0.0, 0.0, 1.0, 1.0, 0.0, 0.8])
    turn = T([[0, 0, -1]] * 8)
    value = torch.where(turn >= 0, scores.unsqueeze(-1), math.nan)
    a = adv.per_turn_grpo_advantages(adv.TurnReturns(turn, value), 4)
    expected = adv.grpo_advantages(scores, 4).unsqueeze(-1) * (turn >= 0)
    assert torch.allclose(a, expected)


def test_per_turn_grpo_leaves_a_row_without_reward_out() -> None:
    nan = math.nan
    returns = _turns([[0, -1], [0, -1], [0, -1]], [[1.0, nan], [nan, nan], [0.0, nan]])
    close(
        adv.per_turn_grpo_advantages(returns, 3, scale_by_std=False), [[0.5, 0], [0, 0], [-0.5, 0]]
    )
