"""The public surface is small and pinned; every docstring example runs."""

from __future__ import annotations

import doctest
import importlib

import pytest

import rewardsmith.trainer as trainer

MODULES = [
    "advantages",
    "config",
    "engine",
    "hf_engine",
    "losses",
    "random_model",
    "rewards",
    "rollout",
    "tiny",
]


def test_public_names_are_pinned() -> None:
    assert trainer.__all__ == [
        "Generation",
        "GraderReward",
        "HFEngine",
        "RewardBatch",
        "RewardPipeline",
        "RewardSource",
        "RolloutEngine",
        "SamplingParams",
        "TrainConfig",
        "TrainResult",
        "VLLMEngine",
        "build_random_model",
        "build_tiny_model",
        "load_config",
        "train",
    ]
    assert all(hasattr(trainer, name) for name in trainer.__all__)


@pytest.mark.parametrize("name", ["", *MODULES])
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(f"rewardsmith.trainer{'.' + name if name else ''}")
    failed, _ = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert failed == 0
