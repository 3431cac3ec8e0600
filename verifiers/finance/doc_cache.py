"""Caches of parsed PDFs, by file content (SHA-256) and settings: results and failures.

Many samples cite the same report, so a parse is done once: `ResultCache` keeps the last
parses in this process (a parse of every page answers for any pages).

A parse that ran out of time or memory (a decompression bomb, a pathological page) is
remembered too, in `FailureCache`: a second sample citing that file with the same or
tighter limits gets the same verdict at once instead of holding a worker for the whole
limit again. A failure holds for the request it came from and every request that asks for
at least as much (the same file, a superset of the pages, a superset of the extractors, a
time and memory limit no larger); it is kept in memory and in a small directory of JSON
records shared by the processes of one machine (a pool's workers), for `ttl_s` seconds,
so a bomb costs its time once per run, not once per worker. A timeout on a busy machine
is an infrastructure failure (no reward either way); remembering it for a while only
spares the machine.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import threading
import time
from collections import OrderedDict
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

__all__ = ["FailureCache", "FailureRecord", "RequestKey", "ResultCache", "sha256_of"]


def sha256_of(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@dataclass(frozen=True)
class RequestKey:
    """What was asked of one file: which pages (None = all), extractors and limits."""

    digest: str
    pages: tuple[int, ...] | None
    sources: tuple[str, ...]
    min_support: int
    max_pages: int
    timeout_s: float
    memory_bytes: int

    @property
    def settings(self) -> tuple[Any, ...]:
        """What changes the result of a successful parse (limits do not)."""
        return (self.digest, self.sources, self.min_support, self.max_pages)

    def asks_at_least(self, other: RequestKey) -> bool:
        """True when this request does all the work `other` did, within no larger limits,
        so it cannot succeed where `other` failed."""
        pages_cover = self.pages is None or (
            other.pages is not None and set(other.pages) <= set(self.pages)
        )
        return (
            self.digest == other.digest
            and pages_cover
            and set(other.sources) <= set(self.sources)
            and self.timeout_s <= other.timeout_s
            and self.memory_bytes <= other.memory_bytes
        )


class ResultCache:
    """The last `size` parses in this process, by content and settings."""

    def __init__(self, size: int = 64) -> None:
        self.size = size
        self._entries: OrderedDict[RequestKey, Any] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: RequestKey) -> Any | None:
        """The entry for `key`, or a parse of a superset of its pages (every page when None);
        a failure answers only for exactly the pages it was asked (a 500-page file refused
        whole can still be read page by page)."""
        with self._lock:
            if key in self._entries:
                self._entries.move_to_end(key)
                return self._entries[key]
            for stored, value in reversed(self._entries.items()):
                covers = stored.pages is None or (
                    key.pages is not None and set(key.pages) <= set(stored.pages)
                )
                parsed = getattr(value, "document", None) is not None
                if stored.settings == key.settings and covers and parsed:
                    self._entries.move_to_end(stored)
                    return value
        return None

    def put(self, key: RequestKey, value: Any) -> None:
        with self._lock:
            self._entries[key] = value
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)


@dataclass(frozen=True)
class FailureRecord:
    failure: str
    """The `Failure` value (``verifier_timeout``, ``worker_died``)."""
    problem: str
    at: float
    """When it happened (seconds since the epoch)."""


class FailureCache:
    """Failures by request, in memory and under `directory` (one JSON file per file hash)."""

    def __init__(self, directory: Path | None = None) -> None:
        self.directory = directory if directory is not None else _default_directory()
        self._memory: list[tuple[RequestKey, FailureRecord]] = []
        self._lock = threading.Lock()

    def find(self, key: RequestKey, ttl_s: float) -> FailureRecord | None:
        """A failure of a request that `key` asks at least as much as, younger than ttl_s."""
        if ttl_s <= 0:
            return None
        now = time.time()
        with self._lock:
            entries = list(self._memory)
        entries += self._read(key.digest)
        for stored, record in entries:
            if now - record.at <= ttl_s and key.asks_at_least(stored):
                return record
        return None

    def add(self, key: RequestKey, record: FailureRecord) -> None:
        with self._lock:
            self._memory.append((key, record))
        self._write(key, record)

    def _path(self, digest: str) -> Path:
        return self.directory / f"{digest}.jsonl"

    def _read(self, digest: str) -> list[tuple[RequestKey, FailureRecord]]:
        try:
            path = self._path(digest)
            if path.stat().st_uid != os.getuid():  # only records this user wrote count
                return []
            lines = path.read_text().splitlines()
        except OSError:
            return []
        out = []
        for line in lines[-100:]:
            try:
                data = json.loads(line)
                request = data["request"]
                pages = request["pages"]
                request.update(
                    pages=tuple(pages) if pages is not None else None,
                    sources=tuple(request["sources"]),
                )
                out.append((RequestKey(**request), FailureRecord(**data["record"])))
            except (ValueError, KeyError, TypeError):
                continue  # a torn or foreign line is ignored, never trusted
        return out

    def _write(self, key: RequestKey, record: FailureRecord) -> None:
        line = json.dumps({"request": asdict(key), "record": asdict(record)})
        try:
            self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
            with open(self._path(key.digest), "a") as handle:
                handle.write(line + "\n")  # one short append: whole lines on local disks
        except OSError:
            pass  # memory still remembers it; the disk is a convenience for other processes


def _default_directory() -> Path:
    return Path(tempfile.gettempdir()) / f"rewardsmith-pdf-failures-{os.getuid()}"
