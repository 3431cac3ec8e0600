"""Column mapping: say where each `Sample` field comes from in a dump's rows.

``rewardsmith score --map completion=output --map reference=gts`` (or
``ColumnMap.parse([...])``) names, for a `Sample` field, the column that holds it:

- ``FIELD=PATH``: a column; dots reach into nested objects and lists
  (``reward_model.ground_truth``, ``responses.0``). A column whose own name holds a dot
  is found first (Parquet and pandas often flatten nested names that way), and a value
  stored as JSON text (as Parquet and HF datasets often hold nested fields) is decoded
  on the way down.
- ``FIELD:=VALUE``: a constant, for example ``--map task:=gsm8k``.
- The same field named more than once: the first source the row has (present and not
  null) is taken, so ``--map task=data_source --map task:=gsm8k`` gives a default task.

A mapped column missing from a row is a bad row naming the column (unless a later source
for that field is present). Fields are ``id``, ``prompt``, ``completion``, ``reference``
and ``task``; the columns a row has beyond those it was mapped from go to ``meta``.

    >>> columns = ColumnMap.parse(["completion=output", "reference=gts", "task:=gsm8k"])
    >>> found, used = columns.resolve({"input": "2+2?", "output": "4", "gts": "4"})
    >>> found, sorted(used)
    ({'completion': '4', 'reference': '4', 'task': 'gsm8k'}, ['gts', 'output'])
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["FIELDS", "ColumnMap", "ColumnProblem", "Source"]

FIELDS = ("id", "prompt", "completion", "reference", "task")
"""The `Sample` fields a column can be mapped to (other columns go to ``meta``)."""

_MISSING = object()


class ColumnProblem(ValueError):
    """A mapped column is not in a row: names the column path and what the row has."""

    def __init__(self, column: str, problem: str) -> None:
        super().__init__(f"{column}: {problem}")
        self.column = column
        self.problem = problem


@dataclass(frozen=True, slots=True)
class Source:
    """Where one field's value comes from: a column path, or a constant."""

    path: str | None = None
    """Dotted column path (None for a constant)."""
    constant: str | None = None

    def __str__(self) -> str:
        return f":={self.constant}" if self.path is None else self.path


@dataclass(frozen=True)
class ColumnMap:
    """Sources per `Sample` field, in the order they were given (see the module doc)."""

    sources: tuple[tuple[str, tuple[Source, ...]], ...] = ()

    @classmethod
    def parse(cls, entries: Iterable[str]) -> ColumnMap:
        """From ``FIELD=PATH`` / ``FIELD:=VALUE`` strings; raises `ValueError` saying how
        to write a bad one."""
        by_field: dict[str, list[Source]] = {}
        for entry in entries:
            field, source = _parse_entry(entry)
            by_field.setdefault(field, []).append(source)
        return cls(tuple((f, tuple(s)) for f, s in by_field.items()))

    @classmethod
    def from_dict(cls, data: Mapping[str, Iterable[str]]) -> ColumnMap:
        """The inverse of `to_dict` (a run record's mapping)."""
        return cls.parse(
            f"{field}{source}" if source.startswith(":=") else f"{field}={source}"
            for field, sources in data.items()
            for source in sources
        )

    def __bool__(self) -> bool:
        return bool(self.sources)

    @property
    def fields(self) -> tuple[str, ...]:
        return tuple(field for field, _ in self.sources)

    def to_dict(self) -> dict[str, list[str]]:
        """Plain data for a run's fingerprint: ``{field: [source, ...]}``."""
        return {field: [str(s) for s in sources] for field, sources in self.sources}

    def resolve(self, record: Mapping[str, Any]) -> tuple[dict[str, Any], set[str]]:
        """The mapped fields' values for one row, and the top-level columns read.

        Raises `ColumnProblem` when no source of a field is in the row."""
        found: dict[str, Any] = {}
        used: set[str] = set()
        for field, sources in self.sources:
            value: Any = _MISSING
            for source in sources:
                if source.path is None:
                    value = source.constant
                    break
                candidate, column = _lookup(record, source.path)
                if column is not None:
                    used.add(column)
                if candidate is not _MISSING:
                    value = candidate
                    if value is not None:
                        break
            if value is _MISSING:
                raise _missing(record, field, sources)
            found[field] = value
        return found, used


def _parse_entry(entry: str) -> tuple[str, Source]:
    how = "write FIELD=COLUMN (dots for nested fields) or FIELD:=VALUE for a constant"
    equals = entry.find("=")
    if equals > 0 and entry[equals - 1] == ":":
        field, _, value = entry.partition(":=")
        source = Source(constant=value)
    elif equals > 0:
        field, _, path = entry.partition("=")
        if not path or path.startswith(".") or path.endswith(".") or ".." in path:
            raise ValueError(f"--map {entry!r}: {path!r} is not a column path; {how}")
        source = Source(path=path)
    else:
        raise ValueError(f"--map {entry!r}: {how}")
    field = field.strip()
    if field not in FIELDS:
        raise ValueError(f"--map {entry!r}: {field!r} is not a sample field; use one of {FIELDS}")
    return field, source


def _lookup(record: Mapping[str, Any], path: str) -> tuple[Any, str | None]:
    """The value at ``path`` (or `_MISSING`), and the top-level column it came from."""
    parts = path.split(".")
    for cut in range(len(parts), 0, -1):  # the longest dotted prefix that is a column
        column = ".".join(parts[:cut])
        if column in record:
            return _descend(record[column], parts[cut:]), column
    return _MISSING, None


def _descend(value: Any, parts: list[str]) -> Any:
    if not parts:
        return value
    if isinstance(value, str) and value[:1] in ("{", "["):
        try:
            value = json.loads(value)
        except (ValueError, RecursionError):  # not JSON, or nested past the decoder's depth
            return _MISSING
    if isinstance(value, Mapping):
        for cut in range(len(parts), 0, -1):
            key = ".".join(parts[:cut])
            if key in value:
                return _descend(value[key], parts[cut:])
        return _MISSING
    if isinstance(value, list | tuple):
        try:
            return _descend(value[int(parts[0])], parts[1:])
        except (ValueError, IndexError):
            return _MISSING
    return _MISSING


def _missing(record: Mapping[str, Any], field: str, sources: tuple[Source, ...]) -> ColumnProblem:
    columns = ", ".join(sorted(map(str, record))[:12]) or "none"
    named = " or ".join(repr(str(s)) for s in sources)
    hint = f"; for a constant write --map {field}:={sources[-1]}" if len(sources) == 1 else ""
    return ColumnProblem(
        str(sources[0]), f"{field} is mapped to {named}, not in this row (it has: {columns}){hint}"
    )
