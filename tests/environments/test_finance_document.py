"""finance_document: the expert earns full reward, the lazy policy and every exploit class
earn nothing, bad input is an observation, and the tools run in parallel under budgets."""

from __future__ import annotations

import json
import pickle
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest

from rewardsmith.environments import EpisodeLimits, FinanceDocument, Tool
from rewardsmith.environments.calc import evaluate
from rewardsmith.environments.episode_exploits import play
from rewardsmith.environments.episodes import spec_document
from rewardsmith.environments.finance_document import (
    expert_actions,
    page_text,
    search,
    table,
)
from rewardsmith.graders import Scorer

from .conftest import tasks

TASKS = tasks("finance_document.jsonl")


@pytest.fixture(scope="module")
def env() -> Iterator[FinanceDocument]:
    environment = FinanceDocument()
    yield environment
    environment.close()


def _call(name: str, **arguments: Any) -> str:
    return f"<tool_call>{json.dumps({'name': name, 'arguments': arguments})}</tool_call>"


def test_the_bundled_set_is_large_and_the_reports_are_long() -> None:
    assert len(TASKS) >= 20
    assert any(len(t["docs"]) == 2 for t in TASKS), "cross-document questions"
    for doc in ("northwind", "initech"):
        assert page_text(doc, 31) and page_text(doc, 32).startswith("error: page 32")


@pytest.mark.slow
def test_the_expert_earns_full_reward_on_every_task(env: FinanceDocument) -> None:
    rewards = {t["id"]: play(env, t, expert_actions(t)) for t in TASKS}
    assert rewards == {t["id"]: 1.0 for t in TASKS}


def test_the_lazy_policy_earns_clearly_less(env: FinanceDocument) -> None:
    lazy = ["Revenue was 100,000 (p. 2). <answer>100,000 thousand</answer>"]
    rewards = [play(env, t, lazy) for t in TASKS[:8]]
    assert sum(rewards) / len(rewards) <= 0.2


EXPLOITS = list(FinanceDocument().exploits(TASKS))


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted({e.name for e in EXPLOITS}))
def test_each_exploit_class_earns_no_more_than_its_limit(env: FinanceDocument, name: str) -> None:
    cases = [e for e in EXPLOITS if e.name == name]
    assert len(cases) >= 20
    over = [(e.task["id"], r) for e in cases if (r := play(env, e.task, e.actions)) > e.limit]
    assert not over


@pytest.mark.parametrize(
    ("action", "said"),
    [
        ("<tool_call>{not json</tool_call>", "not valid JSON"),
        (_call("page_text", doc="northwind", page=0), "page 0 does not exist"),
        (_call("page_text", doc="northwind", page=10**9), "does not exist"),
        (_call("page_text", doc="../../etc/passwd", page=1), "no document"),
        (_call("table", doc="northwind", page=1, index=7), "has no table 7"),
        (_call("chart", doc="northwind", page=2, index=0), "no chart axis"),
        (_call("search", doc="northwind", words=" "), "at least one word"),
        (_call("calc", expression="__import__('os').system('id')"), "only numbers"),
        (_call("calc", expression="9**9**9"), "exponents above"),
        (_call("calc", expression="1/0"), "division by zero"),
        (_call("nope"), "unknown tool"),
    ],
)
def test_bad_input_is_an_observation(env: FinanceDocument, action: str, said: str) -> None:
    state, _ = env.reset(TASKS[0])
    transition = env.step(state, action)
    assert not transition.done and said in (transition.observation or "")


def test_a_huge_request_is_refused_not_run() -> None:
    env = FinanceDocument(limits=EpisodeLimits(max_turns=4, max_tokens=10**7))
    state, _ = env.reset(TASKS[0])
    transition = env.step(state, _call("search", doc="northwind", words="x" * 50_000))
    assert "at most 20000 are read" in (transition.observation or "")
    transition = env.step(transition.state, _call("search", doc="northwind", words="y" * 19_000))
    assert not transition.done and "no page holds" in (transition.observation or "")


def test_the_tools_read_the_report() -> None:
    assert "Revenue" in page_text("northwind", 2)
    assert json.loads(table("northwind", 2, 0))[0] == ["Item", "2024", "2023", "% change"]
    assert "p. 4" in search("northwind", "region g5") or "p. 5" in search("northwind", "region g5")
    assert evaluate("(1,200 - 1,000) / 1,000 * 100") == "20"


class _Sleepy(FinanceDocument):
    turn_budget_s: ClassVar[float] = 1.0
    episode_budget_s: ClassVar[float] = 2.5


def nap(seconds: float) -> str:
    """Sleep, then say so.

    Args:
        seconds: How long.
    """
    time.sleep(seconds)
    return "slept"


def test_calls_of_a_turn_run_together_and_a_hanging_tool_is_cut_at_the_budget() -> None:
    env = _Sleepy()
    env.tools = (*env.tools, Tool(nap))
    state, _ = env.reset(TASKS[0])
    action = _call("nap", seconds=0.3) * 3 + _call("nap", seconds=30)
    transition = env.step(state, action)
    observation = transition.observation or ""
    assert observation.count("slept") == 3, "three 0.3 s calls fit a 1 s turn only together"
    assert "did not finish within the turn's 1 s budget" in observation
    for _ in range(3):  # the episode budget (2.5 s of tools) ends it, scored 0
        if transition.done:
            break
        transition = env.step(transition.state, _call("nap", seconds=30))
    assert transition.done and transition.state.end == "time_budget"
    assert transition.reward is not None and transition.reward.value == 0.0


def test_a_flooding_episode_does_not_touch_another(env: FinanceDocument) -> None:
    flood = _call("search", doc="northwind", words="revenue") * 4
    flooded = FinanceDocument(limits=EpisodeLimits(max_turns=3))
    assert play(flooded, TASKS[0], [flood, flood, flood]) == 0.0
    assert play(env, TASKS[1], expert_actions(TASKS[1])) == 1.0


def test_the_dump_scores_to_the_environment_reward(env: FinanceDocument) -> None:
    state, _ = env.reset(TASKS[2])
    for action in expert_actions(TASKS[2]):
        transition = env.step(state, action)
        state = transition.state
    assert transition.reward is not None
    with Scorer(spec_document(env.final_reward), backend="inline") as scorer:
        again = scorer.score([env.sample(state)])[0]
    assert again.value == transition.reward.value == 1.0
    assert pickle.loads(pickle.dumps(env)).name == "finance_document"


@pytest.mark.slow
def test_audit_env_plays_every_class_and_env_spec_prints_the_reward(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from rewardsmith.cli.main import app

    runner = CliRunner()
    audited = runner.invoke(app, ["audit", "--env", "finance_document", "--limit", "3"])
    assert audited.exit_code == 0, audited.output
    assert "invented_supporting_claim" in audited.output
    spec = tmp_path / "spec.yaml"
    printed = runner.invoke(app, ["env", "spec", "finance_document", "-o", str(spec)])
    assert printed.exit_code == 0, printed.output
    assert "grounding" in spec.read_text()
