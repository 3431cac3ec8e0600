"""Write scored rows so that a killed run resumes with no row lost and none duplicated,
and with the run's record (its fingerprint and the scorer's state) beside them.

The output's format is decided here, from its name, exactly as `dump_format` reads it back
(``.jsonl``/``.ndjson``/``.json``: JSONL; ``.parquet``/``.pq``: Parquet): ``-o out.json``
writes JSON lines, never Parquet bytes.

JSONL: each row is one ``os.write`` of a whole line to a file opened for appending, so a
killed process leaves at most one partial last line. Parquet: rows go to numbered part
files, each written to a temporary name and renamed into place (atomic), and are combined
into the final file when the run finishes.

**Commits.** `commit(record)` marks everything written so far as done and saves
``record`` (JSON) in ``<output>.run.json``, atomically, with the committed position. On
resume, rows written after the last commit (a chunk the killed run had not finished) are
dropped, so the caller rescores that chunk from its start with the state it committed:
a killed and resumed run then equals an uninterrupted one. `run` is the last record.

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

from rewardsmith.datasets.dumps import DumpError, dump_format

__all__ = ["SCORE_COLUMN", "ScoredWriter", "run_record_path", "scored_format"]

PART_ROWS = 1000


def scored_format(path: str | Path) -> str:
    """``jsonl`` or ``parquet``: the format `dump_format` will read this output back as."""
    path = Path(path)
    if path.is_dir():
        raise DumpError(f"{path}: a folder; write the scored rows to a .jsonl or .parquet file")
    kind = dump_format(path)
    if kind not in ("jsonl", "parquet"):
        raise DumpError(f"{path}: write the scored rows to a .jsonl or .parquet file")
    return kind


def run_record_path(path: str | Path) -> Path:
    """Where a scored output's run record lives: ``<output>.run.json``."""
    path = Path(path)
    return path.with_name(path.name + ".run.json")


class ScoredWriter:
    """Append scored records (dicts with an ``"id"``) to `path`; `done` holds ids already there.

    With ``resume=False`` an existing output is replaced.
    """

    def __init__(self, path: str | Path, *, resume: bool = True, part_rows: int = PART_ROWS):
        self.path = Path(path)
        self.format = scored_format(self.path)
        self.part_rows = part_rows
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if not resume:
            self._remove_previous()
        self.run: dict[str, Any] | None = self._read_run()
        """The record of the last commit of an earlier run (None: no record)."""
        self.done: set[str] = set()
        self.written = 0
        if self.format == "jsonl":
            self._open_jsonl()
        else:
            self._open_parts()

    def _read_run(self) -> dict[str, Any] | None:
        record = run_record_path(self.path)
        if not record.exists():
            return None
        try:
            data = json.loads(record.read_text())
        except (OSError, ValueError) as exc:
            raise DumpError(
                f"{record}: unreadable run record ({exc}); rescore to start over"
            ) from None
        if not isinstance(data, dict) or "record" not in data:
            raise DumpError(f"{record}: not a run record; rescore to start over")
        self._committed: dict[str, Any] = data
        return dict(data["record"])

    def commit(self, record: dict[str, Any]) -> None:
        """Make every row written so far durable and save ``record`` with them."""
        if self.format == "jsonl":
            position: dict[str, Any] = {"bytes": os.fstat(self._fd).st_size}
        else:
            self._flush_part()
            position = {"parts": [p.name for p in self._parts], "complete": False}
        self._committed = {"record": record, "rows": len(self.done), **position}
        self.run = record
        _write_atomically(run_record_path(self.path), json.dumps(self._committed, default=str))

    # ------------------------------------------------------------------ JSONL

    def _open_jsonl(self) -> None:
        if self.path.exists():
            if self.run is not None:  # drop what the last commit did not cover
                with open(self.path, "rb+") as handle:
                    handle.truncate(min(self._committed["bytes"], self.path.stat().st_size))
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
        if self.run is not None and not self._committed.get("complete", True):
            kept = set(self._committed["parts"]) | {"part-00000.parquet"}
            for part in [p for p in self._parts if p.name not in kept]:
                part.unlink()  # written after the last commit: its rows are rescored
            self._parts = [p for p in self._parts if p.name in kept]
        for part in self._parts:
            self.done.update(str(i) for i in pq.read_table(part, columns=["id"])["id"].to_pylist())
        self._buffer: list[dict[str, Any]] = []

    def _flush_part(self) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        if not self._buffer:
            return
        number = max((int(p.stem.split("-")[1]) for p in self._parts), default=0) + 1
        final = self._parts_dir / f"part-{number:05d}.parquet"
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
        """Finish the output; rows written since the last commit are committed with the
        last record."""
        if self.format == "jsonl":
            os.fsync(self._fd)
            if self.run is not None:
                self.commit(self.run)
            os.close(self._fd)
        else:
            self._flush_part()
            self._combine_parts()
            if self.run is not None:
                self._committed = {"record": self.run, "rows": len(self.done), "complete": True}
                _write_atomically(run_record_path(self.path), json.dumps(self._committed))

    def abandon(self) -> None:
        """Stop without finishing (the run was interrupted): what was committed stays, and
        a resume rescores the rest."""
        if self.format == "jsonl":
            os.close(self._fd)
        else:
            self._flush_part()  # kept only when no run record says otherwise

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
        else:
            self.abandon()

    def _remove_previous(self) -> None:
        if self.path.exists():
            self.path.unlink()
        if self._parts_dir.exists():
            shutil.rmtree(self._parts_dir)
        run_record_path(self.path).unlink(missing_ok=True)


def _write_atomically(path: Path, text: str) -> None:
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(text)
    temporary.replace(path)


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
