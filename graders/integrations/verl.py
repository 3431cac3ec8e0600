"""veRL's custom reward function, backed by a `Scorer`.

In the veRL config::

    custom_reward_function:
      path: <site-packages>/rewardsmith/graders/integrations/verl.py   # or a file of yours
      name: compute_score

with ``REWARDSMITH_SPEC=/path/to/reward.yaml`` in the environment of the reward workers
(see `rewardsmith.graders.integrations._env` for the other variables). Both of veRL's
calling conventions work:

- one sample per call, ``compute_score(data_source, solution_str, ground_truth,
  extra_info)`` (the naive reward manager and the reward loop, which call it from a thread
  pool: concurrent calls are run together on the one Scorer);
- a batch per call, ``compute_score(data_sources=, solution_strs=, ground_truths=,
  extra_infos=)`` (the batch reward manager), which returns one dict per sample.

Each result is ``{"score": reward, <leaf key>: its verdict's score, ...}`` with **the same
keys for every sample** of a mixed-task spec (veRL asserts that every key is present for
every sample): a leaf that does not apply to a sample has NaN there. ``data_source`` is
the sample's task; ``extra_info`` becomes its ``meta``, and ``extra_info["prompt"]``, when
there, its prompt (veRL does not pass the prompt: put it there to group by prompt).
veRL needs a number for every sample, so a sample with no reward raises the
`NoRewardError` that says why (an infrastructure failure, unless the spec or
``VerlScore(..., fallback=x)`` states a fallback; a data error; nothing applicable).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from typing import Any

from rewardsmith.graders.integrations._env import shared_scorer
from rewardsmith.graders.reward import Reward
from rewardsmith.graders.scorer import Scorer
from rewardsmith.verifiers.types import Sample

__all__ = ["VerlScore", "compute_score"]


class VerlScore:
    """A picklable ``compute_score`` for veRL (both calling conventions)."""

    def __init__(self, reward: Any, **scorer_settings: Any) -> None:
        self.scorer = reward if isinstance(reward, Scorer) else Scorer(reward, **scorer_settings)

    def __call__(
        self,
        data_source: str | None = None,
        solution_str: str | None = None,
        ground_truth: Any = None,
        extra_info: Mapping[str, Any] | None = None,
        *,
        data_sources: Sequence[str] | None = None,
        solution_strs: Sequence[str] | None = None,
        ground_truths: Sequence[Any] | None = None,
        extra_infos: Sequence[Mapping[str, Any] | None] | None = None,
        **_: Any,
    ) -> dict[str, Any] | list[dict[str, Any]]:
        if solution_strs is not None:
            n = len(solution_strs)
            samples = [
                _sample(i, s, t, g, e)
                for i, (s, t, g, e) in enumerate(
                    zip(
                        data_sources if data_sources is not None else [None] * n,
                        solution_strs,
                        ground_truths if ground_truths is not None else [None] * n,
                        extra_infos if extra_infos is not None else [None] * n,
                        strict=True,
                    )
                )
            ]
            return [self._result(r) for r in self.scorer.score(samples)]
        if solution_str is None:
            raise TypeError("compute_score needs solution_str (or solution_strs for a batch)")
        sample = _sample(0, data_source, solution_str, ground_truth, extra_info)
        [reward] = self.scorer.score([sample])
        return self._result(reward)

    def _result(self, reward: Reward) -> dict[str, Any]:
        leaves = {
            key: (math.nan if verdict.score is None else verdict.score)
            for key, verdict in sorted(reward.verdicts.items())
        }
        return {"score": self.scorer.require_value(reward), **leaves}


def _sample(
    i: int, data_source: Any, solution: str, ground_truth: Any, extra: Mapping[str, Any] | None
) -> Sample:
    meta = _jsonable(dict(extra or {}))
    prompt = meta.get("prompt")
    return Sample(
        id=str(meta.get("index", i)),
        prompt=prompt if isinstance(prompt, str) else "",
        completion=solution,
        reference=_jsonable(ground_truth),
        task=None if data_source is None else str(data_source),
        meta=meta,
    )


def _jsonable(value: Any) -> Any:
    """veRL hands numpy values (arrays, scalars) in ``extra_info`` and ``ground_truth``:
    plain JSON values, so that samples hash, cache and pickle like any other."""
    return json.loads(json.dumps(value, default=_plain))


def _plain(value: Any) -> Any:
    for name in ("tolist", "item"):
        if hasattr(value, name):
            return getattr(value, name)()
    return str(value)


def compute_score(*args: Any, **kwargs: Any) -> dict[str, Any] | list[dict[str, Any]]:
    """veRL's entry point; the reward comes from ``REWARDSMITH_SPEC`` (one Scorer per
    process, however many threads call at once)."""
    return VerlScore(shared_scorer())(*args, **kwargs)
