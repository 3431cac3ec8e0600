"""Verifiers that misbehave on purpose, for executor tests and the executor benchmark.

Top-level frozen dataclasses, so worker processes and Ray workers can unpickle them
(this folder is put on sys.path by tests/graders/conftest.py and by the benchmark).
Durations come from the sample's ``meta`` so one verifier serves a mixed workload.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from rewardsmith.verifiers.protocol import Cost
from rewardsmith.verifiers.types import Failure, Sample, Verdict


@dataclass(frozen=True)
class Sleep:
    """Sleeps ``meta["seconds"]`` (default ``seconds``), then passes."""

    name: ClassVar[str] = "test_sleep"
    version: ClassVar[str] = "1"
    cost: ClassVar[Cost] = Cost.CPU
    seconds: float = 0.1

    def __call__(self, sample: Sample) -> Verdict:
        time.sleep(float(sample.meta.get("seconds", self.seconds)))
        return Verdict.passed(self.name, self.version, evidence={"pid": os.getpid()})


@dataclass(frozen=True)
class Spin:
    """Burns CPU for ``meta["seconds"]``, then passes."""

    name: ClassVar[str] = "test_spin"
    version: ClassVar[str] = "1"
    cost: ClassVar[Cost] = Cost.CPU

    def __call__(self, sample: Sample) -> Verdict:
        end = time.perf_counter() + float(sample.meta.get("seconds", 0.1))
        x = 0
        while time.perf_counter() < end:
            x += 1
        return Verdict.passed(self.name, self.version)


@dataclass(frozen=True)
class Cheap:
    """Passes when the completion equals the reference: microseconds of work."""

    name: ClassVar[str] = "test_cheap"
    version: ClassVar[str] = "1"
    cost: ClassVar[Cost] = Cost.CHEAP

    def __call__(self, sample: Sample) -> Verdict:
        ok = sample.completion_text == sample.reference
        return Verdict.graded(self.name, self.version, 1.0 if ok else 0.0)


@dataclass(frozen=True)
class Hang:
    """Never returns."""

    name: ClassVar[str] = "test_hang"
    version: ClassVar[str] = "1"
    cost: ClassVar[Cost] = Cost.CPU

    def __call__(self, sample: Sample) -> Verdict:
        while True:
            time.sleep(3600)


@dataclass(frozen=True)
class Crash:
    """Raises: a bug in the verifier."""

    name: ClassVar[str] = "test_crash"
    version: ClassVar[str] = "1"
    cost: ClassVar[Cost] = Cost.CHEAP

    def __call__(self, sample: Sample) -> Verdict:
        raise RuntimeError("verifier bug")


@dataclass(frozen=True)
class Die:
    """Kills its own process mid-job (as a segfault or the OOM killer would)."""

    name: ClassVar[str] = "test_die"
    version: ClassVar[str] = "1"
    cost: ClassVar[Cost] = Cost.CPU

    def __call__(self, sample: Sample) -> Verdict:
        os._exit(139)


@dataclass(frozen=True)
class DieOnce:
    """Dies the first time it sees a sample, passes the second time.

    It remembers by creating ``<marker_dir>/<sample id>`` (a scratch folder the test made).
    """

    name: ClassVar[str] = "test_die_once"
    version: ClassVar[str] = "1"
    cost: ClassVar[Cost] = Cost.CPU
    marker_dir: str = ""

    def __call__(self, sample: Sample) -> Verdict:
        marker = Path(self.marker_dir) / sample.id
        if not marker.exists():
            marker.touch()
            os._exit(137)
        return Verdict.passed(self.name, self.version)


@dataclass(frozen=True)
class Counting:
    """Passes, and appends a line to ``<log>`` each time it really runs (not cached)."""

    name: ClassVar[str] = "test_counting"
    version: ClassVar[str] = "1"
    cost: ClassVar[Cost] = Cost.CHEAP
    log: str = ""

    def __call__(self, sample: Sample) -> Verdict:
        with open(self.log, "a") as f:
            f.write(sample.id + "\n")
        return Verdict.passed(self.name, self.version)


@dataclass(frozen=True)
class MetaScore:
    """Reads its verdict from ``sample.meta[field]``, for hand-computed grader tables.

    A number is a graded score; None (or a missing key) is a skip; "pass" is a pass;
    "infra" is an infrastructure failure (the sandbox did not start).
    """

    name: ClassVar[str] = "test_meta_score"
    version: ClassVar[str] = "1"
    cost: ClassVar[Cost] = Cost.CHEAP
    field: str = "a"

    def __call__(self, sample: Sample) -> Verdict:
        value = sample.meta.get(self.field)
        if value is None:
            return Verdict.skipped(self.name, self.version, f"no {self.field}")
        if value == "infra":
            return Verdict.errored(self.name, self.version, Failure.SANDBOX_ERROR, "no sandbox")
        if value == "pass":
            return Verdict.passed(self.name, self.version)
        return Verdict.graded(self.name, self.version, float(value))


@dataclass(frozen=True)
class Segfault:
    """Dereferences NULL: a real SIGSEGV, as a buggy C extension would."""

    name: ClassVar[str] = "test_segfault"
    version: ClassVar[str] = "1"
    cost: ClassVar[Cost] = Cost.CPU

    def __call__(self, sample: Sample) -> Verdict:
        import ctypes

        ctypes.string_at(0)
        return Verdict.passed(self.name, self.version)


@dataclass(frozen=True)
class PidThenSleep:
    """Writes its process id to ``<pid_dir>/<sample id>``, then sleeps 60 s, so a test can
    kill the worker from outside mid-job (as the OOM killer would)."""

    name: ClassVar[str] = "test_pid_then_sleep"
    version: ClassVar[str] = "1"
    cost: ClassVar[Cost] = Cost.CPU
    pid_dir: str = ""

    def __call__(self, sample: Sample) -> Verdict:
        path = Path(self.pid_dir) / sample.id
        path.with_suffix(".tmp").write_text(str(os.getpid()))
        path.with_suffix(".tmp").rename(path)
        time.sleep(60)
        return Verdict.passed(self.name, self.version)


@dataclass(frozen=True)
class Unpicklable:
    """Holds a lambda, so it cannot be sent to a worker process."""

    name: ClassVar[str] = "test_unpicklable"
    version: ClassVar[str] = "1"
    cost: ClassVar[Cost] = Cost.CHEAP
    fn: object = lambda: None

    def __call__(self, sample: Sample) -> Verdict:
        return Verdict.passed(self.name, self.version)


@dataclass(frozen=True)
class CheapDieOnce(DieOnce):
    """`DieOnce` with a cheap cost hint, so the pool queues other cheap jobs behind it."""

    name: ClassVar[str] = "test_cheap_die_once"
    cost: ClassVar[Cost] = Cost.CHEAP


@dataclass(frozen=True)
class BatchLength:
    """A batch verifier (as a reward model is): score = min(1, len(completion) / 10).

    ``batch`` appends the size of each call to ``<log>``; ``mode`` "crash" makes ``batch``
    raise and "short" makes it return one verdict too few.
    """

    name: ClassVar[str] = "test_batch_length"
    version: ClassVar[str] = "1"
    cost: ClassVar[Cost] = Cost.GPU
    log: str = ""
    mode: str = "ok"

    def __call__(self, sample: Sample) -> Verdict:
        return Verdict.graded(self.name, self.version, min(1.0, len(sample.completion_text) / 10))

    def batch(self, samples: list[Sample]) -> list[Verdict]:
        if self.log:
            with open(self.log, "a") as f:
                f.write(f"{len(samples)}\n")
        if self.mode == "crash":
            raise RuntimeError("CUDA error: out of memory")
        verdicts = [self(s) for s in samples]
        return verdicts[:-1] if self.mode == "short" else verdicts


@dataclass(frozen=True)
class CheapDie(Die):
    """`Die` with a cheap cost hint: it dies inside a bunch of cheap jobs."""

    name: ClassVar[str] = "test_cheap_die"
    cost: ClassVar[Cost] = Cost.CHEAP


@dataclass(frozen=True)
class CheapHang(Hang):
    """`Hang` with a cheap cost hint: it hangs inside a bunch of cheap jobs."""

    name: ClassVar[str] = "test_cheap_hang"
    cost: ClassVar[Cost] = Cost.CHEAP
