"""veRL's custom reward function, backed by a grader.

In the veRL config::

    custom_reward_function:
      path: <site-packages>/rewardsmith/graders/integrations/verl.py   # or a file of yours
      name: compute_score

with ``REWARDSMITH_SPEC=/path/to/reward.yaml`` in the environment of the reward workers.
veRL calls ``compute_score(data_source, solution_str, ground_truth, extra_info)`` once per
sample; the result is a dict whose ``score`` is the reward and whose other keys (one per
component) veRL logs. veRL needs a number for every sample, so a sample lost to an
infrastructure failure raises `InfraFailureError` naming it, unless the spec states a
fallback or the scorer was built with ``on_infra_failure=<number>``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from rewardsmith.graders.grader import Grader
from rewardsmith.graders.integrations.runner import GraderRunner
from rewardsmith.verifiers.types import Sample

__all__ = ["VerlScore", "compute_score"]


class VerlScore:
    """A picklable ``compute_score`` for veRL."""

    def __init__(self, grader: Grader | str | Path, **runner_settings: Any) -> None:
        runner_settings.setdefault("on_infra_failure", "raise")
        self.runner = GraderRunner(grader, **runner_settings)

    def __call__(
        self,
        data_source: str,
        solution_str: str,
        ground_truth: Any,
        extra_info: dict[str, Any] | None = None,
        **_: Any,
    ) -> dict[str, Any]:
        extra = dict(extra_info or {})
        sample = Sample(
            id=str(extra.get("index", "verl")),
            completion=solution_str,
            reference=ground_truth,
            task=data_source,
            meta=extra,
        )
        [reward] = self.runner.rewards([sample])
        components = {name: c.raw for name, c in reward.components.items() if c.raw is not None}
        return {"score": self.runner.value(reward), **components}


_default: VerlScore | None = None


def compute_score(
    data_source: str,
    solution_str: str,
    ground_truth: Any,
    extra_info: dict[str, Any] | None = None,
    **kwargs: Any,
) -> dict[str, Any]:
    """veRL's entry point; the spec comes from ``REWARDSMITH_SPEC``."""
    global _default
    if _default is None:
        runner = GraderRunner.from_env(on_infra_failure="raise")
        _default = VerlScore(runner.grader)
    return _default(data_source, solution_str, ground_truth, extra_info, **kwargs)
