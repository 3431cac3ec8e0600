"""The `rewardsmith train` command through typer, as a user calls it."""

from __future__ import annotations

from pathlib import Path

import typer
import yaml
from typer.testing import CliRunner

from rewardsmith.trainer.cli import train_command
from rewardsmith.trainer.metrics import read_metrics

from .conftest import small_config


def app() -> typer.Typer:
    application = typer.Typer()
    application.command("train")(train_command)
    application.command("noop", hidden=True)(lambda: None)  # keeps "train" a subcommand
    return application


def test_train_command_runs_and_overrides(tiny_model: str, tmp_path: Path) -> None:
    config = tmp_path / "run.yaml"
    config.write_text(yaml.safe_dump(small_config(tiny_model, tmp_path / "ignored").to_dict()))
    out = tmp_path / "run"
    result = CliRunner().invoke(
        app(), ["train", str(config), "--steps", "1", "--output-dir", str(out)]
    )
    assert result.exit_code == 0, result.output
    assert "reward/mean" in result.output
    assert [r["step"] for r in read_metrics(out)] == [0]


def test_bad_config_is_a_usage_error(tmp_path: Path) -> None:
    config = tmp_path / "run.yaml"
    config.write_text("model: m\nprompts: p\noutput_dir: o\nminibatch_size: 7\n")
    result = CliRunner().invoke(app(), ["train", str(config)])
    assert result.exit_code == 2
    assert "must divide the global batch" in result.output
