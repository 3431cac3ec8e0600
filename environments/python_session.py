"""A stateful Python tool: one session per episode, its variables surviving the turns.

The session is the episode's own cells, kept in the trajectory (each tool step's meta
``cells``: the calls that ran to completion) and replayed, output silenced, in a fresh
jail before the new cell runs (`run_python`: no network, no project files, its own uid,
the tool's memory and time limits over the whole replay). So a variable, a function or a
file written in /box by an earlier turn is there in the next; hostile code is as jailed as
in a one-off call; nothing of a session outlives its episode or is shared with another
(the state is the episode's JSON, so a checkpointed episode resumes with its session);
and a cell that failed (an exception, a limit, a signal) is not kept, as a notebook that
restarted from its good cells would be.

What replay costs: each call re-runs the earlier cells (an episode has at most a few
turns of a few calls), inside the one call's limits; `random` is seeded so a replayed
draw is the value the model saw, but a value from `os.urandom` or the clock can differ
between replays.

    >>> run_cell([], "x = 6 * 7").ok
    True
    >>> run_cell(["x = 6 * 7"], "print(x + 1)").stdout
    b'43\\n'
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from rewardsmith.verifiers.sandbox import Limits, SandboxResult, run_python

__all__ = ["run_cell", "session_cells"]

_RUNNER = """
import contextlib, io, json, random
random.seed(0)
_cells = json.load(open("/box/.session.json"))
_ns = {"__name__": "__main__", "__builtins__": __builtins__}
with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
    for _cell in _cells[:-1]:
        exec(compile(_cell, "<earlier cell>", "exec"), _ns)
del _cells[:-1]
exec(compile(_cells.pop(), "<cell>", "exec"), _ns)
"""


def session_cells(attempts: Sequence[Mapping[str, Any]]) -> list[str]:
    """The session so far: the cells of every earlier tool step that ran to completion."""
    return [str(c) for a in attempts for c in a.get("meta", {}).get("cells", ())]


def run_cell(cells: Sequence[str], code: str, limits: Limits | None = None) -> SandboxResult:
    """Run `code` after the session `cells` (their output silenced). `result.ok`: it ran
    to completion, so it joins the session."""
    files = {".session.json": json.dumps([*cells, code]).encode()}
    return run_python(_RUNNER, readonly_files=files, limits=limits)
