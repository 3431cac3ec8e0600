"""A grader plus a lazily started executor, picklable, for trainer-side adapters.

Trainers pickle reward functions into their worker processes and Ray actors; an executor
holds processes and cannot travel. `GraderRunner` carries only the spec (or the grader)
and its executor settings, and starts the executor on first use in whichever process it
lands in.
"""

from __future__ import annotations

import atexit
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from rewardsmith.graders.executor import Executor
from rewardsmith.graders.grader import Grader
from rewardsmith.graders.reward import Reward
from rewardsmith.graders.spec import load_spec
from rewardsmith.verifiers.types import Sample

__all__ = ["SPEC_ENV", "GraderRunner", "InfraFailureError"]

SPEC_ENV = "REWARDSMITH_SPEC"
"""Environment variable naming the reward spec for the file-based adapters (veRL, OpenRLHF)."""


class InfraFailureError(RuntimeError):
    """A sample could not be scored (sandbox, crash, timeout) and no fallback was stated."""


@dataclass
class GraderRunner:
    """Scores samples with `grader` on an executor started in this process on first use."""

    grader: Grader | str | Path
    """A `Grader`, or a reward spec (a YAML path or YAML text)."""
    backend: Literal["pool", "ray", "inline"] = "pool"
    workers: int | None = None
    timeout_s: float = 60.0
    on_infra_failure: Literal["none", "raise"] | float = "none"
    """What a sample lost to an infrastructure failure gives: None (for trainers that
    accept it, like TRL), an `InfraFailureError` naming it, or a stated number."""
    _executor: Executor | None = field(default=None, init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.grader, Grader):
            self.grader = load_spec(self.grader)

    @classmethod
    def from_env(cls, **settings: Any) -> GraderRunner:
        spec = os.environ.get(SPEC_ENV)
        if not spec:
            raise RuntimeError(f"set {SPEC_ENV} to the path of a reward spec (YAML)")
        return cls(Path(spec), **settings)

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_executor": None}

    @property
    def executor(self) -> Executor:
        if self._executor is None:
            self._executor = Executor(self.backend, workers=self.workers, timeout_s=self.timeout_s)
            atexit.register(self._executor.close)
        return self._executor

    def rewards(self, samples: Sequence[Sample], step: int = 0) -> list[Reward]:
        assert isinstance(self.grader, Grader)
        return self.grader.score(samples, self.executor, step=step)

    def value(self, reward: Reward) -> float | None:
        """The number a trainer receives, applying the infrastructure-failure policy."""
        if not reward.failed or reward.fallback:
            return reward.value
        if self.on_infra_failure == "none":
            return None
        if self.on_infra_failure == "raise":
            raise InfraFailureError(f"sample {reward.sample_id}: {reward.reason}")
        return float(self.on_infra_failure)
