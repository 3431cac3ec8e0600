"""OpenRLHF's reward function file, backed by a grader.

Run OpenRLHF with ``--remote_rm_url <site-packages>/rewardsmith/graders/integrations/openrlhf.py``
and ``REWARDSMITH_SPEC=/path/to/reward.yaml``. OpenRLHF calls
``reward_func(queries, prompts, labels)`` with whole batches, where each query is the
prompt followed by the response; it reads ``rewards`` for the advantage, ``scores`` for
dynamic filtering and logs ``extra_logs``. OpenRLHF needs a number for every sample, so a
sample lost to an infrastructure failure raises `InfraFailureError` unless the spec states a
fallback. The HTTP form of the same contract is ``rewardsmith serve`` at ``/get_reward``.
"""

from __future__ import annotations

from typing import Any

from rewardsmith.datasets.mapping import to_sample
from rewardsmith.graders.integrations.runner import GraderRunner

__all__ = ["reward_func"]

_runner: GraderRunner | None = None


def reward_func(
    queries: list[str], prompts: list[str], labels: list[Any], **_: Any
) -> dict[str, Any]:
    import torch

    global _runner
    if _runner is None:
        _runner = GraderRunner.from_env(on_infra_failure="raise")
    samples = [
        to_sample(
            {"query": q, "prompts": p, "labels": label}, default_id=str(i), mapping="openrlhf"
        )
        for i, (q, p, label) in enumerate(zip(queries, prompts, labels, strict=True))
    ]
    rewards = _runner.rewards(samples)
    values = torch.tensor([_runner.value(r) for r in rewards], dtype=torch.float32)
    names = sorted({n for r in rewards for n in r.components})
    extra_logs = {
        name: torch.tensor(
            [float(r.components[name].raw or 0.0) if name in r.components else 0.0 for r in rewards]
        )
        for name in names
    }
    return {"rewards": values, "scores": values, "extra_logs": extra_logs}
