"""Routing leaves by `Sample.task`: a leaf with ``tasks`` runs only on samples of its tasks
and is a SKIP verdict (not applicable) on the others, so one grader scores a mixed dump."""

from __future__ import annotations

import asyncio
import pickle

import pytest
from grader_testkit import Counting

from rewardsmith.graders import Executor, Grader, batch_stats, verify, weighted
from rewardsmith.verifiers.code import CodeTests
from rewardsmith.verifiers.math import MathAnswer
from rewardsmith.verifiers.types import Failure, Sample, Status

CODE_REF = {"format": "asserts", "asserts": ["assert sq(3) == 9", "assert sq(-2) == 4"]}

# One dump, four tasks: each sample's reference only makes sense to its own verifier.
MIXED = [
    Sample(id="m1", task="math", completion=r"so \boxed{4}", reference="4"),
    Sample(id="m2", task="gsm8k", completion="The answer is 7", reference="8"),
    Sample(id="c1", task="code", completion="def sq(x):\n    return x * x", reference=CODE_REF),
    Sample(id="c2", task="code", completion="def sq(x):\n    return x + x", reference=CODE_REF),
    Sample(id="f1", task="finance", completion="42", reference="42"),
    Sample(id="n1", task=None, completion="42", reference="42"),
]


def mixed_grader(**leaf_tasks: list[str]) -> Grader:
    """math and code leaves (routed by ``leaf_tasks``) plus an exact match on every sample."""
    return Grader(
        weighted(
            {
                "math": verify("math", tasks=leaf_tasks.get("math")),
                "code": verify("code_tests", tasks=leaf_tasks.get("code")),
                "match": verify("exact_match", tasks=leaf_tasks.get("match")),
            },
            weights={"math": 1.0, "code": 1.0, "match": 0.5},
        )
    )


ROUTED = mixed_grader(math=["math", "gsm8k"], code=["code"], match=["finance"])


def test_jobs_only_for_the_leaves_that_apply():
    jobs = [(job.verifier.name, job.sample.id) for job in ROUTED.jobs(MIXED)]
    assert jobs == [
        ("math", "m1"),
        ("math", "m2"),
        ("code_tests", "c1"),
        ("code_tests", "c2"),
        ("exact_match", "f1"),
    ]  # a sample with no task matches no routed leaf


def test_without_tasks_a_mixed_dump_loses_every_sample_to_bad_references():
    # The bug this feature fixes: the code sandbox judges a math answer, finds no tests,
    # and the sample is excluded (a data error now, no longer counted as infrastructure).
    with Executor("inline") as ex:
        rewards = mixed_grader().score(MIXED[:3], ex)
    assert [r.data_error for r in rewards] == [Failure.BAD_REFERENCE] * 3


@pytest.mark.sandbox
def test_a_routed_grader_scores_a_mixed_dump_on_the_pool():
    with Executor("pool", workers=2, cache=False) as ex:
        rewards = ROUTED.score(MIXED, ex)
    by_id = {r.sample_id: r for r in rewards}
    assert not any(r.failed for r in rewards)
    # Only one leaf applies to each sample: weights renormalise to the full 2.5.
    assert [by_id[i].value for i in ("m1", "m2", "c1", "c2", "f1")] == [2.5, 0.0, 2.5, 0.0, 2.5]
    assert by_id["n1"].value is None and "skipped" in by_id["n1"].reason
    math_row = by_id["m1"]
    assert math_row.verdicts["code"].status is Status.SKIP
    assert math_row.verdicts["code"].score is None
    assert "task 'math'" in math_row.verdicts["code"].feedback
    assert math_row.verdicts["code"].name == "code_tests"
    assert math_row.components["code"].raw is None and math_row.components["math"].raw == 1.0
    stats = batch_stats(rewards)
    assert stats["infra_failures"] == 0
    assert stats["verifiers"]["code"]["skipped"] == 4


def test_a_skipped_leaf_runs_nothing_in_the_worker(tmp_path):
    log = tmp_path / "runs.log"
    grader = Grader(
        weighted(
            {
                "counted": verify(Counting(str(log)), tasks=["code"]),
                "match": "exact_match",
            }
        )
    )
    rows = [Sample(id=str(i), task=t, completion="a", reference="a") for i, t in enumerate("xyz")]
    rows.append(Sample(id="3", task="code", completion="a", reference="a"))
    with Executor("pool", workers=2, cache=False) as ex:
        rewards = grader.score(rows, ex)
    assert log.read_text().split() == ["3"]  # the verifier ran on the code sample only
    assert [r.verdicts["counted"].status for r in rewards] == [Status.SKIP] * 3 + [Status.PASS]
    # Where "counted" is skipped, "match" alone is rescaled to the full weight of 2.
    assert [r.value for r in rewards] == [2.0] * 4


def test_pool_ascore_and_inline_agree_on_a_routed_grader():
    grader = mixed_grader(math=["math", "gsm8k"], match=["finance"], code=["nothing-here"])
    rows = [s for s in MIXED if s.task != "code"]
    with Executor("inline") as inline, Executor("pool", workers=2) as pool:
        expected = grader.score(rows, inline)
        got = grader.score(rows, pool)
        got_async = asyncio.run(grader.ascore(rows, pool))
    key = [(r.value, r.components, {k: v.status for k, v in r.verdicts.items()}) for r in expected]
    assert [
        (r.value, r.components, {k: v.status for k, v in r.verdicts.items()}) for r in got
    ] == key
    assert [r.value for r in got_async] == [r.value for r in expected]


def test_combine_takes_the_verdicts_of_jobs_in_order():
    rows = MIXED[:1] + MIXED[4:5]  # a math sample, a finance sample: one job each
    jobs = ROUTED.jobs(rows)
    with Executor("inline") as ex:
        verdicts = ex.run(jobs)
    rewards, _ = ROUTED.combine(rows, verdicts)
    assert [r.value for r in rewards] == [2.5, 2.5]
    with pytest.raises(ValueError, match="expected 2 verdicts"):
        ROUTED.combine(rows, verdicts * 2)


def test_tasks_belong_to_the_leaf_not_the_verifier():
    leaf = verify("math", key="math", tasks=["math", "gsm8k"], strict=True)
    assert leaf.verifier == MathAnswer(strict=True) and leaf.tasks == ("gsm8k", "math")
    assert verify("math").tasks is None and verify("math").verifier == MathAnswer()
    assert verify("math", tasks=["math"]) != verify("math")
    assert verify(CodeTests(), tasks=("code",)).tasks == ("code",)  # an instance, too
    # Order and repeats do not matter: the same set is the same leaf.
    assert verify("math", tasks=["a", "b", "a"]) == verify("math", tasks=("b", "a"))
    assert ROUTED.tasks == {"code": ("code",), "match": ("finance",), "math": ("gsm8k", "math")}


@pytest.mark.parametrize(
    ("tasks", "error", "words"),
    [
        ("math", TypeError, "tasks must be a list of task names, got 'math'"),
        ({"math": 1}, TypeError, "tasks must be a list"),
        ([], ValueError, "never run"),
        ([1], TypeError, "non-empty name"),
        ([""], TypeError, "non-empty name"),
    ],
)
def test_bad_task_lists_are_refused(tasks, error, words):
    with pytest.raises(error, match=words):
        verify("math", tasks=tasks)


def test_one_key_with_two_task_lists_is_refused():
    with pytest.raises(ValueError, match="two different task lists"):
        Grader(
            weighted(
                {
                    "a": verify("exact_match", key="x", tasks=["math"]),
                    "b": verify("exact_match", key="x", tasks=["code"]),
                }
            )
        )


def test_a_routed_grader_pickles():
    clone = pickle.loads(pickle.dumps(ROUTED))
    assert clone == ROUTED and clone.tasks == ROUTED.tasks
    assert [j.sample.id for j in clone.jobs(MIXED)] == [j.sample.id for j in ROUTED.jobs(MIXED)]
