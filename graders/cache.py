"""Verdict caches keyed by a content hash of (verifier name, version, code, config, sample).

A rescore of the same dump with the same verifiers is then nearly free, and any change
that could change a verdict (a new verifier version, another setting, another sample)
changes the key. The verifiers' source is in the key too: a fix that changes verdicts
but not the ``version`` (it has happened) would otherwise replay the old verdicts from a
cache file. Infrastructure failures are never cached: they are worth retrying.

    >>> from rewardsmith.verifiers.text import ExactMatch
    >>> from rewardsmith.verifiers.types import Sample
    >>> s = Sample(id="1", completion="4", reference="4")
    >>> job_key(ExactMatch(), s) == job_key(ExactMatch(), s)
    True
    >>> job_key(ExactMatch(), s) == job_key(ExactMatch(case_sensitive=True), s)
    False
"""

from __future__ import annotations

import functools
import hashlib
import json
import sqlite3
import sys
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Protocol

from rewardsmith.verifiers.protocol import Verifier, verifier_config
from rewardsmith.verifiers.types import Sample, Verdict

__all__ = ["Cache", "MemoryCache", "SqliteCache", "job_key", "verifier_key"]


def _digest(value: object) -> str:
    # default=repr covers tuples-in-sets, compiled patterns and enums deterministically.
    text = json.dumps(value, sort_keys=True, default=repr, ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def verifier_key(verifier: Verifier) -> str:
    """A hash of what determines a verifier's verdicts: name, version, code, config."""
    name = getattr(verifier, "name", type(verifier).__qualname__)
    version = getattr(verifier, "version", "?")
    code = code_digest(type(verifier).__module__)
    return _digest([name, version, code, verifier_config(verifier)])


_OWN_VERIFIERS = Path(__file__).resolve().parents[1] / "verifiers"


@functools.cache
def code_digest(module: str) -> str:
    """A hash of the source a verifier defined in `module` runs: every file of this
    package's verifiers (a verdict also depends on the sandbox, the harnesses and the
    readers they share), or the defining module's own file for a verifier of elsewhere.
    Read once per process."""
    if module.startswith("rewardsmith."):
        root, files = _OWN_VERIFIERS, sorted(_OWN_VERIFIERS.rglob("*.py"))
    else:
        path = getattr(sys.modules.get(module), "__file__", None)
        files = [Path(path)] if path else []
        root = files[0].parent if files else _OWN_VERIFIERS
    digest = hashlib.sha256()
    for file in files:
        digest.update(file.relative_to(root).as_posix().encode() + b"\0")
        digest.update(file.read_bytes())
    return digest.hexdigest()


def job_key(verifier: Verifier, sample: Sample, vkey: str | None = None) -> str:
    """The cache key of one (verifier, sample) job."""
    return _digest([vkey or verifier_key(verifier), sample.model_dump(mode="json")])


class Cache(Protocol):
    def get(self, key: str) -> Verdict | None: ...

    def put(self, key: str, verdict: Verdict) -> None: ...


class MemoryCache:
    """An in-process LRU cache holding at most ``max_entries`` verdicts."""

    def __init__(self, max_entries: int = 200_000) -> None:
        self._data: OrderedDict[str, Verdict] = OrderedDict()
        self._max = max_entries

    def get(self, key: str) -> Verdict | None:
        verdict = self._data.get(key)
        if verdict is not None:
            self._data.move_to_end(key)
        return verdict

    def put(self, key: str, verdict: Verdict) -> None:
        self._data[key] = verdict
        self._data.move_to_end(key)
        while len(self._data) > self._max:
            self._data.popitem(last=False)

    def __len__(self) -> int:
        return len(self._data)


class SqliteCache:
    """A cache in an SQLite file, so a rescore in a new process is nearly free too."""

    def __init__(self, path: str | Path) -> None:
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS verdicts (key TEXT PRIMARY KEY, json TEXT)")

    def get(self, key: str) -> Verdict | None:
        with self._lock:
            row = self._db.execute("SELECT json FROM verdicts WHERE key = ?", (key,)).fetchone()
        return Verdict.from_dict(json.loads(row[0])) if row else None

    def put(self, key: str, verdict: Verdict) -> None:
        text = json.dumps(verdict.to_dict(), default=repr)
        with self._lock:
            self._db.execute("INSERT OR REPLACE INTO verdicts VALUES (?, ?)", (key, text))

    def close(self) -> None:
        self._db.close()
