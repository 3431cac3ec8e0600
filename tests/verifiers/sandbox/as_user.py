"""Run a command as an unprivileged user who can reach the Python install (used as root).

``python as_user.py USER -- COMMAND...``: in a private mount namespace, /root (mode 700 on
the project's machines, where the Python install and rustup live) is covered by an empty
tmpfs holding read-only binds of just the paths under it the command needs (the Python
install, rustup's homes, the checkout and the shared test data when they are there); then
the process drops to USER (a name or a numeric uid) and execs COMMAND. Nothing outside this
namespace changes, and nothing else of root's becomes readable.
"""

from __future__ import annotations

import os
import pwd
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO / "verifiers" / "sandbox"))
import _linux as L  # noqa: E402  (the sandbox's own syscall wrappers)


def user_ids(user: str) -> tuple[int, int]:
    if user.isdigit():
        return int(user), int(user)
    entry = pwd.getpwnam(user)
    return entry.pw_uid, entry.pw_gid


def needed_paths() -> list[str]:
    """What the tests read that may live under /root."""
    paths = [sys.base_prefix, sys.prefix, str(REPO), str(REPO.parent / "shared")]
    for home in (".cargo", ".rustup"):
        paths.append(os.path.join(os.path.expanduser("~"), home))
    return [os.path.realpath(p) for p in paths if os.path.exists(p)]


def expose_root(paths: list[str]) -> None:
    """Cover /root with a tmpfs holding read-only binds of `paths` that are below it."""
    below = sorted({p for p in paths if p.startswith("/root/")})
    keep = tempfile.mkdtemp(prefix="rewardsmith-as-user-")
    L.mount("/root", keep, None, L.MS_BIND)
    L.mount("tmpfs", "/root", "tmpfs", L.MS_NOSUID | L.MS_NODEV, "size=1m,mode=0755")
    for path in below:
        target = Path(path)
        target.mkdir(parents=True, exist_ok=True)
        L.bind_readonly(keep + path[len("/root") :], path)
    L.umount(keep)
    os.rmdir(keep)


def main(argv: list[str]) -> None:
    user, sep, *command = argv
    if sep != "--" or not command:
        raise SystemExit("usage: as_user.py USER -- COMMAND...")
    uid, gid = user_ids(user)
    L.unshare(L.CLONE_NEWNS)
    L.mount("none", "/", None, L.MS_REC | L.MS_PRIVATE)
    expose_root(needed_paths())
    home = tempfile.mkdtemp(prefix="rewardsmith-home-")
    os.chown(home, uid, gid)
    os.setgroups([])
    os.setresgid(gid, gid, gid)
    os.setresuid(uid, uid, uid)
    env = {**os.environ, "HOME": home, "USER": user, "PYTHONDONTWRITEBYTECODE": "1"}
    os.execvpe(command[0], command, env)


if __name__ == "__main__":
    main(sys.argv[1:])
