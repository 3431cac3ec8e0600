"""Inside a fork of the fork server: a waiting jail, then the program. Nothing returns.

The server forks each jail *before* a program is asked for (a "zygote"), so what does not
depend on the program costs nothing when one is: the child is PID 1 of a fresh PID
namespace; it joins its cgroup, unshares mount, IPC and UTS namespaces, mounts a private
work dir, /tmp and its own /proc on the server's prepared read-only root, pivots into it,
hands the server descriptors of the work dir and /tmp, and waits. When a program comes
(with its stdin, stdout, stderr and peer socket), it writes the program's files, sets
rlimits, drops to the sandbox uid (in user-namespace modes: into a user namespace of its
own) with no capabilities and no_new_privs, installs the seccomp filter last, and execs
(an exec'd program runs under this PID 1 as its init) or runs the Python source. When PID 1
exits, the kernel kills every process left in the namespace.
"""

from __future__ import annotations

import builtins
import contextlib
import fcntl
import io
import os
import resource
import signal
import socket
import stat
import struct
import sys
import traceback
from typing import Any, ClassVar, NoReturn

import _linux as L
import _root

_EXIT_JAIL_FAILED = 125
_DEFAULT_MEMORY = 512 << 20
"""`Limits().memory_bytes`: a waiting jail's IPC limits are set for it ahead of time."""
_REPORT_FD = 1000
"""Where the jail keeps its error channel while it drops (above every descriptor it maps)."""
_HEADER = struct.Struct("!Q")


class Context:
    """What every jail of one server shares (set once by the server, inherited by forks)."""

    userns = False
    """The server lives in a user namespace (rootless and non-root cgroup2 modes)."""
    seccomp: Any = None
    """The filter, ready for prctl (`_linux.SeccompProgram`), or None."""
    warm: ClassVar[dict[str, Any]] = {}
    """Trusted harness source -> its code object, or (namespace, entry) when its
    definitions already ran in the server."""
    prepare: Any = None
    """How the server prepares trusted source (`_server.prepare_code`)."""


def zygote(control: socket.socket, join_fds: list[int]) -> NoReturn:
    """PID 1 of a fresh PID namespace: build the jail, wait for a program, become it."""
    try:
        L.prctl(L.PR_SET_PDEATHSIG, signal.SIGKILL)
        _close_all_but({control.fileno(), _root.Root.template_ns, *join_fds})
        for fd in join_fds:
            os.write(fd, b"0")  # "0" is the writer itself
            os.close(fd)
        _root.enter()
        if Context.userns:
            _cap_ipc(_DEFAULT_MEMORY)
        dirs = [os.open(d, os.O_DIRECTORY | os.O_RDONLY) for d in ("/box", "/tmp")]
        socket.send_fds(control, [b"ready"], dirs)
        for fd in dirs:
            os.close(fd)
        spec, fds = _receive(control)
    except BaseException as exc:  # report, never fall back into the server's loop
        _fail(control, exc)
    try:
        _start(spec, fds, control)
    except BaseException as exc:
        _fail(control, exc)


def _fail(control: socket.socket, exc: BaseException) -> NoReturn:
    with contextlib.suppress(OSError):
        control.sendall(f"jail: {type(exc).__name__}: {exc}".encode())
    os._exit(_EXIT_JAIL_FAILED)


def _receive(control: socket.socket) -> tuple[dict[str, Any], list[int]]:
    """The program's spec and its descriptors (stdin, stdout, stderr[, peer])."""
    import pickle

    head, fds, _, _ = socket.recv_fds(control, _HEADER.size, 8)
    if len(head) < _HEADER.size:
        os._exit(0)  # the server let this jail go unused
    size = _HEADER.unpack(head)[0]
    body = bytearray()
    while len(body) < size:
        chunk = control.recv(min(size - len(body), 1 << 20))
        if not chunk:
            os._exit(0)
        body += chunk
    return pickle.loads(body), fds


def _start(spec: dict[str, Any], fds: list[int], control: socket.socket) -> NoReturn:
    io_fds, peer_fd = (fds[0], fds[1], fds[2]), (fds[3] if len(fds) > 3 else None)
    if spec["limits"]["disk_bytes"] != _root.DEFAULT_DISK:
        for name in ("/box", "/tmp"):
            _root.mount_tmpfs(name, spec["limits"]["disk_bytes"], remount=True)
    if Context.userns and spec["limits"]["memory_bytes"] != _DEFAULT_MEMORY:
        _cap_ipc(spec["limits"]["memory_bytes"])
    _write_files(spec)
    if spec["kind"] == "python":
        code = spec["code"]
        if spec["trusted_code"]:  # prepared by the server before this jail was forked?
            code = Context.warm.get(code) or Context.prepare(code)
        # Warm Python runs as PID 1 itself, saving a fork: Python already ignores SIGXFSZ,
        # and the CPU limit's final SIGKILL reaches an init too.
        _become(spec, io_fds, peer_fd, control, pid1=True)
        _run_python(code)
    # An exec'd program must not be PID 1: the kernel ignores default-action signals
    # sent to an init (SIGXFSZ, a program's own SIGABRT), which would hide how it died.
    pid = os.fork()
    if pid == 0:
        _become(spec, io_fds, peer_fd, control, pid1=False)
        _exec(spec)
    for fd in fds:
        os.close(fd)
    code = os.waitstatus_to_exitcode(_reap_until(pid))
    control.sendall(f"exit:{code}".encode())
    os._exit(0)


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


def _cap_ipc(memory_bytes: int) -> None:
    """SysV and POSIX IPC of this jail's own namespace within its memory limit: in a user
    namespace no cgroup charges those pages, so the namespace's own limits must."""
    pages = max(1, memory_bytes // 4096)
    for name, value in (
        ("kernel/shmmax", memory_bytes),
        ("kernel/shmall", pages),
        ("kernel/shmmni", 64),
        ("kernel/msgmni", 16),
        ("fs/mqueue/queues_max", 8),
    ):
        fd = os.open(f"/proc/sys/{name}", os.O_WRONLY)
        try:
            os.write(fd, str(value).encode())
        finally:
            os.close(fd)


def _write_files(spec: dict[str, Any]) -> None:
    """The program's files (its own) and read-only ones. Read-only files are root's, mode
    0444, in the sticky work dir; in a user namespace, where the program's uid owns every
    file the jail writes, each is also a read-only bind of itself (the program can neither
    unmount nor remove a mount point). Plain descriptors, no file objects: each step of a
    jail copies the pages it touches, and the io stack touches many."""
    uid = spec["uid"]
    for files, owner, mode in ((spec["files"], uid, 0o644), (spec["readonly_files"], 0, 0o444)):
        for name, data in files.items():
            path = "/box/" + name
            if "/" in name:
                os.makedirs(os.path.dirname(path), mode=0o755, exist_ok=True)
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
            try:
                _root.write_all(fd, data)
                if not Context.userns:
                    os.fchown(fd, owner, owner)
                os.fchmod(fd, 0o755 if name in spec["executables"] and owner else mode)
            finally:
                os.close(fd)
            if Context.userns and not owner:
                L.bind_readonly(path, path)


# ----------------------------------------------------------------------------- the drop


def _become(
    spec: dict[str, Any],
    io_fds: tuple[int, int, int],
    peer_fd: int | None,
    control: socket.socket,
    pid1: bool,
) -> None:
    """Std streams, a new session, rlimits, the uid drop, no capabilities, no_new_privs,
    and the seccomp filter last (it would refuse the steps before it). A step that fails
    is reported on `control`, which the program never holds."""
    report = fcntl.fcntl(control.fileno(), fcntl.F_DUPFD_CLOEXEC, _REPORT_FD)
    try:
        for target, fd in enumerate(io_fds):
            os.dup2(fd, target)
            _open_to_the_program(target)
        keep = 3
        if peer_fd is not None:
            os.dup2(peer_fd, 3)
            keep = 4
        os.closerange(keep, report)
        os.closerange(report + 1, 1 << 16)
        os.setsid()
        uid = spec["uid"]
        if Context.userns:
            # First the run's own user namespace, then the rlimits: RLIMIT_NPROC counts in
            # each user namespace up the chain against the limit its creator had, so the
            # server's namespace (holding the server and the other jail) stays unlimited.
            _enter_own_user_namespace(uid)
        _set_rlimits(spec["limits"], pid1)
        if not Context.userns:
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)  # all uids non-zero: the kernel clears every capability
        if Context.userns:  # a uid change to non-root cleared them already otherwise
            L.drop_capabilities()
        L.prctl(L.PR_SET_NO_NEW_PRIVS, 1)
        os.chdir("/box")
        if pid1:  # warm Python reads its environment from os.environ; execve gets spec["env"]
            _replace_environ(spec["env"])
        if Context.seccomp is not None:
            L.seccomp_filter(Context.seccomp)
    except BaseException as exc:
        with contextlib.suppress(OSError):
            os.write(report, f"jail: {type(exc).__name__}: {exc}".encode())
        os._exit(_EXIT_JAIL_FAILED)
    os.close(report)


def _replace_environ(env: dict[str, str]) -> None:
    """`os.environ` (and the C environment under it) becomes `env`. Item by item:
    ``clear()`` and ``update()`` go through the abstract Mapping machinery (a pop per key,
    a KeyError at the end, ABC checks), which cost a jail half a millisecond in the pages
    it copied."""
    environ = os.environ
    for key in [k for k in environ if k not in env]:
        del environ[key]
    for key, value in env.items():
        environ[key] = value


def _open_to_the_program(fd: int) -> None:
    """Let the program reopen its own stdin/stdout pipe by path (``/dev/stdin`` is
    ``/proc/self/fd/0``), which checks the pipe's mode against the dropped uid: the
    server made the pipe, so it is the server's and 0600. Only a pipe: /dev/null is the
    host's device node."""
    if stat.S_ISFIFO(os.fstat(fd).st_mode):
        os.fchmod(fd, 0o666)


def _set_rlimits(limits: dict[str, Any], pid1: bool) -> None:
    cpu = max(1, int(limits["cpu_s"] + 0.999))
    rules = [
        (resource.RLIMIT_CPU, cpu, cpu + 1),
        (resource.RLIMIT_FSIZE, limits["file_bytes"], limits["file_bytes"]),
        (resource.RLIMIT_NOFILE, limits["open_files"], limits["open_files"]),
        (resource.RLIMIT_CORE, 0, 0),
        (resource.RLIMIT_MEMLOCK, 0, 0),
    ]
    if Context.userns:
        # No cgroup here: processes per run (RLIMIT_NPROC counts per user namespace, and
        # each run has its own; an exec'd program's init is not in it), and memory per
        # process at twice the limit, a backstop: the server's watchdog holds the tree to
        # the limit itself, and names it when it stops a run.
        nproc = limits["processes"] - (0 if pid1 else 1)
        data = 2 * limits["memory_bytes"]
        rules += [
            (resource.RLIMIT_DATA, data, data),
            (resource.RLIMIT_NPROC, nproc, nproc),
        ]
    for which, soft, hard in rules:
        ceiling = resource.getrlimit(which)[1]  # a lower limit of the host's stays lower
        if ceiling != resource.RLIM_INFINITY:
            soft, hard = min(soft, ceiling), min(hard, ceiling)
        resource.setrlimit(which, (soft, hard))


def _enter_own_user_namespace(uid: int) -> None:
    """A user namespace of the run's own, where the program is `uid` and which owns none
    of the jail's other namespaces: a capability gained in it reaches nothing."""
    parent_uid, parent_gid = os.geteuid(), os.getegid()
    with contextlib.suppress(OSError):  # root's server maps the sandbox uid: use it
        os.setresgid(uid, uid, uid)
        os.setresuid(uid, uid, uid)
        parent_uid, parent_gid = uid, uid
        L.prctl(L.PR_SET_DUMPABLE, 1)  # a uid change hid /proc/self from us: undo that
    L.unshare(L.CLONE_NEWUSER)
    for name, text in (
        ("setgroups", "deny"),
        ("uid_map", f"{uid} {parent_uid} 1"),
        ("gid_map", f"{uid} {parent_gid} 1"),
    ):
        fd = os.open(f"/proc/self/{name}", os.O_WRONLY)
        try:
            os.write(fd, text.encode())
        finally:
            os.close(fd)


# ----------------------------------------------------------------------------- warm Python


def _run_python(code: Any) -> NoReturn:
    """Run `code` as __main__ in this (warm, pre-imported) interpreter, like `python -c`.
    `code` is source, a code object, or (namespace, entry): a trusted harness whose
    definitions already ran in the server, so only its entry point is called here."""
    sys.stdin = io.TextIOWrapper(io.FileIO(0, "r", closefd=False))
    sys.stdout = io.TextIOWrapper(io.FileIO(1, "w", closefd=False), write_through=True)
    sys.stderr = io.TextIOWrapper(io.FileIO(2, "w", closefd=False), write_through=True)
    sys.argv = ["main.py"]
    sys.path[0:0] = ["/box"]
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    code_status = 0
    try:
        if isinstance(code, tuple):
            namespace, entry = code
            namespace[entry]()
        else:
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


def site_quitters() -> None:
    """`exit()` and `quit()`, as `python main.py` has them: the `site` module defines them,
    and this interpreter started without it. Programs end with them (judges' Python runs
    them), so without these a right answer died of a NameError after printing it. Set
    once in the server, before the forker copies it: every jail inherits them (importing
    `_sitebuiltins` in each jail read it from disk every time)."""
    import _sitebuiltins

    for name in ("exit", "quit"):
        if not hasattr(builtins, name):
            setattr(builtins, name, _sitebuiltins.Quitter(name, "Ctrl-D (i.e. EOF)"))


def _exit_code(value: object) -> int:
    if value is None:
        return 0
    if isinstance(value, int):
        return value & 0xFF
    with contextlib.suppress(BaseException):
        print(value, file=sys.stderr)
    return 1
