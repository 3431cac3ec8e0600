"""The file operations under `ScoredWriter`: an exclusive lock on an output, atomic
replacement, reading a scored line back, cutting a killed writer's half line."""

from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path
from typing import Any

from rewardsmith.datasets.dumps import DumpError

__all__ = [
    "ScoredWriteError",
    "cut_partial_last_line",
    "lock_exclusively",
    "parse_row",
    "rewrite_without",
    "write_atomically",
]


class ScoredWriteError(DumpError):
    """The scored output cannot be written (held by another run, a full disk, a read-only
    file system, a permission): one line naming the file; rows written before it stay."""


def lock_exclusively(path: Path) -> int:
    """Hold ``<path>.lock`` (flock, released when the descriptor closes or the process
    dies; the file itself stays, so no two runs ever lock different files): its descriptor.
    Held by another process: `ScoredWriteError` at once, naming it."""
    lock = path.with_name(path.name + ".lock")
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.pread(fd, 64, 0).decode(errors="replace").strip() or "unknown"
        os.close(fd)
        raise ScoredWriteError(
            f"{path}: another run is writing it (process {holder} holds {lock.name}); wait "
            "for it to finish, or write to another --output"
        ) from None
    os.ftruncate(fd, 0)
    os.pwrite(fd, str(os.getpid()).encode(), 0)
    return fd


def rewrite_without(path: Path, numbers: set[int]) -> None:
    """Replace `path`, atomically, by its lines except those numbered `numbers` (1-based)."""
    temporary = path.with_name(path.name + ".tmp")
    try:
        with open(path, "rb") as source, open(temporary, "wb") as out:
            for number, raw in enumerate(source, 1):
                if number not in numbers:
                    out.write(raw)
            out.flush()
            os.fsync(out.fileno())
        temporary.replace(path)
    except OSError:
        temporary.unlink(missing_ok=True)
        raise


def write_atomically(path: Path, data: str | bytes) -> None:
    temporary = path.with_name(path.name + ".tmp")
    try:
        with open(temporary, "wb") as handle:
            handle.write(data.encode() if isinstance(data, str) else data)
            handle.flush()
            os.fsync(handle.fileno())
        temporary.replace(path)
    except OSError:
        temporary.unlink(missing_ok=True)
        raise


def parse_row(raw: bytes) -> tuple[dict[str, Any] | None, str | None]:
    """A scored line as a record (a JSON object with an ``id``), or why it is not one."""
    try:
        record = json.loads(raw)
    except ValueError as exc:
        return None, f"not a JSON row ({exc})"
    if not isinstance(record, dict) or "id" not in record:
        return None, "not a scored row (no id)"
    return record, None


def cut_partial_last_line(path: Path) -> None:
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
