"""Sample and Verdict: validation, invariants, JSON and pickle round trips."""

from __future__ import annotations

import json
import pickle

import pytest
from pydantic import ValidationError

from rewardsmith.verifiers import (
    Failure,
    Fault,
    Message,
    Sample,
    Status,
    Step,
    Verdict,
    create,
)


@pytest.mark.parametrize(
    ("completion", "text"),
    [
        ("plain", "plain"),
        ([{"role": "user", "content": "q"}, {"role": "assistant", "content": "a"}], "a"),
        ([{"role": "assistant", "content": "a1"}, {"role": "tool", "content": "t"}], "a1"),
        ([{"action": "ls"}, {"action": "cat x", "observation": "hi"}], "cat x"),
        ([], ""),
    ],
)
def test_completion_text_for_each_shape(completion: object, text: str) -> None:
    assert Sample(id="s", completion=completion).completion_text == text


def _call(code: str = "print(7 * 7)") -> dict:
    return {"function": {"name": "python", "arguments": {"code": code}}}


QUESTION = {"role": "user", "content": "What is 7 * 7?"}
RESULT = {"role": "tool", "name": "python", "content": "49"}
ANSWER_BESIDE_A_CALL = [
    # The answer written beside a tool call, with or without the call's result after it:
    # the model had not answered yet, so nothing it wrote there is a final answer.
    [QUESTION, {"role": "assistant", "content": r"\boxed{49}", "tool_calls": [_call()]}],
    [QUESTION, {"role": "assistant", "content": r"\boxed{49}", "tool_calls": [_call()]}, RESULT],
    [QUESTION, {"role": "assistant", "content": "49", "tool_calls": [_call("49")]}, RESULT],
    [
        QUESTION,
        {"role": "assistant", "content": "", "tool_calls": [_call()]},
        RESULT,
        {"role": "assistant", "content": r"So \boxed{49}", "tool_calls": [_call("0")]},
    ],
    [QUESTION, {"role": "assistant", "content": r"\boxed{49}", "tool_calls": [_call(), _call()]}],
]


@pytest.mark.parametrize("completion", ANSWER_BESIDE_A_CALL)
def test_an_answer_beside_a_tool_call_is_no_answer(completion: list) -> None:
    sample = Sample(id="s", completion=completion, reference="49")
    assert sample.completion_text == ""
    assert create("math")(sample).score == 0.0


def test_the_answer_after_the_tool_result_is_judged() -> None:
    completion = [
        QUESTION,
        {"role": "assistant", "content": "", "tool_calls": [_call()]},
        RESULT,
        {"role": "assistant", "content": r"\boxed{49}"},
    ]
    assert create("math")(Sample(id="s", completion=completion, reference="49")).score == 1.0


def test_steps_of_a_trajectory_and_of_plain_text() -> None:
    sample = Sample(id="s", completion=[{"action": "a", "observation": "o"}, {"action": "b"}])
    assert [s.action for s in sample.steps] == ["a", "b"]
    assert Sample(id="t", completion="x").steps == [Step(action="x")]
    assert isinstance(
        Sample(id="u", completion=[{"role": "a", "content": "c"}]).completion[0], Message
    )


@pytest.mark.parametrize(
    ("fields", "where"),
    [
        ({"completion": "x"}, "id"),
        ({"id": "a"}, "completion"),
        ({"id": "", "completion": "x"}, "id"),
        ({"id": "a", "completion": 3}, "completion"),
        ({"id": "a", "completion": "x", "colour": "red"}, "colour"),
        ({"id": True, "completion": "x"}, "id"),
        ({"id": "a", "completion": "x", "meta": []}, "meta"),
    ],
)
def test_bad_samples_name_the_field(fields: dict, where: str) -> None:
    with pytest.raises(ValidationError) as info:
        Sample.model_validate(fields)
    assert info.value.errors()[0]["loc"][0] == where


def test_integer_ids_become_text() -> None:
    assert Sample(id=7, completion="x").id == "7"


@pytest.mark.parametrize(
    "verdict",
    [
        Verdict.passed("v", "1", evidence={"k": [1, 2]}),
        Verdict.failed("v", "1", feedback="no"),
        Verdict.graded("v", "1", 0.25),
        Verdict.skipped("v", "1", "not a math task"),
        Verdict.errored("v", "1", Failure.COMPILE_ERROR, "E0308"),
        Verdict.errored("v", "1", Failure.SANDBOX_ERROR, "bwrap missing"),
        Verdict.timed_out("v", "1", Failure.TIME_LIMIT, "2 s"),
        Verdict.timed_out("v", "1", Failure.VERIFIER_TIMEOUT, "sympy hung"),
    ],
)
def test_verdict_round_trips_through_json_and_pickle(verdict: Verdict) -> None:
    assert Verdict.from_dict(json.loads(json.dumps(verdict.to_dict()))) == verdict
    assert pickle.loads(pickle.dumps(verdict)) == verdict


def test_fault_attribution() -> None:
    assert Verdict.errored("v", "1", Failure.COMPILE_ERROR, "x").fault is Fault.MODEL
    infra = Verdict.errored("v", "1", Failure.VERIFIER_CRASH, "x")
    assert infra.fault is Fault.INFRA and infra.score is None and infra.is_infra_failure
    assert Verdict.timed_out("v", "1", Failure.TIME_LIMIT, "x").score == 0.0
    assert Verdict.passed("v", "1").fault is None


@pytest.mark.parametrize(
    ("score", "status", "failure"),
    [
        (1.5, Status.PARTIAL, None),
        (-0.1, Status.FAIL, None),
        (float("nan"), Status.PARTIAL, None),
        (0.5, Status.PASS, None),
        (0.0, Status.SKIP, None),
        (0.0, Status.ERROR, None),
        (None, Status.TIMEOUT, None),
        (0.0, Status.ERROR, Failure.VERIFIER_CRASH),
    ],
)
def test_verdict_invariants_reject_inconsistent_records(
    score: float | None, status: Status, failure: Failure | None
) -> None:
    with pytest.raises(ValueError):
        Verdict("v", "1", status, score, failure)


def test_verdict_rejects_non_numeric_score() -> None:
    with pytest.raises(TypeError):
        Verdict("v", "1", Status.PASS, True)  # type: ignore[arg-type]


def test_graded_maps_scores_to_statuses() -> None:
    assert Verdict.graded("v", "1", 1.0).status is Status.PASS
    assert Verdict.graded("v", "1", 0.0).status is Status.FAIL
    assert Verdict.graded("v", "1", 0.4).status is Status.PARTIAL


def test_sample_pickles() -> None:
    sample = Sample(
        id="s", prompt=[{"role": "user", "content": "q"}], completion="a", meta={"k": 1}
    )
    assert pickle.loads(pickle.dumps(sample)) == sample
