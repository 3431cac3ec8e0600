"""The stateful `python` tool of math_tool: variables survive calls and turns, the session
is the episode's own (another episode never sees it, it dies with its episode, it resumes
from the episode's JSON), failed cells are not kept, and hostile code is still jailed."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from rewardsmith.environments import MathWithPython
from rewardsmith.environments.protocol import EpisodeState
from rewardsmith.environments.python_session import session_cells

pytestmark = pytest.mark.sandbox


@pytest.fixture(scope="module")
def env() -> Iterator[MathWithPython]:
    environment = MathWithPython(session=True)
    yield environment
    environment.close()


def call(code: str) -> str:
    return (
        "<tool_call>" + json.dumps({"name": "python", "arguments": {"code": code}}) + "</tool_call>"
    )


def start(env: MathWithPython, task_id: str = "s") -> EpisodeState:
    return env.reset({"id": task_id, "prompt": "What is 41 + 1?", "reference": "42"})[0]


def test_variables_functions_and_files_survive_turns(env: MathWithPython) -> None:
    state = start(env)
    first = env.step(
        state, call("x = 40\ndef inc(v):\n    return v + 1\nopen('n.txt', 'w').write('1')")
    )
    assert first.observation == "(the program printed nothing)"
    second = env.step(first.state, call("print(inc(x) + int(open('n.txt').read()))"))
    assert (second.observation or "").strip() == "42"
    assert env.step(second.state, "\\boxed{42}").reward.value == 1.0


def test_calls_of_one_turn_run_in_order_each_seeing_the_last(env: MathWithPython) -> None:
    state = start(env)
    action = call("a = 2") + call("b = a * 21") + call("print(b)")
    observation = env.step(state, action).observation or ""
    assert observation.split("\n")[-1].strip() == "42" or "42" in observation.split()


def test_earlier_output_is_not_replayed(env: MathWithPython) -> None:
    state = env.step(start(env), call("print('once')\ny = 1")).state
    observation = env.step(state, call("print(y)")).observation or ""
    assert observation.split() == ["1"], observation


@pytest.mark.parametrize(
    "bad",
    [
        "z = 5\nraise ValueError('no')",  # an exception after the assignment
        "z = 5\nwhile True: pass",  # past the time limit
        "z = 5\nimport ctypes; ctypes.string_at(0)",  # killed by a signal
        "z = 5\n" + "(",  # a syntax error
    ],
)
def test_a_failed_cell_is_not_kept(env: MathWithPython, bad: str) -> None:
    after = env.step(start(env), call(bad)).state
    assert session_cells(after.attempts) == []
    observation = env.step(after, call("print(z)")).observation or ""
    assert "NameError" in observation, observation


def test_sessions_are_per_episode_and_resume_from_json(env: MathWithPython) -> None:
    mine = env.step(start(env, "a"), call("secret = 1234")).state
    other = env.step(start(env, "b"), call("print(secret)")).observation or ""
    assert "NameError" in other  # another episode never sees this one's session
    resumed = EpisodeState.from_dict(json.loads(json.dumps(mine.to_dict())))
    assert (env.step(resumed, call("print(secret)")).observation or "").strip() == "1234"


@pytest.mark.parametrize(
    "hostile",
    [
        "import socket\nsocket.create_connection(('127.0.0.1', 22), timeout=1)",
        "print(open('/work/wt/multiturn/datasets/environments/math.jsonl').read())",
        "import os\nprint(sorted(os.listdir('/work/wt/multiturn')))",
        "import os\nos.kill(1, 9)",
    ],
)
def test_hostile_cells_are_still_jailed(env: MathWithPython, hostile: str) -> None:
    state = env.step(start(env), call("keep = 7")).state
    observation = env.step(state, call(hostile)).observation or ""
    assert "2147483647" not in observation and "m-pow" not in observation
    assert "'datasets'" not in observation  # the project is not in the jail (its venv is)
    assert "Connection" not in observation or "Error" in observation  # no network
    assert (env.step(state, call("print(keep)")).observation or "").strip() == "7"


def test_the_one_off_tool_keeps_nothing() -> None:
    plain = MathWithPython()
    try:
        state = plain.step(start(plain), call("w = 3")).state
        assert "NameError" in (plain.step(state, call("print(w)")).observation or "")
    finally:
        plain.close()
