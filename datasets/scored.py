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

**Safety.** The writer holds an exclusive lock (``flock`` on ``<output>.lock``, a file it
never removes) from opening to closing: a second writer of the same output fails at once
with `ScoredWriteError`, before touching anything (so ``--rescore`` never unlinks a file
another run is appending to). Every write is checked (a short write is continued; a write
that fails cuts the file back to its last whole line), and every I/O failure (a full disk,
a read-only file system, a permission) is one `ScoredWriteError` naming the file, with the
rows written before it intact and resumable.

**Reading back on resume.** A line that is not a scored row is an error naming the file
and line and the fix; the same damage on the last line only (nothing after it to lose) is
dropped and its row rescored (`dropped_tail` says so). Rows for which ``redo(row)`` is true
(an infrastructure failure, say) are removed and so rescored (`redone` counts them).

    >>> with ScoredWriter("out.jsonl") as out:   # doctest: +SKIP
    ...     for row in rows:
    ...         if row.sample.id not in out.done:
    ...             out.write({"id": row.sample.id, "score": 1.0})
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from types import TracebackType
from typing import Any

from rewardsmith.datasets.dumps import DumpError, dump_format
from rewardsmith.datasets.scored_files import (
    ScoredWriteError,
    cut_partial_last_line,
    lock_exclusively,
    parse_row,
    rewrite_without,
    write_atomically,
)

__all__ = [
    "SCORE_COLUMN",
    "ScoredWriteError",
    "ScoredWriter",
    "is_infra_failure_row",
    "run_record_path",
    "scored_format",
]

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


def is_infra_failure_row(record: dict[str, Any]) -> bool:
    """A scored row whose reward an infrastructure failure decided (rescored on resume)."""
    reward = record.get(SCORE_COLUMN)
    if isinstance(reward, str):  # Parquet keeps it as JSON text
        with contextlib.suppress(ValueError):
            reward = json.loads(reward)
    return isinstance(reward, dict) and bool(reward.get("infra_failure") or reward.get("fallback"))


def run_record_path(path: str | Path) -> Path:
    """Where a scored output's run record lives: ``<output>.run.json``."""
    path = Path(path)
    return path.with_name(path.name + ".run.json")


class ScoredWriter:
    """Append scored records (dicts with an ``"id"``) to `path`; `done` holds ids already there.

    With ``resume=False`` an existing output is replaced. ``redo``: rows kept from an
    earlier run for which it is true are removed, to be scored again.
    """

    def __init__(
        self,
        path: str | Path,
        *,
        resume: bool = True,
        part_rows: int = PART_ROWS,
        redo: Callable[[dict[str, Any]], bool] | None = None,
    ):
        self.path = Path(path)
        self.format = scored_format(self.path)
        self.part_rows = part_rows
        self.redo = redo
        self.done: set[str] = set()
        self.written = 0
        self.redone = 0
        """Rows of the earlier run removed by `redo`, to be scored again."""
        self.dropped_tail: str | None = None
        """Why a damaged last line was dropped (its row is scored again), or None."""
        self._lock_fd = -1
        with self._io("open"):
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._lock()
            try:
                if not resume:
                    self._remove_previous()
                self.run: dict[str, Any] | None = self._read_run()
                """The record of the last commit of an earlier run (None: no record)."""
                if self.format == "jsonl":
                    self._open_jsonl()
                else:
                    self._open_parts()
            except BaseException:
                self._unlock()
                raise

    @contextlib.contextmanager
    def _io(self, doing: str) -> Iterator[None]:
        """Turn an I/O failure into one `ScoredWriteError` naming the file and the way on."""
        try:
            yield
        except OSError as exc:
            why = exc.strerror or str(exc)
            where = exc.filename or self.path
            raise ScoredWriteError(
                f"{where}: cannot {doing} the scored output: {why}; the {len(self.done)} rows "
                "written before it are intact: fix that, then run the same command again to "
                "resume"
            ) from None

    def _lock(self) -> None:
        self._lock_fd = lock_exclusively(self.path)

    def _unlock(self) -> None:
        if self._lock_fd >= 0:
            os.close(self._lock_fd)  # closing the descriptor releases the flock
            self._lock_fd = -1

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
        """Make every row written so far durable and save ``record`` with them (call it
        once before the first row too: rows never sit in a file with no run record)."""
        if self.format == "jsonl":
            with self._io("write"):
                os.fsync(self._fd)
            position: dict[str, Any] = {"bytes": self._size}
        else:
            with self._io("write"):
                self._flush_part()
            position = {"parts": [p.name for p in self._parts], "complete": False}
        committed = {"record": record, "rows": len(self.done), **position}
        with self._io("save the run record of"):
            write_atomically(run_record_path(self.path), json.dumps(committed, default=str))
        self._committed, self.run = committed, record

    # ------------------------------------------------------------------ JSONL

    def _open_jsonl(self) -> None:
        if self.path.exists():
            if self.run is not None:  # drop what the last commit did not cover
                with open(self.path, "rb+") as handle:
                    handle.truncate(min(self._committed["bytes"], self.path.stat().st_size))
            cut_partial_last_line(self.path)
            self._read_jsonl()
        self._fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        self._size = os.fstat(self._fd).st_size

    def _read_jsonl(self) -> None:
        """Collect the ids already scored; drop a damaged last line and the rows `redo`
        wants again (the file is then rewritten without them, atomically)."""
        drop: set[int] = set()
        damaged: tuple[int, str] | None = None  # fatal unless it turns out to be the last
        with open(self.path, "rb") as handle:
            for number, raw in enumerate(handle, 1):
                if damaged is not None:
                    raise self._damaged(*damaged)
                record, problem = parse_row(raw)
                if record is None:
                    damaged = (number, str(problem))
                elif self.redo is not None and self.redo(record):
                    drop.add(number)
                else:
                    self.done.add(str(record["id"]))
        self.redone += len(drop)
        if damaged is not None:
            self.dropped_tail = f"{self.path}:{damaged[0]}: {damaged[1]}"
            drop.add(damaged[0])
        if drop:
            rewrite_without(self.path, drop)
            if self.run is not None:  # the committed position moves with the rows
                self._committed["bytes"] = self.path.stat().st_size
                write_atomically(run_record_path(self.path), json.dumps(self._committed))

    def _damaged(self, number: int, problem: str) -> ScoredWriteError:
        return ScoredWriteError(
            f"{self.path}:{number}: {problem}: the file was changed or damaged. Keep the rows "
            f"before it (head -n {number - 1} {self.path} > fixed && mv fixed {self.path}) and "
            "run again to rescore the rest, or --rescore to start over"
        )

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
            if self.redo is not None:
                self._redo_part(part)
            self.done.update(str(i) for i in pq.read_table(part, columns=["id"])["id"].to_pylist())
        self._buffer: list[dict[str, Any]] = []

    def _redo_part(self, part: Path) -> None:
        """Rewrite `part` (atomically) without the rows `redo` wants scored again."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        assert self.redo is not None
        table = pq.read_table(part)
        keep = [not self.redo(row) for row in table.to_pylist()]
        if all(keep):
            return
        self.redone += keep.count(False)
        temporary = part.with_suffix(".tmp")
        pq.write_table(table.filter(pa.array(keep)), temporary)
        temporary.replace(part)

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
            line = (json.dumps(record, ensure_ascii=False, default=str) + "\n").encode("utf-8")
            with self._io("write"):
                self._write_line(line)
        else:
            self._buffer.append(_parquet_safe(record))
            if len(self._buffer) >= self.part_rows:
                with self._io("write"):
                    self._flush_part()
        self.done.add(record_id)
        self.written += 1

    def _write_line(self, line: bytes) -> None:
        """All of `line` or none of it: a short write is continued; a failed one is cut
        back, so the file always ends with a whole line."""
        view = memoryview(line)
        try:
            while view:
                written = os.write(self._fd, view)
                if written <= 0:
                    raise OSError(f"a write of {len(view)} bytes wrote {written}")
                view = view[written:]
        except OSError:
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, self._size)
            raise
        self._size += len(line)

    def close(self) -> None:
        """Finish the output; rows written since the last commit are committed with the
        last record."""
        try:
            if self.format == "jsonl":
                if self.run is not None:
                    self.commit(self.run)  # fsyncs the rows, then records them
                else:
                    with self._io("write"):
                        os.fsync(self._fd)
            else:
                with self._io("write"):
                    self._flush_part()
                    self._combine_parts()
                    if self.run is not None:
                        done = {"record": self.run, "rows": len(self.done), "complete": True}
                        write_atomically(run_record_path(self.path), json.dumps(done))
        finally:
            self._release()

    def abandon(self) -> None:
        """Stop without finishing (the run was interrupted, or a write failed): what was
        committed stays, and a resume rescores the rest. Never raises."""
        try:
            if self.format == "parquet":
                with contextlib.suppress(OSError):
                    self._flush_part()  # kept only when no run record says otherwise
        finally:
            self._release()

    def _release(self) -> None:
        if self.format == "jsonl" and getattr(self, "_fd", -1) >= 0:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = -1
        self._unlock()

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


SCORE_COLUMN = "rewardsmith"


def _parquet_safe(record: dict[str, Any]) -> dict[str, Any]:
    """Verdict evidence differs by verifier, and Parquet needs one schema: the score column
    is stored as a JSON string. The dump's own columns keep their types."""
    if SCORE_COLUMN not in record:
        return record
    return {**record, SCORE_COLUMN: json.dumps(record[SCORE_COLUMN], default=str)}
