"""Inside a fork of the fork server: enter the jail, drop privileges, become the program.

The fork server (root) already lives in its own network, IPC, UTS and mount namespaces,
where it prepared the jail's read-only root once (`prepare_root`). For each run it unshares
a PID namespace and forks: the child is PID 1 there. The child joins the run's cgroup,
unshares a mount namespace, mounts a private tmpfs work dir and /tmp and its own /proc on
the prepared root, pivots into it, and hands the server descriptors of the work dir and
/tmp. Warm Python then becomes the program itself; an exec'd program is forked first. The
program sets rlimits, drops to an unprivileged uid with no capabilities and no_new_privs,
and execs (or runs the Python source it was given). When PID 1 exits, the kernel kills
every process left in the namespace. Nothing here returns: the process ends with
`os._exit` or `execve`.
"""

from __future__ import annotations

import builtins
import contextlib
import io
import os
import resource
import signal
import socket
import sys
import traceback
from typing import Any, NoReturn

import _linux as L

SYSTEM_DIRS = ("/usr", "/etc")
"""Read-only in the jail. /bin, /lib, /lib64, /sbin follow as symlinks or binds."""
_DEVICES = ("null", "zero", "random", "urandom")
_PATH = "/usr/local/bin:/usr/bin:/bin"
_EXIT_JAIL_FAILED = 125


def start(
    spec: dict[str, Any],
    io_fds: tuple[int, int, int],
    status: socket.socket,
    peer_fd: int | None,
    cgroup_procs: list[str],
    root_dir: str,
) -> NoReturn:
    """PID 1 of a fresh PID namespace (the server forked it so): build the jail, send the
    server descriptors of the work dir and /tmp (so it can read files back after the
    namespace is gone), drop privileges and become the program."""
    try:
        L.prctl(L.PR_SET_PDEATHSIG, signal.SIGKILL)
        keep = {*io_fds, status.fileno(), *((peer_fd,) if peer_fd is not None else ())}
        _close_all_but(keep)
        for path in cgroup_procs:
            with open(path, "w") as f:
                f.write("0")  # 0 = the writer itself
        # The server's mount namespace is already private: no propagation to undo here.
        L.unshare(L.CLONE_NEWNS)
        _enter_root(root_dir, spec)
        _write_files(spec)
        dirs = [os.open(d, os.O_DIRECTORY | os.O_RDONLY) for d in ("/box", "/tmp")]
        socket.send_fds(status, [b"ready"], dirs)
        for fd in dirs:
            os.close(fd)
        if spec["kind"] == "python":
            # Warm Python runs as PID 1 itself, saving a fork of the server: Python already
            # ignores SIGXFSZ, and the CPU limit's final SIGKILL reaches an init too.
            status.close()
            _drop(spec, io_fds, peer_fd)
            _run_python(spec["code"])
        # An exec'd program must not be PID 1: the kernel ignores default-action signals
        # sent to an init (SIGXFSZ, a program's own SIGABRT), which would hide how it died.
        pid = os.fork()
        if pid == 0:
            status.close()
            _drop(spec, io_fds, peer_fd)
            _exec(spec)
        else:
            for fd in (*io_fds, *((peer_fd,) if peer_fd is not None else ())):
                os.close(fd)
            code = os.waitstatus_to_exitcode(_reap_until(pid))
            status.sendall(f"exit:{code}".encode())
            os._exit(0)
    except BaseException as exc:  # report, never fall back into the server's loop
        with contextlib.suppress(OSError):
            status.sendall(f"jail: {type(exc).__name__}: {exc}".encode())
        os._exit(_EXIT_JAIL_FAILED)


def _exec(spec: dict[str, Any]) -> NoReturn:
    try:
        os.execve(spec["argv"][0], spec["argv"], spec["env"])
    except OSError as exc:
        os.write(2, f"sandbox: cannot execute {spec['argv'][0]}: {exc}\n".encode())
    os._exit(127)


def _reap_until(pid: int) -> int:
    """Reap orphans (an init's duty) until the program itself ends; its wait status."""
    while True:
        done, status = os.waitpid(-1, 0)
        if done == pid:
            return status


def _close_all_but(keep: set[int]) -> None:
    """Drop every descriptor inherited from the server (other runs' pipes, its own)."""
    low = 3
    for fd in sorted(keep):
        if fd >= low:
            os.closerange(low, fd)
            low = fd + 1
    os.closerange(low, 1 << 16)


def prepare_root(root: str, binds: list[str]) -> None:
    """Once per server, in its private mount namespace: the jail's read-only root (a tmpfs
    of system binds, symlinks, a minimal /dev, empty mount points). Each run then only
    mounts its own work dir, /tmp and /proc on top, so a run costs a few mounts, not dozens."""
    L.mount("tmpfs", root, "tmpfs", L.MS_NOSUID | L.MS_NODEV, "size=1m,mode=0755")
    dirs = [d for d in (*SYSTEM_DIRS, *binds) if os.path.isdir(d)]
    for top in ("/bin", "/lib", "/lib64", "/sbin"):
        if os.path.islink(top):
            os.symlink(os.readlink(top), root + top)
        elif os.path.isdir(top):
            dirs.append(top)
    # A bind under /tmp (a checkout or venv there) would be hidden by each run's private
    # /tmp: those are bound per run, on top of it (see `_enter_root`).
    _BINDS_UNDER_TMP[:] = [d for d in dirs if _under_tmp(d)]
    for path in dirs:
        if not _under_tmp(path):
            _bind(root, path)
    for name in ("box", "tmp", "proc", "dev", ".old"):
        os.mkdir(f"{root}/{name}", 0o755)
    L.mount("tmpfs", f"{root}/dev", "tmpfs", L.MS_NOSUID | L.MS_NOEXEC, "size=64k,mode=0755")
    for dev in _DEVICES:
        open(f"{root}/dev/{dev}", "w").close()
        L.mount(f"/dev/{dev}", f"{root}/dev/{dev}", None, L.MS_BIND)
    os.symlink("/proc/self/fd", f"{root}/dev/fd")
    L.mount("none", root, None, L.MS_REMOUNT | L.MS_BIND | L.MS_RDONLY | L.MS_NOSUID)


_BINDS_UNDER_TMP: list[str] = []
"""This server's binds below /tmp, set once by `prepare_root` (the server's own copy)."""


def _under_tmp(path: str) -> bool:
    return (os.path.realpath(path) + "/").startswith("/tmp/")


def _bind(root: str, path: str) -> None:
    target = root + os.path.realpath(path)
    os.makedirs(target, exist_ok=True)
    L.bind_readonly(path, target)


def _enter_root(root: str, spec: dict[str, Any]) -> None:
    """Per run, in the run's own mount namespace: private tmpfs work dir and /tmp, this PID
    namespace's /proc, any extra binds, then pivot into the root and drop the host's tree."""
    size = spec["limits"]["disk_bytes"]
    for name in ("box", "tmp"):
        L.mount(
            "tmpfs",
            f"{root}/{name}",
            "tmpfs",
            L.MS_NOSUID | L.MS_NODEV,
            f"size={size},mode=1777,nr_inodes=10000",
        )
    L.mount("proc", f"{root}/proc", "proc", L.MS_NOSUID | L.MS_NODEV | L.MS_NOEXEC)
    for path in _BINDS_UNDER_TMP:
        _bind(root, path)
    for path in spec.get("binds", ()):
        if os.path.isdir(path) and not os.path.isdir(root + os.path.realpath(path)):
            raise OSError(
                f"{path} is not bound in this server's jail: use a server whose `binds` include it"
            )
    L.pivot_root(root, f"{root}/.old")
    os.chdir("/")
    L.umount("/.old")


def _write_files(spec: dict[str, Any]) -> None:
    """The program's files (its own, uid-owned) and read-only ones (root's, mode 0444).

    The work dir is sticky (mode 1777), so the program cannot delete or rename a root-owned
    file in it either.
    """
    uid = spec["uid"]
    for files, owner, mode in ((spec["files"], uid, 0o644), (spec["readonly_files"], 0, 0o444)):
        for name, data in files.items():
            path = os.path.join("/box", name)
            os.makedirs(os.path.dirname(path), mode=0o755, exist_ok=True)
            with open(path, "wb") as f:
                f.write(data)
            os.chown(path, owner, owner)
            os.chmod(path, 0o755 if name in spec["executables"] and owner else mode)


def _drop(spec: dict[str, Any], io_fds: tuple[int, int, int], peer_fd: int | None) -> None:
    """Std streams, a new session, rlimits, then the uid drop (which clears capabilities)."""
    for target, fd in enumerate(io_fds):
        os.dup2(fd, target)
    keep = 3
    if peer_fd is not None:
        os.dup2(peer_fd, 3)
        keep = 4
    os.closerange(keep, 1 << 16)
    os.setsid()
    limits = spec["limits"]
    cpu = max(1, int(limits["cpu_s"] + 0.999))
    for which, soft, hard in (
        (resource.RLIMIT_CPU, cpu, cpu + 1),
        (resource.RLIMIT_FSIZE, limits["file_bytes"], limits["file_bytes"]),
        (resource.RLIMIT_NOFILE, limits["open_files"], limits["open_files"]),
        (resource.RLIMIT_CORE, 0, 0),
        (resource.RLIMIT_MEMLOCK, 0, 0),
    ):
        resource.setrlimit(which, (soft, hard))
    uid = spec["uid"]
    os.setgroups([])
    os.setresgid(uid, uid, uid)
    os.setresuid(uid, uid, uid)  # all uids non-zero: the kernel clears every capability
    L.prctl(L.PR_SET_NO_NEW_PRIVS, 1)
    os.chdir("/box")
    os.environ.clear()
    os.environ.update(spec["env"])


def _run_python(code: Any) -> NoReturn:
    """Run `code` as __main__ in this (warm, pre-imported) interpreter, like `python -c`."""
    sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False))
    sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), write_through=True)
    sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), write_through=True)
    sys.argv = ["main.py"]
    sys.path[0:0] = ["/box"]
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    code_status = 0
    try:
        if isinstance(code, str):
            code = compile(code, "main.py", "exec")
        exec(code, {"__name__": "__main__", "__builtins__": builtins})
    except SystemExit as exc:
        code_status = _exit_code(exc.code)
    except BaseException:
        with contextlib.suppress(BaseException):
            traceback.print_exc()
        code_status = 1
    with contextlib.suppress(BaseException):
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(code_status)


def _exit_code(value: object) -> int:
    if value is None:
        return 0
    if isinstance(value, int):
        return value & 0xFF
    with contextlib.suppress(BaseException):
        print(value, file=sys.stderr)
    return 1
