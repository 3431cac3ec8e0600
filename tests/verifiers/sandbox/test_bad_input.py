"""Bad input in every mode this machine runs: each gives a clear result and leaves no
process behind (the process table is checked after each run: no process carrying the
run's marker anywhere, nothing in the server's tree but the server and its two waiting
jails)."""

from __future__ import annotations

import dataclasses
import signal

import pytest
from sandbox_support import left_behind

from rewardsmith.verifiers.sandbox import ForkServer, LimitHit, Limits, Program
from rewardsmith.verifiers.sandbox.escapes import escape_snippets

pytestmark = pytest.mark.sandbox

MARK = "3617.875"
LIMITS = Limits(wall_s=1.0, cpu_s=3, memory_bytes=128 << 20, processes=16)

BAD = {
    "fork-bomb": (
        f"import os\nos.environ['M'] = '{MARK}'\nwhile True:\n"
        "    try:\n        os.fork()\n    except OSError:\n        pass\n",
        {LimitHit.PROCESSES},
    ),
    "memory-bomb": (
        "x = []\nwhile True:\n    x.append(bytearray(1 << 22))\n",
        {LimitHit.MEMORY},
    ),
    "one-huge-allocation": (
        # cgroups stop it as the pages are touched; rootless refuses the allocation itself
        # (RLIMIT_DATA: MemoryError) or its watchdog stops it.
        "x = bytearray(1 << 30)\n",
        {LimitHit.MEMORY, None},
    ),
    "gigabyte-of-output": (
        "import os\nchunk = b'y' * (1 << 20)\nfor _ in range(1024):\n    os.write(1, chunk)\n",
        {LimitHit.OUTPUT},
    ),
    "gigabyte-to-stderr": (
        "import os\nchunk = b'z' * (1 << 20)\nfor _ in range(1024):\n    os.write(2, chunk)\n",
        {LimitHit.OUTPUT},
    ),
    "gigabyte-to-a-file": (
        # Python ignores SIGXFSZ: the write past file_bytes fails (EFBIG) and says so.
        "f = open('big', 'wb')\nfor _ in range(1024):\n    f.write(b'w' * (1 << 20))\n",
        {LimitHit.FILE_SIZE, LimitHit.DISK, None},
    ),
    "gigabyte-to-a-file-default-signals": (
        "import signal\nsignal.signal(signal.SIGXFSZ, signal.SIG_DFL)\n"
        "f = open('big', 'wb')\nfor _ in range(1024):\n    f.write(b'w' * (1 << 20))\n",
        {LimitHit.FILE_SIZE},
    ),
    "ignore-sigterm-and-double-fork": (
        f"""
import os, signal, time
signal.signal(signal.SIGTERM, signal.SIG_IGN)
signal.signal(signal.SIGHUP, signal.SIG_IGN)
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execv('/bin/sleep', ['sleep', '{MARK}'])   # inherits SIG_IGN for SIGTERM
    os._exit(0)
while True:
    time.sleep(1)
""",
        {LimitHit.WALL_TIME},
    ),
    "double-fork-and-exit": (
        f"""
import os, signal
signal.signal(signal.SIGTERM, signal.SIG_IGN)
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execv('/bin/sleep', ['sleep', '{MARK}'])
    os._exit(0)
print('parent gone')
""",
        {None},
    ),
}


# The memory bomb must end at its cap, which it reaches in well under a second on an idle
# machine; under contention (three test workers on two cores) 1 s of wall time can come
# first. More wall time proves the same and costs the same: it still ends by MEMORY.
WALL_FOR = {"memory-bomb": 5.0}


def _program(code: str, kind: str, name: str) -> Program:
    limits = dataclasses.replace(LIMITS, wall_s=WALL_FOR.get(name, LIMITS.wall_s))
    if kind == "warm":
        return Program(python=code, limits=limits)
    return Program(command=("python3", "-I", "-c", code, MARK), limits=limits)


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["warm", "exec"])
@pytest.mark.parametrize("name", sorted(BAD))
def test_bad_input_is_stopped_named_and_leaves_nothing(
    mode_server: ForkServer, name: str, kind: str
) -> None:
    code, hits = BAD[name]
    if name.endswith("default-signals") and kind == "warm":
        pytest.skip("warm Python is its namespace's init: the kernel ignores SIGXFSZ there")
    r = mode_server.run_programs([_program(code, kind, name)])[0]
    assert r.error is None and r.limit_hit in hits, r
    if None not in hits:
        assert not r.ok and r.describe().startswith("stopped: ")
    if name == "one-huge-allocation" and r.limit_hit is None:
        assert r.exit_code == 1 and b"MemoryError" in r.stderr, r
    if name == "gigabyte-to-a-file" and r.limit_hit is None:
        assert r.exit_code == 1 and b"File too large" in r.stderr, r
    assert len(r.stdout) <= LIMITS.output_bytes and len(r.stderr) <= LIMITS.output_bytes
    assert left_behind(mode_server, MARK) == []


@pytest.mark.parametrize("name", ["ptrace", "unshare_new_user", "bpf", "foreign_arch_int80"])
def test_a_denied_call_after_forking_leaves_nothing(mode_server: ForkServer, name: str) -> None:
    code = (
        "import os\n"
        f"if os.fork() == 0:\n    os.execv('/bin/sleep', ['sleep', '{MARK}'])\n"
        + escape_snippets()[name]
    )
    r = mode_server.run_programs([_program(code, "warm", name)])[0]
    assert r.signal == signal.SIGSYS, r
    assert left_behind(mode_server, MARK) == []
