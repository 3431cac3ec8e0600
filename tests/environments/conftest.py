"""Environments are shared by a test module: their Scorers start once."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from rewardsmith.environments import CodeRepair, MathWithPython, RetryArithmetic
from rewardsmith.environments.protocol import Transition

DATA = Path(__file__).resolve().parents[2] / "datasets" / "environments"


def tasks(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (DATA / name).read_text().splitlines() if line]


@pytest.fixture(scope="module")
def math_env() -> Iterator[MathWithPython]:
    env = MathWithPython()
    yield env
    env.close()


@pytest.fixture(scope="module")
def repair_env() -> Iterator[CodeRepair]:
    env = CodeRepair()
    yield env
    env.close()


@pytest.fixture(scope="module")
def retry_env() -> Iterator[RetryArithmetic]:
    env = RetryArithmetic()
    yield env
    env.close()


# Sums played through the agent-loop adapters (verifiers 0.3.1 and 0.4.0), each with the
# actions that make its episode: right at once, on the retry, wrong twice, in words, nonsense.
SUMS = [
    {"id": "right", "prompt": "3+4=", "reference": "7"},
    {"id": "retry", "prompt": "2+9=", "reference": "11"},
    {"id": "wrong", "prompt": "5+5=", "reference": "10"},
    {"id": "words", "prompt": "6+1=", "reference": "7"},
    {"id": "nonsense", "prompt": "8+8=", "reference": "16"},
]
SUM_ACTIONS = {
    "right": ["7"],
    "retry": ["12", "11"],
    "wrong": ["1", "2"],
    "words": ["seven"],  # math takes the word, the format check does not
    "nonsense": ["x", "y"],
}


def played_by_hand(
    env: Any,
    task: Mapping[str, Any],
    actions: Sequence[str],
    end: str = "",
    turn_tokens: int = 2,
) -> tuple[list[float | None], Transition]:
    """Our environment, driven by hand through the same actions: each turn's reward and
    the last transition (after `env.truncate(end)` where the driver stopped it first)."""
    state, _ = env.reset(task)
    rewards, step = [], None
    for action in actions:
        assert not state.done, "the script has more turns than the episode"
        step = env.step(state, action, turn_tokens)
        rewards.append(None if step.reward is None else step.reward.value)
        state = step.state
    if end and not state.done:
        step = env.truncate(state, end)
    assert step is not None
    return rewards, step
