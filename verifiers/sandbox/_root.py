"""The jail's file system: a read-only root prepared once per server, copied by each jail.

`prepare_root` builds it in the server's private mount namespace (a tmpfs of read-only
binds of the system folders, the Python install and any asked-for folders, a minimal
/dev, empty mount points); `make_template` makes a mount namespace whose "/" is that root
and holds nothing else; each jail then `enter`s a copy of it and mounts its own work dir,
/tmp and /proc. A folder reached through a symbolic link (a venv behind a link) is bound at
its real path and the link is recreated, so both paths work inside.
"""

from __future__ import annotations

import os
import traceback
from collections.abc import Sequence

import _linux as L

SYSTEM_DIRS = ("/usr", "/etc")
"""Read-only in the jail. /bin, /lib, /lib64, /sbin follow as symlinks or binds."""
DEFAULT_DISK = 128 << 20
"""Size of a waiting jail's work dir and /tmp; a program asking for another is remounted."""
_DEVICES = ("null", "zero", "random", "urandom")
_STREAMS = ("stdin", "stdout", "stderr")
"""Links to the program's own descriptors 0, 1 and 2 (JavaScript's
``readFileSync("/dev/stdin")``, Python's ``open("/dev/stdin")``)."""


class Root:
    """This server's prepared root (set once by `prepare_root`; forks inherit it)."""

    root_dir = ""
    template_ns = -1
    """A mount namespace whose root is the prepared jail root (see `make_template`)."""
    binds_under_tmp: tuple[str, ...] = ()
    links_under_tmp: tuple[tuple[str, str], ...] = ()
    hidden_under_tmp: tuple[str, ...] = ()


def prepare_root(root: str, binds: list[str], hide: Sequence[str] = ()) -> None:
    """Once per server, in its private mount namespace: the jail's read-only root (a tmpfs
    of system binds, symlinks, a minimal /dev, empty mount points). Each jail then only
    mounts its own work dir, /tmp and /proc on top, so a run costs a few mounts, not dozens.
    A bind reached through a symbolic link (a venv behind a link) is shown at its real path
    with the link recreated, so both paths work inside. Each folder of `hide` found inside
    a bind (the installed rewardsmith package: its bundled tasks hold the references) is
    covered by an empty read-only tmpfs, so no program reads it in any install."""
    L.mount("tmpfs", root, "tmpfs", L.MS_NOSUID | L.MS_NODEV, "size=1m,mode=0755")
    dirs = [d for d in (*SYSTEM_DIRS, *binds) if os.path.isdir(d)]
    for top in ("/bin", "/lib", "/lib64", "/sbin"):
        if os.path.islink(top):
            os.symlink(os.readlink(top), root + top)
        elif os.path.isdir(top):
            dirs.append(top)
    links = [link for d in dirs for link in link_chain(d)]
    # Anything under /tmp would be hidden by each jail's private /tmp: those are bound and
    # linked per jail, on top of it (see `_enter_root`).
    Root.binds_under_tmp = tuple(d for d in dirs if _under_tmp(os.path.realpath(d)))
    Root.links_under_tmp = tuple(lk for lk in links if _under_tmp(lk[0]))
    for path in dirs:
        if not _under_tmp(os.path.realpath(path)):
            _bind(root, path)
    for link, target in links:
        if not _under_tmp(link):
            _make_link(root, link, target)
    for name in ("box", "tmp", "proc", "dev", ".old", ".tmp-binds"):
        os.makedirs(f"{root}/{name}", 0o755, exist_ok=True)
    # Staged here, while the root is still writable (its mount points cannot be made after
    # the read-only remount below); each jail binds them again under its private /tmp.
    for i, path in enumerate(Root.binds_under_tmp):
        os.makedirs(f"{root}/.tmp-binds/{i}")
        L.bind_readonly(path, f"{root}/.tmp-binds/{i}")
    _hide(root, dirs, hide)
    L.mount("tmpfs", f"{root}/dev", "tmpfs", L.MS_NOSUID | L.MS_NOEXEC, "size=64k,mode=0755")
    for dev in _DEVICES:
        open(f"{root}/dev/{dev}", "w").close()
        L.mount(f"/dev/{dev}", f"{root}/dev/{dev}", None, L.MS_BIND)
    os.symlink("/proc/self/fd", f"{root}/dev/fd")
    for number, stream in enumerate(_STREAMS):  # `open("/dev/stdin")`, as on any Linux
        os.symlink(f"/proc/self/fd/{number}", f"{root}/dev/{stream}")
    L.mount("none", root, None, L.MS_REMOUNT | L.MS_BIND | L.MS_RDONLY | L.MS_NOSUID)


def link_chain(path: str, depth: int = 0) -> list[tuple[str, str]]:
    """Every symbolic link met while resolving `path`, as (link, target) pairs."""
    if depth > 40:
        return []
    out: list[tuple[str, str]] = []
    current = "/"
    for part in [p for p in os.path.abspath(path).split("/") if p]:
        candidate = os.path.join(current, part)
        if os.path.islink(candidate):
            target = os.readlink(candidate)
            out.append((candidate, target))
            out += link_chain(os.path.join(current, target), depth + 1)
            current = os.path.realpath(candidate)
        else:
            current = candidate
    return out


def _hide(root: str, dirs: Sequence[str], hide: Sequence[str]) -> None:
    """Cover each folder of `hide` that a bind shows (where it shows it: at its real path,
    or in the staged copy of a bind under /tmp, which `enter` binds recursively)."""
    bound = [os.path.realpath(d) for d in dirs]
    staged = {os.path.realpath(p): i for i, p in enumerate(Root.binds_under_tmp)}
    under_tmp = []
    for folder in dict.fromkeys(os.path.realpath(h) for h in hide):
        top = next((b for b in bound if (folder + "/").startswith(b + "/")), None)
        if top is None or not os.path.isdir(folder):
            continue
        if top in staged:
            where = f"{root}/.tmp-binds/{staged[top]}{folder[len(top) :]}"
            under_tmp.append(folder)
        else:
            where = root + folder
        _cover(where)
    Root.hidden_under_tmp = tuple(under_tmp)


def _cover(path: str) -> None:
    L.mount("tmpfs", path, "tmpfs", L.MS_NOSUID | L.MS_NODEV | L.MS_RDONLY, "size=4k,mode=0555")


def _under_tmp(path: str) -> bool:
    return (path + "/").startswith("/tmp/")


def _bind(root: str, path: str) -> None:
    target = root + os.path.realpath(path)
    os.makedirs(target, exist_ok=True)
    L.bind_readonly(path, target)


def _make_link(root: str, link: str, target: str) -> None:
    where = root + link
    if os.path.lexists(where):
        return
    os.makedirs(os.path.dirname(where), exist_ok=True)
    os.symlink(target, where)


def mount_tmpfs(path: str, size: int, remount: bool = False) -> None:
    flags = L.MS_NOSUID | L.MS_NODEV | (L.MS_REMOUNT if remount else 0)
    L.mount("tmpfs", path, "tmpfs", flags, f"size={size},mode=1777,nr_inodes=10000")


def make_template(root: str) -> int:
    """A mount namespace holding only the prepared root (as its "/"), for jails to copy:
    made once per server, so a jail neither copies the host's mount table nor pivots out
    of it (pivot_root walks every process on the machine). A descriptor of it."""
    ready_r, ready_w = os.pipe()
    done_r, done_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(ready_r)
        os.close(done_w)
        try:
            _template_child(root)
            os.write(ready_w, b"x")
            os.read(done_r, 1)  # held until the server has a descriptor of the namespace
        except BaseException:  # the server raises it: doctor and every verdict show why
            write_all(ready_w, traceback.format_exc().encode(errors="replace"))
        finally:
            os._exit(0)
    os.close(ready_w)
    os.close(done_r)
    try:
        report = _read_all(ready_r)
        if report != b"x":
            why = report.decode(errors="replace").strip() or "it ended without a word"
            raise OSError(f"the jail's mount namespace could not be made (in its child):\n{why}")
        return os.open(f"/proc/{pid}/ns/mnt", os.O_RDONLY)
    finally:
        os.close(ready_r)
        os.close(done_w)
        os.waitpid(pid, 0)


def _template_child(root: str) -> None:
    L.unshare(L.CLONE_NEWNS)
    L.pivot_root(root, f"{root}/.old")
    os.chdir("/")
    # In a user namespace the kernel mounts a new /proc only where one is already
    # fully visible: the server's own, which each jail then covers with its own.
    L.mount("proc", "/proc", "proc", L.MS_NOSUID | L.MS_NODEV | L.MS_NOEXEC)
    L.umount("/.old")


def write_all(fd: int, data: bytes) -> None:
    while data:
        data = data[os.write(fd, data) :]


def _read_all(fd: int) -> bytes:
    """Up to the first byte: b"x" (ready, the writer stays to hold the namespace), or the
    whole of an error report (the writer then exits and closes its end)."""
    first = os.read(fd, 1)
    if first == b"x" or not first:
        return first
    chunks = [first]
    while chunk := os.read(fd, 65536):
        chunks.append(chunk)
    return b"".join(chunks)


def enter() -> None:
    """A copy of the template mount namespace, with private tmpfs work dir and /tmp, this
    PID namespace's /proc, and the binds and links under /tmp; nothing of the host's tree."""
    L.setns(Root.template_ns, L.CLONE_NEWNS)  # root and cwd become the jail root
    os.close(Root.template_ns)
    L.unshare(L.CLONE_NEWNS | L.CLONE_NEWIPC | L.CLONE_NEWUTS)
    for name in ("/box", "/tmp"):
        mount_tmpfs(name, DEFAULT_DISK)
    L.mount("proc", "/proc", "proc", L.MS_NOSUID | L.MS_NODEV | L.MS_NOEXEC)
    for i, path in enumerate(Root.binds_under_tmp):
        target = os.path.realpath(path)
        os.makedirs(target, exist_ok=True)
        L.bind_readonly(f"/.tmp-binds/{i}", target)
    for link, target in Root.links_under_tmp:
        _make_link("", link, target)
    os.chdir("/")
