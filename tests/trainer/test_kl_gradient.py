"""The KL term's expected gradient on a 3-way categorical, computed exactly (issue 17).

pi = softmax(theta) with theta = 0 (uniform), pi_ref = [0.7, 0.2, 0.1]. The true gradient of
KL(pi || pi_ref) with respect to theta is pi_j (log(pi_j / ref_j) - KL) = [-0.355, 0.062,
0.293]. A loss term's expected gradient is sum_x pi_old(x) * grad loss(x), each term by
autograd: exact, no sampling noise.
"""

from __future__ import annotations

import pytest
import torch

from rewardsmith.trainer import losses

REF = torch.tensor([0.7, 0.2, 0.1])
TRUE_GRADIENT = [-0.355, 0.062, 0.293]  # the issue's numbers, to 3 decimals


def true_kl_gradient(theta: torch.Tensor) -> torch.Tensor:
    theta = theta.clone().requires_grad_(True)
    p = torch.softmax(theta, -1)
    (p * (p.log() - REF.log())).sum().backward()
    assert theta.grad is not None
    return theta.grad


def expected_gradient(term, theta: torch.Tensor, theta_old: torch.Tensor) -> torch.Tensor:
    """sum_x pi_old(x) grad_theta term(x): the mean gradient over tokens drawn from pi_old."""
    p_old = torch.softmax(theta_old, -1)
    total = torch.zeros(3)
    for x in range(3):
        th = theta.clone().requires_grad_(True)
        logp = torch.log_softmax(th, -1)[x].view(1, 1)
        old = torch.log_softmax(theta_old, -1)[x].view(1, 1)
        ref = REF.log()[x].view(1, 1)
        term(logp, old, ref).sum().backward()
        assert th.grad is not None
        total += p_old[x] * th.grad
    return total


def k1_in_the_loss(logp, old, ref):  # what the trainer did before: beta * k1 in the loss
    return losses.kl_penalty(logp, ref, "k1")


def k3_in_the_loss(logp, old, ref):  # DeepSeekMath's form, without the importance ratio
    return losses.kl_penalty(logp, ref, "k3")


def trainer_kl_loss(logp, old, ref):
    return losses.kl_loss(logp, old, ref, torch.ones_like(logp))


def test_the_true_gradient_is_the_issues() -> None:
    got = true_kl_gradient(torch.zeros(3))
    assert torch.allclose(got, torch.tensor(TRUE_GRADIENT), atol=5e-4), got


def test_k1_in_the_loss_has_zero_expected_gradient() -> None:
    theta = torch.zeros(3)
    assert torch.allclose(
        expected_gradient(k1_in_the_loss, theta, theta), torch.zeros(3), atol=1e-7
    )


def test_the_trainers_kl_loss_has_the_true_gradient_on_policy() -> None:
    theta = torch.zeros(3)
    got = expected_gradient(trainer_kl_loss, theta, theta)
    assert torch.allclose(got, true_kl_gradient(theta), atol=1e-6), got
    assert torch.allclose(got, torch.tensor(TRUE_GRADIENT), atol=5e-4)


def test_the_trainers_kl_loss_stays_exact_after_the_policy_moved() -> None:
    # A later minibatch: tokens were sampled by pi_old, the policy has moved since.
    theta_old, theta = torch.zeros(3), torch.tensor([0.3, -0.2, 0.5])
    got = expected_gradient(trainer_kl_loss, theta, theta_old)
    assert torch.allclose(got, true_kl_gradient(theta), atol=1e-6), got


def test_k3_without_the_ratio_follows_the_reverse_kl() -> None:
    """Why the ratio is there: plain k3's expected gradient is pi - pi_ref, the gradient of
    KL(pi_ref || pi), which is [-0.367, 0.133, 0.233] here, not the KL's [-0.355, 0.062, 0.293]."""
    theta = torch.zeros(3)
    got = expected_gradient(k3_in_the_loss, theta, theta)
    assert torch.allclose(got, torch.softmax(theta, -1) - REF, atol=1e-6)
    assert not torch.allclose(got, true_kl_gradient(theta), atol=0.05)


def test_kl_loss_value_is_a_kl_estimate_on_policy() -> None:
    # rho = 1 on-policy, so the value is k3: E_pi[k3] = KL(pi || ref).
    p = torch.full((3,), 1 / 3)
    values = [
        float(
            trainer_kl_loss(p.log()[x].view(1, 1), p.log()[x].view(1, 1), REF.log()[x].view(1, 1))
        )
        for x in range(3)
    ]
    kl = float((p * (p.log() - REF.log())).sum())
    assert sum(v / 3 for v in values) == pytest.approx(kl, abs=1e-6)
