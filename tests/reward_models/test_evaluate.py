"""Evaluation metrics against hand-computed cases."""

from __future__ import annotations

import math

import pytest
import torch

from rewardsmith.reward_models.evaluate import (
    distribution,
    expected_calibration_error,
    pairwise_accuracy,
    report_from_scores,
)

T = torch.tensor


@pytest.mark.parametrize(
    ("chosen", "rejected", "expected"),
    [
        ([1.0, 2.0, 3.0], [0.0, 0.0, 0.0], 1.0),
        ([0.0, 0.0], [1.0, 2.0], 0.0),
        ([1.0, 1.0], [1.0, 1.0], 0.5),  # a constant model is at chance, not 0 or 1
        ([1.0, 0.0, 5.0, 5.0], [0.0, 1.0, 5.0, 4.0], 0.625),
    ],
)
def test_pairwise_accuracy(chosen: list, rejected: list, expected: float) -> None:
    assert pairwise_accuracy(T(chosen), T(rejected)) == pytest.approx(expected)


def test_ece_is_zero_when_confidence_matches_accuracy() -> None:
    # 4 pairs at p=0.75: 3 right (p=0.75) and 1 wrong (p=0.25) -> accuracy 0.75, confidence 0.75
    ece, bins = expected_calibration_error(T([0.75, 0.75, 0.75, 0.25]))
    assert ece == pytest.approx(0.0, abs=1e-6)
    assert bins[0]["count"] == 4


def test_ece_of_an_overconfident_model() -> None:
    # Always 99% sure, right half the time: ECE = |0.5 - 0.99|.
    ece, _ = expected_calibration_error(T([0.99, 0.01, 0.99, 0.01]))
    assert ece == pytest.approx(0.49, abs=1e-6)


def test_report_has_subsets_brier_and_distributions() -> None:
    report = report_from_scores([2.0, 0.0, 1.0], [0.0, 1.0, 1.0], ["a", "a", "b"], truncated=2)
    assert report.by_subset == {"a": 0.5, "b": 0.5}
    assert report.subset_sizes == {"a": 2, "b": 1}
    p = [1 / (1 + math.exp(-d)) for d in (2.0, -1.0, 0.0)]
    assert report.brier == pytest.approx(sum((1 - x) ** 2 for x in p) / 3)
    assert report.margin["median"] == pytest.approx(0.0)
    assert report.truncated == 2
    assert set(report.to_dict()) >= {"accuracy", "ece", "chosen", "calibration_bins"}


def test_distribution_quartiles() -> None:
    d = distribution(T([1.0, 2.0, 3.0, 4.0, 5.0]))
    assert (d["min"], d["p25"], d["median"], d["p75"], d["max"]) == (1, 2, 3, 4, 5)
    assert distribution(T([])) == {}
