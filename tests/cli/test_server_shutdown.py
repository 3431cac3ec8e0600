"""`rewardsmith serve` as a real process: its start line, access lines, and SIGTERM with a
hanging check in flight and requests waiting (loopback only, bounded in time)."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest

from tests.support.plugin import install_plugin

SPEC = "grader:\n  weighted:\n    components:\n      echo: {verify: hang_when, trigger: HANG}\n"


def _start(tmp_path: Path, *extra: str) -> tuple[subprocess.Popen[str], str]:
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC)
    return start_server(tmp_path, spec, *extra)


def start_server(tmp_path: Path, spec: Path, *extra: str) -> tuple[subprocess.Popen[str], str]:
    """``rewardsmith serve`` on a free loopback port; its process and URL once it listens."""
    plugin = install_plugin(tmp_path / "plugin")
    env = {**os.environ, "PYTHONPATH": f"{plugin}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    command = [sys.executable, "-m", "rewardsmith.cli.main", "serve", "--spec", str(spec),
               "--port", "0", "--timeout", "60", *extra]  # fmt: skip
    log = tmp_path / "server.log"  # a file, not a pipe: nothing can block the test on it
    process = subprocess.Popen(command, env=env, stderr=log.open("w"), text=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and process.poll() is None:
        found = re.search(r"listening on (http://127\.0\.0\.1:\d+)", log.read_text())
        if found:
            return process, found.group(1)
        time.sleep(0.1)
    process.kill()
    raise AssertionError(f"the server printed no start line: {log.read_text()[-2000:]}")


def _post(url: str, completion: str, out: list[httpx.Response]) -> None:
    body = {"samples": [{"id": completion, "completion": completion, "reference": "ok"}]}
    out.append(httpx.post(f"{url}/score", json=body, timeout=60))


@pytest.mark.slow
def test_sigterm_answers_every_request_and_exits_within_the_grace(tmp_path: Path) -> None:
    process, url = _start(tmp_path, "--lanes", "1", "--grace", "3", "--access-log")
    try:
        first: list[httpx.Response] = []
        _post(url, "ok", first)
        assert first[0].json()["rewards"][0]["value"] == 1.0
        in_flight: list[httpx.Response] = []
        waiting: list[httpx.Response] = []
        threads = [threading.Thread(target=_post, args=(url, "HANG", in_flight))]
        threads[0].start()
        time.sleep(1.0)  # the hanging request holds the only lane
        threads += [threading.Thread(target=_post, args=(url, f"w{i}", waiting)) for i in range(3)]
        for thread in threads[1:]:
            thread.start()
        time.sleep(1.0)
        signalled = time.monotonic()
        process.send_signal(signal.SIGTERM)
        for thread in threads[1:]:
            thread.join(timeout=10)
        answered_waiting = time.monotonic() - signalled
        threads[0].join(timeout=30)
        process.wait(timeout=30)
        exited = time.monotonic() - signalled
    finally:
        if process.poll() is None:
            process.kill()
    assert [r.status_code for r in waiting] == [503] * 3
    assert all(r.headers["retry-after"] == "5" for r in waiting)
    assert answered_waiting < 2.5  # at once, not after the grace period
    assert [r.status_code for r in in_flight] == [503]
    assert "grace period" in in_flight[0].json()["error"]
    assert exited < 3 + 5, f"exited {exited:.1f} s after SIGTERM"  # grace 3 s, then out
    leftover = subprocess.run(["pgrep", "-f", str(tmp_path)], capture_output=True, text=True)
    assert leftover.stdout == "", "a worker outlived the server"
    log = (tmp_path / "server.log").read_text()
    assert "draining" in log and re.search(r"/score 200 1 samples", log)


def test_start_line_names_the_reward(tmp_path: Path) -> None:
    process, url = _start(tmp_path, "--lanes", "2")
    try:
        health = httpx.get(f"{url}/health", timeout=10).json()
        assert health["status"] == "ok" and len(health["fingerprint"]) == 16
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
    assert process.returncode in (0, -signal.SIGTERM)  # uvicorn re-raises the signal when done
    assert json.dumps(health)  # plain JSON
