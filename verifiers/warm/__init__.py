"""Warm worker processes: the one mechanism behind the executor's pool, killable calls and
the sandbox's fork-server client.

A warm worker is a process started once, with its heavy imports done, that serves requests
over private pipes and is killed when one passes its deadline. This package does it once:

- `WarmProcess` / `WarmSpec`: start, ready handshake, one call under a deadline
  (`WarmProcess.call`), the whole tree killed, output captured and capped, a memory limit,
  and the parts an event loop needs to drive many workers (the pool does).
- `budget`: one clock per job, shared by every nested layer (`allowance`), and the layer
  whose limit ended the work (`Layer`, `LimitHit`, `JobDeadline`).

    >>> spec = WarmSpec(Role("rewardsmith.verifiers._killable_worker:serve"))
    >>> worker = WarmProcess(spec)
    >>> import pickle
    >>> call = pickle.dumps((sum, ([1, 2, 3],), {}))  # that role takes (call, seconds)
    >>> reply = worker.call((call, 30.0), timeout_s=30)
    >>> reply.ending.value, reply.answer[:2]
    ('answer', ('ok', 6))
    >>> worker.stop()
"""

from rewardsmith.verifiers.warm._frames import wait_any
from rewardsmith.verifiers.warm.budget import (
    Allowance,
    JobDeadline,
    Layer,
    LimitHit,
    allowance,
    current_job,
)
from rewardsmith.verifiers.warm.process import WarmProcess
from rewardsmith.verifiers.warm.spec import Command, Ending, Reply, Role, WarmSpec

__all__ = [
    "Allowance",
    "Command",
    "Ending",
    "JobDeadline",
    "Layer",
    "LimitHit",
    "Reply",
    "Role",
    "WarmProcess",
    "WarmSpec",
    "allowance",
    "current_job",
    "wait_any",
]
