"""The trainer page's code runs as written, and its YAML is a valid config (docs/trainer.md)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from rewardsmith.trainer.config import load_config

PAGE = Path(__file__).resolve().parents[2] / "docs" / "trainer.md"
BLOCK = re.compile(r"```(python|yaml)\n(.*?)```", re.DOTALL)


def blocks(kind: str) -> list[str]:
    return [code for k, code in BLOCK.findall(PAGE.read_text()) if k == kind]


@pytest.mark.parametrize("index", range(2))
def test_python_examples_run(index: int) -> None:
    code = blocks("python")[index]
    exec(compile(code, f"{PAGE}:python[{index}]", "exec"), {})


def test_yaml_config_is_valid(tmp_path: Path) -> None:
    (config,) = blocks("yaml")
    path = tmp_path / "run.yaml"
    path.write_text(config)
    cfg = load_config(path)
    assert cfg.algorithm == "grpo" and cfg.reward == yaml.safe_load(config)["reward"]
