"""Ensembles: members normalised by the statistics their checkpoints recorded, mean / min /
mean − λ·std, the disagreement as a value a spec can gate on, and what breaks them."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest
import torch

from rewardsmith.reward_models import RewardModel, TrainConfig, preference_pairs, train
from rewardsmith.reward_models.ensemble import EnsembleVerifier, combine, reduce_scores
from rewardsmith.verifiers.types import Failure, Sample, Status

from .conftest import toy_pairs


@pytest.mark.parametrize(
    ("members", "mean", "low", "std"),
    [
        ([[1.0], [3.0]], 2.0, 1.0, 1.0),
        ([[2.0], [2.0], [2.0]], 2.0, 2.0, 0.0),
        ([[-1.0], [0.0], [4.0]], 1.0, -1.0, (14 / 3) ** 0.5),
    ],
)
def test_combine_and_reduce(members: list, mean: float, low: float, std: float) -> None:
    scores = torch.tensor(members)
    out = combine(scores)
    assert (out["mean"].item(), out["min"].item()) == pytest.approx((mean, low))
    assert out["std"].item() == pytest.approx(std)
    assert reduce_scores(scores, "mean_minus_std", 0.5).item() == pytest.approx(mean - 0.5 * std)
    assert reduce_scores(scores, "min").item() == pytest.approx(low)


@pytest.fixture(scope="module")
def members(tiny_gpt2: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    """Two tiny models trained apart (different seeds), each checkpoint with its statistics."""
    torch.set_num_threads(1)  # module fixtures run before the one-thread autouse fixture
    paths = []
    for seed in (1, 2):
        torch.manual_seed(seed)
        rm = RewardModel.load(tiny_gpt2, seed=seed)
        out = tmp_path_factory.mktemp(f"member{seed}")
        config = TrainConfig(max_steps=16, learning_rate=3e-3, batch_size=8, seed=seed)
        result = train(rm, preference_pairs(toy_pairs(64, seed=seed)).rows, config, out)
        assert result.checkpoint is not None
        paths.append(str(result.checkpoint))
    return paths[0], paths[1]


def test_checkpoints_record_the_statistics_members_are_normalised_with(
    members: tuple[str, str],
) -> None:
    sample = Sample(id="1", prompt="what is it ?", completion="so the answer is right")
    verdict = EnsembleVerifier(members, reduce="mean_minus_std", std_coef=0.5)(sample)
    loaded = [RewardModel.load(p) for p in members]
    assert all(m.spec.score_count == 2 * 64 and m.spec.score_std > 0 for m in loaded)
    z = [m.normalize(r) for m, r in zip(loaded, verdict.evidence["member_scores"], strict=True)]
    assert verdict.evidence["member_normalized"] == pytest.approx(z)
    mean, std = sum(z) / 2, abs(z[0] - z[1]) / 2
    assert verdict.evidence["disagreement"] == pytest.approx(std)
    assert verdict.evidence["raw_score"] == pytest.approx(mean - 0.5 * std)
    raw = EnsembleVerifier(members, reduce="min", normalize=False)(sample)
    assert raw.evidence["raw_score"] == pytest.approx(min(raw.evidence["member_scores"]))


def test_normalised_members_share_a_scale(members: tuple[str, str]) -> None:
    """On the training data each member's normalised scores have mean 0 and spread 1,
    whatever offset and spread its raw scores took."""
    texts = toy_pairs(64, seed=1)
    samples = [
        Sample(id=f"{i}{side}", prompt=r["prompt"], completion=r[side])
        for i, r in enumerate(texts)
        for side in ("chosen", "rejected")
    ]
    verdicts = EnsembleVerifier(members).batch(samples)
    z = torch.tensor([v.evidence["member_normalized"] for v in verdicts])
    assert z[:, 0].mean().item() == pytest.approx(0.0, abs=1e-4)
    assert z[:, 0].std(unbiased=False).item() == pytest.approx(1.0, abs=1e-3)


def test_members_without_statistics_or_collapsed_are_infrastructure_errors(
    members: tuple[str, str], tiny_gpt2: Path, tmp_path: Path
) -> None:
    RewardModel.load(tiny_gpt2, seed=7).save(tmp_path / "fresh")
    sample = Sample(id="1", completion="right")
    verdict = EnsembleVerifier((members[0], str(tmp_path / "fresh")))(sample)
    assert verdict.is_infra_failure and verdict.score is None
    assert "rm stats" in verdict.feedback and "normalize: false" in verdict.feedback
    flat = RewardModel.load(members[1])
    flat.spec = flat.spec.__class__(**{**flat.spec.__dict__, "score_std": 0.0})
    flat.save(tmp_path / "flat")
    collapsed = EnsembleVerifier((members[0], str(tmp_path / "flat")))(sample)
    assert collapsed.is_infra_failure and "collapsed" in collapsed.feedback
    fine = EnsembleVerifier((members[0], str(tmp_path / "fresh")), normalize=False)(sample)
    assert fine.score is not None


def test_ensemble_hostile_and_broken_input(members: tuple[str, str], tmp_path: Path) -> None:
    ok = EnsembleVerifier(members, max_chars=100)
    verdicts = ok.batch([Sample(id="1", completion="x" * 1000), Sample(id="2", completion="")])
    assert verdicts[0].failure is Failure.INPUT_TOO_LARGE and verdicts[1].score is not None
    broken = EnsembleVerifier((members[0], str(tmp_path / "gone")))
    verdict = broken(Sample(id="1", completion="right"))
    assert verdict.status is Status.ERROR and verdict.is_infra_failure and verdict.score is None


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"model_paths": ("a",)}, "at least two"),
        ({"model_paths": ("a", "b"), "reduce": "median"}, "reduce"),
        ({"model_paths": ("a", "b"), "std_coef": -1.0}, "std_coef"),
    ],
)
def test_bad_settings(settings: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        EnsembleVerifier(**settings)


def test_ensemble_pickles(members: tuple[str, str]) -> None:
    ensemble = EnsembleVerifier(members, reduce="mean_minus_std")
    assert pickle.loads(pickle.dumps(ensemble)) == ensemble


def test_a_spec_gates_on_the_disagreement(members: tuple[str, str]) -> None:
    """The uncertainty as a component: read with the evidence block, thresholded, and
    combined with min, so samples the members disagree on get nothing."""
    from rewardsmith.graders import Scorer

    samples = [
        Sample(id=str(i), prompt=r["prompt"], completion=r["chosen"])
        for i, r in enumerate(toy_pairs(12, seed=5))
    ]
    with Scorer(_spec(members, 1e9), backend="inline") as loose:
        open_rewards = loose.score(samples)
    assert all(r.value == pytest.approx(r.verdicts["rm"].score) for r in open_rewards)
    spread = sorted(r.verdicts["rm"].evidence["disagreement"] for r in open_rewards)
    cut = spread[len(spread) // 2]
    with Scorer(_spec(members, cut), backend="inline") as scorer:
        rewards = scorer.score(samples)
    for r in rewards:
        disagreement = r.verdicts["rm"].evidence["disagreement"]
        assert r.components["agreed"].raw == (0.0 if disagreement >= cut else 1.0)
        assert r.value == (0.0 if disagreement >= cut else pytest.approx(r.verdicts["rm"].score))
        logged = r.components["agreed.evidence.rm.disagreement"].raw
        assert logged == pytest.approx(disagreement)


def _spec(members: tuple[str, str], cut: float) -> object:
    from rewardsmith.graders import load_spec

    return load_spec(
        f"""
grader:
  min:
    rm: {{verify: reward_model_ensemble, model_paths: [{members[0]}, {members[1]}],
          reduce: mean_minus_std}}
    agreed:
      chain:
        - evidence: {{on: rm, name: disagreement}}
        - threshold: {{at: {cut}, above: 0.0, below: 1.0}}
"""
    )
