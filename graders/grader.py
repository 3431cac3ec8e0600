"""`Grader`: a tree of verifiers and combinators that turns samples into `Reward`s.

    >>> from rewardsmith.graders import Executor, Grader, chain, gate, verify, weighted
    >>> from rewardsmith.verifiers.types import Sample
    >>> fmt = verify("format", key="fmt", required_tags=("answer",))
    >>> grader = Grader(chain(weighted({"correct": "exact_match", "fmt": fmt},
    ...                                weights={"correct": 0.8, "fmt": 0.2}), gate("fmt")))
    >>> sorted(grader.verifiers)
    ['correct', 'fmt']
    >>> s = Sample(id="1", completion="<answer>4</answer>", reference="<answer>4</answer>")
    >>> with Executor("inline") as ex:
    ...     [r.value for r in grader.score([s], ex)]
    [1.0]

Scoring a batch: every leaf verifier runs on every sample its leaf applies to (through
the executor, so a crash or a hang is a verdict), then the tree combines the verdicts. A
leaf made with ``tasks`` (``verify("math", tasks=["math"])``) applies only to samples of
those tasks; on the others it is a SKIP verdict (score None, not applicable) and no job
runs, so a code sandbox never sees a math answer. A sample without a task is routed by
``default_task`` when the grader states one.

A sample any of whose verdicts is an infrastructure failure gets no reward: by
``on_infra_failure`` its value is None ("drop", the default; the trainer leaves it out)
or the stated ``fallback`` ("fallback", applied by the `Scorer`); either way
`Reward.infra_failure` and `Reward.reason` say what happened. The executor has already
retried such failures once. A data error (the sample's reference is unusable,
`Fault.DATA`) also gets no reward, and is counted as `Reward.data_error`, never as the
infrastructure's; no fallback replaces it.

`jobs` and `combine` are the two halves a `Scorer` puts together (it owns the executor and
the state); `score` and `ascore` are one-batch shortcuts through a one-off `Scorer`.
"""

from __future__ import annotations

import atexit
import math
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from rewardsmith.graders.executor import Executor, Job
from rewardsmith.graders.nodes import Context, Node, Ref, Verify, _as_source
from rewardsmith.graders.reward import Reward
from rewardsmith.verifiers import registry
from rewardsmith.verifiers.protocol import Verifier
from rewardsmith.verifiers.types import Sample, Verdict

__all__ = ["Grader", "GraderState", "default_executor"]

GraderState = Mapping[str, Any]
"""Explicit state of stateful blocks (running normalisation), by block path."""

_default: Executor | None = None
_default_lock = threading.Lock()


def default_executor() -> Executor:
    """A process-pool executor shared by graders called without one (closed at exit)."""
    global _default
    with _default_lock:
        if _default is None:
            _default = Executor("pool")
            atexit.register(_default.close)
        return _default


def _walk(node: Node) -> list[Node]:
    out = [node]
    for child in node.children():
        out += _walk(child)
    return out


def _collect_leaves(root: Node) -> dict[str, Verify]:
    leaves: dict[str, Verify] = {}
    refs: list[str] = []
    for node in _walk(root):
        if isinstance(node, Verify):
            seen = leaves.get(node.key)
            if seen is not None and seen.verifier != node.verifier:
                raise ValueError(
                    f"two different verifiers share the key {node.key!r}: give one a "
                    f"different key (verify(..., key='...'))"
                )
            if seen is not None and seen.tasks != node.tasks:
                raise ValueError(
                    f"the leaf {node.key!r} is given two different task lists "
                    f"({seen.tasks} and {node.tasks}): give both the same tasks, or give "
                    "one a different key"
                )
            leaves[node.key] = node
        elif isinstance(node, Ref):
            refs.append(node.key)
    for key in refs:
        if key not in leaves:
            try:
                leaves[key] = Verify(key, registry.create(key))
            except registry.UnknownVerifierError as exc:
                raise registry.UnknownVerifierError(
                    f"{key!r} is neither a component key of this grader nor a verifier name. {exc}"
                ) from None
    return leaves


@dataclass(frozen=True)
class Grader:
    """A reward: a source block (see `rewardsmith.graders.nodes`) and a failure policy."""

    root: Node
    on_infra_failure: Literal["drop", "fallback"] = "drop"
    """What an infrastructure failure gives: no value ("drop") or ``fallback``."""
    fallback: float | None = None
    """The stated value for "fallback"; it is marked as such in the reward."""
    default_task: str | None = None
    """The task of a sample that names none (OpenRLHF's ``/get_reward`` sends no task)."""
    _leaves: dict[str, Verify] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        root = self.root
        if not hasattr(root, "apply"):
            root = _as_source(None, root)
            object.__setattr__(self, "root", root)
        if not root.source:
            raise ValueError(
                f"a grader's root must make a value; {type(root).__name__} only changes "
                f"one: wrap it as chain(<source>, {type(root).__name__.lower()}(...))"
            )
        if self.on_infra_failure not in ("drop", "fallback"):
            raise ValueError(
                f"on_infra_failure must be 'drop' or 'fallback', not {self.on_infra_failure!r}"
            )
        if (self.on_infra_failure == "fallback") != (self.fallback is not None):
            raise ValueError("set fallback exactly when on_infra_failure='fallback'")
        if self.fallback is not None and not math.isfinite(self.fallback):
            raise ValueError(f"fallback must be a finite number, got {self.fallback!r}")
        object.__setattr__(self, "_leaves", _collect_leaves(root))

    @classmethod
    def from_spec(cls, spec: Mapping[str, Any]) -> Grader:
        """Build from a parsed reward spec (see `rewardsmith.graders.spec`)."""
        from rewardsmith.graders.spec import build_spec

        return build_spec(spec)

    @property
    def verifiers(self) -> dict[str, Verifier]:
        """The leaf verifiers this grader runs, by key."""
        return {key: leaf.verifier for key, leaf in self._leaves.items()}

    @property
    def tasks(self) -> dict[str, tuple[str, ...] | None]:
        """The tasks each leaf applies to, by key (None: every sample)."""
        return {key: leaf.tasks for key, leaf in self._leaves.items()}

    def task_of(self, sample: Sample) -> str | None:
        """The task a sample is routed by: its own, else the grader's ``default_task``."""
        return sample.task if sample.task is not None else self.default_task

    def _applicable(self, sample: Sample) -> list[str]:
        """The keys of the leaves that run on ``sample``, in key order."""
        task = self.task_of(sample)
        return [key for key in sorted(self._leaves) if self._leaves[key].applies_to(task)]

    # ------------------------------------------------------------------ the Scorer's halves

    def jobs(self, samples: Sequence[Sample]) -> list[Job]:
        """The (verifier, sample) jobs for a batch: sample-major, leaves in key order, only
        the leaves that apply to each sample (see ``tasks``). One half of scoring: the
        `Scorer` runs these and hands the verdicts to `combine`; nothing else should."""
        return [
            Job(self._leaves[k].verifier, self._leaves[k].prepared(s))
            for s in samples
            for k in self._applicable(s)
        ]

    def combine(
        self,
        samples: Sequence[Sample],
        verdicts: Sequence[Verdict],
        state: GraderState | None = None,
        step: int = 0,
    ) -> tuple[list[Reward], GraderState]:
        """Rewards from the verdicts of `jobs` (in its order), and the new state.

        Leaves that do not apply to a sample get their SKIP verdict here. A sample with an
        infrastructure failure or a data error gets no value (None) and says why; the
        `Scorer` applies the failure policy (a stated fallback) on top."""
        keys = sorted(self._leaves)
        per_sample = self._per_sample(samples, verdicts)
        lost = [_first_lost(keys, d) for d in per_sample]
        ctx = Context(
            samples, per_sample, [k is not None for k in lost], step, state_in=state or {}
        )
        values = self.root.apply(None, ctx)
        rewards = [
            self._reward(sample, value, ctx.components[i], per_sample[i], lost[i])
            for i, (sample, value) in enumerate(zip(samples, values, strict=True))
        ]
        return rewards, dict(ctx.state_out)

    # ------------------------------------------------------------------ shortcuts

    def score(
        self, samples: Sequence[Sample], executor: Executor | None = None, *, step: int = 0
    ) -> list[Reward]:
        """One `Reward` per sample, in order, as one batch through a one-off `Scorer` on
        ``executor`` (default: a shared process pool). Nothing is carried to the next
        call: hold a `Scorer` to keep running-normalisation state across batches."""
        from rewardsmith.graders.scorer import Scorer

        with Scorer(self, executor=executor or default_executor()) as scorer:
            return scorer.score(samples, step=step)

    async def ascore(
        self, samples: Sequence[Sample], executor: Executor | None = None, *, step: int = 0
    ) -> list[Reward]:
        """`score` for asyncio: verifiers run while the event loop does other work."""
        from rewardsmith.graders.scorer import Scorer

        with Scorer(self, executor=executor or default_executor()) as scorer:
            return await scorer.ascore(samples, step=step)

    def _per_sample(
        self, samples: Sequence[Sample], verdicts: Sequence[Verdict]
    ) -> list[dict[str, Verdict]]:
        """Each sample's verdict per leaf key: the next one computed, or a SKIP."""
        plans = [self._applicable(s) for s in samples]
        expected = sum(len(plan) for plan in plans)
        if len(verdicts) != expected:
            raise ValueError(
                f"expected {expected} verdicts (one per job of `jobs`), got {len(verdicts)}"
            )
        computed = iter(verdicts)
        out = []
        for sample, plan in zip(samples, plans, strict=True):
            ran = {key: next(computed) for key in plan}
            task = self.task_of(sample)
            out.append(
                {
                    key: ran[key] if key in ran else leaf.not_applicable(task)
                    for key, leaf in sorted(self._leaves.items())
                }
            )
        return out

    def _reward(
        self,
        sample: Sample,
        value: float | None,
        components: dict[str, Any],
        verdicts: dict[str, Verdict],
        lost_key: str | None,
    ) -> Reward:
        if lost_key is None:
            reason = "" if value is not None else "no component applies (every one was skipped)"
            return Reward(sample.id, value, components, verdicts, reason=reason)
        verdict = verdicts[lost_key]
        assert verdict.failure is not None
        whose = "infrastructure" if verdict.is_infra_failure else "data (a data error)"
        reason = (
            f"verifier {lost_key!r} ({verdict.name} v{verdict.version}) failed in the "
            f"{whose}: {verdict.failure.value}: {verdict.feedback}"
        )[:1000]
        if verdict.is_infra_failure:
            return Reward(
                sample.id, None, {}, verdicts, infra_failure=verdict.failure, reason=reason
            )
        return Reward(sample.id, None, {}, verdicts, data_error=verdict.failure, reason=reason)


def _first_lost(keys: list[str], verdicts: Mapping[str, Verdict]) -> str | None:
    """The first leaf whose verdict leaves the sample without a reward: an infrastructure
    failure first (it is retried and counted as such), else a data error."""
    infra = next((k for k in keys if verdicts[k].is_infra_failure), None)
    return infra or next((k for k in keys if verdicts[k].is_data_error), None)
