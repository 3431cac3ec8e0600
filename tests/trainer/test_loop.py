"""End-to-end runs of the loop in one process: every algorithm, logging, resume, failures."""

from __future__ import annotations

import json
import math
import shutil
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import pytest
import torch

from rewardsmith.graders import Executor, Grader, chain, running_normalize, weighted
from rewardsmith.trainer.checkpoint import (
    CheckpointError,
    latest_checkpoint,
    load_rank_state,
    load_state,
)
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


class FlakySource:
    """Exact-match rewards, except that chosen calls raise or hang (a remote reward server
    that drops one batch, a grader with a bug that shows on one batch)."""

    def __init__(self, fail_calls: set[int], hang: threading.Event | None = None) -> None:
        self.inner = GraderReward(Grader(weighted({"exact_match": ExactMatch()})))
        self.fail_calls, self.hang, self.calls = fail_calls, hang, 0

    def score(self, samples):
        call, self.calls = self.calls, self.calls + 1
        if call in self.fail_calls:
            if self.hang is not None:
                self.hang.wait(60)  # released by the test once the run is over
            raise ConnectionError(f"reward server dropped call {call}")
        return self.inner.score(samples)


def test_a_reward_batch_that_fails_once_is_retried(
    tiny_model: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    source = FlakySource({1})  # step 1's first attempt (overlap off: call k is step k)
    with caplog.at_level("WARNING", logger="rewardsmith.trainer"):
        train(small_config(tiny_model, tmp_path, reward_overlap="off"), reward=source)
    rows = read_metrics(tmp_path)
    assert [r["reward/retries"] for r in rows] == [0, 1, 0]
    assert all(r["reward/skipped_batches"] == 0 and "skipped" not in r for r in rows)
    assert "attempt 1 of 3: ConnectionError: reward server dropped call 1" in caplog.text


def test_a_reward_batch_that_keeps_failing_is_skipped_and_counted(
    tiny_model: str, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    source = FlakySource({1, 2, 3})  # step 1 and both of its retries
    with caplog.at_level("WARNING", logger="rewardsmith.trainer"):
        train(small_config(tiny_model, tmp_path, reward_overlap="off"), reward=source)
    rows = read_metrics(tmp_path)
    assert [r["step"] for r in rows] == [0, 1, 2]
    assert rows[1]["skipped"] == 1 and rows[1]["reward/mean"] is None  # never a silent 0
    assert [r["reward/skipped_batches"] for r in rows] == [0, 1, 1]
    assert math.isfinite(rows[2]["loss/policy"])  # the run went on
    assert "step 1: no rewards after 3 attempts; the batch is skipped" in caplog.text


def test_a_reward_batch_that_hangs_times_out_and_is_retried(
    tiny_model: str, tmp_path: Path
) -> None:
    release = threading.Event()
    source = FlakySource({0}, hang=release)
    try:
        cfg = small_config(tiny_model, tmp_path, steps=2, reward_batch_timeout_s=1.0)
        train(cfg, reward=source)
    finally:
        release.set()
    rows = read_metrics(tmp_path)
    assert rows[0]["reward/retries"] == 1 and "skipped" not in rows[0]


def _flip_a_byte(path: Path) -> None:
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0xFF
    path.write_bytes(data)


@pytest.fixture(scope="module")
def checkpointed(tiny_model: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A 3-step run with a checkpoint after every step, copied by each test that damages it."""
    out = tmp_path_factory.mktemp("checkpointed")
    train(small_config(tiny_model, out, steps=3, checkpoint_every=1))
    return out


@pytest.mark.parametrize("damage", ["flip state", "truncate state", "truncate rank", "delete rank"])
def test_resume_skips_a_damaged_checkpoint_and_names_the_file(
    tiny_model: str,
    checkpointed: Path,
    tmp_path: Path,
    damage: str,
    caplog: pytest.LogCaptureFixture,
) -> None:
    run = tmp_path / "run"
    shutil.copytree(checkpointed, run)
    newest = run / "checkpoints" / "step_000003"
    target = newest / ("state.pt" if "state" in damage else "rank0.pt")
    if damage.startswith("flip"):
        _flip_a_byte(target)
    elif damage.startswith("truncate"):
        target.write_bytes(target.read_bytes()[:100])
    else:
        target.unlink()
    with pytest.raises(CheckpointError, match=str(target)):
        load_state(newest) if "state" in damage else load_rank_state(newest, 0)
    with caplog.at_level("WARNING", logger="rewardsmith.trainer"):
        train(small_config(tiny_model, run, steps=3, checkpoint_every=1, resume=True))
    assert f"cannot resume from step_000003: {target}" in caplog.text
    assert [r["step"] for r in read_metrics(run)] == [0, 1, 2]  # step 2 was run again
    redone, first = read_metrics(run)[2], read_metrics(checkpointed)[2]
    assert redone["loss/policy"] == pytest.approx(first["loss/policy"], abs=1e-6)


def test_resume_with_no_intact_checkpoint_is_an_error(tiny_model: str, tmp_path: Path) -> None:
    train(small_config(tiny_model, tmp_path, steps=1))
    _flip_a_byte(tmp_path / "checkpoints" / "step_000001" / "state.pt")
    with pytest.raises(CheckpointError, match="no intact checkpoint"):
        train(small_config(tiny_model, tmp_path, steps=2, resume=True))


def test_gradient_accumulation_gives_the_same_update(tiny_model: str, tmp_path: Path) -> None:
    whole = small_config(tiny_model, tmp_path / "whole", steps=2, algorithm="ppo")
    train(whole)
    train(
        small_config(tiny_model, tmp_path / "micro", steps=2, algorithm="ppo", micro_batch_size=1)
    )
    a, b = final_state(tmp_path / "whole"), final_state(tmp_path / "micro")
    assert max(float((a[k] - b[k]).abs().max()) for k in a) < 1e-5
    ra, rb = read_metrics(tmp_path / "whole"), read_metrics(tmp_path / "micro")
    for key in ("loss/policy", "loss/value", "policy/entropy", "grad_norm"):
        assert [r[key] for r in ra] == pytest.approx([r[key] for r in rb], abs=1e-5), key


def test_prompt_truncation_is_counted_per_step(tiny_model: str, tmp_path: Path) -> None:
    long = tmp_path / "long.jsonl"
    long.write_text(
        "".join(json.dumps({"prompt": f"1{i}+3+4=", "reference": "7"}) + "\n" for i in range(4))
    )
    with pytest.raises(ValueError, match=r"long\.jsonl:1: the prompt is 7 tokens"):
        train(small_config(tiny_model, tmp_path, prompts=str(long)))
    train(small_config(tiny_model, tmp_path, prompts=str(long), prompt_truncation="left", steps=1))
    assert read_metrics(tmp_path)[0]["prompt/truncated"] == 2  # both prompts of the step


@pytest.mark.parametrize(("overlap", "stale"), [("one_step", True), ("off", False)])
def test_reward_overlap_makes_the_next_batch_one_step_stale(
    tiny_model: str, tmp_path: Path, overlap: str, stale: bool
) -> None:
    # With one_step, batch 1 is sampled before update 0: by the initial weights, which are
    # also the reference, so its KL to the reference is exactly 0. Off: after update 0.
    train(small_config(tiny_model, tmp_path, steps=2, reward_overlap=overlap, lr=0.05))
    kl_step1 = read_metrics(tmp_path)[1]["kl/seq"]
    assert (kl_step1 == 0.0) == stale, kl_step1


def test_lora_trains_adapters_against_the_adapter_free_base(
    tiny_model: str, tmp_path: Path
) -> None:
    from peft import PeftModel
    from transformers import AutoModelForCausalLM

    from rewardsmith.trainer.distributed import init_distributed
    from rewardsmith.trainer.lora import AdapterFreeReference
    from rewardsmith.trainer.models import load_models

    settings = {"algorithm": "ppo", "lora_rank": 4, "lora_alpha": 8.0, "lr": 0.05}
    cfg = small_config(tiny_model, tmp_path / "run", steps=3, checkpoint_every=2, **settings)
    models = load_models(cfg, init_distributed("cpu"))
    assert isinstance(models.reference, AdapterFreeReference)  # no second copy of the weights
    assert isinstance(models.policy_module.lm, PeftModel)
    trained = {n for n, p in models.policy_module.named_parameters() if p.requires_grad}
    assert trained and all("lora_" in n or n.startswith("value_head") for n in trained)

    train(cfg)
    rows = read_metrics(tmp_path / "run")
    assert rows[-1]["kl/seq"] != 0.0  # the adapters moved the policy away from the base
    saved = final_state(tmp_path / "run")
    assert set(saved) == trained  # checkpoints hold what trains, not the frozen base
    base = AutoModelForCausalLM.from_pretrained(tiny_model)
    merged = AutoModelForCausalLM.from_pretrained(tmp_path / "run" / "model")
    names = [n for n, _ in base.named_parameters()]
    assert [n for n, _ in merged.named_parameters()] == names  # a plain model, adapters merged
    moved = [n for n in names if not torch.equal(base.state_dict()[n], merged.state_dict()[n])]
    assert moved and all(n.endswith("weight") for n in moved)

    # Resume from step 2 repeats step 2 exactly, adapters and all.
    (tmp_path / "run" / "checkpoints" / "latest").write_text("step_000002")
    train(small_config(tiny_model, tmp_path / "run", steps=3, resume=True, **settings))
    again = read_metrics(tmp_path / "run")
    assert again[2]["loss/policy"] == pytest.approx(rows[2]["loss/policy"], abs=1e-6)


@dataclass(frozen=True)
class LengthScore:
    """A graded reward that varies from sample to sample (so normalisation has a spread)."""

    name: ClassVar[str] = "length_score"
    version: ClassVar[str] = "1"
    cost: ClassVar[Cost] = Cost.CHEAP

    def __call__(self, sample: Sample) -> Verdict:
        return Verdict.graded(self.name, self.version, len(sample.completion_text) % 5 / 4)


def normalised_reward() -> GraderReward:
    grader = Grader(chain(weighted({"length": LengthScore()}), running_normalize(64)))
    return GraderReward(grader, backend="inline")


def test_the_reward_state_is_checkpointed_as_of_the_last_trained_batch_and_resumed(
    tiny_model: str, tmp_path: Path
) -> None:
    settings = {"steps": 4, "checkpoint_every": 2}
    straight = tmp_path / "straight"
    train(small_config(tiny_model, straight, **settings), reward=normalised_reward())
    folder = straight / "checkpoints" / "step_000002"
    history = next(iter(load_rank_state(folder, 0)["reward"]["grader"].values()))
    # Steps 0 and 1 (8 samples each); step 2's batch, already scored under one_step
    # overlap, is not in it: it is scored again on resume.
    assert len(history) == 16
    resumed = tmp_path / "resumed"
    shutil.copytree(folder, resumed / "checkpoints" / "step_000002")
    (resumed / "checkpoints" / "latest").write_text("step_000002")
    train(small_config(tiny_model, resumed, resume=True, **settings), reward=normalised_reward())
    a, b = read_metrics(straight), read_metrics(resumed)
    assert [r["step"] for r in b] == [2, 3]
    for key in ("reward/mean", "loss/policy"):
        assert [r[key] for r in a[2:]] == pytest.approx([r[key] for r in b], abs=1e-6), key


class RecordsSteps:
    """A reward source that takes ``step=`` and notes each one it is given."""

    def __init__(self) -> None:
        grader = Grader(weighted({"exact_match": ExactMatch()}))
        self.inner = GraderReward(grader, backend="inline")
        self.steps: list[int] = []

    def score(self, samples, step=0):
        self.steps.append(step)
        return self.inner.score(samples, step=step)


def test_the_training_step_reaches_a_reward_source_that_takes_it(
    tiny_model: str, tmp_path: Path
) -> None:
    source = RecordsSteps()
    train(small_config(tiny_model, tmp_path, steps=3), reward=source)
    assert source.steps == [0, 1, 2]
