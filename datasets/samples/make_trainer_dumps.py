"""Write the two trainer-shaped sample dumps (deterministic; run to regenerate):

- ``verl_generations.jsonl``: a veRL generation dump (``trainer.rollout_data_dir``), written
  by veRL 0.9.1's own writer run from its installed source (`tests.support.verl_dump`):
  the capitals questions of demo.jsonl as a chat-templated prompt, one answer each,
  ``gts`` the capital, ``score`` what veRL's reward gave, ``acc`` an extra reward column.
- ``agent_trajectories.jsonl``: multi-turn rows in the chat-messages shape transformers'
  chat templates take: an assistant that calls a calculator tool, reads its results
  (one of them an error) and answers.

Run ``python datasets/samples/make_trainer_dumps.py`` (needs ``make .venv/.installed-clients``).
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[1]))  # the repo root, for tests.support

from tests.support.verl_dump import verl_write_generations  # noqa: E402

CAPITALS = [("France", "Paris", "Paris"), ("Japan", "Tokyo", "Kyoto"), ("Kenya", "Nairobi",
            "Nairobi"), ("Peru", "Lima", "lima")]  # fmt: skip


def verl_generations(target: Path) -> None:
    inputs = [
        f"<|im_start|>user\nWhat is the capital of {country}?<|im_end|>\n<|im_start|>assistant\n"
        for country, _, _ in CAPITALS
    ]
    outputs = [answer for _, _, answer in CAPITALS]
    gts = [capital for _, capital, _ in CAPITALS]
    scores = [float(a.lower() == c.lower()) for a, c in zip(outputs, gts, strict=True)]
    with tempfile.TemporaryDirectory() as folder:
        verl_write_generations()(inputs, outputs, gts, scores, {"acc": scores}, folder, 10)
        target.write_text((Path(folder) / "10.jsonl").read_text(), encoding="utf-8")


def _call(call_id: str, expression: str) -> dict:
    function = {"name": "calculate", "arguments": {"expression": expression}}
    return {"role": "assistant", "content": None,
            "tool_calls": [{"type": "function", "id": call_id, "function": function}]}  # fmt: skip


def _result(call_id: str, content: str) -> dict:
    return {"role": "tool", "name": "calculate", "tool_call_id": call_id, "content": content}


def agent_trajectories(target: Path) -> None:
    system = {"role": "system", "content": "Use the calculate tool, then answer with a number."}
    rows = [
        {
            "id": "calc-right",
            "task": "arithmetic",
            "answer": "391",
            "messages": [system, {"role": "user", "content": "What is 17 * 23?"},
                         _call("c1", "17 * 23"), _result("c1", "391"),
                         {"role": "assistant", "content": "391"}],
        },
        {
            "id": "calc-retry",
            "task": "arithmetic",
            "answer": "1024",
            "messages": [system, {"role": "user", "content": "What is 2 to the power 10?"},
                         _call("c1", "2 ^ 10"), _result("c1", "error: ^ is not an operator"),
                         _call("c2", "2 ** 10"), _result("c2", "1024"),
                         {"role": "assistant", "content": "1024"}],
        },
        {
            "id": "calc-misread",
            "task": "arithmetic",
            "answer": "4",
            "messages": [system, {"role": "user", "content": "What is 12 / 3?"},
                         _call("c1", "12 / 3"), _result("c1", "4.0"),
                         {"role": "assistant", "content": "The answer is four."}],
        },
    ]  # fmt: skip
    target.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")


if __name__ == "__main__":
    verl_generations(HERE / "verl_generations.jsonl")
    agent_trajectories(HERE / "agent_trajectories.jsonl")
    print(f"wrote {HERE / 'verl_generations.jsonl'} and {HERE / 'agent_trajectories.jsonl'}")
