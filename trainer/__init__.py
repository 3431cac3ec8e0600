"""rewardsmith.trainer: PPO (and GRPO, RLOO, REINFORCE++) for causal LMs on torch.distributed,
with rewards from verifiers or a grader, computed online while the next batch is generated.

    >>> from rewardsmith.trainer import TrainConfig
    >>> TrainConfig(model="path/to/model", prompts="tasks.jsonl", output_dir="runs/a").algorithm
    'grpo'

Start with `train(config)` or the `rewardsmith train` command; see docs/trainer.md.
"""

from importlib import import_module
from typing import Any

# Imported on first use (PEP 562): `rewardsmith train` and every worker process that
# re-imports the CLI would otherwise pay for torch and transformers at start-up.
_EXPORTS = {
    "Generation": "engine",
    "GraderReward": "rewards",
    "HFEngine": "hf_engine",
    "RewardBatch": "rewards",
    "RewardPipeline": "rewards",
    "RewardSource": "rewards",
    "RolloutEngine": "engine",
    "SamplingParams": "engine",
    "TrainConfig": "config",
    "TrainResult": "loop",
    "VLLMEngine": "vllm_engine",
    "build_random_model": "random_model",
    "build_tiny_model": "tiny",
    "load_config": "config",
    "train": "loop",
}


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'rewardsmith.trainer' has no attribute {name!r}")
    return getattr(import_module(f"rewardsmith.trainer.{module}"), name)


__all__ = [
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
