"""The trainer page's YAML is a valid config (docs/trainer.md). Its Python blocks run, in
order in one interpreter, in tests/test_docs.py."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from rewardsmith.trainer.config import load_config

PAGE = Path(__file__).resolve().parents[2] / "docs" / "trainer.md"
BLOCK = re.compile(r"```(python|yaml)\n(.*?)```", re.DOTALL)


def blocks(kind: str) -> list[str]:
    return [code for k, code in BLOCK.findall(PAGE.read_text()) if k == kind]


def test_yaml_config_is_valid(tmp_path: Path) -> None:
    (config,) = blocks("yaml")
    path = tmp_path / "run.yaml"
    path.write_text(config)
    cfg = load_config(path)
    assert cfg.algorithm == "grpo" and cfg.reward == yaml.safe_load(config)["reward"]
