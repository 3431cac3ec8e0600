"""Config validation: bad combinations fail up front with a message that says how to fix."""

from __future__ import annotations

from pathlib import Path

import pytest

from rewardsmith.trainer.config import TrainConfig, load_config

BASE = {"model": "m", "prompts": "p.jsonl", "output_dir": "out"}

BAD = [
    ({"minibatch_size": 5}, "must divide the global batch"),
    ({"algorithm": "rloo", "group_size": 1, "minibatch_size": 8}, "rloo needs group_size >= 2"),
    ({"steps": 0}, "steps must be >= 1"),
    ({"temperature": 0.0}, "temperature"),
    ({"kl_target": -1.0}, "kl_target > 0"),
    ({"kl_estimator": "k2"}, "kl_estimator must be k1 or k3"),
    ({"algorithm": "grpo", "kl_estimator": "k1"}, "zero"),  # KL in the loss: k1 has no gradient
    ({"algorithm": "rloo", "kl_estimator": "k1"}, "zero"),
    ({"reward_overlap": True}, "reward_overlap must be off or one_step"),
    ({"prompt_truncation": "right"}, "prompt_truncation must be error or left"),
    ({"engine": "sglang"}, "engine must be hf or vllm"),
    ({"micro_batch_size": 0}, "micro_batch_size"),
    ({"reward_retries": -1}, "reward_retries"),
    ({"reward_batch_timeout_s": 0}, "reward_batch_timeout_s"),
    ({"lora_rank": 4, "parallel": "fsdp"}, "LoRA with parallel=fsdp"),
    ({"lora_rank": -1}, "lora_rank"),
    ({"vllm_kv_cache_gb": 0}, "vllm_kv_cache_gb"),
    ({"algorithm": "dpo"}, "ppo, grpo, rloo or reinforce_pp"),
    ({"gae_lambda": 1.5}, r"\[0, 1\]"),
    ({"reward": {}}, "set `reward`"),
    ({"parallel": "zero3"}, "parallel must be ddp or fsdp"),
]


@pytest.mark.parametrize(("change", "message"), BAD)
def test_bad_configs_fail_with_a_fix(change: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        TrainConfig(**{**BASE, **change})


def test_yaml_round_trip_and_overrides(tmp_path: Path) -> None:
    import yaml

    cfg = TrainConfig(**BASE, algorithm="ppo", kl_target=0.1)
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump(cfg.to_dict()))
    assert load_config(path) == cfg
    assert load_config(path, steps=7, seed=None).steps == 7  # None means "not given"


def test_unknown_yaml_key_suggests_the_right_one(tmp_path: Path) -> None:
    path = tmp_path / "run.yaml"
    path.write_text("model: m\nprompts: p\noutput_dir: o\nlearning_rate: 0.1\nkl_coeff: 0.1\n")
    with pytest.raises(ValueError, match="unknown setting 'learning_rate'"):
        load_config(path)
    path.write_text("model: m\nprompts: p\noutput_dir: o\nkl_coeff: 0.1\n")
    with pytest.raises(ValueError, match="did you mean 'kl_coef'"):
        load_config(path)


def test_yaml_that_is_not_a_mapping(tmp_path: Path) -> None:
    path = tmp_path / "run.yaml"
    path.write_text("- a\n- b\n")
    with pytest.raises(ValueError, match="mapping"):
        load_config(path)


@pytest.mark.parametrize(
    ("algorithm", "in_loss", "reward_estimator"),
    [
        ("ppo", False, "k1"),
        ("reinforce_pp", False, "k1"),
        ("grpo", True, "k1"),
        ("rloo", True, "k1"),
    ],
)
def test_kl_placement_and_default_estimators(
    algorithm: str, in_loss: bool, reward_estimator: str
) -> None:
    cfg = TrainConfig(**BASE, algorithm=algorithm)  # type: ignore[arg-type]
    assert cfg.kl_in_loss == in_loss and cfg.reward_kl_estimator == reward_estimator
    assert not TrainConfig(**BASE, algorithm=algorithm, kl_coef=0.0).kl_in_loss  # type: ignore[arg-type]
    assert TrainConfig(**BASE, algorithm=algorithm, kl_estimator="k3").reward_kl_estimator == "k3"  # type: ignore[arg-type]


def test_k1_is_fine_when_the_kl_is_off() -> None:
    assert (
        TrainConfig(**BASE, algorithm="grpo", kl_coef=0.0, kl_estimator="k1").kl_estimator == "k1"
    )


def test_the_old_overlap_key_points_to_its_new_name(tmp_path: Path) -> None:
    path = tmp_path / "run.yaml"
    path.write_text("model: m\nprompts: p\noutput_dir: o\noverlap: true\n")
    with pytest.raises(ValueError, match="did you mean 'reward_overlap'"):
        load_config(path)
