"""A run's cgroup, v1 or v2: it bounds the whole process tree and measures it.

The fork server keeps one per jail slot. A fork bomb meets `pids.max`, a memory bomb the
memory limit; peak memory and CPU time come from the cgroup's own counters. Files are
opened once and then read and written with pread/pwrite (an `open()` per value cost more
than the rest of a run's cgroup work together).

- `CgroupV1`: ``<root>/{memory,pids,cpuacct}/rewardsmith-sandbox/<name>``, reused run after
  run; counters that cannot be reset (``pids.events``, ``oom_kill``) are compared before
  and after.
- `NoCgroup`: the rootless mode's stand-in (the limits are rlimits and the watchdog).
- `CgroupV2`: a fresh leaf ``<base>/<name>-<n>`` per run (its counters start at zero),
  with memory.max, memory.swap.max, pids.max and cpu.max; `v2_base` finds or makes the
  base directory (root: a folder at the top of the mount; not root: a subtree of the
  server's own delegated cgroup). Tested against a fake tree only (see modes.py).
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from typing import Protocol

V1_ROOT = "/sys/fs/cgroup"
_V1_CONTROLLERS = ("memory", "pids", "cpuacct")
_V2_ENABLE = ("memory", "pids", "cpu")
BASE_NAME = "rewardsmith-sandbox"
_V2_FILES = (
    *("memory.max", "memory.swap.max", "memory.peak", "memory.events"),
    *("pids.max", "pids.events", "cpu.max", "cpu.stat", "cgroup.procs", "cgroup.kill"),
)


class RunCgroup(Protocol):
    def join_fds(self) -> list[int]:
        """Descriptors of the cgroup.procs files a new process writes "0" to (to join)."""
        ...

    def prepare(self, memory_bytes: int, processes: int, cpus: float) -> None: ...

    def kill_all(self, timeout_s: float = 5.0) -> bool: ...

    def stats(self) -> dict[str, int | bool]: ...

    def processes_refused(self) -> bool:
        """Whether a fork or a thread has been refused at ``pids.max`` this run."""
        ...

    def recycle(self) -> None:
        """Ready for the next run (empty; v2: a fresh leaf)."""
        ...

    def remove(self) -> None: ...


def _pwrite(fd: int, value: str) -> None:
    os.pwrite(fd, value.encode(), 0)


def _pread(fd: int) -> str:
    return os.pread(fd, 1 << 16, 0).decode()


def _field(text: str, key: str) -> int:
    """``key value`` lines (memory.events, cpu.stat, oom_control): the value, else 0."""
    for line in text.splitlines():
        name, _, value = line.partition(" ")
        if name == key:
            return int(value)
    return 0


def _kill_listed(read_pids: int, timeout_s: float) -> bool:
    """SIGKILL every pid listed in the cgroup.procs at `read_pids` until it is empty."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        pids = [int(p) for p in _pread(read_pids).split()]
        if not pids:
            return True
        for pid in pids:
            if pid > 1 and pid != os.getpid():  # never the server (PID 1 of its namespace)
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        time.sleep(0.002)
    return False


class CgroupV1:
    """The cgroups ``<root>/{memory,pids,cpuacct}/rewardsmith-sandbox/<name>``."""

    def __init__(self, name: str, root: str = V1_ROOT) -> None:
        self.dirs = {c: os.path.join(root, c, BASE_NAME, name) for c in _V1_CONTROLLERS}
        for path in self.dirs.values():
            os.makedirs(path, exist_ok=True)
        mem, pids, cpu = (self.dirs[c] for c in _V1_CONTROLLERS)
        self._fds: dict[str, int] = {}
        for key, path in (
            ("limit", f"{mem}/memory.limit_in_bytes"),
            ("memsw", f"{mem}/memory.memsw.limit_in_bytes"),
            ("peak", f"{mem}/memory.max_usage_in_bytes"),
            ("oom", f"{mem}/memory.oom_control"),
            ("pids_max", f"{pids}/pids.max"),
            ("pids_events", f"{pids}/pids.events"),
            ("procs", f"{pids}/cgroup.procs"),
            ("usage", f"{cpu}/cpuacct.usage"),
        ):
            with contextlib.suppress(FileNotFoundError):  # no swap accounting: no memsw
                self._fds[key] = os.open(path, os.O_RDWR if key != "oom" else os.O_RDONLY)
        self._join = [os.open(f"{d}/cgroup.procs", os.O_WRONLY) for d in self.dirs.values()]
        self._before: dict[str, int] = {}

    def join_fds(self) -> list[int]:
        return list(self._join)

    def prepare(self, memory_bytes: int, processes: int, cpus: float) -> None:
        """Set the limits and zero the counters for the next run (v1 has no cpu.max here:
        the cpu controller is left alone)."""
        value = str(memory_bytes)
        # memory+swap may never be below memory alone: raise memsw first, lower it last.
        raising = memory_bytes > int(_pread(self._fds["limit"]))
        order = ["memsw", "limit"] if raising else ["limit", "memsw"]
        for key in order:
            if key in self._fds:
                _pwrite(self._fds[key], value)
        _pwrite(self._fds["peak"], "0")
        _pwrite(self._fds["pids_max"], str(processes))
        _pwrite(self._fds["usage"], "0")
        self._before = {"oom": self._oom_kills(), "pids": self._pids_max_events()}

    def kill_all(self, timeout_s: float = 5.0) -> bool:
        return _kill_listed(self._fds["procs"], timeout_s)

    def stats(self) -> dict[str, int | bool]:
        return {
            "peak_memory_bytes": int(_pread(self._fds["peak"])),
            "cpu_ns": int(_pread(self._fds["usage"])),
            "oom": self._oom_kills() > self._before.get("oom", 0),
            "pids_max_hit": self.processes_refused(),
        }

    def processes_refused(self) -> bool:
        return self._pids_max_events() > self._before.get("pids", 0)

    def _oom_kills(self) -> int:
        return _field(_pread(self._fds["oom"]), "oom_kill")

    def _pids_max_events(self) -> int:
        return _field(_pread(self._fds["pids_events"]), "max")

    def recycle(self) -> None:
        self.kill_all()

    def remove(self) -> None:
        self.kill_all(timeout_s=2.0)
        for fd in (*self._fds.values(), *self._join):
            os.close(fd)
        self._fds, self._join = {}, []
        for path in self.dirs.values():
            with contextlib.suppress(OSError):
                os.rmdir(path)


def v2_base(mount: str, own: str, root: bool, wanted: str | None = None) -> str:
    """The directory whose children are run cgroups, made ready (controllers enabled).

    As root: `wanted` or ``<mount>/rewardsmith-sandbox``. Not root: the server's own cgroup
    `own` (a delegated scope made for it, holding only the server): the server moves into
    a leaf ``server`` there, since a v2 cgroup with processes cannot enable controllers for
    its children. Raises OSError saying what is missing.
    """
    if root:
        base = wanted or os.path.join(mount, BASE_NAME)
        _enable(os.path.dirname(base.rstrip("/")))
        os.makedirs(base, exist_ok=True)
    else:
        base = mount + own
        leaf = os.path.join(base, "server")
        os.makedirs(leaf, exist_ok=True)
        with open(os.path.join(leaf, "cgroup.procs"), "w") as f:
            f.write("0")
    _enable(base)
    return base


def _enable(path: str) -> None:
    available = set(_read_file(os.path.join(path, "cgroup.controllers")).split())
    missing = [c for c in ("memory", "pids") if c not in available]
    if missing:
        raise OSError(f"cgroup v2 at {path} does not offer {', '.join(missing)}")
    enabled = set(_read_file(os.path.join(path, "cgroup.subtree_control")).split())
    wanted = [c for c in _V2_ENABLE if c in available and c not in enabled]
    if wanted:
        with open(os.path.join(path, "cgroup.subtree_control"), "w") as f:
            f.write(" ".join(f"+{c}" for c in wanted))


def _read_file(path: str) -> str:
    with open(path) as f:
        return f.read()


class CgroupV2:
    """Fresh leaves ``<base>/<name>-<n>``: one per run, so every counter starts at zero."""

    def __init__(self, base: str, name: str) -> None:
        self.base, self.name, self._n = base, name, 0
        self.path = ""
        self._fds: dict[str, int] = {}
        self._make()

    def _make(self) -> None:
        self._n += 1
        self.path = os.path.join(self.base, f"{self.name}-{self._n}")
        os.makedirs(self.path, exist_ok=True)
        for key in _V2_FILES:
            flags = os.O_RDONLY if key.endswith((".events", ".stat", ".peak")) else os.O_RDWR
            with contextlib.suppress(FileNotFoundError):  # older kernels lack some
                self._fds[key] = os.open(os.path.join(self.path, key), flags)
        self._cpu_at_start = 0

    def join_fds(self) -> list[int]:
        return [self._fds["cgroup.procs"]]

    def prepare(self, memory_bytes: int, processes: int, cpus: float) -> None:
        _pwrite(self._fds["memory.max"], str(memory_bytes))
        if "memory.swap.max" in self._fds:
            _pwrite(self._fds["memory.swap.max"], "0")
        _pwrite(self._fds["pids.max"], str(processes))
        if "cpu.max" in self._fds:
            period = 100_000
            _pwrite(self._fds["cpu.max"], f"{max(1000, int(cpus * period))} {period}")
        # The waiting jail's own start-up is not the program's CPU time.
        self._cpu_at_start = _field(_pread(self._fds["cpu.stat"]), "usage_usec")

    def kill_all(self, timeout_s: float = 5.0) -> bool:
        if "cgroup.kill" in self._fds:
            _pwrite(self._fds["cgroup.kill"], "1")
        return _kill_listed(self._fds["cgroup.procs"], timeout_s)

    def stats(self) -> dict[str, int | bool]:
        peak = int(_pread(self._fds["memory.peak"])) if "memory.peak" in self._fds else 0
        usage = _field(_pread(self._fds["cpu.stat"]), "usage_usec") - self._cpu_at_start
        return {
            "peak_memory_bytes": peak,
            "cpu_ns": max(0, usage) * 1000,
            "oom": _field(_pread(self._fds["memory.events"]), "oom_kill") > 0,
            "pids_max_hit": self.processes_refused(),
        }

    def processes_refused(self) -> bool:
        return _field(_pread(self._fds["pids.events"]), "max") > 0

    def recycle(self) -> None:
        self.remove()
        self._make()

    def remove(self) -> None:
        self.kill_all(timeout_s=2.0)
        for fd in self._fds.values():
            os.close(fd)
        self._fds = {}
        for _ in range(50):  # a dying task can hold the cgroup for a moment
            try:
                os.rmdir(self.path)
                return
            except FileNotFoundError:
                return
            except OSError:
                time.sleep(0.002)


class NoCgroup:
    """Rootless mode: no cgroup; the limits are rlimits and the server's watchdog (see
    `_runs.Run.sample`)."""

    def join_fds(self) -> list[int]:
        return []

    def prepare(self, memory_bytes: int, processes: int, cpus: float) -> None:
        pass

    def kill_all(self, timeout_s: float = 5.0) -> bool:
        return True

    def stats(self) -> dict[str, int | bool]:
        return {"peak_memory_bytes": 0, "cpu_ns": 0, "oom": False, "pids_max_hit": False}

    def processes_refused(self) -> bool:
        return False  # the watchdog counts the tasks (`_runs.Run.sample`)

    def recycle(self) -> None:
        pass

    def remove(self) -> None:
        pass


def sweep_stale(root: str = V1_ROOT) -> None:
    """Remove v1 cgroups left by servers whose client is gone (named ``<client pid>-...``)."""
    for controller in _V1_CONTROLLERS:
        base = os.path.join(root, controller, BASE_NAME)
        with contextlib.suppress(OSError):
            for name in os.listdir(base):
                pid = name.split("-", 1)[0]
                if pid.isdigit() and not os.path.exists(f"/proc/{pid}"):
                    with contextlib.suppress(OSError):
                        os.rmdir(os.path.join(base, name))
