"""The sandbox's two records: `Limits` (what a run may use) and `SandboxResult` (what it did).

Both are frozen dataclasses of plain values, so they pickle, compare and hash.
"""

from __future__ import annotations

import signal
from dataclasses import dataclass, field, fields
from enum import StrEnum
from typing import Any

__all__ = ["LimitHit", "Limits", "SandboxResult"]

_MiB = 1024 * 1024


class LimitHit(StrEnum):
    """Which limit ended (or marred) a run. The first one detected wins."""

    WALL_TIME = "wall_time"
    CPU_TIME = "cpu_time"
    MEMORY = "memory"
    OUTPUT = "output"
    PROCESSES = "processes"
    FILE_SIZE = "file_size"
    DISK = "disk"


@dataclass(frozen=True)
class Limits:
    """What one sandboxed run may use. Validated on creation; every field has a safe default."""

    wall_s: float = 10.0
    """Wall-clock seconds before the whole process tree is killed (SIGKILL of the PID
    namespace's init, which takes every descendant with it)."""
    cpu_s: float = 10.0
    """CPU seconds per process (RLIMIT_CPU: SIGXCPU, then SIGKILL one second later)."""
    memory_bytes: int = 512 * _MiB
    """Memory for the whole tree (cgroup memory limit; the kernel OOM-kills past it)."""
    processes: int = 64
    """Processes and threads for the whole tree (cgroup pids.max)."""
    file_bytes: int = 64 * _MiB
    """Largest file any process may write (RLIMIT_FSIZE: SIGXFSZ past it)."""
    disk_bytes: int = 128 * _MiB
    """Size of the work dir and of /tmp: each is a private tmpfs of this size."""
    open_files: int = 256
    """Open file descriptors per process (RLIMIT_NOFILE)."""
    output_bytes: int = 1 * _MiB
    """Bytes kept from stdout and from stderr each; past it the tree is killed."""
    collect_bytes: int = 64 * _MiB
    """Largest file read back from the work dir through `collect`."""
    cpus: float = 1.0
    """CPU cores the tree may use at once (cgroup2 mode's cpu.max). The other modes do not
    share out cores: there `cpu_s` bounds each process and `wall_s` the tree."""

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, bool) or not isinstance(value, int | float):
                raise TypeError(f"Limits.{f.name} must be a number, got {value!r}")
            if not value > 0:
                raise ValueError(f"Limits.{f.name} must be positive, got {value!r}")
        if self.memory_bytes < 8 * _MiB:
            raise ValueError("Limits.memory_bytes below 8 MiB cannot start an interpreter")
        if self.processes < 2:
            raise ValueError("Limits.processes must be at least 2 (init plus the program)")

    def replace(self, **changes: Any) -> Limits:
        """A copy with some fields changed (validated again)."""
        values = {f.name: getattr(self, f.name) for f in fields(self)}
        values.update(changes)
        return Limits(**values)


@dataclass(frozen=True)
class SandboxResult:
    """What a sandboxed run did. Never raised: a jail that could not start sets `error`."""

    exit_code: int | None
    """The program's exit status, or None when a signal ended it (or it never ran)."""
    signal: int | None = None
    """The signal that ended the program, if any (9 = SIGKILL, 24 = SIGXCPU, ...)."""
    stdout: bytes = b""
    stderr: bytes = b""
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    wall_s: float = 0.0
    cpu_s: float = 0.0
    """CPU seconds of the whole tree (cgroup cpuacct)."""
    peak_memory_bytes: int = 0
    """Peak memory of the whole tree (cgroup memory high-water mark)."""
    limit_hit: LimitHit | None = None
    files: dict[str, bytes] = field(default_factory=dict)
    """Files read back from the work dir, as asked for with `collect`."""
    missing: tuple[str, ...] = ()
    """Files asked for with `collect` that were absent, not regular, or too large."""
    error: str | None = None
    """Set when the sandbox itself failed (an infrastructure error, never the program's)."""
    mode: str | None = None
    """The sandbox mode that ran it: ``privileged``, ``cgroup2`` or ``rootless`` (see
    `rewardsmith.verifiers.sandbox.modes`); None if no server started."""

    @property
    def ok(self) -> bool:
        """Exited 0 with no limit hit. Proves only that; never evidence of correctness."""
        return self.exit_code == 0 and self.limit_hit is None and self.error is None

    @property
    def signal_name(self) -> str | None:
        if self.signal is None:
            return None
        try:
            return signal.Signals(self.signal).name
        except ValueError:
            return f"signal {self.signal}"

    def describe(self) -> str:
        """One line for feedback: how the run ended."""
        if self.error:
            return f"sandbox error: {self.error}"
        if self.limit_hit:
            return f"stopped: {self.limit_hit.value} limit"
        if self.signal == signal.SIGSYS:
            return "killed by SIGSYS: it made a system call the sandbox denies"
        if self.signal is not None:
            return f"killed by {self.signal_name}"
        return f"exited with code {self.exit_code}"
