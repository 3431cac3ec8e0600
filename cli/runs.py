"""Read a scored run, row by row, for ``report`` and ``diff``: each row's `Reward` and task.

A row that is not a scored row (a line cut short by a killed run, an edited reward
record) is counted and its first errors kept, and reading goes on: one bad row never
hides the run. The dump's row mapping is taken from the run record beside the file, so
the sample a row held can be shown as the scorer saw it (`RunReader.sample`).

    >>> reader = RunReader("build/demo/mixed-scored.jsonl")  # doctest: +SKIP
    >>> for row in reader:                                     # doctest: +SKIP
    ...     print(row.id, row.task, row.reward.value)
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rewardsmith.datasets.columns import ColumnMap
from rewardsmith.datasets.dumps import DumpReader, RowError
from rewardsmith.datasets.mapping import to_sample
from rewardsmith.datasets.scored import SCORE_COLUMN, run_record_path
from rewardsmith.graders.reward import Reward
from rewardsmith.verifiers.types import Sample

__all__ = ["RunReader", "RunRow", "reward_of"]

KEPT_ERRORS = 100


@dataclass(frozen=True, slots=True)
class RunRow:
    line: int
    id: str
    task: str | None
    reward: Reward
    record: dict[str, Any]
    """The row as written: the dump's columns and the ``rewardsmith`` column."""
    run: str | None
    """The fingerprint digest of the run that scored it."""


@dataclass
class RunReader:
    """The good rows of a scored file (JSONL or Parquet); see the module doc."""

    path: str | Path
    errors: list[str] = field(default_factory=list)
    """The first `KEPT_ERRORS` bad rows, as ``file:line: problem``."""
    bad_rows: int = 0

    def __post_init__(self) -> None:
        self.path = Path(self.path)
        self.dump = DumpReader(self.path)  # raises DumpError for a missing or unknown file
        self.shape, self.columns = _mapping(self.path)

    def __iter__(self) -> Iterator[RunRow]:
        self.errors, self.bad_rows = [], 0
        for line, record in self.dump.records():
            row = _row(line, record)
            if isinstance(row, str):
                self.bad_rows += 1
                if len(self.errors) < KEPT_ERRORS:
                    self.errors.append(f"{self.path}:{line}: {row}")
                continue
            yield row

    def sample(self, row: RunRow) -> Sample | None:
        """The sample this row held, mapped as the scorer mapped it (None if it no longer
        maps: the row is then shown as written)."""
        record = {k: v for k, v in row.record.items() if k != SCORE_COLUMN}
        try:
            return to_sample(record, row.id, self.shape, self.columns)
        except Exception:  # a display aid only: any failure falls back to the raw row
            return None


def _mapping(path: Path) -> tuple[str, ColumnMap | None]:
    """The row shape and column map the run was scored with, from its run record."""
    try:
        data = json.loads(run_record_path(path).read_text())
        mapping = data["record"]["fingerprint"]["mapping"]
    except (OSError, ValueError, KeyError, TypeError):
        return "auto", None
    if isinstance(mapping, str):
        return mapping, None
    try:
        return str(mapping.get("shape", "auto")), ColumnMap.from_dict(mapping.get("columns", {}))
    except (AttributeError, ValueError, TypeError):
        return "auto", None


def _row(line: int, record: Any) -> RunRow | str:
    if isinstance(record, RowError):
        return f"{record.field}: {record.problem}"
    if not isinstance(record, dict) or SCORE_COLUMN not in record:
        return f"no {SCORE_COLUMN!r} column: not a scored row"
    data = record[SCORE_COLUMN]
    if isinstance(data, str):  # Parquet keeps it as JSON text
        try:
            data = json.loads(data)
        except ValueError as exc:
            return f"{SCORE_COLUMN}: not JSON ({exc})"
    try:
        reward = reward_of(data)
    except ValueError as exc:
        return f"{SCORE_COLUMN}: {exc}"
    task = data.get("task", record.get("task") or record.get("data_source"))
    run = data.get("run")
    return RunRow(
        line,
        str(record.get("id", reward.sample_id)),
        None if task is None else str(task),
        reward,
        record,
        run if isinstance(run, str) else None,
    )


def reward_of(data: Any) -> Reward:
    """A `Reward` from its written form; `ValueError` saying what is wrong with it."""
    if not isinstance(data, Mapping):
        raise ValueError("not a reward record (an object with value, components, verdicts)")
    value = data.get("value")
    if not _number(value):
        raise ValueError(f"value {str(value)[:40]!r} is not a number")
    try:
        reward = Reward.from_dict({"id": "?", **data})
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ValueError(f"not a reward record ({type(exc).__name__}: {exc})"[:300]) from None
    for name, component in reward.components.items():
        if not all(_number(x) for x in (component.raw, component.weighted)):
            raise ValueError(f"component {name!r} holds something other than numbers")
    for key, verdict in reward.verdicts.items():
        timed = verdict.elapsed_s is not None and _number(verdict.elapsed_s)
        if not (timed and isinstance(verdict.evidence, Mapping)):
            raise ValueError(f"verdict {key!r}: elapsed_s must be a number, evidence an object")
    return reward


def _number(value: Any) -> bool:
    return value is None or (isinstance(value, int | float) and not isinstance(value, bool))
