"""willccbb/verifiers 0.4.0 (its ``v1`` stack: ``Env.run(task, agents)``, agents'
interactions, the interception server, rollout limits and scoring) plays our environments
through `verifiers_v1`: the reward it records equals our environment's for the same actions.

0.4.0 cannot be imported here: this process has 0.3.1, the ``MultiTurnEnv`` adapter's
release. The Makefile's clients install puts 0.4.0 in ``.venv/verifiers-v1``; the episodes
run in one subprocess with that folder first on its path (``verifiers_v1_episodes.py``,
its docstring says how), and are compared here with our environment stepped by hand. The
model is the only stand-in: a scripted OpenAI-compatible server on localhost. Skipped,
with the reason, where that folder is missing."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections import Counter
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from rewardsmith.environments import RetryArithmetic
from rewardsmith.environments.protocol import Transition
from tests.environments.conftest import SUM_ACTIONS, SUMS, played_by_hand

pytestmark = pytest.mark.slow  # a subprocess that imports verifiers 0.4.0 and the toolkit

REPO = Path(__file__).resolve().parents[2]
VERIFIERS_V1 = Path(sys.prefix) / "verifiers-v1"
"""Where the Makefile's clients install puts verifiers 0.4.0 (in the venv, beside 0.3.1)."""
EPISODES = Path(__file__).with_name("verifiers_v1_episodes.py")
TURN_TOKENS = 2  # what the scripted server reports per reply (verifiers_v1_episodes.py)

FAILING = [
    {"id": "boom", "prompt": "3+4=", "reference": "7"},  # the scorer fails on "boom"
    {"id": "fine", "prompt": "4+4=", "reference": "8"},
    {"id": "no-sandbox", "prompt": "1+1=", "reference": "2", "reset_fails": True},
]
FAILING_ACTIONS = {"boom": ["boom", "7"], "fine": ["8"], "no-sandbox": ["2"]}


def run_under_verifiers_v1(args: Sequence[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """``python -P ARGS`` with verifiers 0.4.0 first on the path and the repo root off it
    (rewardsmith comes from the venv's editable install; our ``verifiers/`` folder would
    shadow theirs)."""
    if not (VERIFIERS_V1 / "verifiers" / "v1").is_dir():
        pytest.skip(f"needs willccbb/verifiers 0.4.0 in {VERIFIERS_V1} (make's clients install)")
    env = {**os.environ, "PYTHONPATH": str(VERIFIERS_V1)}
    return subprocess.run(
        [sys.executable, "-P", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def _case(
    name: str,
    environment: str,
    tasks: list[dict[str, Any]],
    actions: Mapping[str, list[str]],
    folder: Path,
    **env: Any,
) -> dict[str, Any]:
    path = folder / f"{name}.jsonl"
    path.write_text("".join(json.dumps(t) + "\n" for t in tasks))
    script = {t["prompt"]: actions[t["id"]] for t in tasks}
    return {
        "name": name,
        "environment": environment,
        "tasks": str(path),
        "script": script,
        "env": env,
    }


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Every case's episodes as verifiers recorded them, and the model requests."""
    folder = tmp_path_factory.mktemp("verifiers_v1")
    cases = [
        _case("sums", "retry_arithmetic", SUMS, SUM_ACTIONS, folder),
        _case("cut", "retry_arithmetic", SUMS[1:2], SUM_ACTIONS, folder, policy={"max_turns": 1}),
        _case("failing", "failing_arithmetic", FAILING, FAILING_ACTIONS, folder),
    ]
    (folder / "cases.json").write_text(json.dumps(cases))
    done = run_under_verifiers_v1([str(EPISODES), "cases.json", "out.json"], folder)
    assert done.returncode == 0, done.stderr[-4000:]
    return json.loads((folder / "out.json").read_text())


def _episodes(played: dict[str, Any], case: str) -> dict[str, dict[str, Any]]:
    return {e["task"]: e for e in played[case]["episodes"]}


def _requests(played: dict[str, Any], case: str) -> Counter[str]:
    """Model requests per conversation (by its first user message)."""
    return Counter(
        next(m["content"] for m in body["messages"] if m["role"] == "user")
        for body in played[case]["requests"]
    )


def _ours(
    task: Mapping[str, Any], actions: Sequence[str], end: str = ""
) -> tuple[list[float | None], Transition]:
    """retry_arithmetic driven by hand through the same actions (`played_by_hand`)."""
    return played_by_hand(RetryArithmetic(), task, actions, end, TURN_TOKENS)


@pytest.mark.parametrize("task", SUMS, ids=[t["id"] for t in SUMS])
def test_the_reward_verifiers_records_is_our_environments(
    played: dict[str, Any], task: dict[str, Any]
) -> None:
    """Right at once 1.0, on the retry 1.0, wrong twice 0.2, in words 0.8, no number 0.0:
    verifiers' reward and each turn's reward are ours for the same actions."""
    (trace,) = _episodes(played, "sums")[task["id"]]["traces"]
    turn_rewards, final = _ours(task, SUM_ACTIONS[task["id"]])
    assert final.reward is not None
    assert trace["rewards"] == {"environment": final.reward.value}
    assert trace["reward"] == final.reward.value
    assert trace["turn_rewards"] == turn_rewards
    assert trace["end"] == final.state.end == "answered"
    assert trace["ok"] and trace["errors"] == [] and trace["agent"] == "policy"


def test_the_rewards_span_right_and_wrong(played: dict[str, Any]) -> None:
    rewards = {k: e["traces"][0]["reward"] for k, e in _episodes(played, "sums").items()}
    assert rewards == {"right": 1.0, "retry": 1.0, "wrong": 0.2, "words": 0.8, "nonsense": 0.0}


def test_observations_are_relayed_as_user_turns(played: dict[str, Any]) -> None:
    (trace,) = _episodes(played, "sums")["retry"]["traces"]
    assert trace["messages"] == [
        {"role": "user", "content": "2+9="},
        {"role": "assistant", "content": "12"},
        {"role": "user", "content": "wrong, try again"},
        {"role": "assistant", "content": "11"},
    ]


def test_the_episode_end_stops_the_run(played: dict[str, Any]) -> None:
    """One model call per action, none after our episode ended; the exchange closes as
    verifiers' ``user_closed`` (the env, its user, ended it)."""
    assert _requests(played, "sums") == {t["prompt"]: len(SUM_ACTIONS[t["id"]]) for t in SUMS}
    for task in SUMS:
        (trace,) = _episodes(played, "sums")[task["id"]]["traces"]
        assert trace["num_turns"] == len(SUM_ACTIONS[task["id"]])
        assert trace["stop_condition"] == "user_closed"


def test_a_run_verifiers_cuts_is_truncated_and_scored_as_it_stands(played: dict[str, Any]) -> None:
    """The policy's ``max_turns=1`` ends the exchange after the wrong first answer: that
    answer was stepped, then the episode truncated with verifiers' stop condition."""
    (trace,) = _episodes(played, "cut")["retry"]["traces"]
    turn_rewards, final = _ours(SUMS[1], ["12"], end="max_turns")
    assert trace["stop_condition"] == "max_turns" and trace["end"] == "max_turns"
    assert final.reward is not None and trace["rewards"] == {"environment": final.reward.value}
    assert trace["turn_rewards"] == turn_rewards == [None]
    assert _requests(played, "cut") == {"2+9=": 1}


def test_an_environment_failure_is_verifiers_error_not_a_score(played: dict[str, Any]) -> None:
    """The scorer fails on the first answer: the trace and the episode carry the error,
    no reward is recorded (not 0), and the model is not called again."""
    episode = _episodes(played, "failing")["boom"]
    (trace,) = episode["traces"]
    assert not episode["ok"] and not trace["ok"]
    assert [e["type"] for e in episode["errors"]] == ["EnvError"]
    assert "scorer unreachable" in episode["errors"][0]["message"]
    assert [e["type"] for e in trace["errors"]] == ["EnvironmentFailure"]
    assert "environment_error: RuntimeError: scorer unreachable" in trace["errors"][0]["message"]
    assert trace["rewards"] == {}
    assert _requests(played, "failing")["3+4="] == 1


def test_the_same_environment_scores_where_it_does_not_fail(played: dict[str, Any]) -> None:
    episode = _episodes(played, "failing")["fine"]
    assert episode["ok"] and episode["traces"][0]["rewards"] == {"environment": 1.0}


def test_an_episode_that_fails_at_reset_never_reaches_the_model(played: dict[str, Any]) -> None:
    episode = _episodes(played, "failing")["no-sandbox"]
    assert not episode["ok"] and episode["traces"] == []
    assert "sandbox did not start" in episode["errors"][0]["message"]
    assert "1+1=" not in _requests(played, "failing")


DOCS = REPO / "docs" / "environments.md"
SECTION = "## Driven by verifiers 0.4.0 (`v1`)"


def test_the_docs_example_runs_under_verifiers_v1(tmp_path: Path) -> None:
    """docs/environments.md's example for this adapter (marked not-run there: the page's
    other examples run under 0.3.1) runs here under 0.4.0 and prints what it says."""
    section = DOCS.read_text().split(SECTION, 1)[1].split("\n## ", 1)[0]
    (code,) = re.findall(r"```python\n(.*?)^```", section, re.DOTALL | re.MULTILINE)
    (tmp_path / "example.py").write_text(code)
    done = run_under_verifiers_v1([str(tmp_path / "example.py")], REPO)
    assert done.returncode == 0, done.stderr[-4000:]
    printed = re.findall(r"^\s*# (1\.0 .*)$", code, re.MULTILINE)[0]
    assert printed in done.stdout


def test_without_verifiers_0_4_0_the_import_says_what_to_install() -> None:
    """This process has 0.3.1 (or no verifiers): no ``v1``, and the error names the install."""
    with pytest.raises(ImportError, match=r"verifiers 0\.4\.0.*\.venv/verifiers-v1"):
        import rewardsmith.environments.integrations.verifiers_v1  # noqa: F401
