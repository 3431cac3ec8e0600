"""The same grader inside the trainers people already run.

- `TRLReward`: a TRL reward function, ``(prompts, completions, **columns) -> list[float | None]``.
- `VerlScore` and `rewardsmith.graders.integrations.verl.compute_score`: veRL's
  ``compute_score(data_source, solution_str, ground_truth, extra_info) -> float | dict``.
- `rewardsmith.graders.integrations.openrlhf`: a file for OpenRLHF's ``--remote_rm_url``
  with ``reward_func(queries, prompts, labels)``; or run ``rewardsmith serve`` and point
  OpenRLHF at ``http://host:port/get_reward``.

All of them call `Grader.score` through an `Executor`, exactly as the CLI and the server do,
so a reward computed offline equals the one computed online for the same sample and spec.
"""

from rewardsmith.graders.integrations.runner import GraderRunner, InfraFailureError
from rewardsmith.graders.integrations.trl import TRLReward
from rewardsmith.graders.integrations.verl import VerlScore

__all__ = ["GraderRunner", "InfraFailureError", "TRLReward", "VerlScore"]
