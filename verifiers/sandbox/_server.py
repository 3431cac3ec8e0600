"""The fork server: a small root process that runs jailed programs, one request at a time.

Started by `rewardsmith.verifiers.sandbox` (never imported by the scoring process itself) as
``python -I _server.py REQUEST_FD REPLY_FD NAME PRELOAD...``. It imports the preload
modules once, then for each request forks one jailed launcher per program (see `_jail`),
feeds stdin, reads stdout/stderr with caps, enforces the wall-clock deadline by killing the
run's whole cgroup, and replies with plain dicts. Requests and replies are length-prefixed
pickles on private pipes that no jailed process holds.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import os
import selectors
import signal
import socket
import stat
import sys
import tempfile
import time
from typing import Any

import _jail
from _cgroup import RunCgroup, sweep_stale
from _frames import read_frame, write_frame
from _linux import (
    CLONE_NEWIPC,
    CLONE_NEWNET,
    CLONE_NEWNS,
    CLONE_NEWPID,
    CLONE_NEWUTS,
    MS_PRIVATE,
    MS_REC,
    mount,
    setns,
    umount,
    unshare,
)

_WARM_STDLIB = ("ast", "base64", "json", "math", "traceback")
"""Imported by every server: the harness programs use them, so no child pays for them."""
_COMPILED: dict[str, Any] = {}


def _precompile(spec: dict[str, Any]) -> None:
    """Compile trusted harness source once per server, not once per run. Only source the
    caller marked trusted: compiling hostile text here could stall the server."""
    code = spec.get("code")
    if not spec.get("trusted_code") or code is None:
        return
    if code not in _COMPILED:
        if len(_COMPILED) > 32:
            _COMPILED.clear()
        _COMPILED[code] = compile(code, "main.py", "exec")
    spec["code"] = _COMPILED[code]


class _Run:
    """One jailed program in flight: its pipes, buffers, deadline and outcome."""

    def __init__(
        self,
        spec: dict[str, Any],
        cgroup: RunCgroup,
        server: Server,
        peer_fd: int | None,
        sel: selectors.BaseSelector,
    ) -> None:
        self.spec, self.cgroup, self.limits = spec, cgroup, spec["limits"]
        self.out = {"stdout": bytearray(), "stderr": bytearray()}
        self.truncated = {"stdout": False, "stderr": False}
        self.status = bytearray()
        self.dirs: list[int] = []
        self.exit_code: int | None = None
        self.killed_for: str | None = None
        cgroup.prepare(self.limits["memory_bytes"], self.limits["processes"])
        _precompile(spec)
        stdin = spec.get("stdin")
        in_r, self.in_w = os.pipe() if stdin is not None else (os.open(os.devnull, os.O_RDONLY), -1)
        out_r, out_w = os.pipe()
        err_r, err_w = os.pipe()
        self.status_sock, child_sock = socket.socketpair()
        self.start = time.monotonic()
        unshare(CLONE_NEWPID)  # the next child is PID 1 of a fresh PID namespace
        self.pid = -1
        try:
            self.pid = os.fork()
        finally:
            if self.pid != 0:
                setns(server.own_pid_ns, CLONE_NEWPID)
        if self.pid == 0:
            _jail.start(
                spec, (in_r, out_w, err_w), child_sock, peer_fd, cgroup.join_path(), server.root_dir
            )
        child_sock.close()
        for fd in (in_r, out_w, err_w):
            os.close(fd)
        self.deadline = self.start + self.limits["wall_s"]
        # Done when the pipes are closed *and* PID 1 has exited: a program that closes its
        # stdout and spins is still running (and still under the deadline).
        self.pidfd = os.pidfd_open(self.pid)
        self.open = 4
        sel.register(self.pidfd, selectors.EVENT_READ, (self, "exit"))
        sel.register(out_r, selectors.EVENT_READ, (self, "stdout"))
        sel.register(err_r, selectors.EVENT_READ, (self, "stderr"))
        sel.register(self.status_sock, selectors.EVENT_READ, (self, "status"))
        self.pending = memoryview(stdin or b"")
        if self.in_w >= 0:
            os.set_blocking(self.in_w, False)
            sel.register(self.in_w, selectors.EVENT_WRITE, (self, "stdin"))

    def on_event(self, fd: int, what: str, sel: selectors.BaseSelector) -> None:
        if what == "stdin":
            self._feed(fd, sel)
            return
        if what == "status":
            self._read_status(sel)
            return
        if what == "exit":
            self._closed(fd, sel)
            return
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            self._closed(fd, sel)
            return
        buf = self.out[what]
        room = self.limits["output_bytes"] - len(buf)
        buf += chunk[: max(0, room)]
        if len(chunk) > room:  # past the cap: keep the head, stop the flood at its source
            self.truncated[what] = True
            self.kill("output")

    def _feed(self, fd: int, sel: selectors.BaseSelector) -> None:
        try:
            self.pending = self.pending[os.write(fd, self.pending[: 1 << 16]) :]
        except BlockingIOError:
            return
        except OSError:  # the program closed stdin: the rest is not wanted
            self.pending = memoryview(b"")
        if not self.pending:
            sel.unregister(fd)
            os.close(fd)
            self.in_w = -1

    def _read_status(self, sel: selectors.BaseSelector) -> None:
        try:
            msg, fds, _, _ = socket.recv_fds(self.status_sock, 1 << 16, 4)
        except OSError:
            msg, fds = b"", []
        self.dirs.extend(fds)
        if msg.startswith(b"exit:"):
            self.exit_code = int(msg[5:])
        elif msg and msg != b"ready":
            self.status += msg[: 1 << 12]
        if not msg:
            sel.unregister(self.status_sock)
            self.status_sock.close()
            self.open -= 1

    def _closed(self, fd: int, sel: selectors.BaseSelector) -> None:
        sel.unregister(fd)
        os.close(fd)
        self.open -= 1

    def kill(self, reason: str) -> None:
        if self.killed_for is None:
            self.killed_for = reason
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, signal.SIGKILL)  # PID 1: the kernel takes the whole namespace

    def finish(self, sel: selectors.BaseSelector) -> dict[str, Any]:
        if self.in_w >= 0:
            with contextlib.suppress(KeyError, ValueError):
                sel.unregister(self.in_w)
            os.close(self.in_w)
        _, wait_status = os.waitpid(self.pid, 0)
        if self.exit_code is None and self.spec["kind"] == "python":
            self.exit_code = os.waitstatus_to_exitcode(wait_status)  # the program was PID 1
        wall = time.monotonic() - self.start
        self.cgroup.kill_all()
        stats = self.cgroup.stats()
        files, missing, disk_full = self._collect()
        for fd in self.dirs:
            os.close(fd)
        jail_error = self.status.decode(errors="replace") or None
        if not self.dirs and jail_error is None and self.killed_for is None:
            jail_error = "the jail did not start"
        return {
            "exit": None if jail_error else self.exit_code,
            "stdout": bytes(self.out["stdout"]),
            "stderr": bytes(self.out["stderr"]),
            "stdout_truncated": self.truncated["stdout"],
            "stderr_truncated": self.truncated["stderr"],
            "wall_s": wall,
            "cpu_s": stats["cpu_ns"] / 1e9,
            "peak_memory_bytes": stats["peak_memory_bytes"],
            "oom": stats["oom"],
            "pids_max_hit": stats["pids_max_hit"],
            "disk_full": disk_full,
            "killed_for": self.killed_for,
            "files": files,
            "missing": missing,
            "jail_error": jail_error,
        }

    def _collect(self) -> tuple[dict[str, bytes], list[str], bool]:
        if len(self.dirs) != 2:
            return {}, list(self.spec["collect"]), False
        files, missing = {}, []
        for name in self.spec["collect"]:
            data = read_beneath(self.dirs[0], name, self.limits["collect_bytes"])
            if data is None:
                missing.append(name)
            else:
                files[name] = data
        disk_full = any(os.fstatvfs(fd).f_bavail == 0 for fd in self.dirs)
        return files, missing, disk_full


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


class Server:
    def __init__(self, name: str, binds: list[str]) -> None:
        # Every child inherits these: an empty network namespace, and IPC and UTS namespaces
        # of the server's own (per run they cost more than the rest of the jail together).
        unshare(CLONE_NEWNET | CLONE_NEWIPC | CLONE_NEWUTS)
        unshare(CLONE_NEWNS)  # the prepared jail root lives in the server's own mounts
        mount("none", "/", None, MS_REC | MS_PRIVATE)
        self.own_pid_ns = os.open("/proc/self/ns/pid", os.O_RDONLY)
        self.base = tempfile.mkdtemp(prefix=f"rewardsmith-sandbox-{name}-")
        os.chmod(self.base, 0o700)
        self.root_dir = os.path.join(self.base, "root")
        os.mkdir(self.root_dir)
        _jail.prepare_root(self.root_dir, binds)
        self.cgroups = [RunCgroup(f"{name}-{i}") for i in range(2)]

    def execute(self, specs: list[dict[str, Any]]) -> list[dict[str, Any]]:
        peer_fds: list[int | None] = [None] * len(specs)
        pair = None
        if len(specs) == 2:
            pair = socket.socketpair()
            peer_fds = [pair[0].fileno(), pair[1].fileno()]
        sel = selectors.DefaultSelector()
        runs = []
        for spec, cg, peer in zip(specs, self.cgroups, peer_fds, strict=False):
            runs.append(_Run(spec, cg, self, peer, sel))
        if pair is not None:
            for s in pair:
                s.close()
        self._pump(runs, sel)
        results = [run.finish(sel) for run in runs]
        sel.close()
        return results

    def _pump(self, runs: list[_Run], sel: selectors.BaseSelector) -> None:
        while any(r.open for r in runs):
            now = time.monotonic()
            live = [r for r in runs if r.open]
            for run in live:
                if now >= run.deadline and run.killed_for is None:
                    run.kill("wall_time")
            soonest = min(r.deadline for r in live)
            timeout = max(0.0, soonest - now) if all(r.killed_for is None for r in live) else 0.05
            for key, _ in sel.select(timeout):
                run, what = key.data
                run.on_event(key.fd, what, sel)
            # A pair is a judge and its candidate: once the judge is done, so is the candidate.
            if len(runs) == 2 and not runs[0].open and runs[1].open and not runs[1].killed_for:
                runs[1].kill("peer_done")

    def close(self) -> None:
        for cg in self.cgroups:
            cg.remove()
        # Unmount the prepared root first: never walk into its binds of the host's system.
        with contextlib.suppress(OSError):
            umount(self.root_dir)
        with contextlib.suppress(OSError):
            os.rmdir(self.root_dir)
            os.rmdir(self.base)


def _sweep_stale_dirs() -> None:
    """Remove the (empty) base dirs of servers whose client is gone; rmdir only, never rmtree."""
    tmp = tempfile.gettempdir()
    for name in os.listdir(tmp):
        if not name.startswith("rewardsmith-sandbox-"):
            continue
        pid = name.split("-")[2]
        if pid.isdigit() and not os.path.exists(f"/proc/{pid}"):
            with contextlib.suppress(OSError):
                os.rmdir(os.path.join(tmp, name, "root"))
                os.rmdir(os.path.join(tmp, name))


def main() -> None:
    request_fd, reply_fd, name, *extras = sys.argv[1:]
    binds = [e for e in extras if e.startswith("/")]
    preload = [e for e in extras if not e.startswith("/")]
    # No PR_SET_PDEATHSIG here: it fires when the *thread* that started us exits (a pool
    # thread, say), not the process. The client's death closes the request pipe instead.
    for module in (*_WARM_STDLIB, *preload):
        importlib.import_module(module)
    try:
        sweep_stale()
        _sweep_stale_dirs()
        server = Server(name, binds)
    except Exception as exc:  # say why to the client (no root? no cgroup v1?), then stop
        write_frame(int(reply_fd), {"ready": False, "error": f"{type(exc).__name__}: {exc}"})
        return
    # Children are forks: freezing the heap keeps their garbage collector from walking (and
    # so copying) every page the server owns.
    gc.collect()
    gc.freeze()
    write_frame(int(reply_fd), {"ready": True, "preload": preload})
    try:
        while True:
            request = read_frame(int(request_fd))
            if request is None:
                break
            reply: dict[str, Any]
            try:
                reply = {"results": server.execute(request["specs"])}
            except Exception as exc:
                reply = {"error": f"{type(exc).__name__}: {exc}"}
            write_frame(int(reply_fd), reply)
    finally:
        server.close()


if __name__ == "__main__":
    main()
