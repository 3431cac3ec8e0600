"""willccbb/verifiers' own rollout loop (``MultiTurnEnv.rollout``, its stop conditions, its
Rubric, its OpenAI chat client) drives our environments: the reward it records equals the
reward our environment gives the same actions.

The model is the only stand-in: an OpenAI-compatible server answered by a scripted handler
(an httpx transport under the real ``AsyncOpenAI`` client), replying per task and turn,
with a small random delay so that concurrent rollouts interleave. Skipped, with the reason,
where verifiers is not installed (`make test` installs it)."""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

vf_env = pytest.importorskip(
    "rewardsmith.environments.integrations.verifiers_env",
    reason="needs willccbb/verifiers 0.3.x (the Makefile's clients install)",
)

import httpx  # noqa: E402
from openai import AsyncOpenAI  # noqa: E402

from rewardsmith.environments import CodeRepair, MathWithPython, RetryArithmetic  # noqa: E402
from rewardsmith.environments.base import EnvironmentFailure, ToolEnvironment  # noqa: E402
from rewardsmith.environments.protocol import EpisodeLimits, EpisodeState  # noqa: E402
from rewardsmith.environments.tools import Tool, parse_tool_calls  # noqa: E402
from tests.environments.conftest import SUM_ACTIONS, SUMS, played_by_hand, tasks  # noqa: E402

vf = vf_env.vf
Reply = str | dict[str, Any]
"""A scripted assistant message: its text, or ``{"content", "tool_calls"}``."""
TURN_TOKENS = 2
"""What the scripted server reports as each reply's completion tokens."""


class ScriptedServer:
    """An OpenAI chat-completions server whose "model" replies from a script: the replies
    for a conversation are those of its first user message, the turn is the number of
    assistant messages so far. Every request body is kept."""

    def __init__(self, script: Mapping[str, Sequence[Reply]]) -> None:
        self.script, self.requests = script, []  # type: ignore[var-annotated]
        self.rng = random.Random(0)

    def client(self) -> Any:
        transport = httpx.MockTransport(self._answer)
        http = httpx.AsyncClient(transport=transport)
        openai = AsyncOpenAI(api_key="none", base_url="http://scripted/v1", http_client=http)
        return vf.OpenAIChatCompletionsClient(openai)

    async def _answer(self, request: httpx.Request) -> httpx.Response:
        await asyncio.sleep(self.rng.random() / 50)  # let concurrent rollouts interleave
        body = json.loads(request.content)
        self.requests.append(body)
        messages = body["messages"]
        turn = sum(m["role"] == "assistant" for m in messages)
        reply = self.script[messages[0]["content"]][turn]
        message = {"role": "assistant", **({"content": reply} if isinstance(reply, str) else reply)}
        usage = {"prompt_tokens": 1, "completion_tokens": TURN_TOKENS, "total_tokens": 3}
        choice = {"index": 0, "finish_reason": "stop", "message": message}
        return httpx.Response(
            200,
            json={"id": "c", "object": "chat.completion", "created": 0, "model": body["model"]}
            | {"choices": [choice], "usage": usage},
        )


def _evaluate(env: Any, server: ScriptedServer, **kwargs: Any) -> list[dict[str, Any]]:
    results = env.evaluate_sync(
        server.client(), model="scripted", state_columns=["trajectory"], **kwargs
    )
    return sorted(results["outputs"], key=lambda o: o["example_id"])


def _prompt(env: ToolEnvironment, task: Mapping[str, Any]) -> str:
    """The first message the model is sent: the environment's chat record of the prompt
    (what our trainer's chat-template path and the veRL loop send too)."""
    return str(env.reset(task)[0].messages[0]["content"])


def test_rows_carry_the_task_outside_the_prompt() -> None:
    env = MathWithPython()
    rows = vf_env.verifiers_rows(env, tasks("math.jsonl")[:3])
    for row, task in zip(rows, tasks("math.jsonl")[:3], strict=True):
        assert row["prompt"] == [dict(m) for m in env.reset(task)[0].messages]
        assert str(task["reference"]) not in json.dumps(row["prompt"])
        assert json.loads(row["info"])[vf_env.TASK] == task


def test_verifiers_records_our_reward_for_every_episode(retry_env: RetryArithmetic) -> None:
    """Answered first time, answered on the retry, wrong twice, format only: verifiers'
    reward, its per-turn rewards and its transcript are our environment's, with all
    rollouts (two per task) in flight at once."""
    script = {_prompt(retry_env, t): SUM_ACTIONS[t["id"]] for t in SUMS}
    server = ScriptedServer(script)
    outputs = _evaluate(
        vf_env.EnvironmentMultiTurnEnv(retry_env, SUMS), server, rollouts_per_example=2
    )
    assert len(outputs) == 2 * len(SUMS)
    for output in outputs:
        task = SUMS[output["example_id"]]
        actions = SUM_ACTIONS[task["id"]]
        rewards, final = played_by_hand(retry_env, task, actions)
        assert final.done and final.reward is not None
        assert output["reward"] == final.reward.value
        assert output["metrics"]["environment_reward"] == final.reward.value
        assert output["metrics"]["environment_error"] == 0.0 and output["error"] is None
        assert output["stop_condition"] == "episode_over"
        assert [step["reward"] for step in output["trajectory"]] == _as_verifiers_fills(
            rewards, final.reward.value
        )
        said = [(m.role, m.content) for m in output["completion"]]
        expected = [("assistant", actions[0])]
        for action in actions[1:]:
            expected += [("user", retry_env.retry_text), ("assistant", action)]
        assert said == expected
    assert {o["reward"] for o in outputs} == {1.0, 0.8, 0.2, 0.0}, "the table spans rewards"
    assert len(server.requests) == sum(2 * len(a) for a in SUM_ACTIONS.values())


def test_a_rollout_verifiers_stops_first_is_scored_as_it_stands(
    retry_env: RetryArithmetic,
) -> None:
    """verifiers' own ``max_turns`` ends the rollout before its env_response: the last
    action is still stepped, then the episode is truncated, as our own driver does."""
    task = SUMS[1]
    server = ScriptedServer({_prompt(retry_env, task): ["12", "11"]})
    env = vf_env.EnvironmentMultiTurnEnv(retry_env, [task], max_turns=1)
    (output,) = _evaluate(env, server)
    _, final = played_by_hand(retry_env, task, ["12"], end="max_turns_reached")
    assert final.state.end == "max_turns_reached" and final.reward is not None
    assert output["stop_condition"] == "max_turns_reached"
    assert output["reward"] == final.reward.value == 0.2
    assert len(server.requests) == 1


def _down(query: str) -> str:
    """Look something up in a service that is down.

    Args:
        query: What to look up.
    """
    raise EnvironmentFailure("the lookup service did not answer")


class LookupDown(ToolEnvironment):
    """A tool environment whose tool's own service fails: the environment's failure."""

    name = "lookup_down"
    tools = (Tool(_down, name="lookup"),)

    def __init__(self) -> None:
        super().__init__({"exact_match": {}}, EpisodeLimits(max_turns=3))


def test_an_environment_error_is_verifiers_infra_error_not_a_score() -> None:
    env = LookupDown()
    task = {"id": "q", "prompt": "What is the capital of France?", "reference": "Paris"}
    call = '<tool_call>{"name": "lookup", "arguments": {"query": "France"}}</tool_call>'
    server = ScriptedServer({_prompt(env, task): [call, "Paris"]})
    (output,) = _evaluate(vf_env.EnvironmentMultiTurnEnv(env, [task]), server)
    rewards, final = played_by_hand(env, task, [call])
    assert final.done and final.reward is None and rewards == [None]
    assert final.state.end.startswith("environment_error")
    assert output["error"]["error"] == "InfraError"
    assert "lookup service did not answer" in output["error"]["message"]
    assert output["metrics"]["environment_error"] == 1.0
    assert output["reward"] == 0.0 and output["stop_condition"] == "has_error"
    assert len(server.requests) == 1, "no turn after the environment failed"
    # The same episode, answered without the tool, is scored as usual.
    server = ScriptedServer({_prompt(env, task): ["Paris"]})
    (answered,) = _evaluate(vf_env.EnvironmentMultiTurnEnv(env, [task]), server)
    assert answered["reward"] == 1.0 and answered["error"] is None
    env.close()


class StartDown(LookupDown):
    """An environment whose episode cannot start (a repair task whose sandbox did not run
    the given program ends at reset, as ``environment_error``)."""

    def reset(self, task: Mapping[str, Any]) -> tuple[EpisodeState, str]:
        state, prompt = super().reset(task)
        return state.ended("environment_error: the workspace did not start"), prompt


def test_an_episode_that_cannot_start_never_reaches_the_model() -> None:
    env = StartDown()
    task = {"id": "q", "prompt": "What is the capital of France?", "reference": "Paris"}
    server = ScriptedServer({_prompt(env, task): ["Paris"]})
    (output,) = _evaluate(vf_env.EnvironmentMultiTurnEnv(env, [task]), server)
    assert server.requests == [] and output["completion"] == []
    assert output["error"]["error"] == "InfraError" and output["reward"] == 0.0
    assert output["metrics"]["environment_error"] == 1.0
    env.close()


@pytest.mark.sandbox
def test_code_repair_over_turns_records_our_reward() -> None:
    """A wrong fix (the test log comes back as the next user message; no reward yet: a
    retried step earns nothing), then the right one: verifiers' rewards are ours."""
    env = CodeRepair()
    task = next(t for t in tasks("code_repair.jsonl") if t["id"] == "r-mean")
    actions = [
        "```python\ndef mean(xs):\n    return sum(xs)\n```",
        "```python\ndef mean(xs):\n    return sum(xs) / len(xs)\n```",
    ]
    server = ScriptedServer({_prompt(env, task): actions})
    (output,) = _evaluate(vf_env.EnvironmentMultiTurnEnv(env, [task]), server)
    rewards, final = played_by_hand(env, task, actions)
    assert final.reward is not None and output["reward"] == final.reward.value
    assert [s["reward"] for s in output["trajectory"]] == _as_verifiers_fills(
        rewards, final.reward.value
    )
    assert rewards[0] is None and output["reward"] == pytest.approx(1.0)
    log = server.requests[1]["messages"][-1]
    assert log["role"] == "user" and "all tests pass" not in log["content"]
    env.close()


@pytest.mark.sandbox
def test_tool_calls_in_text_or_native_reach_our_sandboxed_tool() -> None:
    """A tool call written in the text and the same call as a native OpenAI tool call (a
    server with a tool parser moves it out of the text): the sandboxed tool runs, its
    output comes back (a user message, or a tool message answering the call's id), and the
    rewards equal ours for the same action text."""
    env = MathWithPython()
    task = {"id": "pow", "prompt": "What is 2**10?", "reference": "1024"}
    code = {"code": "print(2**10)"}
    text_call = json.dumps({"name": "python", "arguments": code})
    native = {
        "content": "",
        "tool_calls": [
            {
                "id": "call_7",
                "type": "function",
                "function": {"name": "python", "arguments": json.dumps(code)},
            }
        ],
    }
    replies: dict[str, list[Reply]] = {
        "text": [f"<tool_call>{text_call}</tool_call>", "\\boxed{1024}"],
        "native": [native, "\\boxed{1024}"],
    }
    for kind, script in replies.items():
        server = ScriptedServer({_prompt(env, task): script})
        vf_environment = vf_env.EnvironmentMultiTurnEnv(env, [task])
        assert [t.name for t in vf_environment.tool_defs] == ["python"]
        (output,) = _evaluate(vf_environment, server)
        second = server.requests[1]
        assert second["tools"][0]["function"]["name"] == "python"
        result = second["messages"][-1]
        if kind == "native":
            assert result == {"role": "tool", "tool_call_id": "call_7", "content": "1024\n"}
        else:
            assert result["role"] == "user" and result["content"].strip() == "1024"
        message = output["trajectory"][0]["completion"][-1]
        first_action = vf_env.action_text(message)
        assert parse_tool_calls(first_action, env.tools)[0].arguments == code
        rewards, final = played_by_hand(env, task, [first_action, "\\boxed{1024}"])
        assert final.reward is not None and output["reward"] == final.reward.value == 1.0
        # A step that earned nothing yet (the tool call) gets the episode's, as verifiers does.
        assert [s["reward"] for s in output["trajectory"]] == [
            output["reward"] if r is None else r for r in rewards
        ]
    env.close()


def _as_verifiers_fills(turn_rewards: list[float | None], final: float | None) -> list[Any]:
    """Our turn rewards as verifiers' Rubric leaves them on its trajectory: a step that
    earned nothing yet (None) is given the rollout's reward when the group is scored."""
    return [final if reward is None else reward for reward in turn_rewards]
