"""The reward model as a verifier: raw score in the verdict, batched equals one by one,
hostile input, broken models, process mode, pickling, and composing in a grader."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from rewardsmith.reward_models.verifier import RewardModelVerifier, sample_steps
from rewardsmith.verifiers import registry
from rewardsmith.verifiers.protocol import BatchVerifier, run_verifier
from rewardsmith.verifiers.types import Failure, Message, Sample, Status, Step

PROMPT = "what is 2 plus 2 ?"


def _s(i: int | str, completion: object, prompt: object = PROMPT) -> Sample:
    return Sample(id=str(i), prompt=prompt, completion=completion)  # type: ignore[arg-type]


def test_good_answers_outscore_bad_ones_and_carry_the_raw_score(trained_rm: Path) -> None:
    rm = RewardModelVerifier(model_path=str(trained_rm))
    good, bad = rm.batch([_s(1, "so the answer is right"), _s(2, "so the answer is wrong")])
    assert good.score is not None and bad.score is not None and good.score > bad.score
    assert good.evidence["raw_score"] > bad.evidence["raw_score"]
    assert good.status in (Status.PARTIAL, Status.PASS) and good.name == "reward_model"
    assert good.evidence["truncated"] is False and good.evidence["tokens"] > 0


def test_batch_in_any_order_equals_one_by_one(trained_rm: Path) -> None:
    rm = RewardModelVerifier(model_path=str(trained_rm), batch_size=3)
    texts = ["yes", "so the answer is fine", "no", "a " * 30 + "bad", "it is good", ""]
    samples = [_s(i, t) for i, t in enumerate(texts)]
    batched = [v.evidence["raw_score"] for v in rm.batch(samples)]
    single = [rm(s).evidence["raw_score"] for s in samples]
    assert batched == pytest.approx(single, abs=1e-5)


@pytest.mark.parametrize(
    ("completion", "prompt"),
    [
        ("", PROMPT),  # empty completion: scored like any text
        ("", ""),  # nothing at all
        ("\x00\ufffd🙂 <script>", PROMPT),  # odd characters map to unknown tokens
        ("so " * 20_000 + "right", PROMPT),  # far beyond the 64-token context
        ([Message(role="user", content="hi"), Message(role="assistant", content="right")], ""),
        ("right", [Message(role="user", content=PROMPT)]),
    ],
)
def test_awkward_input_gets_a_clear_verdict(
    trained_rm: Path, completion: object, prompt: object
) -> None:
    verdict = RewardModelVerifier(model_path=str(trained_rm))(_s(1, completion, prompt))
    assert verdict.score is not None and 0.0 <= verdict.score <= 1.0
    assert isinstance(verdict.evidence["raw_score"], float)


def test_long_text_is_truncated_and_says_so(trained_rm: Path) -> None:
    verdict = RewardModelVerifier(model_path=str(trained_rm))(_s(1, "so " * 20_000 + "right"))
    assert verdict.evidence["truncated"] is True and verdict.evidence["tokens"] > 20_000


def test_huge_completion_fails_as_too_large_before_tokenising(trained_rm: Path) -> None:
    rm = RewardModelVerifier(model_path=str(trained_rm), max_chars=1000)
    small, huge = rm.batch([_s(1, "right"), _s(2, "x" * 5_000_000)])
    assert huge.status is Status.FAIL and huge.failure is Failure.INPUT_TOO_LARGE
    assert small.score is not None and "raw_score" in small.evidence


def test_missing_model_is_an_infrastructure_error_not_a_zero(tmp_path: Path) -> None:
    rm = RewardModelVerifier(model_path=str(tmp_path / "no_such_model"))
    verdicts = rm.batch([_s(1, "right"), _s(2, "wrong")])
    assert all(v.status is Status.ERROR and v.score is None for v in verdicts)
    assert all(v.is_infra_failure and "cannot load" in v.feedback for v in verdicts)


def test_process_mode_scores_every_step(trained_rm: Path) -> None:
    rm = RewardModelVerifier(model_path=str(trained_rm), mode="process")
    trajectory = [
        Step(action="add 2"),
        Step(action="then sum", observation="4"),
        Step(action="so total"),
    ]
    chat = [
        Message(role="assistant", content="add 2"),
        Message(role="user", content="ok?"),
        Message(role="assistant", content="so total"),
    ]
    text = "add 2 [STEP] then sum [STEP] so total"
    counts = [
        len(rm(_s(i, c)).evidence["step_scores"]) for i, c in enumerate([trajectory, chat, text])
    ]
    assert counts == [3, 2, 3]
    verdict = rm(_s(9, text))
    assert verdict.evidence["raw_score"] == pytest.approx(min(verdict.evidence["step_scores"]))


def test_process_mode_with_a_multi_token_separator_is_an_infra_error(
    tiny_bert: Path, tmp_path: Path
) -> None:
    from rewardsmith.reward_models.model import RewardModel

    RewardModel.load(tiny_bert).save(tmp_path / "rm")  # separator: a blank line, not a token
    verdict = RewardModelVerifier(model_path=str(tmp_path / "rm"), mode="process")(_s(1, "a\n\nb"))
    assert verdict.is_infra_failure and "exactly one" in verdict.feedback


def test_sample_steps_splits_text_and_keeps_one_empty_step() -> None:
    assert sample_steps(_s(1, "a\n\nb\n\n"), "\n\n") == ["a", "b"]
    assert sample_steps(_s(1, ""), "\n\n") == [""]


def test_pickle_round_trip_and_registry(trained_rm: Path) -> None:
    rm = RewardModelVerifier(model_path=str(trained_rm), center=1.0, scale=2.0)
    again = pickle.loads(pickle.dumps(rm))
    assert again == rm
    assert again(_s(1, "right")).evidence == rm(_s(1, "right")).evidence
    built = registry.create("reward_model", model_path=str(trained_rm))
    assert isinstance(built, BatchVerifier)
    assert run_verifier(built, _s(1, "right")).elapsed_s > 0


@pytest.mark.parametrize(
    ("settings", "message"), [({"scale": 0.0}, "scale"), ({"batch_size": 0}, "batch_size")]
)
def test_bad_settings_fail_at_construction(settings: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        RewardModelVerifier(model_path="x", **settings)


def test_reward_model_score_gated_on_a_rule_based_check(trained_rm: Path) -> None:
    from rewardsmith.graders import Executor, Grader, chain, gate, verify, weighted

    grader = Grader(
        chain(
            weighted({"rm": verify(RewardModelVerifier(model_path=str(trained_rm)))}),
            gate(verify("format", patterns=(r"^so ",))),
        )
    )
    samples = [_s("formatted", "so the answer is right"), _s("unformatted", "the answer is right")]
    with Executor("inline") as executor:
        rewards = grader.score(samples, executor)
    assert rewards[0].value == pytest.approx(rewards[0].verdicts["rm"].score)
    assert rewards[0].value > 0.5
    assert rewards[1].value == 0.0  # the rule failed, so the learned score does not count
    assert rewards[1].verdicts["rm"].evidence["raw_score"] > 0
