"""Process trees from /proc: descendants, kill the whole tree, resident memory.

Standard library only (the warden script imports it by path). Linux only.

Why stop before killing: a tree cannot be killed by one signal to one pid. Killing parents
first lets their children escape to a reaper; killing children first lets a parent fork
new ones. So every process found is sent SIGSTOP, the tree is read again (a process stopped
after a fork shows its new child in the next read), and only when a read finds nothing new
is every process sent SIGKILL, the root last. A stopped process cannot fork, so this ends,
and nothing the tree held is reparented out of reach before the kill.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time

PAGE_SIZE = os.sysconf("SC_PAGE_SIZE")
MAX_ROUNDS = 50
"""Rounds of stop-and-read; each stops every process found (a fork bomb cannot outrun it
for long, as stopped processes cannot fork)."""


def parents() -> dict[int, int]:
    """pid -> parent pid, for every process this process can see."""
    found: dict[int, int] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                stat = f.read()
        except OSError:  # exited meanwhile
            continue
        # The command name (field 2) may hold spaces and parentheses: split after its end.
        fields = stat[stat.rfind(b")") + 2 :].split()
        found[int(name)] = int(fields[1])
    return found


def descendants(pid: int, table: dict[int, int] | None = None) -> set[int]:
    """Every process below ``pid`` (children, their children, ...), not ``pid`` itself."""
    table = parents() if table is None else table
    children: dict[int, list[int]] = {}
    for child, parent in table.items():
        children.setdefault(parent, []).append(child)
    found: set[int] = set()
    frontier = [pid]
    while frontier:
        for child in children.get(frontier.pop(), ()):
            if child not in found:
                found.add(child)
                frontier.append(child)
    return found


def kill_tree(pid: int, *, include_root: bool = True) -> set[int]:
    """SIGKILL ``pid`` (unless ``include_root`` is False) and all its descendants, stopping
    them first so that none escapes. Returns the pids signalled.

    The root dies last. A read of /proc is not atomic: a process that forks and exits
    while it is read can hide its child from that read. Where the root is a child
    subreaper (a warden), such a child is the root's by the time the tree is killed, so the
    tree is read again after each kill until nothing below the root is left running."""
    signalled = _stop_tree(pid, include_root)
    below = signalled - {pid}
    for _ in range(MAX_ROUNDS):
        for member in below:
            _signal(member, signal.SIGKILL)
        wait_gone(below)
        below = {member for member in descendants(pid) if running(member)}
        if not below:
            break
        signalled |= below
    if include_root:
        _signal(pid, signal.SIGKILL)
    return signalled


def _stop_tree(pid: int, include_root: bool) -> set[int]:
    """SIGSTOP every process of the tree, reading it again until a read finds no new one."""
    stopped: set[int] = set()
    for _ in range(MAX_ROUNDS):
        tree = descendants(pid)
        if include_root:
            tree.add(pid)
        new = tree - stopped
        if not new:
            break
        for member in new:
            _signal(member, signal.SIGSTOP)
        stopped |= new
    return stopped


def wait_gone(pids: set[int], timeout_s: float = 2.0) -> set[int]:
    """Wait until each process is dead (gone, or a zombie); return those still running."""
    deadline = time.monotonic() + timeout_s
    alive = set(pids)
    while alive:
        alive = {p for p in alive if running(p)}
        if not alive or time.monotonic() >= deadline:
            break
        time.sleep(0.005)
    return alive


def running(pid: int) -> bool:
    """Whether ``pid`` exists and is not a zombie (a dead process not yet reaped)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2 : stat.rfind(b")") + 3] not in (b"Z", b"X")


def resident_bytes(pid: int) -> int | None:
    """The resident set size of ``pid`` in bytes, or None if it is gone."""
    try:
        with open(f"/proc/{pid}/statm", "rb") as f:
            return int(f.read().split()[1]) * PAGE_SIZE
    except (OSError, IndexError, ValueError):
        return None


def _signal(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, sig)
