"""Grader end to end: the failure policy, the Reward record, batch statistics, async."""

from __future__ import annotations

import asyncio
import json
import pickle

import pytest
from grader_helpers import A, B, grade, samples
from grader_testkit import Crash

import rewardsmith.graders as graders
from rewardsmith.graders import Executor, Grader, Reward, batch_stats, chain, gate, verify, weighted
from rewardsmith.verifiers.types import Failure, Sample, Status


def test_public_surface_is_pinned():
    assert graders.__all__ == sorted(graders.__all__)
    assert {"Executor", "Grader", "Reward", "batch_stats", "load_spec"} <= set(graders.__all__)


def test_infra_failure_never_becomes_a_reward():
    rows = [{"a": 1.0, "b": 1.0}, {"a": "infra", "b": 1.0}]
    ok, failed = grade(weighted({"a": A, "b": B}), rows)
    assert ok.value == 2.0 and not ok.failed
    assert failed.value is None and failed.failed
    assert failed.infra_failure is Failure.SANDBOX_ERROR
    assert "'a'" in failed.reason and "sandbox_error" in failed.reason
    assert failed.components == {}  # nothing was computed from a partial set of verdicts
    assert failed.verdicts["b"].status is Status.PASS  # but every verdict is kept


def test_fallback_policy_gives_the_stated_value_and_marks_it():
    (r,) = grade(weighted({"a": A}), [{"a": "infra"}], on_infra_failure="fallback", fallback=-0.5)
    assert (r.value, r.fallback, r.infra_failure) == (-0.5, True, Failure.SANDBOX_ERROR)


def test_not_applicable_is_none_with_a_reason_not_zero():
    (r,) = grade(weighted({"a": A}), [{"a": None}])
    assert r.value is None and not r.failed and "skipped" in r.reason


def test_a_crashing_verifier_is_an_infra_failure_not_a_zero():
    grader = Grader(weighted({"a": A, "boom": Crash()}))
    with Executor("inline") as ex:
        (r,) = grader.score(samples([{"a": 1.0}]), ex)
    assert r.value is None and r.infra_failure is Failure.VERIFIER_CRASH
    assert "verifier bug" in r.reason


def test_reward_to_dict_is_json_and_round_trips():
    (r,) = grade(
        chain(weighted({"a": A, "b": B}), gate("a", threshold=0.5)), [{"a": 0.5, "b": None}]
    )
    data = json.loads(json.dumps(r.to_dict()))
    assert data["value"] == 1.0 and data["components"]["b"]["raw"] is None
    assert Reward.from_dict(data) == r


def test_batch_stats_per_component_and_failure_kinds():
    rows = [
        {"a": 1.0, "b": 0.0},
        {"a": 0.0, "b": None},
        {"a": "infra", "b": 1.0},
        {"a": "pass", "b": 0.5},
    ]
    stats = batch_stats(grade(weighted({"a": A, "b": B}, renormalize=False), rows))
    assert stats["samples"] == 4 and stats["infra_failures"] == 1
    # rewards 1, 0 and 1.5 (the infra failure takes no part): mean 5/6, std sqrt(7/18)
    assert stats["reward"] == {
        "count": 3,
        "mean": pytest.approx(5 / 6),
        "std": pytest.approx((7 / 18) ** 0.5),
    }
    a = stats["verifiers"]["a"]
    assert a["pass_rate"] == pytest.approx(2 / 3) and a["infra_failures"] == 1
    assert a["failures"] == {"sandbox_error": 1, "wrong_answer": 1}
    assert stats["verifiers"]["b"]["skipped"] == 1
    assert stats["components"]["b"]["mean"] == pytest.approx(0.25)  # 0.0 and 0.5
    json.dumps(stats)


def test_real_verifiers_from_the_registry():
    fmt = verify("format", key="fmt", required_tags=("answer",))
    grader = Grader(
        chain(
            weighted({"correct": "exact_match", "fmt": fmt}, weights={"correct": 0.8, "fmt": 0.2}),
            gate("fmt"),
        )
    )
    rows = [
        Sample(id="1", completion="<answer>4</answer>", reference="<answer>4</answer>"),
        Sample(id="2", completion="<answer>5</answer>", reference="<answer>4</answer>"),
        Sample(id="3", completion="4", reference="4"),  # right answer, wrong format: gated to 0
        Sample(id="4", completion="x", reference=None),  # no reference: a data problem
    ]
    with Executor("inline") as ex:
        rewards = grader.score(rows, ex)
    assert [r.value for r in rewards[:3]] == [pytest.approx(1.0), pytest.approx(0.2), 0.0]
    assert rewards[3].data_error is Failure.BAD_REFERENCE and rewards[3].infra_failure is None


def test_one_batch_equals_batches_of_one():
    grader = Grader(weighted({"a": A, "b": B}, weights={"a": 0.3}))
    rows = [{"a": x / 7, "b": (x % 3) / 2} for x in range(8)]
    whole = [r.value for r in grade(grader.root, rows)]
    single = [grade(grader.root, [row])[0].value for row in rows]
    assert whole == single


def test_ascore_equals_score_and_leaves_the_loop_free():
    grader = Grader(weighted({"a": A, "b": B}))
    rows = samples([{"a": 1.0, "b": 0.5}, {"a": 0.0, "b": None}])

    async def main():
        ticks = 0

        async def ticker():
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0)

        task = asyncio.create_task(ticker())
        with Executor("inline") as ex:
            rewards = await grader.ascore(rows, ex)
        task.cancel()
        return rewards, ticks

    rewards, ticks = asyncio.run(main())
    with Executor("inline") as ex:
        again = grader.score(rows, ex)
    assert [(r.value, r.components) for r in rewards] == [(r.value, r.components) for r in again]
    assert ticks > 0


def test_grader_pickles_with_its_verifiers():
    grader = Grader(weighted({"a": A, "fmt": verify("format", required_tags=("answer",))}))
    clone = pickle.loads(pickle.dumps(grader))
    assert clone == grader and clone.verifiers.keys() == grader.verifiers.keys()


def test_combine_checks_the_verdict_count():
    with pytest.raises(ValueError, match="expected 2 verdicts"):
        Grader(weighted({"a": A, "b": B})).combine(samples([{}]), [])
