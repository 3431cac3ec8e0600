"""Code repair: the environment tests each program in the sandbox and answers with the
verifier's feedback; stubbing, deleting, hanging and reading the tests earn nothing."""

from __future__ import annotations

import pytest

from rewardsmith.environments import CodeRepair
from tests.environments.conftest import DATA, tasks

pytestmark = pytest.mark.sandbox

BY_ID = {t["id"]: t for t in tasks("code_repair.jsonl")}
MEAN = BY_ID["r-mean"]
FIXED_MEAN = "```python\ndef mean(xs):\n    return sum(xs) / len(xs)\n```"


def test_the_first_observation_is_the_given_programs_test_log(repair_env: CodeRepair) -> None:
    state, prompt = repair_env.reset(BY_ID["r-last"])
    assert "IndexError" in prompt and "def last" in prompt
    assert state.attempts[0]["meta"]["kind"] == "given"


def test_every_bundled_task_is_broken_and_has_a_fix(repair_env: CodeRepair) -> None:
    for task in BY_ID.values():
        state, _ = repair_env.reset(task)
        assert "all tests pass" not in state.attempts[0]["observation"], task["id"]


def test_a_fix_after_a_wrong_try_is_rewarded_with_progress(repair_env: CodeRepair) -> None:
    state, _ = repair_env.reset(MEAN)
    wrong = repair_env.step(state, "def mean(xs):\n    return sum(xs)\n")
    assert not wrong.done and wrong.reward is not None and wrong.reward.value < 1.0
    assert wrong.observation and "all tests pass" not in wrong.observation
    final = repair_env.step(wrong.state, FIXED_MEAN)
    assert final.done and final.state.end == "answered"
    assert final.reward.value == pytest.approx(1.0)
    assert final.reward.verdicts["gain"].score > 0


STUBS = [
    "",
    "pass",
    "def mean(xs):\n    pass\n",
    "def mean(xs):\n    return 0\n",
    "def mean(xs):\n    raise NotImplementedError\n",
    "# deleted",
    "def mean(xs):\n    return 2.0\n",  # right for one case only
]


@pytest.mark.parametrize("program", STUBS)
def test_stubbing_or_deleting_earns_no_shaping(repair_env: CodeRepair, program: str) -> None:
    state, _ = repair_env.reset(BY_ID["r-syntax"] if not program else MEAN)
    seen = repair_env.step(state, program)
    final = seen if seen.done else repair_env.truncate(seen.state, "token_budget")
    tests = final.reward.components["tests"].raw or 0.0
    assert final.reward.value == pytest.approx(0.8 * tests + 0.2 * tests * _gain(final)), program
    assert final.reward.value <= 0.8 * tests + 0.2 * tests


def _gain(final: object) -> float:
    verdict = final.reward.verdicts.get("gain")  # type: ignore[attr-defined]
    return 0.0 if verdict is None or verdict.score is None else float(verdict.score)


def test_a_syntax_error_stub_that_runs_earns_no_shaping_without_tests(
    repair_env: CodeRepair,
) -> None:
    state, _ = repair_env.reset(BY_ID["r-syntax"])  # the given program does not parse
    final = repair_env.truncate(repair_env.step(state, "def is_even(n):\n    pass\n").state, "x")
    assert final.reward.value == 0.0  # it now runs, but passes no test: the gain pays nothing


HOSTILE = [
    ("def mean(xs):\n    while True:\n        pass\n", "time"),
    ("import os\ndef mean(xs):\n    return os.fork() and mean(xs)\n", ""),
    (f"def mean(xs):\n    return open({str(DATA / 'code_repair.jsonl')!r}).read()\n", ""),
    ("x = bytearray(1 << 33)\ndef mean(xs):\n    return 2.0\n", ""),
    ("```python\n" + "def mean(xs):\n" + "    return 1\n" * 5000 + "```", ""),
]


@pytest.mark.parametrize(("program", "said"), HOSTILE)
def test_hostile_programs_give_feedback_and_no_reward(
    repair_env: CodeRepair, program: str, said: str
) -> None:
    state, _ = repair_env.reset(MEAN)
    seen = repair_env.step(state, program, action_tokens=50)
    assert not seen.done and seen.observation and said in seen.observation.lower()
    if len(program) <= repair_env.limits.max_action_chars:
        assert seen.reward is not None and seen.reward.value == 0.0
    else:
        assert seen.reward is None and "at most" in seen.observation


def test_an_episode_that_never_fixes_ends_at_the_turn_limit(repair_env: CodeRepair) -> None:
    state, _ = repair_env.reset(MEAN)
    for _ in range(repair_env.limits.max_turns):
        seen = repair_env.step(state, "def mean(xs):\n    return 0\n")
        state = seen.state
    assert seen.done and seen.state.end == "turn_limit" and seen.reward.value == 0.0


def test_truncated_before_any_program_does_not_earn_the_given_program(
    repair_env: CodeRepair,
) -> None:
    state, _ = repair_env.reset(BY_ID["r-count"])  # the given program passes some tests
    assert repair_env.truncate(state, "token_budget").reward.value == 0.0
