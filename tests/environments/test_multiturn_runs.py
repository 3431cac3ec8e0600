"""A multi-turn run keeps what it trained: checkpoints, the model, a resume that follows the
uninterrupted trajectory after a kill -9, and the `rewardsmith train` entry with the
environment named in its YAML config."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest
import typer
import yaml
from typer.testing import CliRunner

from rewardsmith.trainer.cli import train_command
from rewardsmith.trainer.metrics import read_metrics
from rewardsmith.trainer.tiny import ARITHMETIC_ALPHABET, build_tiny_model

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


def test_a_killed_multiturn_run_resumes_on_the_uninterrupted_trajectory(tmp_path: Path) -> None:
    model = build_tiny_model(tmp_path / "model", alphabet=ALPHABET)
    straight = settings(model, tmp_path / "straight", checkpoint_every=1)
    assert _train(tmp_path, straight) == 0
    killed = settings(model, tmp_path / "killed", checkpoint_every=1)
    assert _train(tmp_path, killed, kill_at=2) == -signal.SIGKILL  # after step 1's checkpoint
    assert _train(tmp_path, {**killed, "resume": True}) == 0
    a, b = read_metrics(tmp_path / "straight"), read_metrics(tmp_path / "killed")
    by_step = {r["step"]: r for r in b}  # step 2 was logged before the kill, then again
    assert sorted(by_step) == [r["step"] for r in a] == [0, 1, 2, 3]
    for x, y in zip(_learning(a), _learning([by_step[s] for s in range(4)]), strict=True):
        assert x.keys() == y.keys()
        for key in x:
            both_nan = math.isnan(x[key]) and math.isnan(y[key])
            assert both_nan or abs(x[key] - y[key]) <= 1e-6, key
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
def test_two_processes_equal_one_on_a_multiturn_environment(tmp_path: Path) -> None:
    """torchrun with 2 ranks (gloo) gives the 1-process run's metrics within 1e-4: each rank
    rolls its share of the episodes (of different lengths), all gathered before learning."""
    model = build_tiny_model(tmp_path / "model", alphabet=ALPHABET)
    for name in ("one", "two"):
        config = settings(model, tmp_path / name, steps=3, minibatch_size=4, kl_coef=0.05)
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
    for x, y in zip(_learning(a), _learning(b), strict=True):
        assert x.keys() == y.keys()
        for key in x:
            both_nan = math.isnan(x[key]) and math.isnan(y[key])
            assert both_nan or abs(x[key] - y[key]) <= 1e-4, (key, x[key], y[key])
