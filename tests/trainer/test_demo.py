"""The demo learns: mean reward rises clearly within a short seeded run."""

from __future__ import annotations

from pathlib import Path

import pytest

from rewardsmith.trainer.demo import run_demo
from rewardsmith.trainer.metrics import read_metrics


@pytest.mark.slow
def test_demo_reward_rises(tmp_path: Path) -> None:
    run_demo(tmp_path, steps=24)
    rewards = [row["reward/mean"] for row in read_metrics(tmp_path)]
    first, last = sum(rewards[:4]) / 4, sum(rewards[-4:]) / 4
    # Seeded: this run goes from about 0.03 to about 0.2; the margin leaves room for
    # float differences between machines.
    assert last > first + 0.08, rewards
    assert (tmp_path / "model" / "config.json").exists()
