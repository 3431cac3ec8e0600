"""Verifiers that misbehave the way a trusted but buggy verifier does: they leave processes
behind, hold memory, print without end, or nest a call with a longer limit than the job's.

Top-level frozen dataclasses, importable in workers (this folder is on sys.path, see
conftest.py). The process and memory tricks are those of tests/support/warm_kit.py.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import ClassVar

from rewardsmith.verifiers.killable import call_with_limits
from rewardsmith.verifiers.protocol import Cost
from rewardsmith.verifiers.types import Failure, Sample, Verdict
from tests.support import warm_kit


@dataclass(frozen=True)
class Allocate:
    """Touches ``megabytes`` of memory, holds it ``hold_s`` seconds, passes."""

    name: ClassVar[str] = "test_allocate"
    version: ClassVar[str] = "1"
    cost: ClassVar[Cost] = Cost.CPU
    megabytes: int = 100
    hold_s: float = 0.0

    def __call__(self, sample: Sample) -> Verdict:
        warm_kit.allocate(self.megabytes, self.hold_s)
        return Verdict.passed(self.name, self.version, evidence={"pid": os.getpid()})


@dataclass(frozen=True)
class Leak:
    """Touches ``megabytes`` and keeps them in the worker, then passes."""

    name: ClassVar[str] = "test_leak"
    version: ClassVar[str] = "1"
    cost: ClassVar[Cost] = Cost.CPU
    megabytes: int = 100

    def __call__(self, sample: Sample) -> Verdict:
        return Verdict.passed(
            self.name, self.version, evidence={"pid": warm_kit.allocate_and_keep(self.megabytes)}
        )


@dataclass(frozen=True)
class WhoAmI:
    """Passes, saying which worker ran it and how much memory that worker holds."""

    name: ClassVar[str] = "test_who_am_i"
    version: ClassVar[str] = "1"
    cost: ClassVar[Cost] = Cost.CPU

    def __call__(self, sample: Sample) -> Verdict:
        evidence = {"pid": os.getpid(), "resident_mb": warm_kit.resident_mb()}
        return Verdict.passed(self.name, self.version, evidence=evidence)


@dataclass(frozen=True)
class SpawnHang:
    """Starts processes of ``kind`` marked ``marker`` (see warm_kit), then hangs."""

    name: ClassVar[str] = "test_spawn_hang"
    version: ClassVar[str] = "1"
    cost: ClassVar[Cost] = Cost.CPU
    kind: str = "daemon"
    marker: str = ""

    def __call__(self, sample: Sample) -> Verdict:
        warm_kit.spawn_then_hang(self.kind, self.marker)
        raise AssertionError("unreachable")


@dataclass(frozen=True)
class Say:
    """Prints its sample's id to stdout and stderr (and ``megabytes`` more), then passes."""

    name: ClassVar[str] = "test_say"
    version: ClassVar[str] = "1"
    cost: ClassVar[Cost] = Cost.CHEAP
    megabytes: int = 0

    def __call__(self, sample: Sample) -> Verdict:
        warm_kit.say(f"job {sample.id}")
        if self.megabytes:
            warm_kit.flood(self.megabytes)
        return Verdict.passed(self.name, self.version)


@dataclass(frozen=True)
class NestedCall:
    """Runs a killable call that hangs, with ``call_timeout_s`` as its limit; reports the
    call's own timeout as a timeout verdict. With ``hang`` False the call returns at once
    and the verdict passes (it leaves a warm killable worker in this worker)."""

    name: ClassVar[str] = "test_nested_call"
    version: ClassVar[str] = "1"
    cost: ClassVar[Cost] = Cost.CPU
    call_timeout_s: float = 60.0
    hang: bool = True

    def __call__(self, sample: Sample) -> Verdict:
        if not self.hang:
            call_with_limits(warm_kit.pid, timeout_s=self.call_timeout_s)
            return Verdict.passed(self.name, self.version, evidence={"pid": os.getpid()})
        start = time.monotonic()
        outcome = call_with_limits(warm_kit.hang, timeout_s=self.call_timeout_s)
        assert outcome.timed_out
        message = f"the call stopped after {time.monotonic() - start:.1f} s"
        evidence = {"pid": os.getpid()}
        return Verdict.timed_out(
            self.name, self.version, Failure.VERIFIER_TIMEOUT, message, evidence=evidence
        )


@dataclass(frozen=True)
class Traced:
    """Sleeps ``meta["seconds"]``, leaving a trace of each run in ``trace_dir`` (a scratch
    folder the test made): ``<id>.<pid>.start`` before and ``.end`` after. Passes, naming
    the Ray node it ran on (``RS_TEST_RAY_NODE``, see ray_cluster.py)."""

    name: ClassVar[str] = "test_traced"
    version: ClassVar[str] = "1"
    cost: ClassVar[Cost] = Cost.CPU
    trace_dir: str = ""

    def __call__(self, sample: Sample) -> Verdict:
        node = os.environ.get("RS_TEST_RAY_NODE", "?")
        trace = f"{self.trace_dir}/{sample.id}.{os.getpid()}.{node}"
        open(f"{trace}.start", "w").close()
        time.sleep(float(sample.meta.get("seconds", 0.5)))
        open(f"{trace}.end", "w").close()
        return Verdict.passed(self.name, self.version, evidence={"node": node})
