"""Read back what `rewardsmith score` wrote: each row's reward record and its task."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rewardsmith.datasets.dumps import DumpError, DumpReader, RowError
from rewardsmith.datasets.scored import SCORE_COLUMN

__all__ = ["ScoredRow", "read_scored"]


@dataclass(frozen=True, slots=True)
class ScoredRow:
    id: str
    task: str
    reward: dict[str, Any]
    """`Reward.to_dict()`: value, components, verdicts, infra_failure, reason, fallback."""
    record: dict[str, Any]

    @property
    def value(self) -> float | None:
        return self.reward.get("value")

    @property
    def verdicts(self) -> dict[str, dict[str, Any]]:
        return self.reward.get("verdicts", {})


def read_scored(path: str | Path) -> Iterator[ScoredRow]:
    """Rows of a scored output (JSONL or Parquet). Rows without scores are an error."""
    for line, record in DumpReader(path).records():
        if isinstance(record, RowError):
            raise DumpError(str(record))
        if not isinstance(record, dict) or SCORE_COLUMN not in record:
            raise DumpError(f"{path}:{line}: no {SCORE_COLUMN!r} column: not a scored file")
        reward = record[SCORE_COLUMN]
        if isinstance(reward, str):  # Parquet keeps it as JSON text
            reward = json.loads(reward)
        task = record.get("task") or record.get("data_source") or "(none)"
        yield ScoredRow(str(record.get("id", line)), str(task), reward, record)
