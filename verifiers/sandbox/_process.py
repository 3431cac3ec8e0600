"""The fork server as a process: a warm worker (`rewardsmith.verifiers.warm`) that speaks the
frames itself.

This is all the client knows about the server's lifetime; the rest of the client turns
programs into specs and replies into results. `WarmProcess` gives the ready handshake, a
deadline per request, the whole tree killed when a request overruns or the server is
stopped, and the server's own stdout and stderr captured (they never reach the caller's).
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from typing import Any

from rewardsmith.verifiers.warm import Command, Ending, WarmProcess, WarmSpec

_HERE = os.path.dirname(os.path.abspath(__file__))
_FRAMES = os.path.join(os.path.dirname(_HERE), "warm", "_frames.py")
DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"
STOP_WAIT_S = 5.0
"""How long a stopped server has to kill its jails and remove its cgroups before its tree
is killed."""
REPLY_GRACE_S = 60.0
"""A reply may come this long after the longest wall-clock limit of its programs (the
server enforces those; this only catches a server that stalls)."""
# -S: no site module (its .pth files import dozens of modules every fork would copy); the
# site-packages folders come in the config instead (see `_server._add_site`). The frames
# module is the warm workers' own, loaded by path as `_frames` (nothing else of that
# folder goes on the server's path).
_BOOT = (
    f"import sys, importlib.util as u; sys.path.insert(0, {_HERE!r}); "
    f"s = u.spec_from_file_location('_frames', {_FRAMES!r}); m = u.module_from_spec(s); "
    "sys.modules['_frames'] = m; s.loader.exec_module(m); import _server; _server.main()"
)


def _hello(frame: Any) -> str | None:
    if isinstance(frame, dict) and frame.get("ready"):
        return None
    return str(frame.get("error", frame) if isinstance(frame, dict) else frame)


class ServerProcess:
    """One started fork server; raises RuntimeError from `__init__` if it did not start."""

    def __init__(
        self, config: dict[str, Any], wrapper: Sequence[str] = (), python: str = sys.executable
    ) -> None:
        """`config` goes to `_server.main`; `wrapper` is prepended to the command (for
        cgroup2 without root: ``systemd-run --user --scope -p Delegate=yes --``); `python`
        runs the server."""
        argv = (*wrapper, python, "-I", "-S", "-c", _BOOT, "{request_fd}", "{reply_fd}")
        command = Command(
            (*argv, json.dumps(config)),
            # Children are forks of the server and inherit its memory, where the initial
            # environment lives: start it with nothing secret in it.
            env={"PATH": DEFAULT_PATH, "LANG": "C.UTF-8"},
            hello=_hello,
        )
        self.worker = WarmProcess(WarmSpec(command))
        error = self.worker.wait_ready()
        if error is not None:
            raise RuntimeError(_with_output(error, self.worker))

    @property
    def pid(self) -> int:
        return self.worker.pid

    @property
    def alive(self) -> bool:
        return self.worker.alive

    def request(self, message: dict[str, Any], wall_s: float) -> dict[str, Any]:
        """Send one request and wait for its reply, at most `wall_s` plus `REPLY_GRACE_S`.
        A server that died or stalled is killed, tree and all, and the reply says so."""
        reply = self.worker.call(message, wall_s + REPLY_GRACE_S)
        if reply.ending is Ending.ANSWER:
            answer: dict[str, Any] = reply.answer
            return answer
        return {"error": _with_output(f"fork server: {reply.detail}", self.worker, reply.output)}

    def close(self) -> None:
        """Closing the request pipe lets the server kill its jails, remove its cgroups and
        exit; past `STOP_WAIT_S` its tree is killed (its jails are in its PID namespace, or
        die of their parent's death)."""
        self.worker.stop(STOP_WAIT_S)


def _with_output(error: str, worker: WarmProcess, output: str | None = None) -> str:
    """`error` with what the server printed (a traceback, say): the cause, never hidden."""
    if output is None:
        output, _ = worker.output.text(0, worker.output.size(), 4096)
    output = output.strip()
    return f"{error}; it printed: {output}" if output else error
