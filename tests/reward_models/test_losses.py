"""The loss functions against hand-computed values."""

from __future__ import annotations

import math

import pytest
import torch

from rewardsmith.reward_models.losses import bradley_terry_loss, pointwise_loss, step_loss

T = torch.tensor


@pytest.mark.parametrize(
    ("chosen", "rejected", "margin", "expected"),
    [
        ([0.0], [0.0], None, math.log(2)),
        ([2.0], [0.0], None, math.log1p(math.exp(-2))),
        ([0.0], [2.0], None, math.log1p(math.exp(2))),
        ([2.0], [0.0], [2.0], math.log(2)),  # the margin eats the whole gap
        ([1.0, 3.0], [0.0, 0.0], None, (math.log1p(math.exp(-1)) + math.log1p(math.exp(-3))) / 2),
    ],
)
def test_bradley_terry(chosen, rejected, margin, expected) -> None:  # type: ignore[no-untyped-def]
    m = T(margin) if margin is not None else None
    assert bradley_terry_loss(T(chosen), T(rejected), m).item() == pytest.approx(expected, 1e-6)


def test_bradley_terry_falls_as_the_gap_grows() -> None:
    losses = [bradley_terry_loss(T([g]), T([0.0])).item() for g in (-2, 0, 2, 8)]
    assert losses == sorted(losses, reverse=True)


def test_pointwise_is_bce_on_the_logit() -> None:
    assert pointwise_loss(T([0.0]), T([1.0])).item() == pytest.approx(math.log(2))
    assert pointwise_loss(T([10.0]), T([1.0])).item() < 1e-4


def test_step_loss_aligns_surviving_steps_with_the_last_labels() -> None:
    # Truncation removed the first step: one value for two labels; it must meet label 2.
    values = [T([10.0]), T([-10.0, -10.0])]
    labels = [T([0.0, 1.0]), T([0.0, 0.0])]
    assert step_loss(values, labels).item() < 1e-3


def test_step_loss_with_no_surviving_steps_says_so() -> None:
    with pytest.raises(ValueError, match="max_length"):
        step_loss([T([])], [T([1.0])])
