"""The few Linux system calls the jail needs that `os` does not wrap (via ctypes).

Only the fork server and its children call these, with privileges (root, or the owner of
a user namespace) that the program itself never gets. Each wrapper raises OSError with
errno on failure, like `os` does. Numbers are x86_64's where they differ by architecture.
"""

from __future__ import annotations

import ctypes
import os

_libc = ctypes.CDLL(None, use_errno=True)

CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000

MS_RDONLY = 0x1
MS_NOSUID = 0x2
MS_NODEV = 0x4
MS_NOEXEC = 0x8
MS_REMOUNT = 0x20
MS_BIND = 0x1000
MS_REC = 0x4000
MS_PRIVATE = 0x40000
MNT_DETACH = 0x2

PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_CAPBSET_DROP = 24
PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
SECCOMP_MODE_FILTER = 2
_SYS_PIVOT_ROOT = 155  # x86_64
_SYS_CAPSET = 126  # x86_64
_LINUX_CAPABILITY_VERSION_3 = 0x20080522


def _check(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def unshare(flags: int) -> None:
    _check(_libc.unshare(ctypes.c_int(flags)), "unshare")


def mount(
    source: str, target: str, fstype: str | None, flags: int, data: str | None = None
) -> None:
    _check(
        _libc.mount(
            source.encode(),
            target.encode(),
            fstype.encode() if fstype else None,
            ctypes.c_ulong(flags),
            data.encode() if data else None,
        ),
        f"mount {target}",
    )


class _MountAttr(ctypes.Structure):
    _fields_ = [(n, ctypes.c_uint64) for n in ("attr_set", "attr_clr", "propagation", "userns")]


_SYS_MOUNT_SETATTR = 442  # x86_64 and every architecture since 5.12
_AT_FDCWD, _AT_RECURSIVE = -100, 0x8000
_MOUNT_ATTR_RDONLY_NOSUID_NODEV = 0x1 | 0x2 | 0x4
# statvfs flags a remount inside a user namespace must keep (the kernel locks them).
_KEPT_FLAGS = {0x2: MS_NOSUID, 0x4: MS_NODEV, 0x8: MS_NOEXEC, 1024: 1024, 2048: 2048, 4096: 1 << 21}


def bind_readonly(source: str, target: str) -> None:
    """A read-only, nosuid, nodev bind mount of `source` and every mount below it.

    mount_setattr (Linux 5.12) does the whole tree at once and keeps the flags a user
    namespace may not change; older kernels get a remount of the top mount, carrying over
    the source's own flags (a user namespace refuses to clear them).
    """
    mount(source, target, None, MS_BIND | MS_REC)
    attr = _MountAttr(_MOUNT_ATTR_RDONLY_NOSUID_NODEV, 0, 0, 0)
    done = _libc.syscall(
        _SYS_MOUNT_SETATTR,
        ctypes.c_int(_AT_FDCWD),
        target.encode(),
        ctypes.c_uint(_AT_RECURSIVE),
        ctypes.byref(attr),
        ctypes.c_size_t(ctypes.sizeof(attr)),
    )
    if done == 0:
        return
    kept = os.statvfs(source).f_flag
    flags = MS_BIND | MS_REMOUNT | MS_RDONLY | MS_NOSUID | MS_NODEV
    for bit, ms_flag in _KEPT_FLAGS.items():
        if kept & bit:
            flags |= ms_flag
    mount("none", target, None, flags)


def umount(target: str, flags: int = MNT_DETACH) -> None:
    _check(_libc.umount2(target.encode(), ctypes.c_int(flags)), f"umount {target}")


def pivot_root(new_root: str, put_old: str) -> None:
    _check(_libc.syscall(_SYS_PIVOT_ROOT, new_root.encode(), put_old.encode()), "pivot_root")


def prctl(option: int, arg: int, arg3: int = 0) -> None:
    _check(
        _libc.prctl(
            ctypes.c_int(option),
            ctypes.c_ulong(arg),
            ctypes.c_ulong(arg3),
            ctypes.c_ulong(0),
            ctypes.c_ulong(0),
        ),
        "prctl",
    )


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


class SeccompProgram:
    """A classic BPF filter (packed `struct sock_filter`s) laid out once for prctl, so that
    installing it in each jail is one call."""

    def __init__(self, program: bytes) -> None:
        self._buf = ctypes.create_string_buffer(program, len(program))
        self.fprog = _SockFprog(len(program) // 8, ctypes.cast(self._buf, ctypes.c_void_p))
        self._args = (
            ctypes.c_int(PR_SET_SECCOMP),
            ctypes.c_ulong(SECCOMP_MODE_FILTER),
            ctypes.byref(self.fprog),
            ctypes.c_ulong(0),
            ctypes.c_ulong(0),
        )


def seccomp_filter(program: SeccompProgram) -> None:
    """Install `program`. Needs no_new_privs (or CAP_SYS_ADMIN); it stays for this process
    and every child."""
    _check(_libc.prctl(*program._args), "seccomp")


def drop_capabilities() -> None:
    """Empty the effective, permitted and inheritable sets (the bounding and ambient sets
    are emptied once per server; see `drop_bounding_set`)."""
    header = (ctypes.c_uint32 * 2)(_LINUX_CAPABILITY_VERSION_3, 0)
    data = (ctypes.c_uint32 * 6)()
    _check(_libc.syscall(_SYS_CAPSET, header, data), "capset")


def drop_bounding_set() -> None:
    """No capability can be gained again by any exec of this process or its children."""
    _check(_libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0), "prctl ambient")
    cap = 0
    while _libc.prctl(PR_CAPBSET_DROP, ctypes.c_ulong(cap), 0, 0, 0) == 0:
        cap += 1  # EINVAL past the kernel's last capability ends the loop
    if ctypes.get_errno() != 22 or cap == 0:
        raise OSError(ctypes.get_errno(), "prctl PR_CAPBSET_DROP failed")


def setns(fd: int, nstype: int) -> None:
    _check(_libc.setns(ctypes.c_int(fd), ctypes.c_int(nstype)), "setns")


def sethostname(name: str) -> None:
    data = name.encode()
    _check(_libc.sethostname(data, ctypes.c_size_t(len(data))), "sethostname")
