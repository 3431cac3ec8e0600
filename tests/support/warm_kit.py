"""Trusted code that misbehaves, for the containment tests of warm workers.

Module-level functions, so killable calls and executor verifiers can name them. Every
process they start carries a marker (an argument the test makes unique) so a test can read
the process table before and after; every one of them also ends on its own within
`SLEEPER_S`, so a failing test cannot leave them on this shared machine for long. The fork
loops are bounded (a depth and a width, or a time): these run outside the sandbox, as
executor workers do, and must never become a real fork bomb.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

SLEEPER_S = 120


def sleeper_argv(marker: str) -> list[str]:
    """A process that ignores SIGTERM and SIGHUP and sleeps, named ``marker`` (argv[0])."""
    script = f'trap "" TERM HUP; exec -a "$0" sleep {SLEEPER_S}'
    return ["bash", "-c", script, marker]


def processes_with(marker: str) -> list[int]:
    """Live (not zombie) processes whose arguments hold ``marker``."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == os.getpid():
            continue
        try:
            args = Path(f"/proc/{name}/cmdline").read_bytes().split(b"\0")
            state = Path(f"/proc/{name}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
        except OSError:
            continue
        if state != b"Z" and any(marker.encode() in a for a in args):
            found.append(int(name))
    return found


def kill_marked(marker: str) -> None:
    """Clean-up for a failed test: SIGKILL whatever still carries ``marker``."""
    for pid in processes_with(marker):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


def wait_for(marker: str, count: int, timeout_s: float = 20.0) -> list[int]:
    """Wait until at least ``count`` processes carry ``marker``; those found."""
    deadline = time.monotonic() + timeout_s
    while len(found := processes_with(marker)) < count and time.monotonic() < deadline:
        time.sleep(0.02)
    return found


def sleeper(marker: str) -> subprocess.Popen[bytes]:
    """A child that ignores SIGTERM and SIGHUP."""
    return subprocess.Popen(sleeper_argv(marker))


def daemon(marker: str) -> None:
    """A grandchild that double-forks away: its own session, its parent gone, SIGTERM
    ignored. The classic way to leave a process behind."""
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            os.execvp("bash", sleeper_argv(marker))
        os._exit(0)
    os.wait()


def tree(marker: str, depth: int = 2, width: int = 3, top: bool = True) -> None:
    """A bounded fork bomb: ``width`` children per level, ``depth`` levels, every process
    below the top a live sleeper that ignores SIGTERM (3 + 9 processes by default)."""
    for _ in range(width if depth > 0 else 0):
        if os.fork() == 0:
            tree(marker, depth - 1, width, top=False)
    if not top:
        os.execvp("bash", sleeper_argv(marker))


def fork_churn(marker: str, seconds: float) -> None:
    """For ``seconds``, keep forking children that fork a sleeper and exit (so it is
    orphaned at once): a tree that changes while it is being killed."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if os.fork() == 0:
            if os.fork() == 0:
                os.execvp("bash", sleeper_argv(marker))
            os._exit(0)
        os.wait()
        time.sleep(0.05)


def hang() -> None:
    while True:
        time.sleep(1)


EXPECTED = {"sleeper": 1, "daemon": 1, "tree": 12, "churn": 3}
"""How many marked processes each kind has started before it says so and hangs."""


def spawn_then_hang(kind: str, marker: str) -> None:
    """Start processes of ``kind``, print how many are running once they all are (proof,
    in the call's output, that there was a tree to kill), then hang."""
    if kind == "sleeper":
        sleeper(marker)
    elif kind == "daemon":
        daemon(marker)
    elif kind == "tree":
        tree(marker)
    elif kind == "churn" and os.fork() == 0:  # churn in a child, so this one can report
        fork_churn(marker, SLEEPER_S)
        os._exit(0)
    print(f"running {len(wait_for(marker, EXPECTED[kind]))}", flush=True)
    hang()


def spawn_then_return(kind: str, marker: str) -> int:
    """Start processes of ``kind`` and return the worker's pid (they stay behind)."""
    if kind == "sleeper":
        sleeper(marker)
    elif kind == "daemon":
        daemon(marker)
    return os.getpid()


def spawn_then_die(kind: str, marker: str) -> None:
    """Start processes of ``kind``, then kill this process (a crash mid-call)."""
    spawn_then_return(kind, marker)
    os.kill(os.getpid(), signal.SIGKILL)


def _touched(megabytes: int) -> bytearray:
    block = bytearray(megabytes << 20)
    block[::4096] = b"\1" * len(range(0, len(block), 4096))  # every page resident
    return block


def allocate(megabytes: int, hold_s: float = 0.0) -> int:
    """Touch ``megabytes`` of memory (every page), hold it ``hold_s`` seconds, free it."""
    block = _touched(megabytes)
    time.sleep(hold_s)
    return len(block)


_kept: list[bytearray] = []


def allocate_and_keep(megabytes: int) -> int:
    """Touch ``megabytes`` and keep them (a leak in a long-lived worker)."""
    _kept.append(_touched(megabytes))
    return os.getpid()


def pid() -> int:
    return os.getpid()


def resident_mb() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") >> 20


def flood(megabytes: int, how: str = "print") -> int:
    """Write ``megabytes`` of output: Python prints, raw writes to fds 1 and 2, or a child
    process's output."""
    line = "x" * 1023 + "\n"
    if how == "print":
        for _ in range(megabytes * 1024):
            print(line, end="")
    elif how == "fd":
        chunk = line.encode() * 1024
        for i in range(megabytes):
            os.write(1 + i % 2, chunk)
    elif how == "child":
        subprocess.run(["head", "-c", str(megabytes << 20), "/dev/zero"], check=True)
    return megabytes


def say(text: str, then_hang: bool = False) -> str:
    print(f"stdout: {text}")
    print(f"stderr: {text}", file=sys.stderr)
    if then_hang:
        sys.stdout.flush()
        hang()
    return text
