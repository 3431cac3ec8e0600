"""End-to-end runs of the loop in one process: every algorithm, logging, resume, failures."""

from __future__ import annotations

import json
import math
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import pytest
import torch

from rewardsmith.graders import Executor, Grader, weighted
from rewardsmith.trainer.checkpoint import latest_checkpoint, load_state
from rewardsmith.trainer.loop import train
from rewardsmith.trainer.metrics import read_metrics
from rewardsmith.trainer.rewards import GraderReward
from rewardsmith.verifiers.protocol import Cost
from rewardsmith.verifiers.text import ExactMatch
from rewardsmith.verifiers.types import Sample, Verdict

from .conftest import small_config


def final_state(output_dir: Path) -> dict[str, torch.Tensor]:
    folder = latest_checkpoint(output_dir)
    assert folder is not None
    return load_state(folder)["model"]


@pytest.mark.parametrize("algorithm", ["ppo", "grpo", "rloo", "reinforce_pp"])
def test_each_algorithm_learns_from_its_rewards(
    tiny_model: str, tmp_path: Path, algorithm: str
) -> None:
    cfg = small_config(tiny_model, tmp_path, algorithm=algorithm, steps=2)
    result = train(cfg)
    rows = read_metrics(tmp_path)
    assert [r["step"] for r in rows] == [0, 1]
    for key in ("reward/mean", "reward/exact_match", "reward/format", "loss/policy", "kl/seq"):
        assert all(math.isfinite(r[key]) for r in rows), key
    assert ("loss/value" in result.metrics) == (algorithm == "ppo")
    moved = final_state(tmp_path)["lm.transformer.wte.weight"]
    from transformers import AutoModelForCausalLM

    initial = AutoModelForCausalLM.from_pretrained(tiny_model).transformer.wte.weight
    assert not torch.allclose(moved, initial)  # the policy changed
    assert (tmp_path / "model" / "config.json").exists()  # a loadable model is left behind


def test_tensorboard_and_jsonl_hold_every_reward_component(tiny_model: str, tmp_path: Path) -> None:
    train(small_config(tiny_model, tmp_path, steps=1, tensorboard=True))
    row = json.loads((tmp_path / "metrics.jsonl").read_text().splitlines()[0])
    assert {"reward/exact_match", "reward/format", "reward/none_frac"} <= set(row)
    assert list((tmp_path / "tensorboard").glob("events.out.tfevents.*"))


def test_resume_continues_the_same_trajectory(tiny_model: str, tmp_path: Path) -> None:
    straight = tmp_path / "straight"
    train(small_config(tiny_model, straight, steps=4, checkpoint_every=2))
    # Simulate a run that died after step 2: only the step-2 checkpoint survives.
    resumed = tmp_path / "resumed"
    shutil.copytree(
        straight / "checkpoints" / "step_000002", resumed / "checkpoints" / "step_000002"
    )
    (resumed / "checkpoints" / "latest").write_text("step_000002")
    lines = (straight / "metrics.jsonl").read_text().splitlines()
    (resumed / "metrics.jsonl").write_text("\n".join(lines[:3]) + "\n")  # and step 2's line
    train(small_config(tiny_model, resumed, steps=4, checkpoint_every=2, resume=True))
    a, b = read_metrics(straight), read_metrics(resumed)
    assert [r["step"] for r in b] == [0, 1, 2, 3]
    for key in ("reward/mean", "loss/policy", "kl/seq", "kl/coef"):
        assert [r[key] for r in a] == pytest.approx([r[key] for r in b], abs=1e-6), key
    sa, sb = final_state(straight), final_state(resumed)
    assert all(torch.allclose(sa[k], sb[k], atol=1e-6) for k in sa)


def test_adaptive_kl_coefficient_moves_and_is_resumed(tiny_model: str, tmp_path: Path) -> None:
    train(small_config(tiny_model, tmp_path, steps=3, kl_target=1e-4, kl_horizon=10))
    coefs = [r["kl/coef"] for r in read_metrics(tmp_path)]
    assert coefs[0] == 0.05 and coefs[-1] != 0.05
    folder = latest_checkpoint(tmp_path)
    assert folder is not None and load_state(folder)["kl_coef"] != 0.05


@dataclass(frozen=True)
class CrashesOnThree:
    """A verifier with a bug that only shows on completions containing '3'."""

    name: ClassVar[str] = "crashes_on_three"
    version: ClassVar[str] = "1"
    cost: ClassVar[Cost] = Cost.CHEAP

    def __call__(self, sample: Sample) -> Verdict:
        if "3" in sample.completion_text:
            raise RuntimeError("bug")
        return Verdict.passed(self.name, self.version)


def test_reward_failures_are_dropped_and_counted_not_crashing(
    tiny_model: str, tmp_path: Path
) -> None:
    grader = Grader(weighted({"exact_match": ExactMatch(), "crashes": CrashesOnThree()}))
    with Executor("inline", cache=False) as ex:
        cfg = small_config(tiny_model, tmp_path, steps=3, prompts_per_step=4)
        train(cfg, reward=GraderReward(grader, ex))
    rows = read_metrics(tmp_path)
    assert any(r["reward/none_frac"] > 0 for r in rows)
    assert all(math.isfinite(r["loss/policy"]) for r in rows)


def test_bad_task_file_names_the_line(tiny_model: str, tmp_path: Path) -> None:
    bad = tmp_path / "tasks.jsonl"
    bad.write_text('{"prompt": "1+1=", "reference": "2"}\n{"reference": "3"}\n')
    with pytest.raises(ValueError, match=r"tasks.jsonl:2"):
        train(small_config(tiny_model, tmp_path, prompts=str(bad)))
