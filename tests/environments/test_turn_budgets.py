"""Every `ToolEnvironment` runs a turn's calls together within its time budgets, a tool
killed by a signal says so by name, and an environment whose sandbox cannot start ends
the episode as ``environment_error`` (no reward), never a test log or a tool result."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from typing import Any, ClassVar

import pytest

from rewardsmith.environments import CodeRepair, MathWithPython
from rewardsmith.environments.base import ToolEnvironment
from rewardsmith.environments.math_tool import python
from rewardsmith.environments.timed_tools import TimedTools
from rewardsmith.environments.tools import Tool

_MEET = threading.Barrier(3)
_NEVER = threading.Event()


def meet(tag: str) -> str:
    """Wait until two other calls wait too.

    Args:
        tag: a label
    """
    _MEET.wait(timeout=30)  # passes only if three calls run at the same time
    return f"met {tag}"


def hang(tag: str) -> str:
    """Never come back within a turn.

    Args:
        tag: a label
    """
    _NEVER.wait(timeout=30)
    return f"woke {tag}"


class Together(ToolEnvironment):
    name: ClassVar[str] = "together"
    tools = (Tool(meet), Tool(hang))
    turn_budget_s: ClassVar[float] = 1.0
    episode_budget_s: ClassVar[float] = 2.5

    def __init__(self) -> None:
        super().__init__({"exact_match": {"weight": 1.0}})


def calls(*pairs: tuple[str, str]) -> str:
    return "".join(
        "<tool_call>" + json.dumps({"name": n, "arguments": {"tag": t}}) + "</tool_call>"
        for n, t in pairs
    )


def test_one_mechanism_the_old_mixin_is_the_base() -> None:
    assert TimedTools is ToolEnvironment


def test_calls_of_one_turn_run_together_and_a_hanging_one_is_cut() -> None:
    env = Together()
    state, _ = env.reset({"id": "t", "prompt": "p", "reference": "x"})
    action = calls(("meet", "a"), ("meet", "b"), ("meet", "c"), ("hang", "d"))
    transition = env.step(state, action)  # one after another, the barrier would break
    observation = transition.observation or ""
    assert [f"met {t}" in observation for t in "abc"] == [True] * 3, observation
    assert "tool 'hang' did not finish within the turn's 1 s budget" in observation
    assert "woke" not in observation
    assert transition.state.attempts[-1]["meta"]["tool_s"] >= 1.0


def test_the_episode_budget_ends_the_episode_scored_as_it_stands() -> None:
    env = Together()
    state, _ = env.reset({"id": "t", "prompt": "p", "reference": "x"})
    ends = []
    for _ in range(3):
        transition = env.step(state, calls(("hang", "a")))
        ends.append(transition.state.end)
        if transition.done:
            break
        state = transition.state
    assert ends[-1] == "time_budget" and transition.reward is not None
    assert transition.reward.value == 0.0  # no answer: the model's failure


@pytest.mark.parametrize(
    ("code", "printed"),
    [
        ("import ctypes\nprint('partial', flush=True)\nctypes.string_at(0)", "partial"),
        ("import os\nprint('before', flush=True)\nos.abort()", "before"),
    ],
)
def test_a_tool_killed_by_a_signal_says_so_by_name(code: str, printed: str) -> None:
    observation = python(code)
    assert printed in observation  # the partial output is kept
    assert "killed by SIG" in observation, observation


def test_a_repair_attempt_killed_by_a_signal_says_so(repair_env: CodeRepair) -> None:
    task = {
        "id": "sig",
        "prompt": "Fix `double`.",
        "broken": "def double(x): return x + 2",
        "visible": {"format": "calls", "fn": "double", "cases": [{"input": "(3,)", "output": "6"}]},
        "reference": {
            "format": "calls",
            "fn": "double",
            "cases": [{"input": "(5,)", "output": "10"}],
        },
    }
    state, _ = repair_env.reset(task)
    program = "import ctypes\nctypes.string_at(0)\ndef double(x): return 2 * x"
    transition = repair_env.step(state, program)
    assert "killed by SIGSEGV" in (transition.observation or ""), transition.observation


_NO_SANDBOX = """
import json
from rewardsmith.environments import CodeRepair, MathWithPython
call = '<tool_call>{"name": "python", "arguments": {"code": "print(4)"}}</tool_call>'
math = MathWithPython()
state, _ = math.reset({"id": "m", "prompt": "2+2?", "reference": "4"})
t = math.step(state, call)
repair = CodeRepair()
cases = {"format": "calls", "fn": "f", "cases": [{"input": "(1,)", "output": "1"}]}
rstate, prompt = repair.reset({"id": "r", "prompt": "Fix f.", "broken": "def f(x): return 0",
                               "visible": cases, "reference": cases})
print(json.dumps({"math": [t.done, t.reward is None, t.state.end, t.observation],
                  "repair": [rstate.done, rstate.end, prompt]}))
"""


def test_an_environment_whose_sandbox_cannot_start_ends_as_environment_error() -> None:
    env = {**os.environ, "REWARDSMITH_SANDBOX_MODE": "no-such-mode"}
    done = subprocess.run(
        [sys.executable, "-c", _NO_SANDBOX], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    done_, no_reward, end, observation = result["math"]
    assert done_ and no_reward and end.startswith("environment_error") and observation is None
    assert "no-such-mode" in end
    started_done, repair_end, prompt = result["repair"]
    assert started_done and repair_end.startswith("environment_error")
    assert "no-such-mode" not in prompt  # never shown to the model as "test results"


def test_parallel_sandboxed_calls_each_get_their_own_result(math_env: MathWithPython) -> None:
    state, _ = math_env.reset({"id": "m", "prompt": "p", "reference": "1"})
    action = "".join(
        "<tool_call>"
        + json.dumps({"name": "python", "arguments": {"code": f"print({i} * 111)"}})
        + "</tool_call>"
        for i in range(1, 5)
    )
    observation = math_env.step(state, action).observation or ""
    assert observation.split() == ["111", "222", "333", "444"], observation
