"""How the sandbox gets its isolation on this machine: three modes, chosen at start.

Every mode gives the same jail (fresh PID, mount, IPC and UTS namespaces per run, no
network, a read-only system view, private work dir and /tmp, the seccomp filter, no
capabilities, no_new_privs, a scrubbed environment); they differ in how the jail is made
and how the run's resources are bounded:

- ``privileged``: root with cgroup v1 (memory, pids, cpuacct), as on the project's machines
  and CI. Memory and processes are bounded for the whole tree by the kernel.
- ``cgroup2``: cgroup v2 (memory.max, pids.max, cpu.max, memory.peak). As root, a subtree of
  its own under the v2 mount; not root, the fork server is started in a delegated scope
  (``systemd-run --user --scope -p Delegate=yes``) and uses a subtree of it, with user
  namespaces for the jail. **Untested on a real cgroup v2 host**: the project's machines
  have no v2 controllers, so its logic is tested against a fake cgroup tree only.
- ``rootless``: no root and no usable cgroup, only unprivileged user namespaces (one for
  the server, one more per run). Limits are rlimits per process, a per-run count of
  processes (RLIMIT_NPROC counts per user namespace) and the server's watchdog: the wall
  clock for the whole tree (the PID namespace dies with its init) and a poll of the tree's
  resident memory.

What each mode does not cover is in `NOT_COVERED`, beside the mode. The mode is chosen by
`select_mode` (``REWARDSMITH_SANDBOX_MODE`` overrides it), is in every `SandboxResult` and
in each sandboxed verdict's evidence; ``rewardsmith doctor`` shows what this machine
offers and which mode it gets.
"""

from __future__ import annotations

import contextlib
import os
import platform
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from enum import StrEnum

__all__ = [
    "ENV_CGROUP",
    "ENV_MODE",
    "NOT_COVERED",
    "Host",
    "Mode",
    "probe",
    "select_mode",
]

ENV_MODE = "REWARDSMITH_SANDBOX_MODE"
"""``privileged``, ``cgroup2`` or ``rootless`` forces a mode; unset or ``auto`` chooses."""
ENV_CGROUP = "REWARDSMITH_SANDBOX_CGROUP"
"""cgroup v2 as root: the directory to make run cgroups in (default: a ``rewardsmith-sandbox``
folder at the top of the v2 mount)."""
V1_CONTROLLERS = ("memory", "pids", "cpuacct")
V2_CONTROLLERS = ("memory", "pids")


class Mode(StrEnum):
    PRIVILEGED = "privileged"
    CGROUP2 = "cgroup2"
    ROOTLESS = "rootless"


NOT_COVERED: dict[Mode, tuple[str, ...]] = {
    Mode.PRIVILEGED: (
        "CPU time is per process (a many-process program is bounded by the wall clock)",
        "needs root and cgroup v1",
    ),
    Mode.CGROUP2: (
        "untested on a real cgroup v2 host (tested against a fake cgroup tree)",
        "not root: needs systemd-run --user and a user manager that delegates controllers",
        "CPU time is per process besides cpu.max's share",
    ),
    Mode.ROOTLESS: (
        "memory is bounded per process (RLIMIT_DATA) and for the tree by a watchdog that "
        "polls resident memory every few milliseconds: a fast allocation can overshoot by "
        "what it touches in one interval; shared pages count once per process",
        "peak memory is the watchdog's largest sample (0 for a run shorter than one poll)",
        "the process count is per run but includes threads and is enforced at fork",
        "judge and candidate of a pair share one host uid (they are in separate user, PID "
        "and mount namespaces)",
        "memfd_create answers ENOSYS and SysV shared memory is capped at the run's memory "
        "limit, as their pages would escape the per-process limit",
    ),
}
"""What a mode leaves open, beyond what every mode leaves open (see the package doc)."""


@dataclass(frozen=True)
class Host:
    """What this machine offers the sandbox (each field measured by `probe`)."""

    root: bool
    arch: str
    cgroup_v1: dict[str, str] = field(default_factory=dict)
    """v1 controller -> its mount point."""
    cgroup_v2: str | None = None
    """The v2 mount point, if v2 is mounted."""
    cgroup_v2_controllers: tuple[str, ...] = ()
    """Controllers available at the top of the v2 mount (or in this process's own v2
    cgroup when not root)."""
    user_namespaces: bool | None = None
    """Whether this user can create a user namespace (None: not checked)."""
    user_namespaces_error: str = ""
    systemd_run: bool = False
    """``systemd-run`` and a user manager's bus are there (for a delegated v2 scope)."""


def _mounts() -> list[tuple[str, str, str]]:
    """(mount point, fstype, options) of every mount this process sees."""
    out = []
    with contextlib.suppress(OSError), open("/proc/self/mounts") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 4:
                out.append((parts[1], parts[2], parts[3]))
    return out


def _own_v2_cgroup() -> str | None:
    with contextlib.suppress(OSError), open("/proc/self/cgroup") as f:
        for line in f:
            if line.startswith("0::"):
                return line[3:].strip()
    return None


def _read_words(path: str) -> tuple[str, ...]:
    try:
        with open(path) as f:
            return tuple(f.read().split())
    except OSError:
        return ()


def user_namespace_check() -> tuple[bool, str]:
    """Can this user make a user namespace? Tried in a fresh interpreter (never in this
    process, which may have threads)."""
    code = (
        "import ctypes, os, sys\n"
        "libc = ctypes.CDLL(None, use_errno=True)\n"
        "if libc.unshare(0x10000000) != 0:\n"
        "    sys.exit(os.strerror(ctypes.get_errno()))\n"
    )
    try:
        done = subprocess.run(
            [sys.executable, "-I", "-S", "-c", code], capture_output=True, text=True, timeout=20
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return False, str(exc)
    return done.returncode == 0, done.stderr.strip()


def probe(check_user_namespaces: bool = False) -> Host:
    """What this machine offers; `check_user_namespaces` also tries one (about 20 ms)."""
    v1: dict[str, str] = {}
    v2 = None
    for point, fstype, options in _mounts():
        if fstype == "cgroup":
            for controller in V1_CONTROLLERS:
                if controller in options.split(","):
                    v1.setdefault(controller, point)
        elif fstype == "cgroup2" and v2 is None:
            v2 = point
    root = os.geteuid() == 0
    controllers: tuple[str, ...] = ()
    if v2 is not None:
        own = "" if root else (_own_v2_cgroup() or "")
        controllers = _read_words(os.path.join(v2 + own, "cgroup.controllers"))
    userns, error = user_namespace_check() if check_user_namespaces else (None, "")
    bus = os.environ.get("DBUS_SESSION_BUS_ADDRESS") or os.path.exists(
        f"/run/user/{os.getuid()}/bus"
    )
    return Host(
        root=root,
        arch=platform.machine(),
        cgroup_v1=v1,
        cgroup_v2=v2,
        cgroup_v2_controllers=controllers,
        user_namespaces=userns,
        user_namespaces_error=error,
        systemd_run=bool(shutil.which("systemd-run") and bus),
    )


def _v1_ready(host: Host) -> bool:
    return host.root and all(c in host.cgroup_v1 for c in V1_CONTROLLERS)


def _v2_ready(host: Host) -> bool:
    return host.cgroup_v2 is not None and all(
        c in host.cgroup_v2_controllers for c in V2_CONTROLLERS
    )


def select_mode(host: Host, requested: str | None = None) -> tuple[Mode | None, str]:
    """The mode to use here and why; (None, reason) when none can work.

    `requested` (default: ``$REWARDSMITH_SANDBOX_MODE``) forces one; otherwise root with
    cgroup v1 is privileged, root with a v2 mount that offers memory and pids is cgroup2,
    and everything else is rootless (user namespaces, checked when the server starts).
    A non-root cgroup2 is only used when asked for: it needs a delegated scope.
    """
    requested = (requested if requested is not None else os.environ.get(ENV_MODE, "")).lower()
    if requested and requested != "auto":
        try:
            mode = Mode(requested)
        except ValueError:
            known = ", ".join(m.value for m in Mode)
            return None, f"{ENV_MODE}={requested!r} is not one of auto, {known}"
        return mode, f"asked for with {ENV_MODE}"
    if _v1_ready(host):
        return Mode.PRIVILEGED, "root, cgroup v1 with memory, pids and cpuacct"
    if host.root and _v2_ready(host):
        return Mode.CGROUP2, "root, cgroup v2 with memory and pids"
    if host.user_namespaces is False:
        return None, f"no cgroup to use and no user namespaces ({host.user_namespaces_error})"
    why = "not root" if not host.root else "root without a usable cgroup hierarchy"
    return Mode.ROOTLESS, f"{why}: user namespaces and rlimits"
