"""The demo learns with every algorithm at its defaults: reward after 24 steps clearly above
the same run at lr 0 (same seed, so the same prompts and sampling seeds)."""

from __future__ import annotations

from pathlib import Path

import pytest

from rewardsmith.trainer.demo import run_demo
from rewardsmith.trainer.metrics import read_metrics

STEPS = 24
pytestmark = pytest.mark.slow


def last_rewards(output_dir: Path) -> float:
    rewards = [row["reward/mean"] for row in read_metrics(output_dir)]
    assert len(rewards) == STEPS
    return sum(rewards[-4:]) / 4


@pytest.fixture(scope="module")
def frozen(tmp_path_factory: pytest.TempPathFactory) -> float:
    """The untrained policy's reward on the same steps. With lr 0 the policy never moves, so
    every algorithm's lr-0 run samples exactly these completions: one run serves all four."""
    out = tmp_path_factory.mktemp("lr0")
    run_demo(out, steps=STEPS, lr=0.0)
    return last_rewards(out)


@pytest.mark.parametrize("algorithm", ["grpo", "ppo", "rloo", "reinforce_pp"])
def test_the_demo_learns_at_the_defaults(tmp_path: Path, frozen: float, algorithm: str) -> None:
    run_demo(tmp_path, steps=STEPS, algorithm=algorithm)
    learned = last_rewards(tmp_path)
    # Seeded: about 0.02-0.04 at lr 0 against 0.15-0.25 trained (seeds 0 and 1 measured);
    # the margin leaves room for float differences between machines.
    assert learned > frozen + 0.08, (algorithm, frozen, learned)
    assert (tmp_path / "model" / "config.json").exists()
