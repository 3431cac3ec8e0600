"""The reward plugin: the small protocol the trainer depends on, and its implementations.

The trainer only needs `score(samples) -> RewardBatch`: one reward per sample (None when
there is no reward to train on) plus every component, so what is logged is what was
trained on. `RewardPipeline.submit` runs a source in the background, which is how the
trainer scores batch k while it generates batch k+1.

The default source, `GraderReward`, holds a `rewardsmith.graders.Scorer`: the same object
as the CLI, the server and the adapters, so a reward computed in training equals the one
``rewardsmith score`` writes for the same sample and spec, running normalisation included
(its `state` goes into a checkpoint and `load_state` restores it).

    >>> from rewardsmith.verifiers.types import Sample
    >>> source = GraderReward.from_config({"exact_match": {"weight": 1.0}}, backend="inline")
    >>> batch = source.score([Sample(id="a", completion="4", reference="4"),
    ...                       Sample(id="b", completion="5", reference="4")])
    >>> batch.values, batch.components["exact_match"]
    ([1.0, 0.0], [1.0, 0.0])
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

from rewardsmith.graders import Executor, Reward, Scorer
from rewardsmith.verifiers.types import Sample

__all__ = [
    "GraderReward",
    "RewardBatch",
    "RewardPipeline",
    "RewardSource",
    "build_reward_source",
]


@dataclass
class RewardBatch:
    """Rewards for a batch, in the order of the samples.

    `values[i]` is the reward of sample i, or None when it has none (an infrastructure
    failure: kept out of the loss and counted, never a silent 0). `components` maps each
    component name to its per-sample values; `metrics` holds counts such as failures.
    """

    values: list[float | None]
    components: dict[str, list[float | None]] = field(default_factory=dict)
    metrics: dict[str, float] = field(default_factory=dict)


@runtime_checkable
class RewardSource(Protocol):
    """What the trainer needs from a reward: one `RewardBatch` for a list of samples."""

    def score(self, samples: Sequence[Sample]) -> RewardBatch: ...


class GraderReward:
    """The default plugin: a `Scorer`. Each `Reward` gives the sample's value (None when
    it has none: an infrastructure failure without a stated fallback, a data error,
    nothing applicable; the trainer drops that sample and counts it) and its components.

    ``reward`` is a `Scorer`, or anything `Scorer` takes (a `Grader`, a spec path, a list
    of names, a mapping), run on ``executor`` when one is lent, else with
    ``scorer_settings`` (backend, workers, timeout_s, ...).
    """

    def __init__(
        self, reward: Any, executor: Executor | None = None, **scorer_settings: Any
    ) -> None:
        if isinstance(reward, Scorer):
            self.scorer = reward
        else:
            self.scorer = Scorer(reward, executor=executor, **scorer_settings)

    @classmethod
    def from_config(
        cls,
        reward: Mapping[str, Mapping[str, Any] | None],
        executor: Executor | None = None,
        **scorer_settings: Any,
    ) -> GraderReward:
        """The weighted mean of registered verifiers, ``{name: {"weight": w, **settings}}``
        (the same meaning as ``-v a -v b`` on the CLI; see `rewardsmith.graders.build`)."""
        return cls(dict(reward), executor, **scorer_settings)

    @classmethod
    def from_spec(
        cls, path: str, executor: Executor | None = None, **scorer_settings: Any
    ) -> GraderReward:
        """A grader from a YAML reward spec (see docs/rewards.md)."""
        return cls(Path(path), executor, **scorer_settings)

    def score(self, samples: Sequence[Sample], step: int = 0) -> RewardBatch:
        return _from_rewards(self.scorer.score(list(samples), step=step))

    async def ascore(self, samples: Sequence[Sample], step: int = 0) -> RewardBatch:
        return _from_rewards(await self.scorer.ascore(list(samples), step=step))

    @property
    def state(self) -> dict[str, Any]:
        """The scorer's state (running normalisation), for a checkpoint."""
        return self.scorer.state

    def load_state(self, state: Mapping[str, Any]) -> None:
        self.scorer.load_state(state)

    def close(self) -> None:
        self.scorer.close()


def _from_rewards(rewards: Sequence[Reward]) -> RewardBatch:
    """Values and raw component values, with None wherever a sample has none."""
    names = sorted({name for r in rewards for name in r.components})
    values = [r.value if r.value is None or math.isfinite(r.value) else None for r in rewards]
    components: dict[str, list[float | None]] = {
        name: [r.components[name].raw if name in r.components else None for r in rewards]
        for name in names
    }
    infra = sum(r.infra_failure is not None for r in rewards)
    data = sum(r.data_error is not None for r in rewards)
    return RewardBatch(
        values, components, {"infra_failures": float(infra), "data_errors": float(data)}
    )


class RewardPipeline:
    """Runs a reward source in a background thread so scoring overlaps generation.

    A source with an async `ascore` runs on its own event loop (a grader's async executor);
    otherwise `score` runs on the thread. Results come back as futures in submit order.
    """

    def __init__(self, source: RewardSource) -> None:
        self.source = source
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="reward-pipeline")

    def submit(self, samples: Sequence[Sample], step: int | None = None) -> Future[RewardBatch]:
        """Score `samples` in the background; a given `step` is passed on as ``step=``
        (the source must then accept it)."""
        kwargs = {} if step is None else {"step": step}
        ascore = getattr(self.source, "ascore", None)
        if ascore is not None:
            return self._thread.submit(asyncio.run, ascore(list(samples), **kwargs))
        return self._thread.submit(self.source.score, list(samples), **kwargs)

    def close(self) -> None:
        self._thread.shutdown(wait=True)


def build_reward_source(
    reward: Mapping[str, Mapping[str, Any] | None],
    reward_spec: str | None,
    backend: Literal["inline", "pool", "ray"] = "pool",
    workers: int | None = None,
    timeout_s: float | None = 60.0,
) -> GraderReward:
    """The reward a config names: a grader spec when given, else the weighted mean of the
    named verifiers, on a Scorer with `backend` ("inline", "pool" or "ray")."""
    settings: dict[str, Any] = {"backend": backend, "workers": workers, "timeout_s": timeout_s}
    if reward_spec is not None:
        return GraderReward.from_spec(reward_spec, **settings)
    return GraderReward.from_config(reward, **settings)
