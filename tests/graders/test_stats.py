"""The one definition of pass rate, mean reward and counts (`rewardsmith.graders.stats`)."""

from __future__ import annotations

import json
import math
import random
import statistics

import pytest

from rewardsmith.graders.reward import Component, Reward
from rewardsmith.graders.stats import OTHER_TASKS, Moments, Stats, Timing, batch_stats
from rewardsmith.verifiers.types import Failure, Status, Verdict


def four_verdicts() -> list[Reward]:
    """The issue's case: a pass, a fail, a skip and an infrastructure crash."""
    verdicts = [
        (Verdict.passed("v", "1", elapsed_s=0.010), 1.0, None),
        (Verdict.failed("v", "1", elapsed_s=0.020), 0.0, None),
        (Verdict.skipped("v", "1", "not this task", elapsed_s=0.0), None, None),
        (Verdict.errored("v", "1", Failure.VERIFIER_CRASH, "boom"), None, Failure.VERIFIER_CRASH),
    ]
    return [
        Reward(str(i), value, {"v": Component(v.score, 1.0, v.score)}, {"v": v}, infra_failure=f)
        for i, (v, value, f) in enumerate(verdicts)
    ]


def test_the_issue_case_gives_one_pass_rate() -> None:
    stats = Stats.of(four_verdicts(), tasks=["a", "a", "b", "b"])
    verifier = stats.verifiers["v"]
    assert verifier.pass_rate == 0.5  # not 0.333 (skip as a fail) nor 0.25 (both as fails)
    assert (verifier.passes, verifier.decided) == (1, 2)
    assert stats.outcomes == {"rewarded": 2, "not_applicable": 1, "infra_failure": 1}
    assert stats.reward.mean == 0.5 and stats.reward.count == 2
    assert verifier.statuses == {"pass": 1, "fail": 1, "skip": 1, "error": 1}
    assert verifier.failures == {"wrong_answer": 1, "verifier_crash": 1}
    assert stats.faults == {"model": 1, "infra": 1}
    assert stats.tasks["a"].pass_rate == 0.5 and stats.tasks["b"].pass_rate is None
    assert batch_stats(four_verdicts())["verifiers"]["v"]["pass_rate"] == 0.5


@pytest.mark.parametrize(
    ("failure", "decided"),
    [(f, f.fault.value == "model") for f in Failure],
)
def test_only_the_models_failures_count_against_it(failure: Failure, decided: bool) -> None:
    verdict = Verdict.errored("v", "1", failure, "x")
    stats = Stats.of([Reward("1", None, {}, {"v": verdict})])
    assert stats.verifiers["v"].decided == int(decided)
    assert stats.verifiers["v"].pass_rate == (0.0 if decided else None)


def test_fallbacks_and_non_finite_values_are_not_averaged() -> None:
    crash = Verdict.errored("v", "1", Failure.WORKER_DIED, "died")
    rewards = [
        Reward("1", 0.0, {}, {"v": crash}, infra_failure=Failure.WORKER_DIED, fallback=True),
        Reward("2", 1.0, {}, {"v": Verdict.passed("v", "1")}),
        Reward("3", math.nan, {}, {"v": Verdict.passed("v", "1")}),
    ]
    stats = Stats.of(rewards)
    assert stats.reward.mean == 1.0 and stats.reward.nonfinite == 1
    assert stats.outcomes["fallback"] == 1 and stats.infra_failures == 1
    assert stats.verifiers["v"].pass_rate == 1.0


def test_moments_match_the_textbook_and_merge() -> None:
    rng = random.Random(0)
    xs = [rng.gauss(1e6, 3.0) for _ in range(20_000)]
    whole, left, right = Moments(), Moments(), Moments()
    for i, x in enumerate(xs):
        whole.add(x)
        (left if i < 7_000 else right).add(x)
    left.merge(right)
    for m in (whole, left):
        assert m.mean == pytest.approx(math.fsum(xs) / len(xs), abs=1e-9)
        assert m.std == pytest.approx(statistics.pstdev(xs), rel=1e-9)
        assert (m.low, m.high) == (min(xs), max(xs))
    exact = Moments()
    for v in [1.0] * 8 + [0.5] * 8 + [0.0] * 8:
        exact.add(v)
    assert exact.mean == 0.5  # exactly, as a compensated sum gives it


def test_timing_quantiles_within_a_bucket() -> None:
    rng = random.Random(1)
    samples = [rng.lognormvariate(-4, 1.5) for _ in range(5_000)]
    timing = Timing()
    for s in samples:
        timing.add(s)
    ordered = sorted(samples)
    for q in (0.5, 0.95):
        true = ordered[int(q * len(ordered))]
        assert timing.quantile(q) == pytest.approx(true, rel=0.13)
    assert timing.max_s == max(samples) and timing.count == 5_000
    assert timing.quantile(1.0) <= timing.max_s


def test_task_names_cannot_grow_memory() -> None:
    stats = Stats(max_tasks=3)
    for i in range(1_000):
        stats.add(Reward(str(i), 1.0, {}, {"v": Verdict.passed("v", "1")}), task=f"t{i}")
    assert len(stats.tasks) == 3 and stats.other_tasks.samples == 997
    assert stats.to_dict()["tasks"][OTHER_TASKS]["pass_rate"] == 1.0


def test_to_dict_is_plain_json_and_keeps_the_older_shapes() -> None:
    data = json.loads(json.dumps(Stats.of(four_verdicts()).to_dict()))
    assert data["reward"] == {"count": 2, "mean": 0.5, "std": 0.5}
    assert {"samples", "outcomes", "faults", "verifiers"} <= set(data)  # Scorer.counts
    verifier = data["verifiers"]["v"]
    assert verifier["statuses"] == {"error": 1, "fail": 1, "pass": 1, "skip": 1}
    assert verifier["skipped"] == 1 and verifier["infra_failures"] == 1
    assert verifier["timing"]["count"] == 3 and verifier["timing"]["max_s"] == 0.02
    assert Status.PASS.value in verifier["statuses"]
