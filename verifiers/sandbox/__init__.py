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
  `ForkServer(preload=(...), mode=None)` is a warm server whose preloaded modules every
  child shares (`mode` forces a sandbox mode; by default the machine's);
  `run_programs([a, b])` runs two programs at once, each in its own jail, uid and cgroup,
  joined only by a socket on fd 3 (a trusted judge and an untrusted candidate).
- `Limits`: wall and CPU seconds, memory and process count of the whole tree, file size,
  disk (the size of the work dir and /tmp), open files, output bytes kept, collect bytes,
  cores (cgroup2's cpu.max).
- `SandboxResult`: `exit_code` or `signal`, `stdout`/`stderr` (capped, with `*_truncated`),
  `wall_s`, `cpu_s`, `peak_memory_bytes`, `limit_hit` (a `LimitHit`), `files` (collected),
  `missing`, `error`, `mode`. `result.ok` (exit 0, no limit) is never evidence of
  correctness.

Modes (see `rewardsmith.verifiers.sandbox.modes`; ``rewardsmith doctor`` says which one a
machine gets, and every `SandboxResult` has it in `mode`): ``privileged`` (root with cgroup
v1), ``cgroup2`` (cgroup v2; a delegated scope when not root; untested on a real v2 host)
and ``rootless`` (user namespaces, rlimits and the server's watchdog).

How it works: a small fork server (a separate process, never the scoring process) leaves
the host's network, IPC, UTS, mount and PID namespaces (and, in rootless mode, its user
namespace) and becomes PID 1 of its own PID namespace, so its death takes every jail
with it. It prepares the jail's read-only root once, as a mount namespace of its own, and
keeps a waiting jail per slot, forked (by a quiet copy of the server, so the busy server's
pages are never shared with a child) before any program is asked for: PID 1 of a fresh
PID namespace, in its cgroup, with fresh mount, IPC and UTS namespaces copied from the
root's, a private work dir, /tmp and /proc. A program then only costs writing its files,
the drop (to uid 65534 with no capabilities and no_new_privs; in rootless mode into a user
namespace of the run's own) and the seccomp filter, installed last; then it execs (under a
small init) or runs the Python source. Bubblewrap is not used: the same steps, done
directly, allow a pre-imported interpreter that bubblewrap cannot host.

What the jail covers, in every mode (each line has a test in tests/verifiers/sandbox/):
- No network: a fresh network namespace with no interface up, so neither loopback servers
  of the host nor outside addresses can be reached.
- Files: the root holds read-only binds of /usr, /etc, /bin, /lib*, the Python install and
  virtualenv (at their real paths, with any symbolic link leading to them recreated), and
  any `binds` asked for; the work dir (/box) and /tmp are private tmpfs mounts of
  `disk_bytes` each, gone after the run. The project, the dumps being scored, other runs'
  files, home directories and /root are not visible.
- Processes: own PID namespace; when the program exits, or at the wall-clock limit, PID 1
  dies and the kernel kills everything left (daemons, setsid children, zombies). The
  program cannot see or signal the server or other runs.
- IPC and host name: own IPC namespace per run (SysV shared memory, semaphores and
  message queues, POSIX message queues written by one run are gone in the next, and a
  judge and its candidate do not share them) and own UTS namespace (host name
  ``rewardsmith-sandbox``, not the machine's).
- System calls: a seccomp filter kills the program (SIGSYS; `SandboxResult.describe` says
  so) at any call no test program needs: ptrace and other processes' memory, mount and
  the new mount API, pivot_root, chroot, setns, unshare and clone with namespace flags,
  bpf, perf_event_open, userfaultfd, keyrings, kexec and modules, raw and packet sockets,
  personality changes, TIOCSTI, file handles, clock changes, reboot and swap, and every
  call of a foreign architecture or the x32 ABI; clone3 and io_uring answer ENOSYS
  (libraries fall back). The full list with reasons: `_seccomp.DENIED`, docs/code.md.
- Limits: CPU time, file size, open files by rlimit; output by a cap that kills the tree
  when passed; disk by tmpfs size; memory and process count of the whole tree by cgroup
  (privileged, cgroup2) or by per-run rlimits and the watchdog (rootless).
- Identity: uid/gid 65534 with no supplementary groups, no capabilities, no_new_privs; a
  scrubbed environment (PATH, HOME=/box, TMPDIR, LANG, plus `env`); stdin is /dev/null
  unless given; no core dumps.

What it does not cover, in every mode: /etc and the Python install are readable (no
secrets should live there); the two programs of a judge-candidate pair share the server's
(empty) network namespace, so they could meet through an abstract Unix socket (the judge
never listens); CPU time is per process (a many-process program is bounded by the wall
clock, not by `cpu_s`); warm Python runs as its namespace's init, so signals it sends
itself with a default action are ignored; timing side channels and the shared kernel are
not isolated (the seccomp filter narrows the kernel's surface, it does not remove it);
memory counts the work dir's tmpfs pages; there is a seccomp table for x86_64 only (on
another architecture the jail runs without the filter, and ``rewardsmith doctor`` says
so). What a mode leaves open beyond that is `modes.NOT_COVERED`. A machine where no mode
works gets a SandboxResult with `error` set on the first run, never an exception.
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
from rewardsmith.verifiers.sandbox.modes import Mode

__all__ = [
    "SANDBOX_UID",
    "WORK_DIR",
    "ForkServer",
    "LimitHit",
    "Limits",
    "Mode",
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
