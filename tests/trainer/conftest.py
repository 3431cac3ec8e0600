"""Fixtures for trainer tests: a tiny GPT-2 saved to disk and small run configs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from rewardsmith.trainer.config import TrainConfig
from rewardsmith.trainer.random_model import build_random_model
from rewardsmith.trainer.tiny import build_tiny_model

REPO = Path(__file__).resolve().parents[2]
ARITHMETIC = REPO / "datasets" / "arithmetic" / "tasks.jsonl"

# A reward every random policy earns sometimes, so even 2-step runs have a gradient.
EASY_REWARD = {"exact_match": {"weight": 0.5}, "format": {"weight": 0.5, "patterns": ["[0-4]"]}}


@pytest.fixture(scope="session")
def tiny_model(tmp_path_factory: pytest.TempPathFactory) -> str:
    return build_tiny_model(tmp_path_factory.mktemp("tiny") / "model", n_embd=32)


# Qwen2.5-0.5B's architecture shrunk to 2 layers, hidden 128 and 600 tokens: heads of 64, the
# size vLLM's CPU attention supports (the character GPT-2's heads of 8 are too small for it).
TINY_QWEN = {
    "num_hidden_layers": 2,
    "hidden_size": 128,
    "intermediate_size": 256,
    "num_attention_heads": 2,
    "num_key_value_heads": 1,
    "vocab_size": 600,
    "max_position_embeddings": 256,
}


@pytest.fixture(scope="session")
def tiny_qwen(tmp_path_factory: pytest.TempPathFactory) -> str:
    return build_random_model(tmp_path_factory.mktemp("qwen") / "model", **TINY_QWEN)


def small_config(model: str, output_dir: Path, **overrides: Any) -> TrainConfig:
    settings: dict[str, Any] = {
        "model": model,
        "prompts": str(ARITHMETIC),
        "output_dir": str(output_dir),
        "algorithm": "ppo",
        "steps": 3,
        "prompts_per_step": 2,
        "group_size": 4,
        "minibatch_size": 4,
        "ppo_epochs": 2,
        "max_new_tokens": 4,
        "max_prompt_tokens": 4,
        "kl_coef": 0.05,
        "tensorboard": False,
        "reward": EASY_REWARD,
        "reward_executor": "inline",
    }
    settings.update(overrides)
    return TrainConfig(**settings)


def vllm_marks() -> list[Any]:
    """The marks of a test module that needs the vLLM venv: skipped, with the reason (how to
    build it), where it has not been built."""
    from rewardsmith.trainer.engine import EngineError
    from rewardsmith.trainer.vllm_engine import vllm_python

    try:
        vllm_python()
        missing = ""
    except EngineError as exc:
        missing = str(exc)
    reason = missing.split(":")[0]
    return [pytest.mark.vllm, pytest.mark.slow, pytest.mark.skipif(bool(missing), reason=reason)]
