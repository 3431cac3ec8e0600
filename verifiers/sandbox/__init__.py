"""Run untrusted programs in a jail and get back a typed record of what they did.

API (stable; other verifiers build on it)::

    from rewardsmith.verifiers.sandbox import Limits, run, run_python, ForkServer, Program

    r = run(["python3", "main.py"], files={"main.py": b"print(6 * 7)"},
            limits=Limits(wall_s=5, memory_bytes=256 << 20), collect=("out.txt",))
    r.exit_code, r.stdout, r.limit_hit, r.files      # (0, b'42\\n', None, {})

    r = run_python("import sys; print(sys.version_info[0])")   # warm: no interpreter start

    with ForkServer(preload=("bpy",)) as blender:                 # `import bpy` once, here
        r = blender.run_programs([Program(python=script, collect=("out.stl",),
                                          limits=Limits(wall_s=60, memory_bytes=4 << 30))])[0]

- `run(command, *, files, limits, stdin, collect, readonly_files, env, binds, executables)`
  execs a command; `run_python(code, ...)` runs Python source as ``__main__`` in a fork
  of a warm interpreter (the same jail, without an interpreter start). Both return a
  `SandboxResult` and never raise for anything the program does; a jail that cannot start
  comes back with `result.error` set (an infrastructure failure, never the program's).
- `fork_server(preload)` lends this process's pooled warm server (a context manager);
  `ForkServer(preload=(...))` is a warm server whose preloaded modules every child shares;
  `run_programs([a, b])` runs two programs at once, each in its own jail, uid and cgroup,
  joined only by a socket on fd 3 (a trusted judge and an untrusted candidate).
- `Limits`: wall and CPU seconds, memory and process count of the whole tree, file size,
  disk (the size of the work dir and /tmp), open files, output bytes kept, collect bytes.
- `SandboxResult`: `exit_code` or `signal`, `stdout`/`stderr` (capped, with `*_truncated`),
  `wall_s`, `cpu_s`, `peak_memory_bytes`, `limit_hit` (a `LimitHit`), `files` (collected),
  `missing`, `error`. `result.ok` (exit 0, no limit) is never evidence of correctness.

How it works: a small root fork server (a separate process, never the scoring process)
lives in its own empty network namespace and its own IPC, UTS and mount namespaces, where it
prepares the jail's read-only root once. Per program it unshares a PID namespace and forks;
the child joins a cgroup (memory, pids, cpuacct), unshares a mount namespace, mounts a
private work dir, /tmp and /proc, pivots into the root, drops to uid 65534 with no
capabilities and no_new_privs, and execs (an exec'd program runs under a small init) or
runs the Python source. Bubblewrap is not used: the same steps, done directly, cost a fork
and a few mounts per run and allow a pre-imported interpreter that bubblewrap cannot host.

What the jail covers (each line has a test in tests/verifiers/sandbox/):
- No network: a fresh network namespace with no interface up, so neither loopback servers
  of the host nor outside addresses can be reached.
- Files: the root is a fresh tmpfs holding read-only binds of /usr, /etc, /bin, /lib*,
  the Python install and virtualenv, and any `binds` asked for; the work dir (/box) and /tmp
  are private tmpfs mounts of `disk_bytes` each, gone after the run. The project, the dumps
  being scored, other runs' files, home directories and /root are not visible.
- Processes: own PID namespace; when the program exits, or at the wall-clock limit, PID 1
  dies and the kernel kills everything left (daemons, setsid children, zombies). The
  program cannot see or signal the server or other runs.
- Limits: memory and process count for the whole tree by cgroup; CPU time, file size,
  open files by rlimit; output by a cap that kills the tree when passed; disk by tmpfs size.
- Identity: uid/gid 65534 with no supplementary groups, no capabilities, no_new_privs; a
  scrubbed environment (PATH, HOME=/box, TMPDIR, LANG, plus `env`); stdin is /dev/null
  unless given; no core dumps.

What it does not cover: no seccomp filter (every system call the kernel allows an
unprivileged user stays open, so a kernel exploit escapes); /etc and the Python install are
readable (no secrets should live there); programs run by one server share its network, IPC
and UTS namespaces (empty, and runs of a server are sequential except a judge-candidate
pair, so only a pair could meet through SysV IPC or abstract sockets); CPU time is per
process (a many-process program is bounded by the wall clock, not by `cpu_s`); warm Python
runs as its namespace's init, so signals it sends itself with a default action are ignored;
timing side channels and the shared kernel are not isolated; memory counts the work dir's
tmpfs pages. It needs root and cgroup v1 (as on
the project's machines and CI); elsewhere the first run returns a SandboxResult with
`error` set.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager

from rewardsmith.verifiers.sandbox._client import (
    POOL,
    SANDBOX_UID,
    WORK_DIR,
    ForkServer,
    Program,
)
from rewardsmith.verifiers.sandbox.limits import LimitHit, Limits, SandboxResult

__all__ = [
    "SANDBOX_UID",
    "WORK_DIR",
    "ForkServer",
    "LimitHit",
    "Limits",
    "Program",
    "SandboxResult",
    "fork_server",
    "run",
    "run_python",
]


@contextmanager
def fork_server(
    preload: Sequence[str] = (), binds: Sequence[str] = (), python: str | None = None
) -> Iterator[ForkServer]:
    """Borrow this process's warm server for `preload` and `binds` (started on first use,
    kept for the process's life, one per concurrent borrower): the cheap way to run many
    programs. `python`: another interpreter for the server (see `ForkServer`)."""
    with POOL.server(tuple(preload), tuple(binds), python) as server:
        yield server


def run(
    command: Sequence[str],
    *,
    files: Mapping[str, bytes] | None = None,
    limits: Limits | None = None,
    stdin: bytes | None = None,
    collect: Sequence[str] = (),
    readonly_files: Mapping[str, bytes] | None = None,
    env: Mapping[str, str] | None = None,
    binds: Sequence[str] = (),
    executables: Sequence[str] = (),
) -> SandboxResult:
    """Exec `command` in a fresh jail with `files` in its work dir; see the module doc."""
    program = Program(
        executables=tuple(executables),
        command=tuple(command),
        files=dict(files or {}),
        readonly_files=dict(readonly_files or {}),
        stdin=stdin,
        collect=tuple(collect),
        limits=limits or Limits(),
        env=dict(env or {}),
        binds=tuple(binds),
    )
    with POOL.server((), tuple(binds)) as server:
        return server.run_programs([program])[0]


def run_python(
    code: str,
    *,
    files: Mapping[str, bytes] | None = None,
    limits: Limits | None = None,
    stdin: bytes | None = None,
    collect: Sequence[str] = (),
    readonly_files: Mapping[str, bytes] | None = None,
    env: Mapping[str, str] | None = None,
    preload: Sequence[str] = (),
) -> SandboxResult:
    """Run Python source as ``__main__`` in a fork of a warm interpreter that has imported
    `preload`; the same jail as `run`. The per-process pool keeps one server per preload."""
    program = Program(
        python=code,
        files=dict(files or {}),
        readonly_files=dict(readonly_files or {}),
        stdin=stdin,
        collect=tuple(collect),
        limits=limits or Limits(),
        env=dict(env or {}),
    )
    with POOL.server(tuple(preload)) as server:
        return server.run_programs([program])[0]
