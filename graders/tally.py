"""The `Scorer`'s running counts: what became of each sample and each verdict.

Kept minimal and in one place on purpose: the statistics module of issue 16's second half
replaces it (the `Scorer` only calls `add` and `to_dict`).

    >>> from rewardsmith.graders.reward import Reward
    >>> tally = Tally()
    >>> tally.add(Reward("a", 1.0))
    >>> tally.to_dict()["samples"], tally.to_dict()["outcomes"]
    (1, {'rewarded': 1})
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from rewardsmith.graders.reward import Reward

__all__ = ["Tally"]


@dataclass
class Tally:
    """Counts of sample outcomes (`Reward.outcome`), and of verdicts by leaf key and
    status, by failure kind and by fault (model, infra, data). Not thread-safe: the
    `Scorer` adds under its lock."""

    samples: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)
    statuses: Counter[tuple[str, str]] = field(default_factory=Counter)
    failures: Counter[tuple[str, str]] = field(default_factory=Counter)
    faults: Counter[str] = field(default_factory=Counter)

    def add(self, reward: Reward) -> None:
        self.samples += 1
        self.outcomes[reward.outcome] += 1
        for key, verdict in reward.verdicts.items():
            self.statuses[(key, verdict.status.value)] += 1
            if verdict.failure is not None:
                self.failures[(key, verdict.failure.value)] += 1
                self.faults[verdict.failure.fault.value] += 1

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable summary (the shape ``score --json`` prints under ``counts``)."""
        by_key: dict[str, dict[str, Any]] = {}
        for (key, status), n in sorted(self.statuses.items()):
            by_key.setdefault(key, {"statuses": {}, "failures": {}})["statuses"][status] = n
        for (key, failure), n in sorted(self.failures.items()):
            by_key[key]["failures"][failure] = n
        return {
            "samples": self.samples,
            "outcomes": dict(sorted(self.outcomes.items())),
            "faults": dict(sorted(self.faults.items())),
            "verifiers": by_key,
        }
