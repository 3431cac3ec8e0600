"""Math with a sandboxed Python tool: solving works, and every hostile action earns nothing."""

from __future__ import annotations

import json
import pickle

import pytest

from rewardsmith.environments import EpisodeState, MathWithPython
from rewardsmith.environments.math_tool import MATH_TASKS
from tests.environments.conftest import tasks

TASK = {"id": "m", "prompt": "What is 7**222 modulo 1000?", "reference": "49", "task": "math"}


def tool(code: str) -> str:
    return (
        "<tool_call>" + json.dumps({"name": "python", "arguments": {"code": code}}) + "</tool_call>"
    )


def test_bundled_tasks_load_and_are_solvable_by_their_reference(math_env: MathWithPython) -> None:
    rows = tasks("math.jsonl")
    assert len(rows) >= 10 and MATH_TASKS.is_file()
    for row in rows[:3]:
        state, prompt = math_env.reset(row)
        assert row["reference"] not in prompt
        assert math_env.step(state, f"\\boxed{{{row['reference']}}}").reward.value == 1.0


@pytest.mark.sandbox
def test_compute_then_answer(math_env: MathWithPython) -> None:
    state, _ = math_env.reset(TASK)
    seen = math_env.step(state, tool("print(pow(7, 222, 1000))"))
    assert (seen.observation.strip(), seen.done, seen.reward) == ("49", False, None)
    assert seen.state.messages[-1]["role"] == "tool"
    assert seen.state.messages[-2]["tool_calls"][0]["function"]["name"] == "python"
    final = math_env.step(seen.state, "\\boxed{49}")
    assert final.done and final.reward.value == 1.0 and final.state.end == "answered"


@pytest.mark.sandbox
@pytest.mark.parametrize(
    ("action", "expected"),
    [
        ('<tool_call>{"name": "python", "arguments": {"code": 5}}</tool_call>', "must be string"),
        ('<tool_call>{"name": "python", "arguments": {}}</tool_call>', "missing argument"),
        ("<tool_call>{'name': 'python'}</tool_call>", "not valid JSON"),
        ('<tool_call>{"name": "shell", "arguments": {"cmd": "ls"}}</tool_call>', "unknown tool"),
        (tool("while True: pass"), "ran past"),
        (tool("import os\nwhile True: os.fork()"), "stopped"),
        (tool("x = bytearray(1 << 31)"), "MiB"),
        (tool("raise SystemExit(3)"), "exit code 3"),
        (tool("print('x' * 10_000_000)"), "stopped"),
    ],
)
def test_hostile_tool_calls_give_clear_observations(
    math_env: MathWithPython, action: str, expected: str
) -> None:
    state, _ = math_env.reset(TASK)
    seen = math_env.step(state, action)
    assert not seen.done and expected in seen.observation, seen.observation


READ_REFERENCE = [
    f"print(open({str(MATH_TASKS)!r}).read())",
    "import rewardsmith.environments.math_tool as m; print(open(m.MATH_TASKS).read())",
    "import os; print([l for l in open('/proc/1/environ', 'rb')])",
    "import subprocess; print(subprocess.run(['grep', '-r', '49', '/work'], capture_output=True))",
    "import gc; print([o for o in gc.get_objects() if isinstance(o, dict) and 'reference' in o])",
]


@pytest.mark.sandbox
@pytest.mark.parametrize("code", READ_REFERENCE)
def test_the_tool_cannot_read_the_reference(math_env: MathWithPython, code: str) -> None:
    task = {**TASK, "reference": "7345-unique-reference-9912"}
    state, prompt = math_env.reset(task)
    seen = math_env.step(state, tool(code))
    assert task["reference"] not in seen.observation and task["reference"] not in prompt


def test_an_episode_that_never_answers_ends_at_the_turn_limit_with_zero(
    math_env: MathWithPython,
) -> None:
    state, _ = math_env.reset(TASK)
    bad = '<tool_call>{"name": "nope"}</tool_call>'
    for _ in range(math_env.limits.max_turns):
        seen = math_env.step(state, bad + " \\boxed{49}")  # an answer beside a call is no answer
        state = seen.state
    assert seen.done and seen.state.end == "turn_limit" and seen.reward.value == 0.0
    with pytest.raises(ValueError, match="is done"):
        math_env.step(state, "\\boxed{49}")


def test_an_overlong_action_is_refused_and_scores_nothing(math_env: MathWithPython) -> None:
    state, _ = math_env.reset(TASK)
    action = "\\boxed{49}" + " " * 30_000
    seen = math_env.step(state, action, action_tokens=10)
    assert not seen.done and "at most" in seen.observation
    assert math_env.truncate(seen.state, "token_budget").reward.value == 0.0
    counted = math_env.step(state, action)  # no token count given: characters count
    assert counted.done and counted.state.end == "token_budget" and counted.reward.value == 0.0


def test_truncation_before_an_answer_scores_zero(math_env: MathWithPython) -> None:
    state, _ = math_env.reset(TASK)
    final = math_env.truncate(state, "token_budget")
    assert final.done and final.reward.value == 0.0 and final.state.end == "token_budget"


def test_state_round_trips_json_and_the_environment_pickles(math_env: MathWithPython) -> None:
    state, _ = math_env.reset(TASK)
    state = math_env.step(state, '<tool_call>{"name": "nope"}</tool_call>').state
    again = EpisodeState.from_dict(json.loads(json.dumps(state.to_dict())))
    assert again == state
    env = pickle.loads(pickle.dumps(math_env))
    assert isinstance(env, MathWithPython)
    assert env.step(again, "\\boxed{49}").reward.value == 1.0
    env.close()
