"""Starting, talking to and pooling fork servers (the trusted side of the sandbox)."""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from rewardsmith.verifiers.sandbox._frames import read_frame, write_frame
from rewardsmith.verifiers.sandbox.limits import LimitHit, Limits, SandboxResult

SANDBOX_UID = 65534
"""The program's uid (nobody). A second program in the same run gets 65533."""
WORK_DIR = "/box"
"""The program's working directory inside the jail: a private tmpfs."""
DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"
_HERE = os.path.dirname(os.path.abspath(__file__))
_PYTHON_DIRS = tuple(dict.fromkeys((sys.base_prefix, sys.prefix)))
_SYSTEM_PREFIXES = ("/usr/", "/bin/", "/lib/", "/lib64/", "/sbin/", "/etc/")


@dataclass(frozen=True)
class Program:
    """One program to run in a jail: a command to exec, or Python source for a warm server."""

    command: tuple[str, ...] | None = None
    """argv; argv[0] is looked up on PATH (``python``/``python3`` mean this interpreter)."""
    python: str | None = None
    """Python source run as ``__main__`` in a fork of the (pre-imported) server."""
    files: Mapping[str, bytes] = field(default_factory=dict)
    """Files the program owns in its work dir, by relative path."""
    readonly_files: Mapping[str, bytes] = field(default_factory=dict)
    """Files owned by root, mode 0444, in the sticky work dir: the program can read them
    but not change, delete or rename them."""
    stdin: bytes | None = None
    """Bytes on stdin; None means /dev/null."""
    collect: tuple[str, ...] = ()
    """Work-dir files to read back (regular files only, at most `limits.collect_bytes`)."""
    limits: Limits = field(default_factory=Limits)
    env: Mapping[str, str] = field(default_factory=dict)
    """Extra environment variables; the environment is otherwise scrubbed."""
    binds: tuple[str, ...] = ()
    """Extra host directories to show read-only (a toolchain outside /usr, say)."""
    executables: tuple[str, ...] = ()
    """Names in `files` to make executable (mode 0755): a compiled binary, say."""
    trusted_code: bool = False
    """`python` is the caller's own code (a harness), not the model's: the server may
    compile it once and reuse it. Never set it for model-written source."""

    def __post_init__(self) -> None:
        if (self.command is None) == (self.python is None):
            raise ValueError("Program needs exactly one of command= or python=")
        if self.command is not None and not self.command:
            raise ValueError("Program.command is empty")
        for name in (*self.files, *self.readonly_files, *self.collect):
            _check_relative(name)
        if not set(self.executables) <= set(self.files):
            raise ValueError("Program.executables must name files given in `files`")

    def to_spec(self, uid: int) -> dict[str, Any]:
        binds = list(self.binds)
        argv: list[str] | None = None
        if self.command is not None:
            argv = [_resolve(self.command[0]), *self.command[1:]]
            if not argv[0].startswith(_SYSTEM_PREFIXES):
                binds.append(os.path.dirname(os.path.realpath(argv[0])))
        env = {"PATH": DEFAULT_PATH, "HOME": WORK_DIR, "TMPDIR": "/tmp", "LANG": "C.UTF-8"}
        env.update(self.env)
        return {
            "kind": "exec" if argv is not None else "python",
            "argv": argv,
            "code": self.python,
            "files": dict(self.files),
            "readonly_files": dict(self.readonly_files),
            "stdin": self.stdin,
            "collect": list(self.collect),
            "limits": {k: getattr(self.limits, k) for k in self.limits.__dataclass_fields__},
            "env": env,
            "binds": binds,
            "executables": list(self.executables),
            "trusted_code": self.trusted_code,
            "uid": uid,
        }


def _check_relative(name: str) -> None:
    path = PurePosixPath(name)
    if not name or path.is_absolute() or ".." in path.parts or "\0" in name:
        raise ValueError(f"sandbox file names are relative paths inside the work dir: {name!r}")


def _resolve(command: str) -> str:
    if command in ("python", "python3"):
        return sys.executable
    if "/" in command:
        return command
    return shutil.which(command, path=DEFAULT_PATH) or shutil.which(command) or command


class ForkServer:
    """A warm, pre-imported root process that forks one jailed child per program.

    Not picklable and not shared across processes: each process makes its own (the module
    functions keep a per-process pool). Thread-safe: one request at a time.
    """

    def __init__(
        self,
        preload: Sequence[str] = (),
        *,
        binds: Sequence[str] = (),
        name: str | None = None,
        python: str | None = None,
    ) -> None:
        """`preload`: modules imported once in the server; `binds`: host directories shown
        read-only in every jail besides the system ones and the Python install; `python`:
        another interpreter (of the same Python version) to run the server with, e.g. a
        venv's whose packages cannot live beside this one's (its venv must be in `binds`)."""
        self.preload = tuple(preload)
        self.python = python or sys.executable
        self.binds = tuple(dict.fromkeys((*_PYTHON_DIRS, *binds)))
        self._lock = threading.Lock()
        self._name = name or f"{os.getpid()}-{id(self):x}"
        self._proc: subprocess.Popen[bytes] | None = None
        # A server that cannot start (no root, no cgroup v1) is not an exception here: each
        # run then comes back with `error` set, an infrastructure failure a verdict can name.
        with contextlib.suppress(OSError, RuntimeError):
            self._start()

    def _start(self) -> None:
        req_r, self._req_w = os.pipe()
        self._rep_r, rep_w = os.pipe()
        code = f"import sys; sys.path.insert(0, {_HERE!r}); import _server; _server.main()"
        self._proc = subprocess.Popen(
            [
                self.python,
                "-I",
                "-c",
                code,
                str(req_r),
                str(rep_w),
                self._name,
                *self.preload,
                *self.binds,
            ],
            pass_fds=(req_r, rep_w),
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            # Children are forks of the server and inherit its memory, where the initial
            # environment lives: start it with nothing secret in it.
            env={"PATH": DEFAULT_PATH, "LANG": "C.UTF-8"},
        )
        os.close(req_r)
        os.close(rep_w)
        hello = read_frame(self._rep_r)
        if not hello or not hello.get("ready"):
            self.close()
            reason = (hello or {}).get("error", "it exited")
            raise RuntimeError(f"fork server failed to start (preload={self.preload}): {reason}")

    @property
    def alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None

    def run_programs(self, programs: Sequence[Program]) -> list[SandboxResult]:
        """Run one program, or two joined by a socket on fd 3 of each, each in its own jail,
        uid and cgroup. With two, the first is the judge: when it ends, the second is
        killed (its result then has no `limit_hit` and signal SIGKILL). Results in order."""
        if not 1 <= len(programs) <= 2:
            raise ValueError("run_programs takes one or two programs")
        specs = [p.to_spec(SANDBOX_UID - i) for i, p in enumerate(programs)]
        with self._lock:
            try:
                if not self.alive:
                    self._restart()
                write_frame(self._req_w, {"specs": specs})
                reply = read_frame(self._rep_r)
            except (OSError, RuntimeError) as exc:
                reply = {"error": f"fork server unavailable: {exc}"}
            if reply is None:
                reply = {"error": "fork server died"}
        if "error" in reply:
            return [SandboxResult(exit_code=None, error=reply["error"]) for _ in programs]
        return [_to_result(raw, p) for raw, p in zip(reply["results"], programs, strict=True)]

    def _restart(self) -> None:
        self.close()
        self._start()

    def close(self) -> None:
        """Stop the server: closing its request pipe lets it remove its cgroups and exit."""
        proc, self._proc = self._proc, None
        for name in ("_req_w", "_rep_r"):
            fd = getattr(self, name, -1)
            setattr(self, name, -1)  # never close a number twice: it may be reused by then
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        if proc is None:
            return
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

    def __enter__(self) -> ForkServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __reduce__(self) -> Any:
        raise TypeError("a ForkServer is a live process: make one in each worker instead")


def _to_result(raw: dict[str, Any], program: Program) -> SandboxResult:
    code = raw["exit"]
    exit_code, sig = (None, -code) if isinstance(code, int) and code < 0 else (code, None)
    if code is None and raw["jail_error"] is None:
        sig = signal.SIGKILL  # init itself was killed: the wall-clock or output stop
    return SandboxResult(
        exit_code=exit_code,
        signal=sig,
        stdout=raw["stdout"],
        stderr=raw["stderr"],
        stdout_truncated=raw["stdout_truncated"],
        stderr_truncated=raw["stderr_truncated"],
        wall_s=raw["wall_s"],
        cpu_s=raw["cpu_s"],
        peak_memory_bytes=raw["peak_memory_bytes"],
        limit_hit=_limit_hit(raw, sig, program.limits),
        files=raw["files"],
        missing=tuple(raw["missing"]),
        error=raw["jail_error"],
    )


def _limit_hit(raw: dict[str, Any], sig: int | None, limits: Limits) -> LimitHit | None:
    # The cause before the symptom: a fork bomb that then spins until the wall clock is a
    # process-limit failure; a memory bomb killed by the OOM killer is a memory failure.
    if raw["killed_for"] == "output":
        return LimitHit.OUTPUT
    if raw["oom"]:
        return LimitHit.MEMORY
    if raw["pids_max_hit"]:
        return LimitHit.PROCESSES
    if raw["killed_for"] == "wall_time":
        return LimitHit.WALL_TIME
    if sig == signal.SIGXCPU or (sig == signal.SIGKILL and raw["cpu_s"] >= limits.cpu_s):
        return LimitHit.CPU_TIME
    if sig == signal.SIGXFSZ:
        return LimitHit.FILE_SIZE
    if raw["disk_full"]:
        return LimitHit.DISK
    return None


class _Pool:
    """Per-process fork servers by preload list; a thread takes an idle one or starts one."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._idle: dict[tuple[Any, ...], list[ForkServer]] = {}
        self._pid = os.getpid()
        atexit.register(self.close)

    @contextlib.contextmanager
    def server(
        self, preload: tuple[str, ...] = (), binds: tuple[str, ...] = (), python: str | None = None
    ) -> Iterator[ForkServer]:
        key = (preload, binds, python)
        with self._lock:
            if self._pid != os.getpid():  # forked: the parent's servers are not ours
                self._idle, self._pid = {}, os.getpid()
            idle = self._idle.setdefault(key, [])
            server = idle.pop() if idle else None
        if server is None:
            server = ForkServer(preload, binds=binds, python=python)
        try:
            yield server
        finally:
            with self._lock:
                self._idle.setdefault(key, []).append(server)

    def close(self) -> None:
        with self._lock:
            servers = [s for group in self._idle.values() for s in group]
            self._idle = {}
        if self._pid == os.getpid():
            for server in servers:
                server.close()


POOL = _Pool()
