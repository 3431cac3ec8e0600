"""The same Scorer inside the trainers people already run.

- `TRLReward`: a TRL reward function, ``(prompts, completions, **columns) -> list[float | None]``.
- `VerlScore` and `rewardsmith.graders.integrations.verl.compute_score`: veRL's
  ``compute_score``, one sample or a batch per call.
- `rewardsmith.graders.integrations.openrlhf`: a file for OpenRLHF's ``--remote_rm_url``
  with ``reward_func(queries, prompts, labels)``; or run ``rewardsmith serve`` and point
  OpenRLHF at ``http://host:port/get_reward``.

Each holds a `rewardsmith.graders.Scorer`, exactly as the CLI, the server and the trainer
do, so a reward computed offline equals the one computed online for the same sample and
spec.
"""

from rewardsmith.graders.integrations.trl import TRLReward
from rewardsmith.graders.integrations.verl import VerlScore
from rewardsmith.graders.scorer import (
    DataError,
    InfraFailureError,
    NoRewardError,
    NotApplicableError,
)

__all__ = [
    "DataError",
    "InfraFailureError",
    "NoRewardError",
    "NotApplicableError",
    "TRLReward",
    "VerlScore",
]
