"""Read trajectory dumps as a stream of validated samples.

JSONL, Parquet and Hugging Face datasets saved with ``save_to_disk`` are read row by row
(Parquet in record batches, HF datasets memory-mapped), so a dump of millions of rows is
never held in memory. Every row is validated; a bad row becomes a `RowError` naming
``file:line: field: problem``. The caller chooses: stop at the first bad row
(``on_error="raise"``) or skip it and keep the list (``on_error="skip"``). Good rows are
never lost either way: they have already been yielded.

A UTF-8 byte-order mark at the start of a JSONL file (Windows tools write one) is not
part of the first row. A JSON error names the 1-based column, in characters, that
Python's decoder names for that line on its own.

    >>> reader = DumpReader("datasets/samples/demo.jsonl", on_error="skip")  # doctest: +SKIP
    >>> for row in reader:                                                   # doctest: +SKIP
    ...     print(row.sample.id, row.sample.completion_text[:20])
    >>> reader.errors                                                        # doctest: +SKIP
    []
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError

from rewardsmith.datasets.columns import ColumnMap
from rewardsmith.datasets.mapping import MappingProblem, to_sample
from rewardsmith.verifiers.types import Sample

__all__ = [
    "DumpError",
    "DumpReader",
    "Row",
    "RowError",
    "RowValidationError",
    "dump_format",
    "field_path",
    "most_specific",
]

OnError = Literal["raise", "skip"]
DEFAULT_MAX_LINE_BYTES = 64 * 1024 * 1024
_READ_CHUNK = 1024 * 1024
_BOM = b"\xef\xbb\xbf"


class DumpError(Exception):
    """The file as a whole cannot be read (missing, unknown format, corrupt Parquet)."""


@dataclass(frozen=True, slots=True)
class RowError:
    """One bad row: where it is and what is wrong with it."""

    path: str
    line: int
    """1-based line (JSONL) or row number (Parquet, HF datasets)."""
    field: str
    problem: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.field}: {self.problem}"


class RowValidationError(ValueError):
    """Raised for the first bad row when the reader was asked to stop at it."""

    def __init__(self, error: RowError) -> None:
        super().__init__(str(error))
        self.error = error


@dataclass(frozen=True, slots=True)
class Row:
    """One good row: its position, the validated sample and the record as read."""

    line: int
    sample: Sample
    record: dict[str, Any]


def dump_format(path: Path) -> str:
    """``jsonl``, ``parquet`` or ``hf`` (a `save_to_disk` folder), from the path."""
    if path.is_dir():
        if (path / "dataset_info.json").exists() or (path / "dataset_dict.json").exists():
            return "hf"
        raise DumpError(f"{path}: a folder, but not a dataset saved with save_to_disk")
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson", ".json"):
        return "jsonl"
    if suffix in (".parquet", ".pq"):
        return "parquet"
    raise DumpError(f"{path}: unknown dump format {suffix!r}; use .jsonl, .parquet or an HF folder")


@dataclass
class DumpReader:
    """Iterate the good rows of a dump; bad rows go to `errors` (or raise, see `on_error`)."""

    path: str | Path
    mapping: str = "auto"
    """Row shape: auto or one of `rewardsmith.datasets.mapping.MAPPINGS`."""
    on_error: OnError = "raise"
    split: str | None = None
    """For a saved `DatasetDict`: which split (default: the only one)."""
    columns: ColumnMap | None = None
    """Where fields come from (``--map``); see `rewardsmith.datasets.columns`."""
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
    """JSONL lines longer than this are bad rows, skipped without being read into memory."""
    errors: list[RowError] = field(default_factory=list)
    rows_read: int = 0

    def __post_init__(self) -> None:
        self.path = Path(self.path)
        if not self.path.exists():
            raise DumpError(f"{self.path}: no such file or folder")
        self.format = dump_format(self.path)

    def records(self) -> Iterator[tuple[int, Any]]:
        """The raw rows as read, each a dict or a `RowError` for a line that is not JSON."""
        return {"jsonl": self._jsonl, "parquet": self._parquet, "hf": self._hf}[self.format]()

    def __iter__(self) -> Iterator[Row]:
        stem = Path(self.path).stem
        seen: dict[str, int] = {}
        for line, record in self.records():
            self.rows_read += 1
            if isinstance(record, RowError):
                self._bad(record)
                continue
            row = self._validate(line, record, f"{stem}:{line}")
            if isinstance(row, RowError):
                self._bad(row)
                continue
            first = seen.setdefault(row.sample.id, line)
            if first != line:
                self._bad(self._error(line, "id", f"duplicate of the id on line {first}"))
                continue
            yield row

    # ------------------------------------------------------------------ validation

    def _validate(self, line: int, record: Any, default_id: str) -> Row | RowError:
        if not isinstance(record, Mapping):
            return self._error(line, "(row)", f"expected an object, got {type(record).__name__}")
        try:
            sample = to_sample(record, default_id, self.mapping, self.columns)
        except MappingProblem as exc:
            return self._error(line, exc.field, exc.problem)
        except ValidationError as exc:
            error = most_specific(exc)
            return self._error(line, field_path(error["loc"]), error["msg"])
        return Row(line, sample, dict(record))

    def _error(self, line: int, field_name: str, problem: str) -> RowError:
        return RowError(str(self.path), line, field_name, problem)

    def _bad(self, error: RowError) -> None:
        if self.on_error == "raise":
            raise RowValidationError(error)
        self.errors.append(error)

    # ------------------------------------------------------------------ formats

    def _jsonl(self) -> Iterator[tuple[int, Any]]:
        with open(self.path, "rb") as handle:
            line = 0
            while True:
                raw = handle.readline(self.max_line_bytes + 1)
                if not raw:
                    return
                line += 1
                if len(raw) > self.max_line_bytes and not raw.endswith(b"\n"):
                    skipped = len(raw) + _skip_to_newline(handle)
                    yield (
                        line,
                        self._error(
                            line,
                            "(line)",
                            f"{skipped} bytes, over the {self.max_line_bytes}-byte limit",
                        ),
                    )
                    continue
                if line == 1 and raw.startswith(_BOM):
                    raw = raw[len(_BOM) :]
                if not raw.strip():
                    continue
                yield line, self._decode_json(line, raw)

    def _decode_json(self, line: int, raw: bytes) -> Any:
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            return self._error(
                line, "(line)", f"not UTF-8: byte {raw[exc.start]:#04x} at byte {exc.start + 1}"
            )
        # Without its line break, the decoder's column is this line's: with it, an error at
        # the end (a line cut short) is placed at "line 2 column 1".
        text = text.rstrip("\r\n")
        try:
            return json.loads(text)
        except json.JSONDecodeError as exc:
            return self._error(line, "(line)", f"malformed JSON: {exc.msg} at column {exc.colno}")
        except RecursionError:
            return self._error(line, "(line)", "JSON nests too deeply")

    def _parquet(self) -> Iterator[tuple[int, Any]]:
        import pyarrow as pa
        import pyarrow.parquet as pq

        try:
            parquet = pq.ParquetFile(self.path)
        except (pa.ArrowException, OSError) as exc:
            raise DumpError(f"{self.path}: not a readable Parquet file ({exc})") from exc
        line = 0
        try:
            for batch in parquet.iter_batches(batch_size=512):
                for record in batch.to_pylist():
                    line += 1
                    yield line, record
        except (pa.ArrowException, OSError) as exc:
            raise DumpError(f"{self.path}: corrupt after row {line} ({exc})") from exc

    def _hf(self) -> Iterator[tuple[int, Any]]:
        # By name, because type checkers run from the repo root see this folder as `datasets`.
        hf_datasets = importlib.import_module("datasets")
        try:
            loaded = hf_datasets.load_from_disk(str(self.path))
        except Exception as exc:  # the library raises many kinds for a damaged folder
            raise DumpError(f"{self.path}: could not load the saved dataset ({exc})") from exc
        if isinstance(loaded, hf_datasets.DatasetDict):
            loaded = loaded[self._choose_split(list(loaded))]
        yield from enumerate(loaded, start=1)

    def _choose_split(self, splits: list[str]) -> str:
        if self.split is not None:
            if self.split not in splits:
                raise DumpError(f"{self.path}: no split {self.split!r}; it has {splits}")
            return self.split
        if len(splits) == 1:
            return splits[0]
        raise DumpError(
            f"{self.path}: several splits {splits}; choose one with --split (split= in Python)"
        )


def most_specific(exc: ValidationError) -> Any:
    """The error that goes deepest into the row: for a union (a completion that is text,
    messages or steps) pydantic lists one error per member, the text member's first,
    which only says "not a string"."""
    return max(exc.errors(), key=lambda error: len(error["loc"]))


def field_path(loc: tuple[int | str, ...]) -> str:
    """``completion.0.role`` from pydantic's location, without its union-member tags
    (``str``, ``list[Message]``) which name types, not fields."""
    parts = [str(p) for p in loc if not (isinstance(p, str) and (p in _TYPE_TAGS or "[" in p))]
    return ".".join(parts) or "(row)"


_TYPE_TAGS = frozenset({"str", "int", "float", "bool", "dict", "list", "none"})


def _skip_to_newline(handle: Any) -> int:
    """Read past the rest of an over-long line in chunks; the number of bytes skipped."""
    skipped = 0
    while True:
        chunk = handle.readline(_READ_CHUNK)
        skipped += len(chunk)
        if not chunk or chunk.endswith(b"\n"):
            return skipped
