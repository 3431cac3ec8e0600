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
runs, so a code sandbox never sees a math answer. A sample any of whose
verdicts is an infrastructure failure gets no reward: by ``on_infra_failure`` its value
is None ("drop", the default; the trainer leaves it out) or the stated ``fallback``
("fallback"); either way `Reward.infra_failure` and `Reward.reason` say what happened.
The executor has already retried such failures once.
"""

from __future__ import annotations

import atexit
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
        object.__setattr__(self, "_leaves", _collect_leaves(root))

    @classmethod
    def from_spec(cls, spec: Mapping[str, Any]) -> Grader:
        """Build from a parsed reward spec (see `rewardsmith.graders.spec`)."""
        from rewardsmith.graders.spec import build

        return build(spec)

    @property
    def verifiers(self) -> dict[str, Verifier]:
        """The leaf verifiers this grader runs, by key."""
        return {key: leaf.verifier for key, leaf in self._leaves.items()}

    @property
    def tasks(self) -> dict[str, tuple[str, ...] | None]:
        """The tasks each leaf applies to, by key (None: every sample)."""
        return {key: leaf.tasks for key, leaf in self._leaves.items()}

    def _applicable(self, sample: Sample) -> list[str]:
        """The keys of the leaves that run on ``sample``, in key order."""
        return [key for key in sorted(self._leaves) if self._leaves[key].applies(sample)]

    # ------------------------------------------------------------------ scoring

    def jobs(self, samples: Sequence[Sample]) -> list[Job]:
        """The (verifier, sample) jobs for a batch: sample-major, leaves in key order, only
        the leaves that apply to each sample (see ``tasks``)."""
        return [Job(self._leaves[k].verifier, s) for s in samples for k in self._applicable(s)]

    def score(
        self, samples: Sequence[Sample], executor: Executor | None = None, *, step: int = 0
    ) -> list[Reward]:
        """One `Reward` per sample, in order. ``step`` drives scheduled weights."""
        return self.score_with_state(samples, None, executor, step=step)[0]

    def score_with_state(
        self,
        samples: Sequence[Sample],
        state: GraderState | None,
        executor: Executor | None = None,
        *,
        step: int = 0,
    ) -> tuple[list[Reward], GraderState]:
        """`score`, threading the explicit state of running normalisation through."""
        verdicts = (executor or default_executor()).run(self.jobs(samples))
        return self.combine(samples, verdicts, state, step)

    async def ascore(
        self, samples: Sequence[Sample], executor: Executor | None = None, *, step: int = 0
    ) -> list[Reward]:
        """`score` for asyncio: verifiers run while the event loop does other work."""
        return (await self.ascore_with_state(samples, None, executor, step=step))[0]

    async def ascore_with_state(
        self,
        samples: Sequence[Sample],
        state: GraderState | None,
        executor: Executor | None = None,
        *,
        step: int = 0,
    ) -> tuple[list[Reward], GraderState]:
        verdicts = await (executor or default_executor()).arun(self.jobs(samples))
        return self.combine(samples, verdicts, state, step)

    def combine(
        self,
        samples: Sequence[Sample],
        verdicts: Sequence[Verdict],
        state: GraderState | None = None,
        step: int = 0,
    ) -> tuple[list[Reward], GraderState]:
        """Rewards from verdicts already computed (in `jobs` order), with the new state.

        Leaves that do not apply to a sample get their SKIP verdict here."""
        keys = sorted(self._leaves)
        per_sample = self._per_sample(samples, verdicts)
        infra = [next((k for k in keys if d[k].is_infra_failure), None) for d in per_sample]
        ctx = Context(
            samples, per_sample, [k is not None for k in infra], step, state_in=state or {}
        )
        values = self.root.apply(None, ctx)
        rewards = [
            self._reward(sample, value, ctx.components[i], per_sample[i], infra[i])
            for i, (sample, value) in enumerate(zip(samples, values, strict=True))
        ]
        return rewards, dict(ctx.state_out)

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
            out.append(
                {
                    key: ran[key] if key in ran else leaf.not_applicable(sample)
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
        infra_key: str | None,
    ) -> Reward:
        if infra_key is None:
            reason = "" if value is not None else "no component applies (every one was skipped)"
            return Reward(sample.id, value, components, verdicts, reason=reason)
        verdict = verdicts[infra_key]
        assert verdict.failure is not None
        reason = (
            f"verifier {infra_key!r} ({verdict.name} v{verdict.version}) failed in the "
            f"infrastructure: {verdict.failure.value}: {verdict.feedback}"
        )[:1000]
        fallback = self.on_infra_failure == "fallback"
        return Reward(
            sample.id,
            self.fallback if fallback else None,
            {},
            verdicts,
            infra_failure=verdict.failure,
            reason=reason,
            fallback=fallback,
        )
