"""A multi-turn run keeps what it trained: checkpoints, the model, a resume that follows the
uninterrupted trajectory after a kill -9, and the `rewardsmith train` entry with the
environment named in its YAML config."""

from __future__ import annotations

import html
import itertools
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
import torch
import typer
import yaml
from typer.testing import CliRunner

from rewardsmith.environments import RetryArithmetic
from rewardsmith.environments.episodes import read_tasks
from rewardsmith.environments.protocol import EpisodeLimits
from rewardsmith.trainer import learn
from rewardsmith.trainer.checkpoint import CheckpointError
from rewardsmith.trainer.cli import train_command
from rewardsmith.trainer.config import TrainConfig
from rewardsmith.trainer.metrics import read_metrics
from rewardsmith.trainer.multiturn import TurnSettings, train_multiturn
from rewardsmith.trainer.tiny import ARITHMETIC_ALPHABET, build_tiny_model
from rewardsmith.trainer.turns import Episode

REPO = Path(__file__).resolve().parents[2]
TASKS = REPO / "datasets/arithmetic/tasks.jsonl"
RETRY = "wrong, try again"
ALPHABET = ARITHMETIC_ALPHABET + "".join(sorted(set(RETRY)))


def settings(model: str, out: Path, **overrides: Any) -> dict[str, Any]:
    values: dict[str, Any] = {
        "model": model,
        "prompts": str(TASKS),
        "output_dir": str(out),
        "environment": "retry_arithmetic",
        "turn_tokens": 3,
        "algorithm": "grpo",
        "steps": 4,
        "prompts_per_step": 2,
        "group_size": 4,
        "minibatch_size": 8,
        "max_prompt_tokens": 4,
        "max_new_tokens": 3 + len(RETRY) + 3,
        "lr": 3e-3,
        "kl_coef": 0.0,
        "tensorboard": False,
        "reward_executor": "inline",
    }
    values.update(overrides)
    return values


_RUN = """
import os, signal, sys, yaml
from rewardsmith.environments import RetryArithmetic
from rewardsmith.environments.episodes import read_tasks
from pathlib import Path
from rewardsmith.trainer.config import TrainConfig
from rewardsmith.trainer.multiturn import TurnSettings, train_multiturn

cfg = TrainConfig(**yaml.safe_load(open(sys.argv[1])))
kill_at = int(sys.argv[2])

def on_step(step, metrics):
    if step == kill_at:
        os.kill(os.getpid(), signal.SIGKILL)

env = RetryArithmetic()
train_multiturn(cfg, env, list(read_tasks(Path(cfg.prompts))), TurnSettings(3), on_step)
env.close()
"""


def _train(tmp_path: Path, config: dict[str, Any], kill_at: int = -1) -> int:
    path = tmp_path / f"{Path(config['output_dir']).name}.yaml"
    path.write_text(yaml.safe_dump(config))
    script = tmp_path / "run.py"
    script.write_text(textwrap.dedent(_RUN))
    done = subprocess.run(
        [sys.executable, str(script), str(path), str(kill_at)],
        cwd=REPO,
        env={**os.environ, "OMP_NUM_THREADS": "1"},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode in (0, -signal.SIGKILL), done.stderr[-3000:]
    return done.returncode


def _learning(rows: list[dict[str, Any]]) -> list[dict[str, float]]:
    return [{k: v for k, v in r.items() if not k.startswith("time/")} for r in rows]


def _assert_close(a: list[dict[str, Any]], b: list[dict[str, Any]], tolerance: float) -> None:
    for x, y in zip(_learning(a), _learning(b), strict=True):
        assert x.keys() == y.keys()
        for key in x:
            both_nan = math.isnan(x[key]) and math.isnan(y[key])
            assert both_nan or abs(x[key] - y[key]) <= tolerance, (x["step"], key, x[key], y[key])


@pytest.mark.parametrize("overlap", ["off", "one_step"])
def test_a_killed_multiturn_run_resumes_on_the_uninterrupted_trajectory(
    tmp_path: Path, overlap: str
) -> None:
    """The uninterrupted run saves only at its end; the killed one every step, so with
    overlap its checkpoints drain and save the batch carried to the next step, and the
    resumed run continues those episodes: the same metrics either way."""
    model = build_tiny_model(tmp_path / "model", alphabet=ALPHABET)
    straight = settings(model, tmp_path / "straight", reward_overlap=overlap)
    assert _train(tmp_path, straight) == 0
    killed = settings(model, tmp_path / "killed", checkpoint_every=1, reward_overlap=overlap)
    assert _train(tmp_path, killed, kill_at=2) == -signal.SIGKILL  # after step 1's checkpoint
    saved = torch.load(
        tmp_path / "killed/checkpoints/step_000002/rank0.pt", map_location="cpu", weights_only=False
    )["pending"]
    if overlap == "off":
        assert saved is None
    else:  # batch 2, its first steps recorded: JSON, as an episode's state is
        assert saved["step"] == 2 and len(saved["episodes"]) == 8
        assert all(len(e["turn_rewards"]) == 1 for e in saved["episodes"])
        for row in map(json.dumps, saved["episodes"]):  # JSON, and back to the same episode
            assert json.dumps(Episode.from_dict(json.loads(row)).to_dict()) == row
    assert _train(tmp_path, {**killed, "resume": True}) == 0
    a, b = read_metrics(tmp_path / "straight"), read_metrics(tmp_path / "killed")
    by_step = {r["step"]: r for r in b}  # step 2 was logged before the kill, then again
    assert sorted(by_step) == [r["step"] for r in a] == [0, 1, 2, 3]
    _assert_close(a, [by_step[s] for s in range(4)], 1e-6)
    assert (tmp_path / "killed" / "model" / "config.json").exists()


def _app() -> typer.Typer:
    application = typer.Typer()
    application.command("train")(train_command)
    application.command("noop", hidden=True)(lambda: None)
    return application


def test_rewardsmith_train_runs_the_environment_its_config_names(tmp_path: Path) -> None:
    model = build_tiny_model(tmp_path / "model", alphabet=ALPHABET)
    config = tmp_path / "run.yaml"
    config.write_text(yaml.safe_dump(settings(model, tmp_path / "run", steps=2)))
    result = CliRunner().invoke(_app(), ["train", str(config)])
    assert result.exit_code == 0, result.output
    assert "reward/final" in result.output
    assert [r["step"] for r in read_metrics(tmp_path / "run")] == [0, 1]
    assert json.loads((tmp_path / "run" / "model" / "config.json").read_text())["n_layer"] == 2
    assert (tmp_path / "run" / "checkpoints" / "latest").read_text().strip() == "step_000002"


def test_an_unknown_environment_is_a_usage_error(tmp_path: Path) -> None:
    config = tmp_path / "run.yaml"
    config.write_text(yaml.safe_dump(settings("m", tmp_path / "run", environment="chess")))
    result = CliRunner().invoke(_app(), ["train", str(config)])
    assert result.exit_code == 2 and "unknown environment 'chess'" in result.output


@pytest.mark.distributed
@pytest.mark.slow
@pytest.mark.parametrize("overlap", ["off", "one_step"])
def test_two_processes_equal_one_on_a_multiturn_environment(tmp_path: Path, overlap: str) -> None:
    """torchrun with 2 ranks (gloo) gives the 1-process run's metrics within 1e-4: each rank
    rolls its share of the episodes (of different lengths), all gathered before learning;
    with overlap each rank begins and carries its share of the next batch."""
    model = build_tiny_model(tmp_path / "model", alphabet=ALPHABET)
    for name in ("one", "two"):
        config = settings(
            model, tmp_path / name, steps=3, minibatch_size=4, kl_coef=0.05, reward_overlap=overlap
        )
        (tmp_path / f"{name}.yaml").write_text(yaml.safe_dump(config))
    runs = {
        "one": [],
        "two": ["-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2"],
    }
    for name, launcher in runs.items():
        command = [sys.executable, *launcher]
        command += ["-m", "rewardsmith.trainer", str(tmp_path / f"{name}.yaml")]
        env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONWARNINGS": "ignore"}
        done = subprocess.run(
            command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, done.stderr[-4000:]
    a, b = read_metrics(tmp_path / "one"), read_metrics(tmp_path / "two")
    assert len(a) == len(b) == 3 and {r["episode/turns"] for r in a} != set()
    _assert_close(a, b, 1e-4)


@pytest.mark.slow
def test_the_tiny_model_trains_on_finance_documents_end_to_end(tmp_path: Path) -> None:
    """Issue 24's demo on a new environment: `rewardsmith train` rolls the tiny model
    through `finance_document` (rollout, reward, update), `env run` dumps the trained
    model's episodes, and `report` renders every episode turn by turn. A random model earns
    nothing here; the run shows the path works, not that it learns."""
    from rewardsmith.cli.env import TINY_MODEL
    from rewardsmith.cli.main import app

    model = build_tiny_model(tmp_path / "model", **TINY_MODEL)
    tasks = REPO / "datasets/environments/finance_document.jsonl"
    run = tmp_path / "run"
    overrides = {
        "prompts": str(tasks),
        "environment": "finance_document",
        "turn_tokens": 24,
        "steps": 2,
        "max_prompt_tokens": 560,
        "max_new_tokens": 200,
    }
    config = tmp_path / "run.yaml"
    config.write_text(yaml.safe_dump(settings(model, run, **overrides)))
    result = CliRunner().invoke(_app(), ["train", str(config)])
    assert result.exit_code == 0, result.output
    rows = read_metrics(run)
    assert [r["step"] for r in rows] == [0, 1] and all("reward/final" in r for r in rows)
    dump, page = tmp_path / "episodes.jsonl", tmp_path / "episodes.html"
    args = ["env", "run", "finance_document", "--tasks", str(tasks), "--model", str(run / "model")]
    rolled = CliRunner().invoke(
        app, [*args, "-o", str(dump), "--limit", "3", "--turn-tokens", "24"]
    )
    assert rolled.exit_code == 0, rolled.output
    episodes = [json.loads(line) for line in dump.read_text().splitlines()]
    assert len(episodes) == 3 and all(e["final_reward"] is not None for e in episodes)
    spec, scored = tmp_path / "spec.yaml", tmp_path / "scored.jsonl"
    assert (
        CliRunner().invoke(app, ["env", "spec", "finance_document", "-o", str(spec)]).exit_code == 0
    )
    score = [
        "score",
        str(dump),
        "--spec",
        str(spec),
        "-o",
        str(scored),
        "--map",
        "completion=steps",
    ]
    scoring = CliRunner().invoke(app, [*score, "--backend", "inline"])
    assert scoring.exit_code == 0, scoring.output
    values = [json.loads(line)["rewardsmith"]["value"] for line in scored.read_text().splitlines()]
    assert values == pytest.approx([e["final_reward"] for e in episodes])  # one path
    shown = CliRunner().invoke(app, ["report", str(scored), "-o", str(page)])
    assert shown.exit_code == 0, shown.output
    shown_page = page.read_text()
    assert f"Episodes: {len(episodes)}" in shown_page  # every episode, turn by turn
    assert all(html.escape(e["reason"]) in shown_page for e in episodes)


class _SlowSteps(RetryArithmetic):
    """One-turn sums whose every step sleeps (a real sleep, as a sandboxed run waits on its
    jail), recording when each ran. A step after the first batch's also waits (a bounded
    wait) until the policy has begun to learn: so however loaded the machine, a step that
    can run during an update does, and one that cannot (without overlap) never waits."""

    def __init__(self, seconds: float, batch: int) -> None:
        super().__init__(limits=EpisodeLimits(max_turns=1, max_tokens=64))
        self.seconds, self.batch = seconds, batch
        self.learning = threading.Event()
        self.steps: list[tuple[float, float]] = []
        self._count = itertools.count()

    def step(self, state: Any, action: str, action_tokens: int | None = None) -> Any:
        start = time.monotonic()
        if next(self._count) >= self.batch:
            self.learning.wait(timeout=30)
        time.sleep(self.seconds)
        out = super().step(state, action, action_tokens)
        self.steps.append((start, time.monotonic()))
        return out


def _in_process(tmp_path: Path, name: str, **overrides: Any) -> TrainConfig:
    model = build_tiny_model(tmp_path / "model", alphabet=ALPHABET)
    return TrainConfig(**settings(model, tmp_path / name, **overrides))


@pytest.mark.parametrize("overlap", ["off", "one_step"])
def test_with_overlap_the_next_batchs_steps_run_while_the_policy_learns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, overlap: str
) -> None:
    """Every step of batch k is back before update k starts, so a step that runs during
    update k is one of batch k+1's: with overlap all of batch 1's first steps do; without,
    none does (batch 1 begins after update 0, and update 1 waits for it)."""
    env = _SlowSteps(seconds=0.3, batch=4)
    learning: list[tuple[float, float]] = []
    update = learn.update

    def timed_update(*args: Any, **kwargs: Any) -> Any:
        start = time.monotonic()
        env.learning.set()
        out = update(*args, **kwargs)
        learning.append((start, time.monotonic()))
        return out

    monkeypatch.setattr(learn, "update", timed_update)
    cfg = _in_process(
        tmp_path,
        overlap,
        steps=2,
        prompts_per_step=2,
        group_size=2,
        minibatch_size=4,
        reward_overlap=overlap,
    )
    try:
        train_multiturn(cfg, env, list(read_tasks(TASKS)), TurnSettings(3, step_threads=4))
    finally:
        env.close()
    assert len(env.steps) == 8 and len(learning) == 2
    during = [s for s in env.steps for a, b in learning if s[0] < b and a < s[1]]
    assert len(during) == (4 if overlap == "one_step" else 0), (env.steps, learning)


# What the uninterrupted run below logged before reward overlap existed for multi-turn runs
# (the commit before this test, 2026-12-04): overlap off must still give it.
BEFORE_OVERLAP = [
    {"episode/turns": 1.6875, "response/action_tokens": 4.8125, "loss/policy": 0.00657887992105986,
     "policy/entropy": 3.2701915349715796, "grad_norm": 0.7723844647407532},
    {"episode/turns": 1.75, "response/action_tokens": 4.9375, "loss/kl": 0.02715363662417342,
     "policy/approx_kl": 0.0025115961708673615, "policy/entropy": 3.258028627819213,
     "grad_norm": 0.03861210122704506},
    {"episode/turns": 1.8125, "response/action_tokens": 5.375, "loss/kl": 0.041143157394417436,
     "policy/approx_kl": 0.0008487810513802937, "policy/entropy": 3.2569628381109856,
     "grad_norm": 0.029585611075162888},
]  # fmt: skip
# Remeasured 2026-12-04 twice, each time because the reward's reading changed, not the
# trainer: when "7," stopped being refused (value_answer; steps 1-2 moved), and when the
# math reader began reading a bare line such as "8*" or "43-" whole (mathread): such a line
# is now refused as an expression left undone instead of scored as its last number, and a
# refusal's observation uses up an episode's token budget sooner (step 0 moved too).
# Every value remeasured when turn 0 took the sample's seed (16:31 UTC; sampling, not the trainer).
# Every value remeasured 2026-12-05 (rtmath7) when the math reader began reading letters
# glued to a bare number with it: the tiny model's "5i", "6o", "9t" (for 8, 6, 9) are
# terms, not numbers, so value_answer refuses them as expressions, as it refuses "8*"
# (no reward where "9t" scored 0.8 as 9; the refusal's observation uses up the token
# budget: fewer turns from step 0 on). Under the old reading the same run gave the values
# before (checked: e167fc9's reader, same trainer).


def test_overlap_off_gives_the_metrics_of_before_and_on_keeps_the_sampling_weights(
    tmp_path: Path,
) -> None:
    """Off: today's trajectory. On: batch 0 is the same; batch 1's turn 0 comes from the
    weights before update 0, and its old log-probs are theirs (the engine's log-probs
    agree with them as on-policy: a gap of ~1e-8, where the updated weights would give
    ~1e-2), so the first minibatch of update 1 is off-policy (approx_kl > 0)."""
    runs = {}
    for overlap in ("off", "one_step"):
        cfg = _in_process(
            tmp_path, overlap, steps=3, prompts_per_step=4, minibatch_size=8, kl_coef=0.05,
            reward_overlap=overlap,
        )  # fmt: skip
        env = RetryArithmetic()
        try:
            train_multiturn(cfg, env, list(read_tasks(TASKS)), TurnSettings(3))
        finally:
            env.close()
        runs[overlap] = read_metrics(tmp_path / overlap)
    for row, before in zip(runs["off"], BEFORE_OVERLAP, strict=True):
        assert {k: row[k] for k in before} == pytest.approx(before, abs=1e-6), row["step"]
    off, on = runs["off"], runs["one_step"]
    _assert_close(off[:1], on[:1], 1e-6)
    assert all(r["rollout/engine_logprob_gap"] < 1e-5 for r in on)
    assert on[1]["policy/approx_kl"] > 5 * off[1]["policy/approx_kl"]


class _LiveSession(RetryArithmetic):
    """Says an episode lives partly outside its state (as a live interpreter would)."""

    resumable = False


def test_an_environment_with_live_episodes_refuses_overlap_and_resume(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="reward_overlap: off"):
        train_multiturn(
            TrainConfig(**settings("unused", tmp_path / "run", resume=True)),
            _LiveSession(),
            list(read_tasks(TASKS)),
            TurnSettings(3),
        )
    cfg = _in_process(tmp_path, "live", steps=2, prompts_per_step=1, group_size=2, minibatch_size=2)
    train_multiturn(
        replace(cfg, checkpoint_every=1), _LiveSession(), list(read_tasks(TASKS)), TurnSettings(3)
    )
    checkpoints = tmp_path / "live/checkpoints"  # as if killed after step 1's checkpoint,
    shutil.rmtree(checkpoints / "step_000002")  # which carries batch 1's episodes
    (checkpoints / "latest").write_text("step_000001")
    resumed = replace(cfg, checkpoint_every=1, resume=True, reward_overlap="off")
    with pytest.raises(CheckpointError, match="cannot continue after a restart"):
        train_multiturn(resumed, _LiveSession(), list(read_tasks(TASKS)), TurnSettings(3))
