"""The fork server as a process: start it, wait for its hello, send requests, stop it.

This is all the client knows about the server's lifetime; the rest of the client turns
programs into specs and replies into results. (The executor's warm-worker mechanism can
take this part over: it is a warm process with a ready handshake, one request at a time.)
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from collections.abc import Sequence
from typing import Any

from rewardsmith.verifiers.sandbox._frames import read_frame, write_frame

_HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"


class ServerProcess:
    """One started fork server; raises RuntimeError from `__init__` if it did not start."""

    def __init__(
        self, config: dict[str, Any], wrapper: Sequence[str] = (), python: str = sys.executable
    ) -> None:
        """`config` goes to `_server.main`; `wrapper` is prepended to the command (for
        cgroup2 without root: ``systemd-run --user --scope -p Delegate=yes --``); `python`
        runs the server."""
        req_r, self._req_w = os.pipe()
        self._rep_r, rep_w = os.pipe()
        # -S: no site module (its .pth files import dozens of modules every fork would copy);
        # the site-packages folders come in `config` instead (see `_server._add_site`).
        code = f"import sys; sys.path.insert(0, {_HERE!r}); import _server; _server.main()"
        try:
            self.proc: subprocess.Popen[bytes] | None = subprocess.Popen(
                [
                    *wrapper,
                    python,
                    "-I",
                    "-S",
                    "-c",
                    code,
                    str(req_r),
                    str(rep_w),
                    json.dumps(config),
                ],
                pass_fds=(req_r, rep_w),
                stdin=subprocess.DEVNULL,
                start_new_session=True,
                # Children are forks of the server and inherit its memory, where the initial
                # environment lives: start it with nothing secret in it.
                env={"PATH": DEFAULT_PATH, "LANG": "C.UTF-8"},
            )
        finally:
            os.close(req_r)
            os.close(rep_w)
        self.hello = read_frame(self._rep_r) or {}
        if not self.hello.get("ready"):
            self.close()
            raise RuntimeError(self.hello.get("error", "it exited"))

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def request(self, message: dict[str, Any]) -> dict[str, Any] | None:
        """Send one request and wait for its reply (None if the server died)."""
        write_frame(self._req_w, message)
        return read_frame(self._rep_r)

    def close(self) -> None:
        """Closing the request pipe lets the server kill its jails, remove its cgroups and
        exit; past 5 s it is killed (and its jails die with it: they are in its PID
        namespace, or die of their parent's death)."""
        proc, self.proc = self.proc, None
        for name in ("_req_w", "_rep_r"):
            fd = getattr(self, name, -1)
            setattr(self, name, -1)  # never close a number twice: it may be reused by then
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        if proc is None:
            return
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
