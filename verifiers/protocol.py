"""What a verifier is: a picklable callable ``Sample -> Verdict`` with a name and a version.

Write one as a frozen dataclass whose fields are its settings (the frozen config), with
`name`, `version` and `cost` as class variables:

    >>> from dataclasses import dataclass
    >>> from typing import ClassVar
    >>> @dataclass(frozen=True)
    ... class NonEmpty:
    ...     name: ClassVar[str] = "non_empty"
    ...     version: ClassVar[str] = "1"
    ...     cost: ClassVar[Cost] = Cost.CHEAP
    ...     def __call__(self, sample: Sample) -> Verdict:
    ...         ok = bool(sample.completion_text.strip())
    ...         return Verdict.passed(self.name, self.version) if ok else Verdict.failed(
    ...             self.name, self.version, Failure.FORMAT)
    >>> isinstance(NonEmpty(), Verifier)
    True

A verifier whose reference may be structured (a mapping or a list: tests, a table, a mesh
spec) says so with ``takes_structured_reference: ClassVar[bool] = True``; a reference
stored as JSON text (as Parquet and HF datasets often hold nested fields) is then decoded
before it runs (`rewardsmith.graders.nodes.Verify.prepared`).

Stateless, so the executor can ship it to a worker process or a Ray node; its dataclass
fields are its config, which goes into the cache key with `name` and `version` (bump the
version whenever a change could change a verdict).
"""

from __future__ import annotations

import dataclasses
import time
import traceback
from collections.abc import Sequence
from enum import StrEnum
from typing import Any, Protocol, runtime_checkable

from rewardsmith.verifiers.types import Failure, Sample, Verdict

__all__ = ["BatchVerifier", "Cost", "Verifier", "run_verifier", "verifier_config"]


class Cost(StrEnum):
    """A scheduling hint: the executor runs expensive jobs first and sizes its pools by it."""

    CHEAP = "cheap"
    """Microseconds to a few milliseconds in process (string and number checks)."""
    CPU = "cpu"
    """Tens of milliseconds to seconds of CPU (sympy, table parsing, mesh metrics)."""
    SANDBOX = "sandbox"
    """Runs untrusted code in the sandbox: a process per check."""
    GPU = "gpu"
    """A learned model: batch it."""


@runtime_checkable
class Verifier(Protocol):
    name: str
    version: str
    cost: Cost

    def __call__(self, sample: Sample) -> Verdict: ...


@runtime_checkable
class BatchVerifier(Verifier, Protocol):
    """A verifier that is cheaper per sample in batches (reward models, vectorised checks)."""

    def batch(self, samples: Sequence[Sample]) -> list[Verdict]: ...


def verifier_config(verifier: Verifier) -> dict[str, Any]:
    """The settings that, with name and version, determine a verifier's verdicts."""
    if dataclasses.is_dataclass(verifier) and not isinstance(verifier, type):
        return dataclasses.asdict(verifier)
    config = getattr(verifier, "config", None)
    if dataclasses.is_dataclass(config) and not isinstance(config, type):
        return dataclasses.asdict(config)
    if isinstance(config, dict):
        return dict(config)
    return {}


def run_verifier(verifier: Verifier, sample: Sample) -> Verdict:
    """Call a verifier so that a crash becomes a verdict, and time it.

    A verifier that raises has failed, not the model: the verdict is an infrastructure
    error (score None) carrying the exception and the last frames of the traceback.
    """
    start = time.perf_counter()
    try:
        verdict = verifier(sample)
    except Exception as exc:  # a crashing verifier is data, never a silent 0
        return Verdict.errored(
            getattr(verifier, "name", type(verifier).__name__),
            getattr(verifier, "version", "?"),
            Failure.VERIFIER_CRASH,
            f"{type(exc).__name__}: {exc}",
            evidence={"traceback": traceback.format_exc(limit=8)[-4000:]},
            elapsed_s=time.perf_counter() - start,
        )
    if not isinstance(verdict, Verdict):
        return Verdict.errored(
            verifier.name,
            verifier.version,
            Failure.VERIFIER_CRASH,
            f"verifier returned {type(verdict).__name__}, not a Verdict",
            elapsed_s=time.perf_counter() - start,
        )
    if verdict.elapsed_s == 0.0:
        verdict = verdict.with_elapsed(time.perf_counter() - start)
    return verdict
