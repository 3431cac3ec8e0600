"""What a grader returns for one sample: the `Reward` (statistics over many are in
`rewardsmith.graders.stats`).

A `Reward` keeps the final value, every component's raw and weighted value, and the
verdicts it was computed from, so what is logged is exactly what was trained on.

`value` is None in three cases, and the record says which:

- `infra_failure` is set: a verifier could not do its job (it crashed, timed out, its
  worker died, the sandbox did not start). That is never a reward: the sample is marked
  and counted, and the trainer should drop it (or the grader's policy gave a stated
  `fallback`, in which case `value` is that number and `fallback` is True).
- `data_error` is set: the sample's own data is unusable (its reference is missing or
  malformed). Neither the model's fault nor the infrastructure's: no reward, counted as
  a data error. No fallback replaces it.
- neither: nothing applied (every component was a `skip`). The reason is in `reason`.

    >>> r = Reward("q1", 0.5, {"correct": Component(1.0, 0.5, 0.5)}, {})
    >>> r.to_dict()["components"]["correct"]
    {'raw': 1.0, 'weight': 0.5, 'weighted': 0.5}
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from rewardsmith.verifiers.types import Failure, Verdict

__all__ = ["Component", "Reward"]


@dataclass(frozen=True, slots=True)
class Component:
    """One term of a reward: its raw value, its weight, and their product (None: n/a)."""

    raw: float | None
    weight: float = 1.0
    weighted: float | None = None

    def to_dict(self) -> dict[str, float | None]:
        return {"raw": self.raw, "weight": self.weight, "weighted": self.weighted}


@dataclass(frozen=True, slots=True)
class Reward:
    """The shaped reward for one sample, with everything it was computed from."""

    sample_id: str
    value: float | None
    """The number to train on; None when the sample must not be trained on (see module doc)."""
    components: Mapping[str, Component] = field(default_factory=dict)
    """Every term by name (verifier keys, penalties, gates), raw and weighted."""
    verdicts: Mapping[str, Verdict] = field(default_factory=dict)
    """The verdict of each leaf verifier, by its key in the grader."""
    infra_failure: Failure | None = None
    """Set when an infrastructure failure kept this sample from being scored."""
    reason: str = ""
    """Why `value` is None or a fallback, in words (names the verifier and the failure)."""
    fallback: bool = False
    """True when `value` is the grader's stated fallback for an infrastructure failure."""
    data_error: Failure | None = None
    """Set when the sample's own data (its reference) kept it from being scored."""

    @property
    def failed(self) -> bool:
        """True when infrastructure, not the model, decided this sample's fate."""
        return self.infra_failure is not None

    @property
    def outcome(self) -> str:
        """One word for what became of the sample: ``rewarded``, ``fallback``,
        ``infra_failure``, ``data_error`` or ``not_applicable``."""
        if self.fallback:
            return "fallback"
        if self.infra_failure is not None:
            return "infra_failure"
        if self.data_error is not None:
            return "data_error"
        return "not_applicable" if self.value is None else "rewarded"

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable form (verdicts via `Verdict.to_dict`)."""
        return {
            "id": self.sample_id,
            "value": self.value,
            "components": {k: c.to_dict() for k, c in self.components.items()},
            "verdicts": {k: v.to_dict() for k, v in self.verdicts.items()},
            "infra_failure": self.infra_failure.value if self.infra_failure else None,
            "data_error": self.data_error.value if self.data_error else None,
            "reason": self.reason,
            "fallback": self.fallback,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Reward:
        failure = data.get("infra_failure")
        data_error = data.get("data_error")
        return cls(
            sample_id=data["id"],
            value=data["value"],
            components={k: Component(**c) for k, c in data.get("components", {}).items()},
            verdicts={k: Verdict.from_dict(v) for k, v in data.get("verdicts", {}).items()},
            infra_failure=Failure(failure) if failure else None,
            reason=data.get("reason", ""),
            fallback=data.get("fallback", False),
            data_error=Failure(data_error) if data_error else None,
        )
