"""Verifiers for the fork server's tests: report where they run, crash, hang.

Top-level and importable by name, so pool workers unpickle them without the main module.
"""

from __future__ import annotations

import os
import random
import time
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from rewardsmith.verifiers.protocol import Cost
from rewardsmith.verifiers.types import Sample, Verdict


def parent_of(pid: int) -> int:
    stat = Path(f"/proc/{pid}/stat").read_bytes()
    return int(stat[stat.rfind(b")") + 2 :].split()[1])


@dataclass(frozen=True)
class Where:
    """Passes, with its process, its warden, the warden's parent and a random draw."""

    name: ClassVar[str] = "fork_where"
    version: ClassVar[str] = "1"
    cost: ClassVar[Cost] = Cost.CPU

    def __call__(self, sample: Sample) -> Verdict:
        warden = parent_of(os.getpid())
        evidence = {
            "pid": os.getpid(),
            "warden": warden,
            "above": parent_of(warden),
            "draw": random.random(),
        }
        return Verdict.passed(self.name, self.version, evidence=evidence)


@dataclass(frozen=True)
class Crash:
    name: ClassVar[str] = "fork_crash"
    version: ClassVar[str] = "1"
    cost: ClassVar[Cost] = Cost.CPU

    def __call__(self, sample: Sample) -> Verdict:
        os._exit(3)


@dataclass(frozen=True)
class Hang:
    name: ClassVar[str] = "fork_hang"
    version: ClassVar[str] = "1"
    cost: ClassVar[Cost] = Cost.CPU

    def __call__(self, sample: Sample) -> Verdict:
        time.sleep(60)
        return Verdict.passed(self.name, self.version)
