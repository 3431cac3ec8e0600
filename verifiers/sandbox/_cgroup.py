"""One run's cgroup (v1: memory, pids, cpuacct), reused run after run by one fork server.

The cgroup bounds the whole process tree (a fork bomb meets `pids.max`, a memory bomb the
memory limit) and measures it (peak memory, CPU time). Counters that cannot be reset
(`pids.events`, `oom_kill`) are read before and after each run and compared.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time

ROOT = "/sys/fs/cgroup"
_CONTROLLERS = ("memory", "pids", "cpuacct")


def _read(path: str) -> str:
    with open(path) as f:
        return f.read()


def _write(path: str, value: str) -> None:
    with open(path, "w") as f:
        f.write(value)


class RunCgroup:
    """The cgroups /sys/fs/cgroup/{memory,pids,cpuacct}/rewardsmith-sandbox/<name>."""

    def __init__(self, name: str) -> None:
        self.dirs = {c: os.path.join(ROOT, c, "rewardsmith-sandbox", name) for c in _CONTROLLERS}
        for path in self.dirs.values():
            os.makedirs(path, exist_ok=True)
        self._before: dict[str, int] = {}

    def prepare(self, memory_bytes: int, processes: int) -> None:
        """Set the limits and zero the counters for the next run."""
        mem = self.dirs["memory"]
        limit, memsw = (
            os.path.join(mem, f) for f in ("memory.limit_in_bytes", "memory.memsw.limit_in_bytes")
        )
        # memory+swap may never be below memory alone: raise memsw first, lower it last.
        order = [memsw, limit] if memory_bytes > int(_read(limit)) else [limit, memsw]
        for path in order:
            with contextlib.suppress(FileNotFoundError):  # no swap accounting: no memsw
                _write(path, str(memory_bytes))
        _write(os.path.join(mem, "memory.max_usage_in_bytes"), "0")
        _write(os.path.join(self.dirs["pids"], "pids.max"), str(processes))
        _write(os.path.join(self.dirs["cpuacct"], "cpuacct.usage"), "0")
        self._before = {"oom": self._oom_kills(), "pids": self._pids_max_events()}

    def join_path(self) -> list[str]:
        """The cgroup.procs files a child writes its pid to (in the child, before exec)."""
        return [os.path.join(d, "cgroup.procs") for d in self.dirs.values()]

    def kill_all(self, timeout_s: float = 5.0) -> bool:
        """SIGKILL every process in the cgroup until it is empty. True when empty."""
        deadline = time.monotonic() + timeout_s
        procs = os.path.join(self.dirs["pids"], "cgroup.procs")
        while time.monotonic() < deadline:
            pids = [int(p) for p in _read(procs).split()]
            if not pids:
                return True
            for pid in pids:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.002)
        return False

    def stats(self) -> dict[str, int | bool]:
        mem = self.dirs["memory"]
        return {
            "peak_memory_bytes": int(_read(os.path.join(mem, "memory.max_usage_in_bytes"))),
            "cpu_ns": int(_read(os.path.join(self.dirs["cpuacct"], "cpuacct.usage"))),
            "oom": self._oom_kills() > self._before.get("oom", 0),
            "pids_max_hit": self._pids_max_events() > self._before.get("pids", 0),
        }

    def _oom_kills(self) -> int:
        for line in _read(os.path.join(self.dirs["memory"], "memory.oom_control")).splitlines():
            key, _, value = line.partition(" ")
            if key == "oom_kill":
                return int(value)
        return 0

    def _pids_max_events(self) -> int:
        text = _read(os.path.join(self.dirs["pids"], "pids.events"))
        return int(text.split()[1]) if text.startswith("max") else 0

    def remove(self) -> None:
        self.kill_all(timeout_s=2.0)
        for path in self.dirs.values():
            with contextlib.suppress(OSError):
                os.rmdir(path)


def sweep_stale() -> None:
    """Remove cgroups left by servers whose client is gone (named ``<client pid>-...``)."""
    for controller in _CONTROLLERS:
        base = os.path.join(ROOT, controller, "rewardsmith-sandbox")
        with contextlib.suppress(OSError):
            for name in os.listdir(base):
                pid = name.split("-", 1)[0]
                if pid.isdigit() and not os.path.exists(f"/proc/{pid}"):
                    with contextlib.suppress(OSError):
                        os.rmdir(os.path.join(base, name))
