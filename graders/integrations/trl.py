"""A TRL reward function backed by a `Scorer`.

    from trl import GRPOTrainer
    from rewardsmith.graders.integrations import TRLReward

    reward = TRLReward("reward.yaml")          # or a Grader, a list of names, a Scorer
    trainer = GRPOTrainer(model=..., reward_funcs=[reward], train_dataset=dataset, ...)

Each dataset column TRL passes through (``answer``, ``solution``, ``ground_truth``,
``reference``, ...) is mapped with the TRL row shape (`rewardsmith.datasets.mapping`), so
the gold answer column becomes ``Sample.reference``. Samples with no reward (an
infrastructure failure without a stated fallback, a data error, nothing applicable)
return None, which TRL treats as "no reward from this function" (it becomes NaN and drops
out of the sum), and are counted in the ``rewardsmith/infra_failures`` and
``rewardsmith/data_errors`` metrics. A class rather than a closure, so that it pickles
(its Scorer starts its executor again where it lands).
"""

from __future__ import annotations

from typing import Any

from rewardsmith.datasets.mapping import to_sample
from rewardsmith.graders.reward import Reward
from rewardsmith.graders.scorer import Scorer

__all__ = ["TRLReward"]

# Keyword arguments TRL adds that are not dataset columns.
_TRL_CONTROL = frozenset(
    {"trainer_state", "log_extra", "log_metric", "environments", "completion_ids"}
)


class TRLReward:
    """``(prompts, completions, **columns) -> list[float | None]`` for TRL trainers.

    ``reward`` is a `Scorer`, or anything `Scorer` takes with ``scorer_settings``."""

    def __init__(self, reward: Any, **scorer_settings: Any) -> None:
        self.scorer = reward if isinstance(reward, Scorer) else Scorer(reward, **scorer_settings)
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
        rewards = self.scorer.score(samples, step=step)
        _log_components(kwargs.get("log_metric"), rewards)
        return [r.value for r in rewards]


def _log_components(log_metric: Any, rewards: list[Reward]) -> None:
    if log_metric is None or not rewards:
        return
    names = sorted({n for r in rewards for n in r.components})
    for name in names:
        raws = [r.components[name].raw for r in rewards if name in r.components]
        values = [v for v in raws if v is not None]
        if values:
            log_metric(f"rewardsmith/{name}", sum(values) / len(values))
    log_metric("rewardsmith/infra_failures", float(sum(r.failed for r in rewards)))
    log_metric("rewardsmith/data_errors", float(sum(r.data_error is not None for r in rewards)))
