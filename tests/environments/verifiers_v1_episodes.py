"""Episodes of our environments played by willccbb/verifiers 0.4.0, for test_verifiers_v1.

Run as a script under 0.4.0 (``python -P`` with its folder first on PYTHONPATH: the test
starts it so; 0.3.1, the other adapter's release, is what the test process imports):

    python -P verifiers_v1_episodes.py CASES.json OUT.json

CASES.json: ``[{"name", "environment", "tasks", "script", "policy"?}]``, ``script``
mapping a conversation's first user message to the model's replies. Each case runs its
tasks as concurrent episodes through verifiers' own path (``load_environment``,
``serving``, ``run_episode``: agents, interactions, the interception server, its eval
client, the rollout's limits and scoring). The model is the only stand-in: an
OpenAI-compatible HTTP server on localhost that answers from the script. OUT.json gets,
per case, each episode as verifiers recorded it and the requests the server answered.
"""

from __future__ import annotations

import asyncio
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from rewardsmith.environments import RetryArithmetic
from rewardsmith.environments.episodes import ENVIRONMENTS
from rewardsmith.environments.integrations import verifiers_v1

vf = verifiers_v1.vf
TURN_TOKENS = 2
"""What the scripted server reports as each reply's completion tokens."""
USAGE = {"prompt_tokens": 1, "completion_tokens": TURN_TOKENS, "total_tokens": 1 + TURN_TOKENS}


class FailingArithmetic(RetryArithmetic):
    """retry_arithmetic whose scorer is down for the answer "boom" (the environment's
    failure, not the model's), and whose episode ends at reset for a task that asks it to,
    as code_repair's does when its sandbox cannot start."""

    name = "failing_arithmetic"

    def reset(self, task: Any) -> Any:
        state, prompt = super().reset(task)
        if task.get("reset_fails"):
            state = state.ended("environment_error: the task's sandbox did not start")
        return state, prompt

    def answer(self, state: Any, action: str) -> Any:
        if action == "boom":
            raise RuntimeError("scorer unreachable")
        return super().answer(state, action)


ENVIRONMENTS[FailingArithmetic.name] = FailingArithmetic


def serve(script: dict[str, list[str]], requests: list[dict[str, Any]]) -> ThreadingHTTPServer:
    """The scripted model: replies for the conversation whose first user message is the
    key, the turn being the assistant messages so far; every request body is kept."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            requests.append(body)
            messages = body["messages"]
            first = next(m["content"] for m in messages if m["role"] == "user")
            turn = sum(m["role"] == "assistant" for m in messages)
            message = {"role": "assistant", "content": script[first][turn]}
            reply = json.dumps(
                {"id": "c", "object": "chat.completion", "created": 0, "model": body["model"]}
                | {"choices": [{"index": 0, "finish_reason": "stop", "message": message}]}
                | {"usage": USAGE}
            ).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def trace_record(trace: Any) -> dict[str, Any]:
    return {
        "agent": trace.agent.name,
        "ok": trace.ok,
        "stop_condition": trace.stop_condition,
        "rewards": {k: None if r is None else r.value for k, r in trace.rewards.items()},
        "reward": trace.reward,
        "errors": [{"type": e.type, "message": e.message} for e in trace.errors],
        "messages": [
            {"role": m.role, "content": vf.types.content_text(m.content)} for m in trace.messages
        ],
        "turn_rewards": trace.state.turn_rewards,
        "end": trace.state.end,
        "num_turns": trace.num_turns,
    }


async def run_case(case: dict[str, Any], base_url: str) -> list[dict[str, Any]]:
    config = verifiers_v1.environment_config(
        case["environment"], case["tasks"], **case.get("env", {})
    )
    env = vf.load_environment(config)
    client = vf.EvalClientConfig(base_url=base_url, api_key_var="SCRIPTED_MODEL_KEY")
    ctx = vf.ModelContext(model="scripted", client=client)
    async with env.serving():
        episodes = await asyncio.gather(*(env.run_episode(task, ctx) for task in env.taskset))
    return [
        {
            "task": episode.task.data.id,
            "ok": episode.ok,
            "errors": [{"type": e.type, "message": e.message} for e in episode.errors],
            "traces": [trace_record(t) for t in episode.traces],
        }
        for episode in episodes
    ]


def main(cases_path: str, out_path: str) -> None:
    cases = json.loads(Path(cases_path).read_text())
    results = {}
    for case in cases:
        requests: list[dict[str, Any]] = []
        server = serve(case["script"], requests)
        try:
            url = f"http://127.0.0.1:{server.server_address[1]}/v1"
            episodes = asyncio.run(run_case(case, url))
        finally:
            server.shutdown()
        results[case["name"]] = {"episodes": episodes, "requests": requests}
    Path(out_path).write_text(json.dumps(results, default=str))


if __name__ == "__main__":
    main(*sys.argv[1:])
