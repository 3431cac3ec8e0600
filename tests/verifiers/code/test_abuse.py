"""The abuse corpus: hostile programs are contained, leave no process behind, change
nothing on the host, and still get a clear verdict (score 0, the model's fault).

Scratch targets live under tmp_path; a loopback server is started by the test itself.
"""

from __future__ import annotations

import os
import socket
import threading
import time

import psutil
import pytest
from code_cases import ADD_CALLS, judge

from rewardsmith.verifiers.code import CodeTests
from rewardsmith.verifiers.sandbox import modes
from rewardsmith.verifiers.types import Failure, Fault

pytestmark = pytest.mark.sandbox

ABUSE_LIMITS = CodeTests(wall_s=2.0, call_timeout_s=1.0, memory_mb=256)
MARK = "3617.5"  # argv of every process an abuse program leaves behind, so we can look


def _survivors() -> list[int]:
    time.sleep(0.2)
    return [
        p.pid for p in psutil.process_iter(["cmdline"]) if MARK in " ".join(p.info["cmdline"] or [])
    ]


def _run(code: str, failure: Failure | None = None):
    verdict = judge(ABUSE_LIMITS, code, ADD_CALLS)
    assert verdict.score == 0.0 and verdict.fault is Fault.MODEL, verdict
    if failure is not None:
        assert verdict.failure is failure, verdict
    assert _survivors() == []
    return verdict


ABUSE = {
    "fork-bomb": (
        "import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n",
        Failure.RESOURCE_LIMIT,
    ),
    "memory-bomb": (
        "x = []\nwhile True:\n    x.append(bytearray(1 << 24))\n",
        Failure.MEMORY_LIMIT,
    ),
    "busy-loop": ("def add(a, b):\n    while True:\n        pass\n", Failure.TIME_LIMIT),
    "sleep": ("import time\ndef add(a, b):\n    time.sleep(3600)\n", Failure.TIME_LIMIT),
    "output-flood": (
        "import sys\nwhile True:\n    sys.stdout.write('x' * 65536)\n",
        Failure.OUTPUT_LIMIT,
    ),
    "closed-stdout-spin": (
        "import os\nos.close(1)\nos.close(2)\nwhile True:\n    pass\n",
        Failure.TIME_LIMIT,
    ),
    "wait-on-stdin": (
        "import sys\ndef add(a, b):\n    return int(sys.stdin.read() or -99)\n",
        Failure.WRONG_ANSWER,
    ),
    "fill-the-disk": (
        "i = 0\nwhile True:\n    open(f'/tmp/f{i}', 'wb').write(b'x' * (1 << 20))\n    i += 1\n",
        Failure.RESOURCE_LIMIT,
    ),
    "exhaust-fds": (
        "fs = []\nwhile True:\n    fs.append(open('/dev/null'))\n",
        Failure.RUNTIME_ERROR,
    ),
    "exhaust-threads": (
        "import threading, time\nwhile True:\n"
        "    threading.Thread(target=time.sleep, args=(60,)).start()\n",
        # Rootless mode refuses the thread (RLIMIT_NPROC) and the program dies of it before
        # the watchdog looks: a runtime error, still 0 (see docs/code.md).
        None
        if modes.select_mode(modes.probe())[0] is modes.Mode.ROOTLESS
        else Failure.RESOURCE_LIMIT,
    ),
    "setsid-daemons-and-zombies": (
        f"""
import os
for _ in range(3):
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            os.execv('/bin/sleep', ['sleep', '{MARK}'])
        os._exit(0)
for _ in range(5):
    if os.fork() == 0:
        os._exit(0)
def add(a, b):
    return None
""",
        Failure.WRONG_ANSWER,
    ),
}


@pytest.mark.parametrize("name", sorted(ABUSE))
def test_abuse_is_contained(name: str) -> None:
    code, failure = ABUSE[name]
    _run(code, failure)


def test_writing_outside_the_work_dir_leaves_the_host_unchanged(tmp_path) -> None:
    target = tmp_path / "victim.txt"
    target.write_text("original")
    code = f"""
import os
for path in ({str(target)!r}, {str(tmp_path / "new.txt")!r}, '/etc/passwd', '/usr/bin/evil'):
    try:
        with open(path, 'a') as f:
            f.write('pwned')
    except OSError:
        pass
def add(a, b):
    return None
"""
    _run(code)
    assert target.read_text() == "original" and sorted(os.listdir(tmp_path)) == ["victim.txt"]


def test_network_is_unreachable_even_to_a_loopback_server_of_the_host() -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    server.settimeout(6)
    port = server.getsockname()[1]
    hits: list[object] = []
    waiter = threading.Thread(target=lambda: hits.append(_accept(server)))
    waiter.start()
    code = f"""
import socket
def add(a, b):
    out = []
    for host, port in (('127.0.0.1', {port}), ('8.8.8.8', 53), ('example.com', 80)):
        try:
            socket.create_connection((host, port), timeout=1).sendall(b'leak')
            out.append('open')
        except OSError as e:
            out.append(type(e).__name__)
    return str(out)
"""
    verdict = _run(code)
    server.shutdown(socket.SHUT_RDWR)  # wakes the waiting accept()
    waiter.join()
    server.close()
    assert hits == [None]
    assert "open" not in verdict.evidence["tests"][0]["output"]


def _accept(server: socket.socket) -> object:
    try:
        return server.accept()
    except OSError:
        return None


def test_environment_secrets_do_not_reach_the_program(monkeypatch) -> None:
    monkeypatch.setenv("RS_ABUSE_SECRET", "s3cr3t-value")
    code = """
import os
def add(a, b):
    seen = str(dict(os.environ))
    for pid in os.listdir('/proc'):
        if pid.isdigit():
            try:
                seen += open(f'/proc/{pid}/environ', 'rb').read().decode(errors='replace')
            except OSError:
                pass
    return seen
"""
    verdict = _run(code)
    outputs = " ".join(t.get("output", "") for t in verdict.evidence["tests"])
    assert "s3cr3t" not in outputs and "PATH" in outputs
