"""Write scored rows so that a killed run resumes with no row lost and none duplicated.

JSONL: each row is one ``os.write`` of a whole line to a file opened for appending, so a
killed process leaves at most one partial last line, which `open_scored` cuts off before
resuming. Parquet and HF output: rows go to numbered part files, each written to a
temporary name and renamed into place (atomic), and are combined into the final file when
the run finishes. Resuming reads the ids already written and the caller skips them.

    >>> with ScoredWriter("out.jsonl") as out:   # doctest: +SKIP
    ...     for row in rows:
    ...         if row.sample.id not in out.done:
    ...             out.write({"id": row.sample.id, "score": 1.0})
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from types import TracebackType
from typing import Any

__all__ = ["SCORE_COLUMN", "ScoredWriter"]

PART_ROWS = 1000


class ScoredWriter:
    """Append scored records (dicts with an ``"id"``) to `path`; `done` holds ids already there.

    With ``resume=False`` an existing output is replaced.
    """

    def __init__(self, path: str | Path, *, resume: bool = True, part_rows: int = PART_ROWS):
        self.path = Path(path)
        self.format = "jsonl" if self.path.suffix.lower() in (".jsonl", ".ndjson") else "parquet"
        self.part_rows = part_rows
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if not resume:
            self._remove_previous()
        self.done: set[str] = set()
        self.written = 0
        if self.format == "jsonl":
            self._open_jsonl()
        else:
            self._open_parts()

    # ------------------------------------------------------------------ JSONL

    def _open_jsonl(self) -> None:
        if self.path.exists():
            _cut_partial_last_line(self.path)
            with open(self.path, "rb") as handle:
                for raw in handle:
                    self.done.add(str(json.loads(raw)["id"]))
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)

    # ------------------------------------------------------------------ Parquet parts

    @property
    def _parts_dir(self) -> Path:
        return self.path.with_name(self.path.name + ".parts")

    def _open_parts(self) -> None:
        import pyarrow.parquet as pq

        self._parts_dir.mkdir(exist_ok=True)
        if self.path.exists():  # a finished earlier run: it becomes the first part
            self.path.replace(self._parts_dir / "part-00000.parquet")
        self._parts = sorted(self._parts_dir.glob("part-*.parquet"))
        for part in self._parts:
            self.done.update(str(i) for i in pq.read_table(part, columns=["id"])["id"].to_pylist())
        self._buffer: list[dict[str, Any]] = []

    def _flush_part(self) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        if not self._buffer:
            return
        final = self._parts_dir / f"part-{len(self._parts) + 1:05d}.parquet"
        temporary = final.with_suffix(".tmp")
        pq.write_table(pa.Table.from_pylist(self._buffer), temporary)
        temporary.replace(final)
        self._parts.append(final)
        self._buffer = []

    def _combine_parts(self) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        tables = [pq.read_table(p) for p in self._parts]
        temporary = self.path.with_name(self.path.name + ".tmp")
        if tables:
            pq.write_table(pa.concat_tables(tables, promote_options="default"), temporary)
            temporary.replace(self.path)
        shutil.rmtree(self._parts_dir)

    # ------------------------------------------------------------------ writing

    def write(self, record: dict[str, Any]) -> None:
        record_id = str(record["id"])
        if record_id in self.done:
            raise ValueError(f"id {record_id!r} is already in {self.path}; skip it when resuming")
        if self.format == "jsonl":
            line = json.dumps(record, ensure_ascii=False, default=str) + "\n"
            os.write(self._fd, line.encode("utf-8"))
        else:
            self._buffer.append(_parquet_safe(record))
            if len(self._buffer) >= self.part_rows:
                self._flush_part()
        self.done.add(record_id)
        self.written += 1

    def close(self) -> None:
        if self.format == "jsonl":
            os.fsync(self._fd)
            os.close(self._fd)
        else:
            self._flush_part()
            self._combine_parts()

    def __enter__(self) -> ScoredWriter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc_type is None:
            self.close()
        elif self.format == "jsonl":
            os.close(self._fd)
        else:
            self._flush_part()  # keep what was scored; the parts are combined on resume

    def _remove_previous(self) -> None:
        if self.path.exists():
            self.path.unlink()
        if self._parts_dir.exists():
            shutil.rmtree(self._parts_dir)


def _cut_partial_last_line(path: Path) -> None:
    """Truncate a file after its last newline: a killed writer's half line is dropped."""
    size = path.stat().st_size
    if size == 0:
        return
    with open(path, "rb+") as handle:
        position = size
        while position > 0:
            step = min(65536, position)
            handle.seek(position - step)
            block = handle.read(step)
            newline = block.rfind(b"\n")
            if newline >= 0:
                handle.truncate(position - step + newline + 1)
                return
            position -= step
        handle.truncate(0)


SCORE_COLUMN = "rewardsmith"


def _parquet_safe(record: dict[str, Any]) -> dict[str, Any]:
    """Verdict evidence differs by verifier, and Parquet needs one schema: the score column
    is stored as a JSON string. The dump's own columns keep their types."""
    if SCORE_COLUMN not in record:
        return record
    return {**record, SCORE_COLUMN: json.dumps(record[SCORE_COLUMN], default=str)}
