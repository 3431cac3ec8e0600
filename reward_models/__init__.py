"""Learned reward models: train, evaluate, and serve them as verifiers.

    >>> from rewardsmith.reward_models import RewardModel, TrainConfig, train  # doctest: +SKIP
    >>> rm = RewardModel.load("path/to/backbone")                            # doctest: +SKIP
    >>> train(rm, pairs, TrainConfig(batch_size=16, epochs=2), "runs/rm")    # doctest: +SKIP

See docs/reward_models.md. Modules: `model` (backbone + scalar head), `data` (rows and bad
input), `losses`, `objectives`, `training`, `scoring` (sorted batched inference), `evaluate`
(metrics), `verifier` and `ensemble` (reward models as verifiers), `cli`.
"""

from importlib import import_module
from typing import Any

# Imported on first use (PEP 562): the CLI, and every worker process that re-imports it,
# would otherwise pay for torch and transformers at start-up.
_EXPORTS = {
    "EnsembleVerifier": "ensemble",
    "EvalReport": "evaluate",
    "PointwiseExample": "data",
    "PreferencePair": "data",
    "RewardModel": "model",
    "RewardModelSpec": "model",
    "RewardModelVerifier": "verifier",
    "StepExample": "data",
    "TrainConfig": "training",
    "bundled_preferences": "data",
    "evaluate_pairs": "evaluate",
    "pointwise_examples": "data",
    "preference_pairs": "data",
    "score_outcomes": "scoring",
    "score_steps": "scoring",
    "step_examples": "data",
    "train": "training",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'rewardsmith.reward_models' has no attribute {name!r}")
    return getattr(import_module(f"rewardsmith.reward_models.{module}"), name)


__all__ = [
    "EnsembleVerifier",
    "EvalReport",
    "PointwiseExample",
    "PreferencePair",
    "RewardModel",
    "RewardModelSpec",
    "RewardModelVerifier",
    "StepExample",
    "TrainConfig",
    "bundled_preferences",
    "evaluate_pairs",
    "pointwise_examples",
    "preference_pairs",
    "score_outcomes",
    "score_steps",
    "step_examples",
    "train",
]
