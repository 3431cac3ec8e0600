"""The train and evaluate commands, run through typer as a user would."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from typer.testing import CliRunner

from rewardsmith.reward_models.cli import app

from .conftest import toy_pairs

runner = CliRunner()


def test_evaluate_prints_a_table_and_writes_json(trained_rm: Path, tmp_path: Path) -> None:
    data = tmp_path / "pairs.jsonl"
    rows = [*toy_pairs(20, seed=3), {"prompt": "q", "chosen": "same", "rejected": "same"}]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "report.json"
    result = runner.invoke(app, ["evaluate", str(trained_rm), str(data), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert "skipped 1 rows" in result.output and "identical" in result.output
    assert "even" in result.output and "odd" in result.output and "ECE" in result.output
    report = json.loads(out.read_text())
    assert report["n_pairs"] == 20 and report["accuracy"] >= 0.9


def test_evaluate_with_a_missing_column_says_which(trained_rm: Path, tmp_path: Path) -> None:
    data = tmp_path / "pairs.jsonl"
    data.write_text(json.dumps({"prompt": "q", "good": "a", "rejected": "b"}) + "\n")
    result = runner.invoke(app, ["evaluate", str(trained_rm), str(data)])
    assert result.exit_code == 2 and "'chosen'" in result.output and "--column" in result.output
    mapped = runner.invoke(app, ["evaluate", str(trained_rm), str(data), "--column", "chosen=good"])
    assert mapped.exit_code == 0, mapped.output


def test_train_then_rerun_resumes(tiny_bert: Path, tmp_path: Path) -> None:
    data = tmp_path / "pairs.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in toy_pairs(16)))
    args = ["train", str(tiny_bert), str(data), str(tmp_path / "run"), "--batch-size", "8"]
    first = runner.invoke(app, [*args, "--max-steps", "2"])
    assert first.exit_code == 0, first.output
    assert (tmp_path / "run" / "checkpoint-0000002" / "reward_model.json").is_file()
    again = runner.invoke(app, [*args, "--max-steps", "3"])
    assert again.exit_code == 0, again.output
    assert "done: 3 steps" in again.output


def test_commands_are_plain_typed_functions() -> None:
    from rewardsmith.reward_models.cli import evaluate_command, train_command

    mounted = typer.Typer()
    mounted.command("evaluate")(evaluate_command)
    mounted.command("train")(train_command)
    assert "Pairwise accuracy" in runner.invoke(mounted, ["evaluate", "--help"]).output
