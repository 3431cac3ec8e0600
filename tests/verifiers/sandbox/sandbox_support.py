"""Helpers the sandbox tests share: which modes run here, and what a run left behind."""

from __future__ import annotations

import functools
import os
import time

import psutil

from rewardsmith.verifiers.sandbox import ForkServer, modes

MODES = ("privileged", "rootless")


RERUN_USER = os.environ.get("REWARDSMITH_TEST_USER", "rewardsmith-ci")


def rerun_user_exists() -> bool:
    """Whether test_rootless_rerun will run these tests again as an unprivileged user."""
    import pwd

    if RERUN_USER.isdigit():
        return True
    try:
        pwd.getpwnam(RERUN_USER)
    except KeyError:
        return False
    return True


@functools.cache
def unavailable(mode: str) -> str | None:
    """Why `mode` cannot run here (or need not: root's run leaves rootless to the
    unprivileged rerun when there is one), or None when it runs here."""
    if mode == "rootless" and os.geteuid() == 0 and rerun_user_exists():
        return f"rootless runs in the unprivileged rerun as {RERUN_USER!r} (test_rootless_rerun)"
    host = modes.probe(check_user_namespaces=mode == "rootless")
    if mode == "privileged" and not (
        host.root and all(c in host.cgroup_v1 for c in modes.V1_CONTROLLERS)
    ):
        return "privileged mode needs root and cgroup v1 (memory, pids, cpuacct)"
    if mode == "rootless" and not host.user_namespaces:
        return f"rootless mode needs user namespaces: {host.user_namespaces_error}"
    return None


def server_tree(server: ForkServer) -> list[psutil.Process]:
    """Every process below the server's first process (waiters, the server, the forker,
    its jails)."""
    assert server._process is not None
    return psutil.Process(server._process.pid).children(recursive=True)


def left_behind(server: ForkServer, marker: str, settle_s: float = 3.0) -> list[str]:
    """Processes a run may have left: any whose command line has `marker` (anywhere on the
    machine), and anything in the server's tree beyond its waiting parents, itself, its
    forker and its two waiting jails (the server reaps a killed run just after replying:
    allow it a moment)."""
    expected = 4 if server.mode == "privileged" else 5
    deadline = time.monotonic() + settle_s
    while True:
        found = [
            f"{p.pid} {' '.join(p.info['cmdline'] or [])}"
            for p in psutil.process_iter(["cmdline"])
            if marker in " ".join(p.info["cmdline"] or []) and p.pid != os.getpid()
        ]
        extra = len(server_tree(server)) - expected
        if extra > 0:
            found.append(f"{extra} more processes in the server's tree")
        if not found or time.monotonic() > deadline:
            return found
        time.sleep(0.05)
