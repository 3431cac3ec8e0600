"""Training: the loss falls and accuracy rises on a separable set, for every objective and
backbone kind; checkpoints resume to the same state; gradient accumulation changes nothing."""

from __future__ import annotations

import math
import random
from pathlib import Path

import pytest
import torch

from rewardsmith.reward_models.data import PointwiseExample, StepExample, preference_pairs
from rewardsmith.reward_models.evaluate import evaluate_pairs
from rewardsmith.reward_models.model import RewardModel
from rewardsmith.reward_models.scoring import score_outcomes, score_steps
from rewardsmith.reward_models.training import TrainConfig, latest_checkpoint, train

from .conftest import WORDS, toy_pairs

FAST = {"learning_rate": 3e-3, "batch_size": 8}


def _score_diff(a: RewardModel, b: RewardModel) -> float:
    """Largest difference of centred scores (score minus the mean score) on held-out texts.

    Bradley-Terry only sees score differences, so a shift shared by all scores has zero
    gradient: the head's bias and the last LayerNorm bias get float-noise gradients that
    depend on how the batch was split, and Adam scales that noise up to a step of about the
    learning rate. Measured here: raw scores differ by 2e-3, centred scores by 8e-6.
    """
    texts = [
        (p["prompt"], p[side]) for p in toy_pairs(16, seed=9) for side in ("chosen", "rejected")
    ]
    sa = torch.tensor([s.score for s in score_outcomes(a, texts)])
    sb = torch.tensor([s.score for s in score_outcomes(b, texts)])
    return float(((sa - sa.mean()) - (sb - sb.mean())).abs().max())


def _max_abs_diff(a: RewardModel, b: RewardModel) -> float:
    pairs = zip(a.state_dict().values(), b.state_dict().values(), strict=True)
    return max(float((x.float() - y.float()).abs().max()) for x, y in pairs)


@pytest.mark.parametrize(
    ("backbone", "kind"),
    [
        ("tiny_bert", "value_head"),
        ("tiny_gpt2", "value_head"),
        ("tiny_gpt2", "sequence_classification"),
    ],
)
# Head seed 2: an untrained tiny BERT at seed 0 happens to rank the toy words 91% right.
def test_pairwise_loss_falls_and_heldout_accuracy_rises(
    backbone: str, kind: str, request: pytest.FixtureRequest
) -> None:
    torch.manual_seed(0)
    rm = RewardModel.load(request.getfixturevalue(backbone), kind=kind, seed=2)  # type: ignore[arg-type]
    train_set = preference_pairs(toy_pairs(64, seed=1)).rows
    test_set = preference_pairs(toy_pairs(32, seed=2)).rows
    before = evaluate_pairs(rm, test_set).accuracy
    result = train(rm, train_set, TrainConfig(max_steps=24, **FAST))
    first, last = sum(result.losses[:4]) / 4, sum(result.losses[-4:]) / 4
    assert last < 0.5 * first
    after = evaluate_pairs(rm, test_set)
    assert before < 0.8 and after.accuracy >= 0.9


def test_pointwise_objective_learns_labels(tiny_gpt2: Path) -> None:
    torch.manual_seed(0)
    rm = RewardModel.load(tiny_gpt2)
    rows = [PointwiseExample("q", p["chosen"], 1.0) for p in toy_pairs(32)]
    rows += [PointwiseExample("q", p["rejected"], 0.0) for p in toy_pairs(32)]
    result = train(rm, rows, TrainConfig(objective="pointwise", max_steps=40, **FAST))
    assert sum(result.losses[-4:]) < 0.5 * sum(result.losses[:4])
    assert result.metrics[-1]["accuracy"] == 1.0


def test_step_objective_learns_which_step_went_wrong(tiny_gpt2: Path) -> None:
    torch.manual_seed(0)
    rm = RewardModel.load(tiny_gpt2, step_separator="[STEP]")
    rng = random.Random(0)
    rows = []
    for _ in range(48):
        steps = [rng.choice(["add 2", "then sum", "so total"]) for _ in range(3)]
        bad = rng.randrange(4)  # 3: all steps fine
        labels = [1.0] * 3
        if bad < 3:
            steps[bad] += " wrong"
            labels = [1.0 if i < bad else 0.0 for i in range(3)]
        rows.append(StepExample("what is it ?", tuple(steps), tuple(labels)))
    result = train(rm, rows, TrainConfig(objective="step", max_steps=30, **FAST))
    assert sum(result.losses[-4:]) < 0.5 * sum(result.losses[:4])
    scored = score_steps(rm, [("what is it ?", ["add 2", "then sum wrong", "so total"])])
    good, bad_step, after_bad = scored[0].step_scores
    assert good > 0 > bad_step and after_bad < 0


def test_checkpoint_resumes_to_the_same_state(tiny_bert: Path, tmp_path: Path) -> None:
    pairs = preference_pairs(toy_pairs(48)).rows
    config = TrainConfig(max_steps=6, save_every=3, **FAST)
    straight = RewardModel.load(tiny_bert)
    train(straight, pairs, config, tmp_path / "straight")

    interrupted = RewardModel.load(tiny_bert)
    first = train(
        interrupted, pairs, TrainConfig(max_steps=3, save_every=3, **FAST), tmp_path / "r"
    )
    assert first.checkpoint == latest_checkpoint(tmp_path / "r")
    resumed = RewardModel.load(tiny_bert)  # a fresh process would start from the backbone
    result = train(resumed, pairs, config, tmp_path / "r")
    assert len(result.losses) == 3 and result.steps == 6
    assert _max_abs_diff(straight, resumed) < 1e-5
    assert _max_abs_diff(straight, RewardModel.load(tmp_path / "r" / "checkpoint-0000006")) < 1e-5


def test_gradient_accumulation_gives_the_same_update(tiny_bert: Path) -> None:
    pairs = preference_pairs(toy_pairs(32)).rows
    one, accumulated = RewardModel.load(tiny_bert), RewardModel.load(tiny_bert)
    train(one, pairs, TrainConfig(max_steps=4, **FAST))
    train(accumulated, pairs, TrainConfig(max_steps=4, grad_accum=4, **FAST))
    assert _score_diff(one, accumulated) < 1e-4


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"batch_size": 6, "grad_accum": 4}, "divisible"),
        ({"batch_size": 0}, "at least 1"),
    ],
)
def test_bad_config_says_how_to_fix_it(settings: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        TrainConfig(**settings)


def test_too_few_rows_for_one_batch(tiny_bert: Path) -> None:
    with pytest.raises(ValueError, match="cannot fill one batch"):
        train(RewardModel.load(tiny_bert), preference_pairs(toy_pairs(4)).rows, TrainConfig())


def test_bf16_autocast_runs_on_the_cpu(tiny_gpt2: Path) -> None:
    rm = RewardModel.load(tiny_gpt2)
    result = train(
        rm,
        preference_pairs(toy_pairs(16)).rows,
        TrainConfig(max_steps=2, mixed_precision="bf16", **FAST),
    )
    assert all(math.isfinite(loss) for loss in result.losses)


# ---------------------------------------------------------------------- statistics, divergence


def test_checkpoints_record_the_scores_mean_and_spread(tiny_bert: Path, tmp_path: Path) -> None:
    pairs = preference_pairs(toy_pairs(40)).rows
    rm = RewardModel.load(tiny_bert, seed=2)
    result = train(rm, pairs, TrainConfig(max_steps=5, **FAST), tmp_path)
    saved = RewardModel.load(result.checkpoint)  # type: ignore[arg-type]
    texts = [(p.prompt, t) for p in pairs for t in (p.chosen, p.rejected)]
    scores = torch.tensor([s.score for s in score_outcomes(saved, texts)], dtype=torch.float64)
    assert saved.spec.score_count == 80  # every row, both answers (stats_rows is 256)
    assert saved.spec.score_mean == pytest.approx(float(scores.mean()), abs=1e-5)
    assert saved.spec.score_std == pytest.approx(float(scores.std(unbiased=False)), abs=1e-5)
    assert saved.normalize(saved.spec.score_mean) == 0.0  # type: ignore[arg-type]


def _steps(n: int) -> list[StepExample]:
    rng = random.Random(0)
    rows = []
    for _ in range(n):
        steps = [rng.choice(["add 2", "then sum", "so total"]) for _ in range(3)]
        bad = rng.randrange(4)  # 3: all steps fine
        labels = [1.0] * 3
        if bad < 3:
            steps[bad] += " wrong"
            labels = [1.0 if i < bad else 0.0 for i in range(3)]
        rows.append(StepExample("what is it ?", tuple(steps), tuple(labels)))
    return rows


@pytest.mark.parametrize(
    ("learning_rate", "message"),
    [(0.3, "collapsed to a constant"), (3.0, "exploded")],
)
def test_a_learning_rate_blow_up_is_detected_and_stops_the_run(
    tiny_bert: Path, tmp_path: Path, learning_rate: float, message: str
) -> None:
    """A process reward model at a learning rate far too high: every step gets one score
    (σ = 0.5 or a constant), or the loss explodes. The run stops and says so."""
    rm = RewardModel.load(tiny_bert, step_separator="[STEP]")
    config = TrainConfig(objective="step", max_steps=40, learning_rate=learning_rate, batch_size=8)
    result = train(rm, _steps(48), config, tmp_path)
    assert result.diverged is not None and message in result.diverged
    assert "learning rate" in result.diverged and result.steps < 40
    assert latest_checkpoint(tmp_path) is None  # nothing diverged was saved as final


def test_a_healthy_run_is_not_called_diverged(tiny_bert: Path) -> None:
    rm = RewardModel.load(tiny_bert, step_separator="[STEP]")
    config = TrainConfig(objective="step", max_steps=12, learning_rate=3e-3, batch_size=8)
    assert train(rm, _steps(48), config).diverged is None


def test_reward_centring_pulls_the_scores_to_zero(tiny_gpt2: Path) -> None:
    pairs = preference_pairs(toy_pairs(64, seed=1)).rows
    texts = [(p.prompt, t) for p in pairs for t in (p.chosen, p.rejected)]
    means = []
    for coef in (0.0, 1.0):
        torch.manual_seed(0)
        rm = RewardModel.load(tiny_gpt2, seed=2)
        train(rm, pairs, TrainConfig(max_steps=24, center_rewards_coef=coef, **FAST))
        means.append(abs(sum(s.score for s in score_outcomes(rm, texts)) / len(texts)))
    assert means[1] < 0.5 * means[0] and means[1] < 0.2


def test_a_length_head_takes_the_length_and_stays_out_of_the_score(
    tiny_bert: Path, tmp_path: Path
) -> None:
    """ODIN on pairs whose chosen answer is the longer one 80% of the time: the length head
    follows length, and the score is the quality head alone, after a reload too."""
    rng = random.Random(3)
    rows = []
    for row in toy_pairs(96, seed=1):
        long = " ".join(rng.choice(WORDS[:12]) for _ in range(8))
        longer = "chosen" if rng.random() < 0.8 else "rejected"
        rows.append({**row, longer: f"{long} {row[longer]}"})
    rm = RewardModel.load(tiny_bert, seed=2, length_head=True)
    result = train(rm, preference_pairs(rows).rows, TrainConfig(max_steps=24, **FAST), tmp_path)
    assert sum(m["length_head_corr"] for m in result.metrics[-4:]) / 4 > 0.8
    saved = RewardModel.load(result.checkpoint)  # type: ignore[arg-type]
    assert saved.spec.length_head and saved.length_head is not None
    batch = saved.collate([saved.encode("q", "so good"), saved.encode("q", "a b c bad")])
    quality, length = saved.outcome_parts(**batch)
    assert length is not None and torch.equal(saved(**batch), quality)
    with pytest.raises(ValueError, match="value_head"):
        RewardModel.load(tiny_bert, kind="sequence_classification", length_head=True)
