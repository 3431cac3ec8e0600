"""Ensembles: mean, min and disagreement of member rewards."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest
import torch

from rewardsmith.reward_models.ensemble import EnsembleVerifier, combine
from rewardsmith.reward_models.model import RewardModel
from rewardsmith.verifiers.types import Failure, Sample, Status


@pytest.mark.parametrize(
    ("members", "mean", "low", "std"),
    [
        ([[1.0], [3.0]], 2.0, 1.0, 1.0),
        ([[2.0], [2.0], [2.0]], 2.0, 2.0, 0.0),
        ([[-1.0], [0.0], [4.0]], 1.0, -1.0, (14 / 3) ** 0.5),
    ],
)
def test_combine(members: list, mean: float, low: float, std: float) -> None:
    out = combine(torch.tensor(members))
    assert (out["mean"].item(), out["min"].item()) == pytest.approx((mean, low))
    assert out["std"].item() == pytest.approx(std)


@pytest.fixture(scope="module")
def two_models(
    trained_rm: Path, tiny_gpt2: Path, tmp_path_factory: pytest.TempPathFactory
) -> tuple[str, str]:
    other = tmp_path_factory.mktemp("untrained_rm")
    RewardModel.load(tiny_gpt2, seed=7).save(other)
    return str(trained_rm), str(other)


def test_ensemble_verdict_reports_members_and_disagreement(two_models: tuple[str, str]) -> None:
    sample = Sample(id="1", prompt="what is it ?", completion="the answer is right")
    mean_v = EnsembleVerifier(model_paths=two_models)(sample)
    min_v = EnsembleVerifier(model_paths=two_models, reduce="min")(sample)
    members = mean_v.evidence["member_scores"]
    assert len(members) == 2
    assert mean_v.evidence["raw_score"] == pytest.approx(sum(members) / 2)
    assert min_v.evidence["raw_score"] == pytest.approx(min(members))
    assert mean_v.evidence["disagreement"] == pytest.approx(abs(members[0] - members[1]) / 2)


def test_ensemble_hostile_and_broken_input(two_models: tuple[str, str], tmp_path: Path) -> None:
    ok = EnsembleVerifier(model_paths=two_models, max_chars=100)
    verdicts = ok.batch([Sample(id="1", completion="x" * 1000), Sample(id="2", completion="")])
    assert verdicts[0].failure is Failure.INPUT_TOO_LARGE and verdicts[1].score is not None
    broken = EnsembleVerifier(model_paths=(two_models[0], str(tmp_path / "gone")))
    verdict = broken(Sample(id="1", completion="right"))
    assert verdict.status is Status.ERROR and verdict.is_infra_failure and verdict.score is None


def test_ensemble_needs_two_members_and_pickles(two_models: tuple[str, str]) -> None:
    with pytest.raises(ValueError, match="at least two"):
        EnsembleVerifier(model_paths=(two_models[0],))
    ensemble = EnsembleVerifier(model_paths=two_models)
    assert pickle.loads(pickle.dumps(ensemble)) == ensemble
