"""The PPO math against values worked out by hand (the arithmetic is in the comments)."""

from __future__ import annotations

import math

import pytest
import torch

from rewardsmith.trainer import losses

T = torch.tensor


def close(a: torch.Tensor, b: list, tol: float = 1e-5) -> None:
    assert torch.allclose(a, T(b, dtype=a.dtype), atol=tol), (a, b)


@pytest.mark.parametrize(
    ("estimator", "expected"),
    [
        ("k1", [[0.5, 1.0]]),  # log pi - log pi_ref
        # r = ref - logp = (-0.5, -1): e^r - r - 1
        ("k3", [[math.exp(-0.5) - 0.5, math.exp(-1.0)]]),
    ],
)
def test_kl_estimators(estimator: str, expected: list) -> None:
    logp, ref = T([[-1.0, -2.0]]), T([[-1.5, -3.0]])
    close(losses.kl_penalty(logp, ref, estimator), expected)  # type: ignore[arg-type]


def test_k3_is_never_negative_and_zero_on_equal_policies() -> None:
    logp = torch.randn(4, 7, generator=torch.Generator().manual_seed(0))
    ref = torch.randn(4, 7, generator=torch.Generator().manual_seed(1))
    assert (losses.kl_penalty(logp, ref, "k3") >= 0).all()
    close(losses.kl_penalty(logp, logp, "k3"), torch.zeros(4, 7).tolist())


def test_unknown_estimator_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="k1"):
        losses.kl_penalty(T([[0.0]]), T([[0.0]]), "k2")  # type: ignore[arg-type]


def test_token_rewards_put_the_score_on_the_last_real_token() -> None:
    scores = T([1.0, 2.0, 5.0])
    kl = T([[0.1, 0.2, 0.3], [0.5, 0.5, 0.5], [0.1, 0.1, 0.1]])
    mask = T([[1.0, 1.0, 0.0], [1.0, 1.0, 1.0], [0.0, 0.0, 0.0]])
    got = losses.token_rewards(scores, kl, 0.5, mask)
    # row 0: -0.5*0.1, -0.5*0.2 + 1; row 1: -0.25 each, +2 at the end; row 2: nothing to credit
    close(got, [[-0.05, 0.9, 0.0], [-0.25, -0.25, 1.75], [0.0, 0.0, 0.0]])


def test_gae_full_mask() -> None:
    rewards, values, mask = T([[1.0, 0.0, 2.0]]), T([[0.5, 1.0, 1.5]]), torch.ones(1, 3)
    advantages, returns = losses.gae(rewards, values, mask, gamma=0.9, lam=0.8)
    # t=2: d=2-1.5=0.5; t=1: d=0.9*1.5-1=0.35, A=0.35+0.72*0.5=0.71;
    # t=0: d=1+0.9*1-0.5=1.4, A=1.4+0.72*0.71=1.9112
    close(advantages, [[1.9112, 0.71, 0.5]])
    close(returns, [[2.4112, 1.71, 2.0]])


def test_gae_ignores_padding() -> None:
    rewards, values = T([[1.0, 0.0, 2.0]]), T([[0.5, 1.0, 1.5]])
    mask = T([[1.0, 1.0, 0.0]])
    advantages, returns = losses.gae(rewards, values, mask, gamma=0.9, lam=0.8)
    # the padded value and reward vanish: t=1: d=0-1=-1; t=0: d=1.4, A=1.4+0.72*(-1)=0.68
    close(advantages, [[0.68, -1.0, 0.0]])
    close(returns, [[1.18, 0.0, 0.0]])


def test_gae_with_lambda_one_is_return_minus_value() -> None:
    rewards, values, mask = T([[0.0, 0.0, 1.0]]), T([[0.2, 0.4, 0.6]]), torch.ones(1, 3)
    advantages, _ = losses.gae(rewards, values, mask, gamma=1.0, lam=1.0)
    close(advantages, [[0.8, 0.6, 0.4]])


def test_clipped_policy_loss_cases() -> None:
    ratios = T([[1.5, 0.5, 1.1, 0.7]])
    advantages = T([[1.0, 1.0, -1.0, -1.0]])
    ones = torch.ones(1, 4)
    loss, clipped = losses.clipped_policy_loss(
        ratios.log(), torch.zeros(1, 4), advantages, ones, 0.2
    )
    # A>0, r=1.5: max(-1.5, -1.2) = -1.2 (clipped); A>0, r=0.5: max(-0.5, -0.8) = -0.5;
    # A<0, r=1.1: 1.1 inside the clip; A<0, r=0.7: max(0.7, 0.8) = 0.8 (clipped)
    close(loss, [[-1.2, -0.5, 1.1, 0.8]])
    close(clipped, [[1.0, 0.0, 0.0, 1.0]])


def test_clipped_policy_loss_gradient_vanishes_when_clipped() -> None:
    logp = T([[math.log(1.5)]], requires_grad=True)
    loss, _ = losses.clipped_policy_loss(logp, T([[0.0]]), T([[1.0]]), T([[1.0]]), 0.2)
    loss.sum().backward()
    assert logp.grad is not None and float(logp.grad) == 0.0


def test_clipped_value_loss_cases() -> None:
    ones = T([1.0, 1.0])
    loss, clipped = losses.clipped_value_loss(
        T([1.0, 0.0]), T([0.5, 0.5]), T([0.0, 1.0]), ones, 0.2
    )
    close(loss, [0.5, 0.5])  # unclipped errors (1) beat clipped ones (0.49)
    close(clipped, [0.0, 0.0])
    loss, clipped = losses.clipped_value_loss(T([0.6]), T([0.5]), T([2.0]), T([1.0]), 0.05)
    close(loss, [0.5 * 1.45**2])  # V_clip = 0.55, (0.55 - 2)^2 > (0.6 - 2)^2
    close(clipped, [1.0])


def test_masked_whiten_uses_only_real_tokens() -> None:
    x, mask = T([[1.0, 2.0, 3.0, 100.0]]), T([[1.0, 1.0, 1.0, 0.0]])
    close(losses.masked_whiten(x, mask), [[-1.0, 0.0, 1.0, 0.0]])  # mean 2, var 1
    close(losses.masked_whiten(x, mask, shift_mean=False), [[1.0, 2.0, 3.0, 0.0]])


def test_masked_mean_and_sum() -> None:
    x, mask = T([[1.0, 2.0], [3.0, 4.0]]), T([[1.0, 0.0], [1.0, 1.0]])
    assert float(losses.masked_sum(x, mask)) == 8.0
    assert float(losses.masked_mean(x, mask)) == pytest.approx(8.0 / 3.0)
    assert float(losses.masked_mean(x, torch.zeros(2, 2))) == 0.0  # empty mask: 0, not NaN


def test_entropy_and_logprobs_from_logits() -> None:
    close(losses.entropy_from_logits(torch.zeros(1, 1, 4)), [[math.log(4.0)]])
    logits = T([[[0.0, math.log(3.0)]]])  # p = (0.25, 0.75)
    close(losses.logprobs_from_logits(logits, T([[1]])), [[math.log(0.75)]])
    close(losses.entropy_from_logits(logits), [[-(0.25 * math.log(0.25) + 0.75 * math.log(0.75))]])


def test_gae_runs_across_observation_tokens() -> None:
    # Policy tokens at 0 and 2, an observation at 1: the recursion skips it, as if the
    # sequence were [r0, r2] with values [v0, v2].
    rewards, values = T([[1.0, 9.0, 2.0]]), T([[0.5, 9.0, 1.5]])
    mask = T([[1.0, 0.0, 1.0]])
    advantages, returns = losses.gae(rewards, values, mask, gamma=0.9, lam=0.8)
    compact, compact_returns = losses.gae(
        T([[1.0, 2.0]]), T([[0.5, 1.5]]), torch.ones(1, 2), 0.9, 0.8
    )
    close(advantages[:, [0, 2]], compact.tolist())
    close(returns[:, [0, 2]], compact_returns.tolist())
    assert float(advantages[0, 1]) == 0.0 and float(returns[0, 1]) == 0.0


def test_token_rewards_credit_the_last_policy_token_before_an_observation() -> None:
    # Row 0: policy, policy, observation (the episode ended on an observation); row 1:
    # observation then policy token.
    mask = T([[1.0, 1.0, 0.0], [0.0, 1.0, 0.0]])
    got = losses.token_rewards(T([1.0, 2.0]), torch.zeros(2, 3), 0.5, mask)
    close(got, [[0.0, 1.0, 0.0], [0.0, 2.0, 0.0]])


HOSTILE = [math.nan, math.inf, -math.inf, 1e30, -1e30]


@pytest.mark.parametrize("junk", HOSTILE)
def test_masked_tokens_carry_no_loss_and_no_gradient(junk: float) -> None:
    """Observation tokens (mask 0) may hold anything: the loss and its gradient ignore them."""
    mask = T([[1.0, 0.0, 1.0]])
    logp = T([[-1.0, junk, -2.0]], requires_grad=True)
    old, ref, adv = T([[-1.1, junk, -1.9]]), T([[-1.3, junk, -2.2]]), T([[0.5, junk, -0.5]])
    policy, _ = losses.clipped_policy_loss(logp, old, adv, mask, 0.2)
    kl = losses.kl_loss(logp, old, ref, mask)
    values = T([[0.1, junk, 0.3]], requires_grad=True)
    vloss, _ = losses.clipped_value_loss(
        values, T([[0.0, junk, 0.2]]), T([[1.0, junk, 0.0]]), mask, 0.2
    )
    total = losses.masked_sum(policy + kl + vloss, mask)
    total.backward()
    assert math.isfinite(float(total.detach()))
    assert logp.grad is not None and values.grad is not None
    assert float(logp.grad[0, 1]) == 0.0 and float(values.grad[0, 1]) == 0.0
    assert torch.isfinite(logp.grad).all()


def test_loss_is_unchanged_when_observation_tokens_change() -> None:
    gen = torch.Generator().manual_seed(0)
    logp, old, ref, adv = (torch.randn(3, 6, generator=gen) for _ in range(4))
    mask = (torch.rand(3, 6, generator=gen) > 0.4).float()
    noise = torch.randn(3, 6, generator=gen) * (1 - mask) * 50  # only observation tokens move

    def loss(lp: torch.Tensor) -> torch.Tensor:
        p, _ = losses.clipped_policy_loss(lp, old + noise, adv + noise, mask, 0.2)
        return losses.masked_sum(p + losses.kl_loss(lp, old + noise, ref + noise, mask), mask)

    assert float(loss(logp)) == pytest.approx(float(loss(logp + noise)), abs=1e-6)


# ----------------------------------------------------------------------------- per-turn credit


def test_turn_rewards_land_on_the_last_token_of_each_turn() -> None:
    rewards = torch.tensor([[0.2, 1.0], [math.nan, 0.5], [0.3, math.nan]])
    ends = torch.tensor([[1, 5], [2, -1], [-1, 4]])
    placed = losses.place_turn_rewards(rewards, ends, 7)
    expected = torch.zeros(3, 7)
    expected[0, 1], expected[0, 5] = 0.2, 1.0
    assert torch.equal(placed, expected)  # a NaN reward or a -1 end places nothing


def test_placed_rewards_add_to_the_final_score_and_kl_on_policy_tokens_only() -> None:
    mask = torch.tensor([[1.0, 1.0, 0.0, 0.0, 1.0, 1.0, 0.0]])  # turn, observation, turn, pad
    kl = torch.full((1, 7), 0.5)
    placed = losses.place_turn_rewards(torch.tensor([[0.2]]), torch.tensor([[1]]), 7)
    final_only = losses.token_rewards(torch.tensor([1.0]), kl, 0.1, mask)
    per_turn = losses.token_rewards(torch.tensor([1.0]), kl, 0.1, mask, placed=placed)
    assert per_turn[0, 1] == pytest.approx(final_only[0, 1] + 0.2)
    assert torch.equal(per_turn[0, 2:], final_only[0, 2:])
    assert per_turn[0, 5] == pytest.approx(1.0 - 0.05)
    # a reward placed on a masked token never enters
    stray = losses.place_turn_rewards(torch.tensor([[9.0]]), torch.tensor([[3]]), 7)
    assert torch.equal(losses.token_rewards(torch.tensor([1.0]), kl, 0.1, mask, stray), final_only)


def test_a_later_turn_is_not_credited_with_an_earlier_turns_reward() -> None:
    """REINFORCE++ return-to-go (gamma 1): with per-turn credit the second turn's tokens see
    only the final reward; final-only credit gives every token the same return."""
    from rewardsmith.trainer.advantages import discounted_returns

    mask = torch.tensor([[1.0, 1.0, 0.0, 1.0, 1.0]])
    kl = torch.zeros(1, 5)
    placed = losses.place_turn_rewards(torch.tensor([[0.6]]), torch.tensor([[1]]), 5)
    per_turn = discounted_returns(
        losses.token_rewards(torch.tensor([1.0]), kl, 0, mask, placed), mask, 1.0
    )
    final = discounted_returns(losses.token_rewards(torch.tensor([1.6]), kl, 0, mask), mask, 1.0)
    assert per_turn[0, 0] == pytest.approx(1.6) and per_turn[0, 3] == pytest.approx(1.0)
    assert final[0, 0] == pytest.approx(1.6) and final[0, 3] == pytest.approx(1.6)
