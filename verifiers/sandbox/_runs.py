"""The fork server's side of one jail: a waiting jail (`Zygote`) and a program in it (`Run`).

A `Run` hands its zygote the program's spec and pipes, then collects what it does: capped
stdout and stderr, the deadline, the exit status, cgroup counters or (without a cgroup)
the watchdog's samples, and the files to read back. A run that was killed and has nothing
to read back is *settled* at once: the reply does not wait for its processes to finish
dying (the server reaps them after replying).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import pickle
import selectors
import signal
import socket
import stat
import struct
import time
from typing import Any

from _cgroup import RunCgroup
from _forker import Forker

_HEADER = struct.Struct("!Q")
WATCH_INTERVAL_S = 0.01
"""How often the watchdog samples a cgroup-less run's resident memory."""
PIDS_CHECK_S = 0.05
"""How often a run in a cgroup is checked for a fork refused at ``pids.max``: a program
that meets its process limit is stopped then, not left to spin (a fork bomb retrying
forever) until its time runs out. The verdict was a process-limit failure either way."""
_PAGE = os.sysconf("SC_PAGE_SIZE")


class Zygote:
    """A jail forked ahead of time (by the forker), waiting on its control socket."""

    def __init__(self, cgroup: RunCgroup, forker: Forker) -> None:
        self.cgroup, self.forker = cgroup, forker
        self.pid, self.control = forker.fork(cgroup.join_fds())
        self.pidfd = os.pidfd_open(self.pid)
        self.dirs: list[int] = []
        self.error: str | None = None
        self.ended: tuple[int, float, int] | None = None
        """(wait status, CPU seconds, peak RSS) once its PID 1 has been reaped."""

    def wait_ready(self) -> bool:
        """Block until the jail is built (True) or has failed (False, `error` set)."""
        if self.dirs or self.error:
            return not self.error
        try:
            msg, fds, _, _ = socket.recv_fds(self.control, 1 << 12, 4)
        except OSError as exc:
            msg, fds = f"jail: {exc}".encode(), []
        self.dirs = list(fds)
        if msg != b"ready" or len(fds) != 2:
            self.error = msg.decode(errors="replace") or "the jail did not start"
        return not self.error

    def send(self, spec: dict[str, Any], fds: list[int]) -> None:
        body = pickle.dumps(spec, protocol=pickle.HIGHEST_PROTOCOL)
        socket.send_fds(self.control, [_HEADER.pack(len(body))], fds)
        self.control.sendall(body)

    def discard(self) -> None:
        """Kill it and wait for it (an unused or broken jail)."""
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGKILL)
        self.reap()

    def wait(self) -> tuple[int, float, int]:
        """Block until its PID 1 has been reaped: (wait status, CPU seconds, peak RSS)."""
        if self.ended is None:
            self.ended = self.forker.wait(self.pid)
        return self.ended

    def reap(self) -> None:
        """Wait for it, then close what the server held of it."""
        self.wait()
        self.close_fds()

    def close_fds(self) -> None:
        for fd in (*self.dirs, self.pidfd):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self.dirs, self.pidfd = [], -1
        self.control.close()


class Run:
    """One program in flight in its zygote: pipes, buffers, deadline and outcome."""

    def __init__(
        self,
        spec: dict[str, Any],
        zygote: Zygote,
        peer_fd: int | None,
        sel: selectors.BaseSelector,
        watch: bool,
    ) -> None:
        self.spec, self.zygote, self.limits = spec, zygote, spec["limits"]
        self.pid = zygote.pid
        self.out = {"stdout": bytearray(), "stderr": bytearray()}
        self.truncated = {"stdout": False, "stderr": False}
        self.status = bytearray()
        self.exit_code: int | None = None
        self.killed_for: str | None = None
        self.watch = watch
        self.peak_rss = 0
        self.most_tasks = 0
        self.wait_status: int | None = None
        self.rusage: tuple[float, int] | None = None
        self.sel = sel
        self.fds: dict[int, str] = {}
        zygote.cgroup.prepare(
            self.limits["memory_bytes"], self.limits["processes"], self.limits["cpus"]
        )
        stdin = spec.get("stdin")
        in_r = _stdin_file(stdin) if stdin is not None else os.open(os.devnull, os.O_RDONLY)
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        self.start = time.monotonic()
        self.deadline = self.start + self.limits["wall_s"]
        self.next_watch = self.start + (WATCH_INTERVAL_S if watch else PIDS_CHECK_S)
        io_fds = [in_r, out_w, err_w] + ([peer_fd] if peer_fd is not None else [])
        try:
            zygote.send(spec, io_fds)
        except OSError as exc:
            self.status += f"jail: could not hand over the program: {exc}".encode()
        for fd in (in_r, out_w, err_w):
            os.close(fd)
        # Done when the pipes are closed *and* PID 1 has exited: a program that closes its
        # stdout and spins is still running (and still under the deadline).
        for fd, what in ((zygote.pidfd, "exit"), (out_r, "stdout"), (err_r, "stderr")):
            self._register(fd, what)
        self._register(zygote.control.fileno(), "status")

    def _register(self, fd: int, what: str) -> None:
        self.sel.register(fd, selectors.EVENT_READ, (self, what))
        self.fds[fd] = what

    @property
    def open(self) -> bool:
        return bool(self.fds)

    @property
    def settled(self) -> bool:
        """Nothing more to wait for: all closed, or killed with no files to read back."""
        return not self.fds or (self.killed_for is not None and not self.spec["collect"])

    def on_event(self, fd: int, what: str) -> None:
        if what == "status":
            self._read_status(fd)
        elif what == "exit":
            self._unregister(fd, close=False)  # the zygote's pidfd: closed when reaped
        else:
            self._read_output(fd, what)

    def _read_output(self, fd: int, what: str) -> None:
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            self._unregister(fd)
            return
        buf = self.out[what]
        room = self.limits["output_bytes"] - len(buf)
        buf += chunk[: max(0, room)]
        if len(chunk) > room:  # past the cap: keep the head, stop the flood at its source
            self.truncated[what] = True
            self.kill("output")

    def _read_status(self, fd: int) -> None:
        try:
            msg = self.zygote.control.recv(1 << 16)
        except OSError:
            msg = b""
        if msg.startswith(b"exit:"):
            self.exit_code = int(msg[5:])
        elif msg:
            self.status += msg[: 1 << 12]
        else:
            self._unregister(fd, close=False)  # the zygote's socket: closed when reaped

    def _unregister(self, fd: int, close: bool = True) -> None:
        if self.fds.pop(fd, None) is not None:
            self.sel.unregister(fd)
            if close:
                os.close(fd)

    def kill(self, reason: str) -> None:
        if self.killed_for is None:
            self.killed_for = reason
            if self.watch and reason == "wall_time":
                self.sample()  # how many processes were there when time ran out
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGKILL)  # PID 1: the kernel takes the whole namespace

    def check(self) -> None:
        """The periodic look at a live run: the watchdog's sample (no cgroup), or whether
        the cgroup has refused a process (then it is killed: see `PIDS_CHECK_S`)."""
        if self.watch:
            self.sample()
            self.next_watch = time.monotonic() + WATCH_INTERVAL_S
        else:
            with contextlib.suppress(OSError):
                if self.zygote.cgroup.processes_refused():
                    self.kill("processes")
            self.next_watch = time.monotonic() + PIDS_CHECK_S

    def sample(self) -> None:
        """The watchdog (no cgroup): the tree's resident memory and task count, read from
        the run's own /proc; past the memory limit, the run is killed. Resident sizes count
        a page shared by several processes (a fork's copy-on-write pages) in each, so a sum
        past the limit is checked again with proportional sizes (PSS) before a kill."""
        base = f"/proc/{self.pid}/root/proc"
        rss = tasks = 0
        pids = []
        with contextlib.suppress(OSError):
            pids = [name for name in os.listdir(base) if name.isdigit()]
        for pid in pids:
            with contextlib.suppress(OSError, ValueError, IndexError):
                with open(f"{base}/{pid}/stat", "rb") as f:
                    fields = f.read().rsplit(b")", 1)[1].split()
                tasks += int(fields[17])
                rss += int(fields[21]) * _PAGE
        if rss > self.limits["memory_bytes"] and len(pids) > 1:
            rss = sum(_pss(f"{base}/{pid}") for pid in pids)
        self.peak_rss = max(self.peak_rss, rss)
        self.most_tasks = max(self.most_tasks, tasks)
        if rss > self.limits["memory_bytes"]:
            self.kill("memory")

    def settle(self) -> None:
        """Stop listening: keep what the pipes hold now, leave the rest to the reaper."""
        for fd, what in list(self.fds.items()):
            if what in ("stdout", "stderr"):
                os.set_blocking(fd, False)
                with contextlib.suppress(BlockingIOError, OSError):
                    while self.out[what] is not None and fd in self.fds:
                        self._read_output(fd, what)
            if fd in self.fds:
                self._unregister(fd, close=what in ("stdout", "stderr"))

    def finish(self) -> dict[str, Any]:
        wait = not self.killed_for or bool(self.spec["collect"])
        if wait:
            self.wait_status, cpu, rss = self.zygote.wait()
            self.rusage = (cpu, rss)
            if self.exit_code is None and self.spec["kind"] == "python":
                self.exit_code = os.waitstatus_to_exitcode(self.wait_status)
        wall = time.monotonic() - self.start
        stats = self._stats()
        files, missing, disk_full = self._collect()
        jail_error = self.status.decode(errors="replace") or None
        return {
            "exit": None if jail_error else self.exit_code,
            "stdout": bytes(self.out["stdout"]),
            "stderr": bytes(self.out["stderr"]),
            "stdout_truncated": self.truncated["stdout"],
            "stderr_truncated": self.truncated["stderr"],
            "wall_s": wall,
            "cpu_s": stats["cpu_ns"] / 1e9,
            "peak_memory_bytes": stats["peak_memory_bytes"],
            "oom": stats["oom"] or self.killed_for == "memory",
            "pids_max_hit": stats["pids_max_hit"],
            "disk_full": disk_full,
            "killed_for": self.killed_for,
            "files": files,
            "missing": missing,
            "jail_error": jail_error,
        }

    def _stats(self) -> dict[str, Any]:
        if not self.watch:
            return self.zygote.cgroup.stats()
        cpu_s, max_rss = 0.0, 0
        if self.rusage is not None:
            cpu_s, max_rss = self.rusage
        else:  # killed and not yet reaped: its own counters, in clock ticks
            with contextlib.suppress(OSError, ValueError, IndexError):
                with open(f"/proc/{self.pid}/stat", "rb") as f:
                    fields = f.read().rsplit(b")", 1)[1].split()
                cpu_s = sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")
        return {
            "peak_memory_bytes": max(self.peak_rss, max_rss),
            "cpu_ns": int(cpu_s * 1e9),
            "oom": False,
            "pids_max_hit": self.most_tasks >= self.limits["processes"] - 1,
        }

    def _collect(self) -> tuple[dict[str, bytes], list[str], bool]:
        dirs = self.zygote.dirs
        if len(dirs) != 2:
            return {}, list(self.spec["collect"]), False
        files, missing = {}, []
        for name in self.spec["collect"]:
            data = read_beneath(dirs[0], name, self.limits["collect_bytes"])
            if data is None:
                missing.append(name)
            else:
                files[name] = data
        disk_full = any(os.fstatvfs(fd).f_bavail == 0 for fd in dirs)
        return files, missing, disk_full


def _stdin_file(data: bytes) -> int:
    """A sealed in-memory file holding `data`, at offset 0: the program's stdin is a file,
    as a judge gives it, so ``os.fstat(0).st_size`` is the input's size (fast-input idioms
    read exactly that many bytes: from a pipe they read none) and ``/dev/stdin`` reopens it
    from the start. Sealed: the program cannot change or grow it."""
    fd = os.memfd_create("stdin", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]
    seals = fcntl.F_SEAL_SEAL | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_GROW | fcntl.F_SEAL_WRITE
    fcntl.fcntl(fd, fcntl.F_ADD_SEALS, seals)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd


def _pss(proc_dir: str) -> int:
    """A process's proportional resident size in bytes (0 if it is gone)."""
    with contextlib.suppress(OSError, ValueError), open(f"{proc_dir}/smaps_rollup", "rb") as f:
        for line in f:
            if line.startswith(b"Pss:"):
                return int(line.split()[1]) * 1024
    return 0


def read_beneath(dir_fd: int, name: str, cap: int) -> bytes | None:
    """Read a regular file under `dir_fd` without following any symlink (the program could
    have planted one pointing at the host's files); None when absent, odd or too large."""
    parts = name.split("/")
    fds: list[int] = []
    try:
        current = dir_fd
        for part in parts[:-1]:
            current = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=current)
            fds.append(current)
        fd = os.open(parts[-1], os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=current)
        fds.append(fd)
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > cap:
            return None
        return os.read(fd, cap + 1)[:cap] if info.st_size else b""
    except OSError:
        return None
    finally:
        for fd in fds:
            os.close(fd)
