"""A TRL reward function backed by a grader.

    from trl import GRPOTrainer
    from rewardsmith.graders.integrations import TRLReward

    reward = TRLReward("reward.yaml")          # or TRLReward(grader)
    trainer = GRPOTrainer(model=..., reward_funcs=[reward], train_dataset=dataset, ...)

Each dataset column TRL passes through (``answer``, ``solution``, ``ground_truth``,
``reference``, ...) is mapped with the TRL row shape (`rewardsmith.datasets.mapping`), so
the gold answer column becomes ``Sample.reference``. Samples lost to an infrastructure
failure return None, which TRL treats as "no reward from this function" (it becomes NaN
and drops out of the sum), and are counted in the ``rewardsmith/infra_failures`` metric.
The object is a class rather than a closure so that it pickles.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rewardsmith.datasets.mapping import to_sample
from rewardsmith.graders.grader import Grader
from rewardsmith.graders.integrations.runner import GraderRunner

__all__ = ["TRLReward"]

# Keyword arguments TRL adds that are not dataset columns.
_TRL_CONTROL = frozenset(
    {"trainer_state", "log_extra", "log_metric", "environments", "completion_ids"}
)


class TRLReward:
    """``(prompts, completions, **columns) -> list[float | None]`` for TRL trainers."""

    def __init__(self, grader: Grader | str | Path, **runner_settings: Any) -> None:
        self.runner = GraderRunner(grader, **runner_settings)
        self.__name__ = "rewardsmith"  # TRL names the reward's log column after this

    def __call__(
        self, prompts: list[Any], completions: list[Any], **kwargs: Any
    ) -> list[float | None]:
        state = kwargs.get("trainer_state")
        step = int(getattr(state, "global_step", 0) or 0)
        columns = {
            k: v
            for k, v in kwargs.items()
            if k not in _TRL_CONTROL and isinstance(v, list) and len(v) == len(completions)
        }
        samples = [
            to_sample(
                {
                    "prompt": prompt,
                    "completion": completion,
                    **{k: v[i] for k, v in columns.items()},
                },
                default_id=f"trl-{step}-{i}",
                mapping="trl",
            )
            for i, (prompt, completion) in enumerate(zip(prompts, completions, strict=True))
        ]
        rewards = self.runner.rewards(samples, step=step)
        _log_components(kwargs.get("log_metric"), rewards)
        return [self.runner.value(r) for r in rewards]


def _log_components(log_metric: Any, rewards: list[Any]) -> None:
    if log_metric is None or not rewards:
        return
    names = sorted({n for r in rewards for n in r.components})
    for name in names:
        raws = [r.components[name].raw for r in rewards if name in r.components]
        values = [v for v in raws if v is not None]
        if values:
            log_metric(f"rewardsmith/{name}", sum(values) / len(values))
    log_metric("rewardsmith/infra_failures", float(sum(r.failed for r in rewards)))
