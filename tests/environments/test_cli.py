"""`rewardsmith env run`: episodes as dump rows whose reward `rewardsmith score` reproduces,
shown turn by turn by `rewardsmith report`; hostile policies give rows with reasons.

A scripted policy (`ScriptedEngine`: the actions a test chooses, as tokens) stands in for
a model only where the test needs a known action; the environment, the sandbox, the
scorer and the CLI are the real ones. The bundled tiny model runs end to end through the
command."""

from __future__ import annotations

import html
import json
import string
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from rewardsmith.cli.main import app
from rewardsmith.environments import RetryArithmetic
from rewardsmith.environments.episodes import (
    NO_ANSWER,
    GuardedEnvironment,
    make_environment,
)
from rewardsmith.environments.protocol import EpisodeState, Transition
from rewardsmith.graders import build
from rewardsmith.graders.spec import load_spec
from rewardsmith.trainer.engine import Generation, SamplingParams
from rewardsmith.trainer.env_rollout import RolloutSettings, roll_out
from rewardsmith.trainer.tiny import build_tiny_model, build_tokenizer
from tests.environments.conftest import tasks

REPO = Path(__file__).resolve().parents[2]
SUMS = [json.loads(r) for r in (REPO / "datasets/arithmetic/tasks.jsonl").read_text().splitlines()]
runner = CliRunner()


class ScriptedEngine:
    """A `RolloutEngine` whose action for a context is the next of its task's script (the
    task is the script key found in the context); past the script it repeats the last."""

    def __init__(self, tokenizer: Any, scripts: Mapping[str, Sequence[str]]) -> None:
        self.tokenizer = tokenizer
        self.scripts = scripts
        self.turns: dict[str, int] = {}

    def generate(self, prompts: Sequence[Sequence[int]], sampling: SamplingParams) -> Generation:
        tokens = []
        for context in prompts:
            text = self.tokenizer.decode(list(context))
            key = next(k for k in self.scripts if k in text)
            turn = self.turns.get(key, 0)
            self.turns[key] = turn + 1
            script = self.scripts[key]
            action = script[min(turn, len(script) - 1)]
            ids = self.tokenizer(action, add_special_tokens=False)["input_ids"]
            ids = [*ids, self.tokenizer.eos_token_id][: sampling.max_new_tokens]
            tokens.append(ids)
        return Generation(tokens, [[0.0] * len(t) for t in tokens], [True] * len(tokens))


@pytest.fixture(scope="module")
def tokenizer() -> Any:
    return build_tokenizer(string.printable)


def scripted_rows(
    name: str,
    task_rows: list[dict[str, Any]],
    scripts: Mapping[str, Sequence[str]],
    tokenizer: Any,
    **settings: Any,
) -> list[dict[str, Any]]:
    env = make_environment(name, settings.pop("max_turns", None))
    try:
        engine = ScriptedEngine(tokenizer, scripts)
        return roll_out(env, name, task_rows, engine, tokenizer, RolloutSettings(**settings))
    finally:
        env.close()


STEPS = ("--map", "completion=steps")
"""Read a row's completion from its `steps` (without it: from its chat `messages`)."""


def score_with_cli(
    rows: list[dict[str, Any]], name: str, tmp: Path, reading: Sequence[str] = STEPS
) -> list[dict[str, Any]]:
    """Score the rows with `rewardsmith score` and the spec `rewardsmith env spec` writes."""
    tmp.mkdir(exist_ok=True)
    dump, spec, scored = tmp / "episodes.jsonl", tmp / "spec.yaml", tmp / "scored.jsonl"
    dump.write_text("".join(json.dumps(r) + "\n" for r in rows))
    written = runner.invoke(app, ["env", "spec", name, "-o", str(spec)])
    assert written.exit_code == 0, written.output
    args = ["score", str(dump), "--spec", str(spec), "-o", str(scored)]
    result = runner.invoke(app, [*args, *reading, "--backend", "inline"])
    assert result.exit_code == 0, result.output
    return [json.loads(line) for line in scored.read_text().splitlines()]


MATH_CALL = '<tool_call>{"name": "python", "arguments": {"code": "print(2**31 - 1)"}}</tool_call>'
SCRIPTS: dict[str, tuple[list[dict[str, Any]], dict[str, list[str]]]] = {
    "retry_arithmetic": (
        SUMS[:3],
        {"0+0=": ["5", "0"], "0+1=": ["1"], "0+2=": ["7", "9"]},
    ),
    "math_tool": (
        tasks("math.jsonl")[:2],
        {"2**31 - 1": [MATH_CALL, "\\boxed{2147483647}"], "30!": ["\\boxed{118}"]},
    ),
    "code_repair": (
        tasks("code_repair.jsonl")[:2],
        {
            "`mean`": [
                "def mean(xs):\n    return 0\n",
                "def mean(xs):\n    return sum(xs) / len(xs)\n",
            ],
            "`last`": ["def last(xs):\n    return xs[0]\n"],
        },
    ),
}


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_the_cli_score_of_a_dump_is_the_environment_reward(
    name: str, tokenizer: Any, tmp_path: Path
) -> None:
    task_rows, scripts = SCRIPTS[name]
    rows = scripted_rows(name, task_rows, scripts, tokenizer, max_new_tokens=400)
    values = [r["final_reward"] for r in rows]
    assert any(v and v > 0.5 for v in values) and any(v is not None and v < 0.5 for v in values)
    scored = score_with_cli(rows, name, tmp_path)
    assert [s["id"] for s in scored] == [r["id"] for r in rows]
    for row, out in zip(rows, scored, strict=True):
        assert out["rewardsmith"]["value"] == pytest.approx(row["final_reward"]), row["id"]
        assert len(row["turn_rewards"]) == row["turns"]
    if name != "code_repair":  # its progress term needs the steps' observations
        chat = score_with_cli(rows, name, tmp_path / "chat", reading=())
        assert [c["rewardsmith"]["value"] for c in chat] == pytest.approx(values)
    report = tmp_path / "report.html"
    shown = runner.invoke(app, ["report", str(tmp_path / "scored.jsonl"), "-o", str(report)])
    assert shown.exit_code == 0, shown.output
    page = report.read_text()
    worst = min(rows, key=lambda r: r["final_reward"])  # the report shows the worst rows
    for step in worst["steps"]:  # turn by turn: every action of it is on the page
        assert html.escape(step["action"].splitlines()[0] if step["action"] else "") in page
    # every episode, the passing ones too, with how it ended and each turn's reward
    assert f"Episodes: {len(rows)}" in page
    best = max(rows, key=lambda r: r["final_reward"])
    for step in best["steps"]:
        assert html.escape(step["action"].splitlines()[0] if step["action"] else "") in page
    for row in rows:
        assert html.escape(row["reason"]) in page


def test_messages_follow_the_transformers_tool_call_convention(tokenizer: Any) -> None:
    task_rows, scripts = SCRIPTS["math_tool"]
    row = scripted_rows("math_tool", task_rows[:1], scripts, tokenizer)[0]
    roles = [m["role"] for m in row["messages"]]
    assert roles == ["user", "assistant", "tool", "assistant"]
    call = row["messages"][1]["tool_calls"][0]
    assert call == {
        "type": "function",
        "function": {"name": "python", "arguments": {"code": "print(2**31 - 1)"}},
    }
    assert row["messages"][2]["content"].strip() == "2147483647"
    assert row["final_reward"] == 1.0 and row["end"] == "answered"


def test_code_repair_rows_show_the_test_log_the_model_saw(tokenizer: Any) -> None:
    task_rows, scripts = SCRIPTS["code_repair"]
    row = scripted_rows("code_repair", task_rows[:1], scripts, tokenizer, max_new_tokens=400)[0]
    roles = [m["role"] for m in row["messages"]]
    assert roles == ["user", "assistant", "user", "assistant"]
    assert "Test results" in row["messages"][0]["content"]
    assert row["messages"][2]["content"] == row["steps"][1]["observation"]
    assert row["turn_rewards"] == [None, row["final_reward"]]  # no step pays before the last
    assert row["final_reward"] >= 0.8  # the tests; see the report note on repair_progress


HOSTILE = {
    "malformed tool calls": ["<tool_call>{not json</tool_call>"],
    "unknown tool": ['<tool_call>{"name": "shell", "arguments": {}}</tool_call>'],
    "mistyped arguments": ['<tool_call>{"name": "python", "arguments": {"code": 3}}</tool_call>'],
    "answer beside a tool call": [MATH_CALL + " \\boxed{2147483647}"],
}


@pytest.mark.parametrize("kind", sorted(HOSTILE))
def test_a_hostile_policy_gives_rows_with_a_reason(kind: str, tokenizer: Any) -> None:
    task = tasks("math.jsonl")[:1]
    rows = scripted_rows(
        "math_tool",
        task,
        {"2**31": HOSTILE[kind]},
        tokenizer,
        max_turns=3,
        turn_tokens=6000,
        max_new_tokens=20_000,
    )
    (row,) = rows
    assert row["final_reward"] == 0.0
    assert row["end"] in ("turn_limit", "token_budget")
    assert "without a final answer" in row["reason"] or "ran out of tokens" in row["reason"]
    observations = [m["content"] for m in row["messages"][1:] if m["role"] != "assistant"]
    assert observations and all("error" in o or o.strip() == "2147483647" for o in observations)


HIDDEN: dict[str, tuple[list[str], dict[str, int]]] = {
    "beside a tool call": ([MATH_CALL + " \\boxed{2147483647}"], {}),
    "in a tool call's code": ([MATH_CALL.replace("1)", "1)  # \\\\boxed{2147483647}")], {}),
    "in a malformed tool call": (["<tool_call>\\boxed{2147483647}</tool_call>"], {}),
    "at the head of a refused flood": (
        ["\\boxed{2147483647}" + "9" * 25_000],
        {"turn_tokens": 30_000, "max_new_tokens": 60_000},
    ),
    "in a turn cut at the row's end": (
        ["<tool_call>\\boxed{2147483647}" + "x" * 300],
        {"turn_tokens": 64, "max_new_tokens": 200},
    ),
}


@pytest.mark.parametrize("kind", sorted(HIDDEN))
def test_an_answer_the_environment_did_not_take_earns_nothing_on_either_reading(
    kind: str, tokenizer: Any, tmp_path: Path
) -> None:
    script, settings = HIDDEN[kind]
    task = tasks("math.jsonl")[:1]
    (row,) = scripted_rows("math_tool", task, {"2**31": script}, tokenizer, max_turns=2, **settings)
    assert row["final_reward"] == 0.0 and row["messages"][-1] == NO_ANSWER
    for reading in (STEPS, ()):
        (scored,) = score_with_cli([row], "math_tool", tmp_path / str(len(reading)), reading)
        assert scored["rewardsmith"]["value"] == 0.0, reading


def test_a_flood_is_refused_and_not_carried_into_the_dump(tokenizer: Any) -> None:
    task = tasks("math.jsonl")[:1]
    flood = ["9" * 25_000]  # past the environment's 20,000 characters and 4,096 tokens
    (row,) = scripted_rows(
        "math_tool", task, {"2**31": flood}, tokenizer, turn_tokens=30_000, max_new_tokens=60_000
    )
    assert row["final_reward"] == 0.0 and row["end"] == "token_budget"
    assert "ran out of tokens" in row["reason"]
    assert len(json.dumps(row)) < 10_000


def test_a_policy_that_never_stops_ends_at_the_row_width(tokenizer: Any) -> None:
    task = tasks("math.jsonl")[:1]
    endless = ["<tool_call>" + "x" * 300]  # never an end-of-sequence: every turn is cut
    (row,) = scripted_rows(
        "math_tool", task, {"2**31": endless}, tokenizer, turn_tokens=64, max_new_tokens=200
    )
    assert row["truncated"] and row["end"] == "token_budget" and row["final_reward"] == 0.0


def test_a_policy_that_never_answers_ends_at_the_turn_limit(tokenizer: Any) -> None:
    task = tasks("math.jsonl")[:1]
    (row,) = scripted_rows("math_tool", task, {"2**31": [MATH_CALL]}, tokenizer, max_turns=3)
    assert row["turns"] == 3 and row["end"] == "turn_limit" and row["final_reward"] == 0.0
    assert "used all 3 turns without a final answer" in row["reason"]
    assert row["steps"][-1] == {"action": "", "observation": None, "meta": {"kind": "no_answer"}}


class BrokenArithmetic(RetryArithmetic):
    def answer(self, state: EpisodeState, action: str) -> Transition:
        if action == "3":
            raise RuntimeError("the grader fell over")
        return super().answer(state, action)


def test_an_environment_failure_ends_its_episode_not_the_run(tokenizer: Any) -> None:
    env = BrokenArithmetic()
    try:
        engine = ScriptedEngine(tokenizer, {"0+0=": ["3"], "0+1=": ["1"]})
        rows = roll_out(env, "retry", SUMS[:2], engine, tokenizer, RolloutSettings())
    finally:
        env.close()
    broken, fine = rows
    assert broken["final_reward"] is None and "RuntimeError" in broken["end"]
    assert "no reward: the environment failed" in broken["reason"]
    assert fine["final_reward"] == 1.0
    assert isinstance(GuardedEnvironment(env, {}).name, str)


# ---------------------------------------------------------------------- the command


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("env-cli") / "model"
    assert runner.invoke(app, ["env", "tiny-model", str(path)]).exit_code == 0
    return str(path)


@pytest.mark.parametrize("name", ["retry_arithmetic", "math_tool", "code_repair"])
def test_env_run_rolls_the_tiny_model_and_score_agrees(
    name: str, tiny_model: str, tmp_path: Path
) -> None:
    task_file = tmp_path / "tasks.jsonl"
    task_file.write_text("".join(json.dumps(t) + "\n" for t in SCRIPTS[name][0][:2]))
    out = tmp_path / "episodes.jsonl"
    args = ["env", "run", name, "--tasks", str(task_file), "--model", tiny_model]
    result = runner.invoke(app, [*args, "-o", str(out), "--max-turns", "2", "--turn-tokens", "32"])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(rows) == 2 and all(r["final_reward"] is not None and r["reason"] for r in rows)
    assert all(1 <= r["turns"] <= 2 and r["messages"][0]["role"] == "user" for r in rows)
    (tmp_path / "scored").mkdir()
    scored = score_with_cli(rows, name, tmp_path / "scored")
    assert [s["rewardsmith"]["value"] for s in scored] == pytest.approx(
        [r["final_reward"] for r in rows]
    )


def test_env_run_is_seeded(tiny_model: str, tmp_path: Path) -> None:
    task_file = tmp_path / "tasks.jsonl"
    task_file.write_text("".join(json.dumps(t) + "\n" for t in SUMS[:3]))
    outs = []
    for run in ("a", "b"):
        out = tmp_path / f"{run}.jsonl"
        args = ["env", "run", "retry_arithmetic", "--tasks", str(task_file), "--model", tiny_model]
        seeded = [*args, "-o", str(out), "--seed", "3", "--turn-tokens", "8"]
        assert runner.invoke(app, seeded).exit_code == 0
        outs.append(out.read_text())
    assert outs[0] == outs[1]


def test_env_run_renders_with_the_chat_template(tiny_model: str, tmp_path: Path) -> None:
    """The same seeded episodes through the tokenizer's chat template: the model sees other
    tokens (role markers), so it writes other turns; the rows score as before."""
    task_file = tmp_path / "tasks.jsonl"
    task_file.write_text("".join(json.dumps(t) + "\n" for t in SUMS[:3]))
    outs = {}
    for flag in ("--chat-template", "--no-chat-template"):
        out = tmp_path / f"{flag}.jsonl"
        args = ["env", "run", "retry_arithmetic", "--tasks", str(task_file), "--model", tiny_model]
        result = runner.invoke(
            app, [*args, flag, "-o", str(out), "--seed", "3", "--turn-tokens", "8"]
        )
        assert result.exit_code == 0, result.output
        outs[flag] = [json.loads(line) for line in out.read_text().splitlines()]
    chat, plain = outs["--chat-template"], outs["--no-chat-template"]
    assert [r["messages"][1:] for r in chat] != [r["messages"][1:] for r in plain]
    (tmp_path / "scored").mkdir()
    scored = score_with_cli(chat, "retry_arithmetic", tmp_path / "scored")
    assert [s["rewardsmith"]["value"] for s in scored] == pytest.approx(
        [r["final_reward"] for r in chat]
    )


def test_env_run_chat_template_needs_one_in_the_tokenizer(tmp_path: Path) -> None:
    model = build_tiny_model(tmp_path / "plain", alphabet=string.printable, n_positions=256)
    task_file = tmp_path / "tasks.jsonl"
    task_file.write_text(json.dumps(SUMS[0]) + "\n")
    args = ["env", "run", "retry_arithmetic", "--tasks", str(task_file), "--model", model]
    result = runner.invoke(app, [*args, "--chat-template", "--turn-tokens", "8"])
    assert result.exit_code == 1 and "chat_template" in result.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["env", "run", "chess", "--tasks", "x.jsonl", "--model", "."], "unknown environment"),
        (["env", "spec", "chess"], "unknown environment"),
        (["env", "run", "math_tool", "--tasks", "x.jsonl", "--model", "/no/such"], "not a model"),
    ],
)
def test_env_commands_refuse_what_they_cannot_run(args: list[str], message: str) -> None:
    result = runner.invoke(app, args)
    assert result.exit_code != 0 and message in result.output


def test_env_run_names_a_bad_task_line(tiny_model: str, tmp_path: Path) -> None:
    task_file = tmp_path / "tasks.jsonl"
    task_file.write_text(json.dumps(SUMS[0]) + "\n{oops\n")
    args = ["env", "run", "retry_arithmetic", "--tasks", str(task_file), "--model", tiny_model]
    # A wide terminal: the error box must not wrap a long temporary path (xdist's are longer).
    result = runner.invoke(app, args, env={"COLUMNS": "1000", "TERMINAL_WIDTH": "1000"})
    assert result.exit_code != 0 and "tasks.jsonl:2" in result.output


def test_env_run_checks_its_tasks_before_starting_an_engine(
    tiny_model: str, tmp_path: Path
) -> None:
    """A task the environment cannot start fails first, naming the task, whichever engine
    was asked for: no vLLM server is started for a run that cannot go on."""
    task_file = tmp_path / "tasks.jsonl"
    args = ["env", "run", "retry_arithmetic", "--tasks", str(task_file), "--model", tiny_model]
    args += ["-o", str(tmp_path / "episodes.jsonl")]
    no_vllm = {"REWARDSMITH_VLLM_PYTHON": str(tmp_path / "no-such-python"), "COLUMNS": "1000"}
    outcomes = {}
    for name, task in (("bad", {"id": "sum-without-prompt", "reference": "7"}), ("good", SUMS[0])):
        task_file.write_text(json.dumps(task) + "\n")
        outcomes[name] = runner.invoke(app, [*args, "--engine", "vllm"], env=no_vllm)
    assert outcomes["bad"].exit_code == 1, outcomes["bad"].output
    assert "sum-without-prompt" in outcomes["bad"].output
    assert "vLLM" not in outcomes["bad"].output
    # the same command with a task that fits gets as far as starting vLLM
    assert outcomes["good"].exit_code == 1 and "no vLLM venv" in outcomes["good"].output


def test_env_run_refuses_prompts_longer_than_the_model(tmp_path: Path) -> None:
    model = build_tiny_model(tmp_path / "short", alphabet=string.printable, n_positions=64)
    task_file = tmp_path / "tasks.jsonl"
    task_file.write_text(json.dumps(tasks("code_repair.jsonl")[0]) + "\n")
    args = ["env", "run", "code_repair", "--tasks", str(task_file), "--model", model]
    result = runner.invoke(app, args)
    assert result.exit_code == 1 and "positions" in result.output


@pytest.mark.parametrize("name", ["retry_arithmetic", "math_tool", "code_repair"])
def test_the_printed_spec_builds_the_environment_grader(name: str) -> None:
    printed = runner.invoke(app, ["env", "spec", name])
    assert printed.exit_code == 0, printed.output
    assert load_spec(printed.output) == build(make_environment(name).final_reward)
