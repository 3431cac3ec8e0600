"""What a warm worker is and how a call to it ends: the records `WarmProcess` takes and gives."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

__all__ = ["Command", "Ending", "Reply", "Role", "WarmSpec"]


@dataclass(frozen=True)
class Role:
    """A Python function, ``"module:function"``, that serves a worker's channel."""

    target: str
    preload: tuple[str, ...] = ()
    """Modules imported before the worker says it is ready."""
    main_module: bool = False
    """Import the caller's main module first (as multiprocessing's spawn does), so that
    pickles of objects defined there resolve in the worker."""


@dataclass(frozen=True)
class Command:
    """A program that speaks the frames itself. Its two pipes' descriptors replace the
    arguments ``"{request_fd}"`` and ``"{reply_fd}"`` in ``argv``, or are appended to it
    (``REQUEST_FD REPLY_FD``) if it has neither. Its first reply is its hello, which
    ``hello`` checks (an error text, or None for ready; by default any hello is ready)."""

    argv: tuple[str, ...]
    env: Mapping[str, str] | None = field(default=None, hash=False, compare=False)
    hello: Callable[[Any], str | None] | None = field(default=None, hash=False, compare=False)


@dataclass(frozen=True)
class WarmSpec:
    """How to start one kind of warm worker, and the limits every such worker runs under."""

    launch: Role | Command
    memory_bytes: int | None = None
    """Resident memory the worker may hold; over it, the worker is killed (or, if found
    after a unit, the unit is an overrun) and replaced."""
    output_bytes: int = 8192
    """Bytes of each call's output kept (its head and tail)."""
    output_limit_bytes: int = 1 << 30
    """A call that writes more output than this is stopped."""
    start_timeout_s: float = 60.0
    watch_s: float = 0.05
    """How often a busy worker's memory and output are checked."""


class Ending(StrEnum):
    """How a call ended."""

    ANSWER = "answer"
    TIMEOUT = "timeout"
    MEMORY = "memory"
    """The worker went over its memory limit and was killed."""
    OUTPUT = "output"
    """The call wrote more than ``output_limit_bytes`` and was stopped."""
    DIED = "died"
    START = "start"
    """The worker could not start (or was not ready in time); the call never ran."""


@dataclass(frozen=True)
class Reply:
    ending: Ending
    answer: Any = None
    elapsed_s: float = 0.0
    detail: str = ""
    """Why a call did not answer (which limit, the exit code, the start error)."""
    output: str = ""
    output_bytes: int = 0
