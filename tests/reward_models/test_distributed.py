"""Data-parallel training: two processes on the CPU (gloo, launched by torchrun) reach the
same model as one process with the same global batch."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from rewardsmith.reward_models.data import preference_pairs, read_rows
from rewardsmith.reward_models.model import RewardModel
from rewardsmith.reward_models.scoring import score_outcomes
from rewardsmith.reward_models.training import TrainConfig, train

from .conftest import toy_pairs

pytestmark = [pytest.mark.distributed, pytest.mark.slow]


def _train(launcher: list[str], backbone: Path, data: Path, out: Path) -> None:
    command = [
        *launcher,
        "-m",
        "rewardsmith.reward_models.cli",
        "train",
        str(backbone),
        str(data),
        str(out),
        "--batch-size",
        "8",
        "--max-steps",
        "4",
        "--learning-rate",
        "3e-3",
    ]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "HF_HUB_OFFLINE": "1"}
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]


def test_two_gloo_processes_match_one_process(tiny_bert: Path, tmp_path: Path) -> None:
    data = tmp_path / "pairs.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in toy_pairs(32)))
    torchrun = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        "--nproc_per_node",
        "2",
    ]
    _train(torchrun, tiny_bert, data, tmp_path / "two")
    one = RewardModel.load(tiny_bert)  # the same run in this process, world size 1
    config = TrainConfig(batch_size=8, max_steps=4, learning_rate=3e-3)
    train(one, preference_pairs(read_rows(data)).rows, config)
    two = RewardModel.load(tmp_path / "two" / "checkpoint-0000004")
    texts = [
        (r["prompt"], r[side]) for r in toy_pairs(16, seed=5) for side in ("chosen", "rejected")
    ]
    a = torch.tensor([s.score for s in score_outcomes(one, texts)])
    b = torch.tensor([s.score for s in score_outcomes(two, texts)])
    untrained = torch.tensor([s.score for s in score_outcomes(RewardModel.load(tiny_bert), texts)])
    # Centred scores: a shift shared by all scores is not learnable by Bradley-Terry (see
    # test_train._score_diff); training moved them by far more than the tolerance.
    centred = lambda s: s - s.mean()  # noqa: E731
    assert float((centred(a) - centred(b)).abs().max()) < 1e-4
    assert float((centred(a) - centred(untrained)).abs().max()) > 1e-2
