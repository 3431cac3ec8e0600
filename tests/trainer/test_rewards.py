"""The reward plugin: a grader through its executor, failures kept out, the pipeline."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from rewardsmith.graders import Executor, Grader, SpecError, weighted
from rewardsmith.trainer.rewards import GraderReward, RewardPipeline, build_reward_source
from rewardsmith.verifiers.text import ExactMatch
from rewardsmith.verifiers.types import Sample
from tests.graders.grader_testkit import Crash, Sleep

WEIGHTS = {"exact_match": {"weight": 0.8}, "format": {"weight": 0.2, "patterns": [r"^\d+$"]}}


@pytest.fixture
def inline() -> Iterator[Executor]:
    with Executor("inline", cache=False) as ex:
        yield ex


def s(completion: str, reference: object = "7") -> Sample:
    return Sample(id="x", prompt="3+4=", completion=completion, reference=reference)


CASES = [  # (completion, reference, reward with weights exact 0.8, format 0.2)
    ("7", "7", 1.0),
    ("8", "7", 0.2),  # well formed, wrong
    ("7 apples", "7", 0.0),  # "7 apples" != "7", and the format fails
    ("", "7", 0.0),
    ("x" * 200_000, "7", 0.0),  # huge: both verifiers refuse it as too large, no hang
    ("\x00\u202e7", "7", 0.0),  # control and bidi characters
    ("12", "12", 1.0),
]


@pytest.mark.parametrize(("completion", "reference", "expected"), CASES)
def test_weighted_verifiers(
    inline: Executor, completion: str, reference: str, expected: float
) -> None:
    batch = GraderReward.from_config(WEIGHTS, inline).score([s(completion, reference)])
    assert batch.values[0] == pytest.approx(expected)
    assert set(batch.components) == {"exact_match", "format"}


def test_infrastructure_failure_gives_no_reward_and_is_counted(inline: Executor) -> None:
    grader = Grader(weighted({"exact_match": ExactMatch(), "crashes": Crash()}))
    batch = GraderReward(grader, inline).score([s("7"), s("8")])
    assert batch.values == [None, None]  # never a silent 0 or 1
    assert batch.components == {}  # nothing was trained on
    assert batch.metrics["infra_failures"] == 2.0


def test_bad_reference_is_not_the_models_fault(inline: Executor) -> None:
    batch = GraderReward.from_config({"exact_match": {}}, inline).score([s("7", reference=None)])
    assert batch.values == [None]
    assert batch.metrics["data_errors"] == 1.0  # a data error, not the infrastructure's
    assert batch.metrics["infra_failures"] == 0.0


def test_a_yaml_reward_spec(tmp_path: Path, inline: Executor) -> None:
    spec = tmp_path / "reward.yaml"
    spec.write_text(
        "grader:\n  weighted:\n    components:\n      correct: exact_match\n"
        "      fmt: {verify: format, patterns: ['^[0-9]+$']}\n"
        "    weights: {correct: 0.9, fmt: 0.1}\n"
    )
    batch = GraderReward.from_spec(str(spec), inline).score([s("7"), s("8"), s("x")])
    assert batch.values == pytest.approx([1.0, 0.1, 0.0])
    assert batch.components["correct"] == [1.0, 0.0, 0.0]


def test_a_spec_with_a_typo_fails_before_training(tmp_path: Path) -> None:
    spec = tmp_path / "reward.yaml"
    spec.write_text("grader:\n  weighted:\n    components:\n      correct: exact_mach\n")
    with pytest.raises(SpecError, match="exact_match"):
        build_reward_source({}, str(spec), "inline")


def test_unknown_verifier_name_fails_with_a_hint() -> None:
    with pytest.raises(SpecError, match="Did you mean 'exact_match'"):
        build_reward_source({"exact_mach": {}}, None, "inline")


def test_two_verifiers_mean_their_mean_as_on_the_cli(inline: Executor) -> None:
    """``reward: {exact_match: {}, format: {...}}`` is ``-v exact_match -v format:...``."""
    config = {"exact_match": {}, "format": {"patterns": [r"^\d+$"]}}
    batch = GraderReward.from_config(config, inline).score([s("8")])
    assert batch.values == [0.5]  # (0 + 1) / 2, not the sum 1.0


def test_process_pool_executor_scores_the_same() -> None:
    source = build_reward_source(WEIGHTS, None, "pool", workers=2)
    try:
        assert source.score([s("7"), s("8"), s("x")]).values == pytest.approx([1.0, 0.2, 0.0])
    finally:
        source.close()


def test_pipeline_scores_in_the_background(inline: Executor) -> None:
    grader = Grader(weighted({"sleeps": Sleep(0.3)}))
    pipeline = RewardPipeline(GraderReward(grader, inline))
    try:
        start = time.perf_counter()
        future = pipeline.submit([s("7") for _ in range(4)])
        returned_after = time.perf_counter() - start
        assert not future.done() or returned_after >= 1.2  # submit did not wait for scoring
        assert future.result(timeout=60).values == [1.0] * 4
    finally:
        pipeline.close()


def test_pipeline_falls_back_to_a_plain_score_method(inline: Executor) -> None:
    class SyncOnly:
        def score(self, samples: list[Sample]) -> object:
            return GraderReward.from_config({"exact_match": {}}, inline).score(samples)

    pipeline = RewardPipeline(SyncOnly())  # type: ignore[arg-type]
    try:
        assert pipeline.submit([s("7"), s("6")]).result(timeout=60).values == [1.0, 0.0]
    finally:
        pipeline.close()
