"""The shell recipes in docs/reward_models.md run as written. Its Python examples run, and
what they print is checked, in tests/test_docs.py (`PRINTS`): one run of the page."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from rewardsmith.reward_models.cli import app
from rewardsmith.reward_models.data import bundled_steps

from .conftest import build_tiny_bert

DOC = Path(__file__).resolve().parents[2] / "docs" / "reward_models.md"
runner = CliRunner()

pytestmark = pytest.mark.slow


def _recipe_commands() -> list[list[str]]:
    """The shell commands of the process reward model recipe, as argument lists (without
    the ``python -m rewardsmith.reward_models.cli`` in front)."""
    section = DOC.read_text().split("## Process reward models: a recipe", 1)[1]
    block = re.search(r"```bash\n(.*?)```", section, re.DOTALL)
    assert block is not None
    commands = []
    for line in block.group(1).replace("\\\n", " ").splitlines():
        words = shlex.split(line)
        assert words[:3] == ["python", "-m", "rewardsmith.reward_models.cli"], line
        commands.append(words[3:])
    return commands


def test_the_process_reward_model_recipe_runs_as_written(tmp_path: Path) -> None:
    """Every flag of the documented recipe is accepted, the checkpoint it evaluates is the
    one its training writes (steps = epochs × train chains // batch), and the two commands
    run, on a tiny BERT and for two steps instead of the documented epochs."""
    train_args, evaluate_args = _recipe_commands()
    assert train_args[:4] == ["train", "$MINILM", "arithmetic_chains", "runs/prm"]
    option = dict(zip(train_args[4::2], train_args[5::2], strict=True))
    chains = len(bundled_steps("arithmetic_chains", split=option["--split"]))
    steps = int(option["--epochs"]) * (chains // int(option["--batch-size"]))
    assert evaluate_args[1] == f"runs/prm/checkpoint-{steps:07d}"
    tiny_bert = build_tiny_bert(tmp_path / "bert", max_positions=int(option["--max-length"]))
    out = tmp_path / "prm"
    train_as_written = ["train", str(tiny_bert), "arithmetic_chains", str(out), *train_args[4:]]
    trained = runner.invoke(app, [*train_as_written, "--max-steps", "2"])
    assert trained.exit_code == 0, trained.output
    checkpoint = out / "checkpoint-0000002"
    evaluated = runner.invoke(app, ["evaluate-steps", str(checkpoint), *evaluate_args[2:]])
    assert evaluated.exit_code == 0, evaluated.output
    assert "position prior" in evaluated.output
