"""A verifier whose module is slow to import in a worker, as one that imports torch is.

It sleeps at import for the seconds that ``RS_TEST_SLOW_IMPORT`` (``"<pid>:<seconds>"``)
names, in every process but <pid>: the test's own process pays nothing.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass
from typing import ClassVar

from rewardsmith.verifiers.protocol import Cost
from rewardsmith.verifiers.types import Sample, Verdict

ENV = "RS_TEST_SLOW_IMPORT"
_spec = os.environ.get(ENV, "")
if _spec:
    _parent, _seconds = _spec.split(":")
    if int(_parent) != os.getpid():
        time.sleep(float(_seconds))


@dataclass(frozen=True)
class SlowToImport:
    """Passes at once; only its module is slow."""

    name: ClassVar[str] = "test_slow_to_import"
    version: ClassVar[str] = "1"
    cost: ClassVar[Cost] = Cost.CPU

    def __call__(self, sample: Sample) -> Verdict:
        return Verdict.passed(self.name, self.version, evidence={"pid": os.getpid()})
