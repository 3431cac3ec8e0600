"""The public surface is small and pinned; every docstring example runs."""

from __future__ import annotations

import doctest
import importlib

import pytest

import rewardsmith.trainer as trainer

MODULES = ["advantages", "config", "losses", "rewards", "tiny"]


def test_public_names_are_pinned() -> None:
    assert trainer.__all__ == [
        "GraderReward",
        "RewardBatch",
        "RewardPipeline",
        "RewardSource",
        "TrainConfig",
        "TrainResult",
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
