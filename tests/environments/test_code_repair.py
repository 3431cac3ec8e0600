"""Code repair: the environment tests each program in the sandbox and answers with the
verifier's feedback; stubbing, deleting, hanging and reading the tests earn nothing."""

from __future__ import annotations

import copy
from collections.abc import Iterator

import pytest

from rewardsmith.environments import CodeRepair, code_repair
from rewardsmith.verifiers.code import CodeTests
from tests.environments.conftest import DATA, tasks

pytestmark = pytest.mark.sandbox

BY_ID = {t["id"]: t for t in tasks("code_repair.jsonl") if "language" not in t}
"""The Python tasks (the compiled languages': test_code_repair_languages.py)."""
MEAN = BY_ID["r-mean"]
FIXED_MEAN = "```python\ndef mean(xs):\n    return sum(xs) / len(xs)\n```"


def test_the_first_observation_is_the_given_programs_test_log(repair_env: CodeRepair) -> None:
    state, prompt = repair_env.reset(BY_ID["r-last"])
    assert "IndexError" in prompt and "def last" in prompt
    assert state.attempts[0]["meta"]["kind"] == "given"
    # The chat the loops send (chat template, veRL, verifiers, OpenRLHF) shows it too.
    assert state.messages == ({"role": "user", "content": prompt},)


def test_every_bundled_task_is_broken_and_has_a_fix(repair_env: CodeRepair) -> None:
    for task in BY_ID.values():
        state, _ = repair_env.reset(task)
        assert "all tests pass" not in state.attempts[0]["observation"], task["id"]


def test_a_fix_after_a_wrong_try_is_rewarded_with_progress(repair_env: CodeRepair) -> None:
    state, _ = repair_env.reset(MEAN)
    wrong = repair_env.step(state, "def mean(xs):\n    return sum(xs)\n")
    assert not wrong.done and wrong.reward is None  # no step before the last pays
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
    assert final.reward.value == pytest.approx(tests * _gain(final)), program
    assert final.reward.value == 0.0, program


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


QUICK_TESTS = {"wall_s": 2.0, "call_timeout_s": 1.0}
"""code_tests settings for the hanging program above: the same kill (a call past its
timeout ends the run) at a fifth of the defaults, so its three runs (the step's hidden and
visible tests, the final reward) cost seconds, not 30 s. The defaults stay pinned by
`test_the_repair_rewards_run_under_code_tests_defaults`."""


@pytest.fixture
def quick_repair_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[CodeRepair]:
    """A CodeRepair whose code_tests leaves (the step's tests and the final reward's) run
    under QUICK_TESTS; nothing else differs."""
    tests = {**code_repair.TESTS_REWARD["code_tests"], **QUICK_TESTS}
    monkeypatch.setattr(code_repair, "TESTS_REWARD", {"code_tests": tests})
    env = CodeRepair()
    env.final_reward = copy.deepcopy(env.final_reward)
    env.final_reward["grader"]["product"]["tests"].update(QUICK_TESTS)
    yield env
    env.close()


def test_the_repair_rewards_run_under_code_tests_defaults() -> None:
    """The real environment sets no limits of its own, so code_tests' documented ones
    apply (docs/code.md); QUICK_TESTS is only for the hang above."""
    assert code_repair.TESTS_REWARD == {"code_tests": {"weight": 1.0}}
    assert code_repair.REPAIR_REWARD["grader"]["product"]["tests"].keys() == {"verify", "tasks"}
    assert (CodeTests().wall_s, CodeTests().call_timeout_s) == (10.0, 5.0)
    assert QUICK_TESTS["call_timeout_s"] < 5.0 and QUICK_TESTS["wall_s"] < 10.0


@pytest.mark.parametrize(("program", "said"), HOSTILE)
def test_hostile_programs_give_feedback_and_no_reward(
    repair_env: CodeRepair, program: str, said: str, request: pytest.FixtureRequest
) -> None:
    if said == "time":  # the hang: see QUICK_TESTS
        repair_env = request.getfixturevalue("quick_repair_env")
    state, _ = repair_env.reset(MEAN)
    seen = repair_env.step(state, program, action_tokens=50)
    assert not seen.done and seen.observation and said in seen.observation.lower()
    assert seen.reward is None
    if len(program) > repair_env.limits.max_action_chars:
        assert "at most" in seen.observation
    final = repair_env.truncate(seen.state, "policy_stopped")
    assert final.reward.value == 0.0
    if said == "time":  # ended by a limit (of QUICK_TESTS'), not by an error of ours
        limit = final.reward.verdicts["tests"].evidence["candidate"]["limit_hit"]
        assert limit in ("wall_time", "cpu_time"), final.reward.verdicts["tests"]


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


# ----------------------------------------------------------------------------- issue 30


def _final(env: CodeRepair, task: dict[str, object], program: str) -> float:
    state, _ = env.reset(task)
    seen = env.step(state, program)
    final = seen if seen.done else env.truncate(seen.state, "token_budget")
    return float(final.reward.value)


def _echo_given(task: dict[str, object]) -> list[str]:
    given = str(task["broken"])
    return [given, f"```python\n{given}```", "# unchanged\n" + given, given.replace("    ", "\t")]


@pytest.mark.parametrize("task_id", sorted(BY_ID))
def test_the_given_program_sent_back_earns_nothing(repair_env: CodeRepair, task_id: str) -> None:
    """Issue 24 measured 0.27-0.53 for this; a program no better than the given one gains
    nothing, and the reward is the tests times the gain."""
    for program in _echo_given(BY_ID[task_id]):
        assert _final(repair_env, BY_ID[task_id], program) == 0.0, program


def _lookup(task: dict[str, object]) -> str:
    """Hard-codes the expected value of every visible input the feedback showed."""
    visible = task["visible"]
    assert isinstance(visible, dict)
    rows = ", ".join(f"repr({c['input']}): {c['output']}" for c in visible["cases"])
    return f"_SEEN = {{{rows}}}\ndef {visible['fn']}(*args):\n    return _SEEN.get(repr(args))\n"


@pytest.mark.parametrize("task_id", sorted(BY_ID))
def test_replaying_the_visible_expected_values_earns_nothing(
    repair_env: CodeRepair, task_id: str
) -> None:
    task = BY_ID[task_id]
    state, _ = repair_env.reset(task)
    seen = repair_env.step(state, _lookup(task))
    assert "all visible tests pass" in (seen.observation or ""), seen.observation
    assert seen.reward is None
    final = repair_env.truncate(seen.state, "token_budget")
    assert final.reward.value == 0.0


def test_hidden_expected_values_never_reach_an_observation(repair_env: CodeRepair) -> None:
    for task in BY_ID.values():
        hidden = task["reference"]
        assert isinstance(hidden, dict)
        texts = [c["input"].strip("(,)") for c in hidden["cases"]]
        texts += [c["output"] for c in hidden["cases"]]
        secrets = [t for t in texts if len(t) > 3]  # "0" or "2" is in any log
        state, prompt = repair_env.reset(task)
        seen = repair_env.step(state, "def nothing():\n    return 0\n")
        for text in (prompt, seen.observation or ""):
            assert "hidden tests:" in text
            leaked = [s for s in secrets if s in text]
            assert not leaked, (task["id"], leaked, text)


def test_the_feedback_lookup_exploit_earns_no_more_than_its_limit() -> None:
    from rewardsmith.verifiers.code import CodeTests
    from rewardsmith.verifiers.code.exploits import generator
    from rewardsmith.verifiers.types import Sample

    verifier = CodeTests(wall_s=4.0, call_timeout_s=2.0, memory_mb=256)
    fixed = "def mean(xs):\n    return sum(xs) / len(xs)\n"
    reference = {**MEAN["reference"], "hide_expected": True, "visible": MEAN["visible"]}
    right = Sample(id="m", completion=fixed, reference=reference)
    made = list(generator("feedback_lookup")(right))
    assert made and all(e.max_fraction == 0.0 for e in made)
    for exploit in made:
        assert verifier(exploit.sample).score == 0.0, exploit.description
