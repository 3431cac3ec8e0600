"""One warm interpreter for the docs and CLI page runs (tests/test_docs.py, tests/cli).

Each page example used to start a fresh interpreter that imported torch, transformers and
the whole toolkit again (about 3 s of CPU each, on 16 pages and 23 CLI lines). Here one
process imports them once (`PRELOAD`), then forks a child per run: the child is as fresh as
a new interpreter for the run's own state (its own `__main__`, environment, working folder,
stdin from /dev/null, stdout and stderr to files, non-daemon threads joined and atexit
handlers run at the end, as at an interpreter's exit), and it exits with the code a
``python -c`` or a ``rewardsmith`` command would have. A crash or a hang of one run is that
run's failure; the next run forks again from the same clean parent.

``python page_runner.py`` serves JSON lines on stdin/stdout: ``{"code": ...}`` runs a
script, ``{"argv": ["rewardsmith", ...]}`` runs the CLI; both take ``env``, ``cwd`` and
``timeout`` and answer ``{"returncode", "stdout", "stderr"}`` (returncode -9 on a timeout).
`PageRunner` is the client the tests hold for a whole session.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import types
from pathlib import Path
from typing import Any

# What most pages import: loaded once, in the parent, before any fork.
PRELOAD = ("torch", "transformers", "rewardsmith.cli.main", "rewardsmith.graders")
# One OpenMP thread for torch in the runner and what a page starts, unless the caller set
# it: the pytest-xdist workers already fill the cores, and spinning OpenMP threads on a
# loaded machine made the reward-model page's tiny training take 300 s (in-process, on one
# thread, as tests/reward_models/conftest.py runs torch: 6 s).
ONE_THREAD = {"OMP_NUM_THREADS": "1"}


def _run_in_child(request: dict[str, Any]) -> int:
    """Runs one request in this (forked) process and returns its exit code."""
    import atexit
    import threading
    import traceback

    os.environ.clear()
    os.environ.update(request["env"])
    os.chdir(request["cwd"])
    try:
        if "code" in request:
            sys.argv = ["-c"]
            # A fresh `__main__` module, as `python -c` has: code that looks at the main
            # module (worker pools do) must not see this runner's.
            main = types.ModuleType("__main__")
            sys.modules["__main__"] = main
            exec(compile(request["code"], "<string>", "exec"), vars(main))
        else:
            from rewardsmith.cli.main import app

            sys.argv = list(request["argv"])
            app(args=sys.argv[1:], prog_name=Path(sys.argv[0]).name)
        code = 0
    except SystemExit as stop:
        code = stop.code if isinstance(stop.code, int) else (0 if stop.code is None else 1)
        if not isinstance(stop.code, int | None):
            print(stop.code, file=sys.stderr)
    except BaseException:
        traceback.print_exc()
        code = 1
    threading._shutdown()  # type: ignore[attr-defined]  # as at interpreter exit
    atexit._run_exitfuncs()
    return code


def _fork_run(request: dict[str, Any]) -> dict[str, Any]:
    # Not a TemporaryDirectory: its cleanup is an atexit finalizer, which the child's exit
    # (atexit handlers run, as an interpreter's do) would run and remove the folder early.
    scratch = tempfile.mkdtemp(prefix="rewardsmith-page-")
    try:
        out, err = Path(scratch, "stdout"), Path(scratch, "stderr")
        pid = os.fork()
        if pid == 0:  # the child: never returns into the serving loop
            code = 1
            try:
                os.setpgid(0, 0)  # its own group, so a timeout ends what it started too
                null = os.open(os.devnull, os.O_RDONLY)
                os.dup2(null, 0)
                os.dup2(os.open(out, os.O_WRONLY | os.O_CREAT, 0o600), 1)
                os.dup2(os.open(err, os.O_WRONLY | os.O_CREAT, 0o600), 2)
                code = _run_in_child(request)
            finally:
                with contextlib.suppress(BaseException):
                    sys.stdout.flush()
                    sys.stderr.flush()
                os._exit(code)
        returncode = _wait(pid, float(request["timeout"]))
        return {
            "returncode": returncode,
            "stdout": out.read_text(errors="replace") if out.exists() else "",
            "stderr": err.read_text(errors="replace") if err.exists() else "",
        }
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _wait(pid: int, timeout: float) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status)
        time.sleep(0.02)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
    return -signal.SIGKILL


def serve() -> None:
    for name in PRELOAD:
        importlib.import_module(name)
    replies = os.fdopen(os.dup(1), "w")  # the protocol's own fd: children rebind fd 1
    print(json.dumps({"ready": True}), file=replies, flush=True)
    for line in sys.stdin:
        print(json.dumps(_fork_run(json.loads(line))), file=replies, flush=True)


class PageRunner:
    """The client: one warm parent for a session; `run` and `cli` block until the run ends."""

    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd
        self._process = subprocess.Popen(
            [sys.executable, __file__],
            cwd=cwd,
            env={**ONE_THREAD, **os.environ},
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert json.loads(self._readline()) == {"ready": True}

    def _readline(self) -> str:
        assert self._process.stdout is not None
        line = self._process.stdout.readline()
        if not line:
            raise RuntimeError(f"the page runner ended (exit {self._process.wait()})")
        return line

    def _ask(self, request: dict[str, Any], env: dict[str, str] | None, timeout: float):
        assert self._process.stdin is not None
        full = {**request, "env": {**ONE_THREAD, **(os.environ if env is None else env)}}
        full.update(cwd=str(self.cwd), timeout=timeout)
        self._process.stdin.write(json.dumps(full) + "\n")
        self._process.stdin.flush()
        reply = json.loads(self._readline())
        return subprocess.CompletedProcess(
            request.get("argv", ["python", "-c"]),
            reply["returncode"],
            reply["stdout"],
            reply["stderr"],
        )

    def run(self, code: str, env: dict[str, str] | None = None, timeout: float = 300):
        """Like ``python -c code`` from `cwd`."""
        return self._ask({"code": code}, env, timeout)

    def cli(self, argv: list[str], env: dict[str, str] | None = None, timeout: float = 300):
        """Like running the ``rewardsmith`` command line `argv` from `cwd`."""
        assert argv[0] == "rewardsmith", argv
        return self._ask({"argv": argv}, env, timeout)

    def close(self) -> None:
        assert self._process.stdin is not None
        self._process.stdin.close()
        try:
            self._process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()


if __name__ == "__main__":
    serve()
