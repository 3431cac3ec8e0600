"""The seccomp filter: its table checked without a kernel, then every denial tried for real.

Each denied call is made by a program in the jail (never here), in every mode this machine
can run; the program must die of SIGSYS at that call, with a result that says why, and
leave nothing behind.
"""

from __future__ import annotations

import re
import signal
from pathlib import Path

import pytest
from sandbox_support import left_behind

from rewardsmith.verifiers.sandbox import ForkServer, Limits, Program
from rewardsmith.verifiers.sandbox._seccomp import (
    ARG_RULES,
    DENIED,
    ENOSYS,
    RET_ALLOW,
    RET_ERRNO,
    RET_KILL_PROCESS,
    SYSCALLS,
    instructions,
    run_filter,
)
from rewardsmith.verifiers.sandbox.escapes import ARGUMENT_ATTEMPTS, escape_snippets

pytestmark = pytest.mark.sandbox

PROG = instructions()
QUICK = Limits(wall_s=5, cpu_s=5, memory_bytes=256 << 20, processes=16)
HEADER = Path("/usr/include/x86_64-linux-gnu/asm/unistd_64.h")


def test_numbers_match_the_kernel_headers() -> None:
    if not HEADER.exists():
        pytest.skip(f"{HEADER} is not installed")
    table = {m[1]: int(m[2]) for m in re.finditer(r"#define __NR_(\w+) (\d+)", HEADER.read_text())}
    assert {n: table.get(n) for n in SYSCALLS} == SYSCALLS


@pytest.mark.parametrize("name", sorted(DENIED))
def test_each_denied_call_is_killed_whatever_its_arguments(name: str) -> None:
    for args in ((), (0, 0, 0), (0xFFFFFFFF,) * 6):
        assert run_filter(PROG, SYSCALLS[name], args) == RET_KILL_PROCESS


@pytest.mark.parametrize("name", ENOSYS)
def test_probed_calls_answer_enosys(name: str) -> None:
    assert run_filter(PROG, SYSCALLS[name]) == RET_ERRNO | 38


@pytest.mark.parametrize(
    ("call", "args", "verdict"),
    [
        *[(call, args, RET_KILL_PROCESS) for call, args in ARGUMENT_ATTEMPTS.values()],
        ("clone", (0x003D0F00,), RET_ALLOW),  # pthread_create's flags
        ("clone", (0x01200011,), RET_ALLOW),  # fork()
        ("unshare", (0x400,), RET_ALLOW),  # CLONE_FILES: no namespace
        ("socket", (2, 1, 0), RET_ALLOW),  # TCP
        ("socket", (1, 1 | 0x80000, 0), RET_ALLOW),  # a Unix socket, close-on-exec
        ("socket", (10, 2, 0), RET_ALLOW),  # UDP over IPv6
        ("socket", (16, 3, 0), RET_ALLOW),  # netlink (getaddrinfo), raw is its only type
        ("ioctl", (1, 0x5401), RET_ALLOW),  # TCGETS
        ("ioctl", (1, 0x1_0000_5412), RET_KILL_PROCESS),  # the kernel reads 32 bits
        ("personality", (0xFFFFFFFF,), RET_ALLOW),  # a query
        ("personality", (0,), RET_ALLOW),
    ],
)
def test_argument_rules(call: str, args: tuple[int, ...], verdict: int) -> None:
    low = tuple(a & 0xFFFFFFFF for a in args)  # the filter reads the low 32 bits only
    if call == "socket" and args == (16, 3, 0):
        verdict = RET_KILL_PROCESS  # SOCK_RAW is refused whatever the family
    assert run_filter(PROG, SYSCALLS[call], low) == verdict


@pytest.mark.parametrize("nr", [0, 1, 2, 9, 39, 57, 59, 60, 231, 257, 262, 318, 334, 435 - 1])
def test_ordinary_calls_are_allowed(nr: int) -> None:
    assert run_filter(PROG, nr, (0, 0, 0)) == RET_ALLOW


@pytest.mark.parametrize("extra", [(), ("memfd_create",)])
def test_every_call_number_gets_its_tables_verdict(extra: tuple[str, ...]) -> None:
    """The filter searches the numbers (it does not list them): each number up to past the
    last one the kernel has gets what the tables say, and nothing else is denied."""
    prog = instructions(extra)
    by_number = {nr: name for name, nr in SYSCALLS.items()}
    for nr in range(600):
        name = by_number.get(nr)
        if name in ARG_RULES:
            continue  # their arguments decide (test_argument_rules)
        if name in DENIED:
            want = RET_KILL_PROCESS
        elif name in (*ENOSYS, *extra):
            want = RET_ERRNO | 38
        else:
            want = RET_ALLOW
        assert run_filter(prog, nr, (0, 0, 0)) == want, (nr, name)


@pytest.mark.parametrize(
    ("nr", "arch"), [(20, 0x40000003), (172, 0xC00000B7), (39 | 0x40000000, 0xC000003E)]
)
def test_foreign_architectures_and_x32_are_killed(nr: int, arch: int) -> None:
    assert run_filter(PROG, nr, arch=arch) == RET_KILL_PROCESS


def test_every_rule_has_an_attempt() -> None:
    assert {call for call, _ in ARGUMENT_ATTEMPTS.values()} == set(ARG_RULES)


# ----------------------------------------------------------------------------- for real


def _attempt(server: ForkServer, code: str) -> object:
    program = "print('before', flush=True)\n" + code + "print('survived', flush=True)\n"
    return server.run_programs([Program(python=program, limits=QUICK)])[0]


@pytest.mark.parametrize("name", sorted(escape_snippets()))
def test_each_denial_kills_the_program_in_the_jail(mode_server: ForkServer, name: str) -> None:
    r = _attempt(mode_server, escape_snippets()[name])
    assert r.signal == signal.SIGSYS and r.stdout == b"before\n", r  # type: ignore[attr-defined]
    assert "denies" in r.describe() and r.error is None and not r.ok  # type: ignore[attr-defined]


@pytest.mark.parametrize("name", ENOSYS)
def test_probed_calls_fail_softly_in_the_jail(mode_server: ForkServer, name: str) -> None:
    code = (
        "import ctypes\nlibc = ctypes.CDLL(None, use_errno=True)\n"
        f"print(libc.syscall({SYSCALLS[name]}, 0, 0, 0, 0), ctypes.get_errno())\n"
    )
    r = mode_server.run_programs([Program(python=code, limits=QUICK)])[0]
    assert r.ok and r.stdout == b"-1 38\n", r


def test_allowed_uses_of_checked_calls_still_work(mode_server: ForkServer) -> None:
    code = """
import ctypes, os, socket, threading
libc = ctypes.CDLL(None, use_errno=True)
t = threading.Thread(target=lambda: None); t.start(); t.join()
pid = os.fork()
if pid == 0:
    os._exit(7)
status = os.waitpid(pid, 0)[1]
socket.socket(socket.AF_INET, socket.SOCK_DGRAM).close()
socket.socketpair()
print(os.waitstatus_to_exitcode(status), libc.personality(0xFFFFFFFF) >= 0,
      libc.syscall(272, 0x400) == 0)
"""
    r = mode_server.run_programs([Program(python=code, limits=QUICK)])[0]
    assert r.ok and r.stdout == b"7 True True\n", r


def test_an_execd_program_meets_the_same_filter(mode_server: ForkServer) -> None:
    """A compiled program (built in the jail) making raw calls, one per run."""
    source = b"""
#include <stdlib.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/syscall.h>
int main(int argc, char **argv) {
    long nr = strtol(argv[1], 0, 0), arg = argc > 2 ? strtol(argv[2], 0, 0) : 0;
    printf("before\\n"); fflush(stdout);
    if (nr < 0) { int r; __asm__ volatile ("int $0x80" : "=a"(r) : "a"(20)); }
    else syscall(nr, arg, 0, 0, 0, 0, 0);
    printf("survived\\n");
    return 0;
}
"""
    built = mode_server.run_programs(
        [
            Program(
                command=("gcc", "-O1", "-o", "attack", "attack.c"),
                files={"attack.c": source},
                collect=("attack",),
                limits=Limits(wall_s=60, cpu_s=60, memory_bytes=1 << 30, processes=64),
            )
        ]
    )[0]
    if "attack" not in built.files:
        pytest.skip(f"gcc could not build the attack in the jail: {built.stderr[-300:]!r}")
    attacks = {
        "ptrace": (SYSCALLS["ptrace"], 0),
        "unshare_new_user": (SYSCALLS["unshare"], 0x10000000),
        "mount": (SYSCALLS["mount"], 0),
        "bpf": (SYSCALLS["bpf"], 0),
        "keyctl": (SYSCALLS["keyctl"], 0),
        "int80": (-1, 0),
    }
    for name, (nr, arg) in attacks.items():
        r = mode_server.run_programs(
            [
                Program(
                    command=("./attack", str(nr), str(arg), "3617.75"),
                    files={"attack": built.files["attack"]},
                    executables=("attack",),
                    limits=QUICK,
                )
            ]
        )[0]
        assert r.signal == signal.SIGSYS and r.stdout == b"before\n", (name, r)
    assert left_behind(mode_server, "3617.75") == []


def test_the_filter_is_on_in_the_jail(mode_server: ForkServer) -> None:
    code = "print([l for l in open('/proc/self/status') if l.startswith('Seccomp')])"
    r = mode_server.run_programs([Program(python=code, limits=QUICK)])[0]
    assert b"'Seccomp:\\t2\\n'" in r.stdout, r


def test_the_documented_list_is_the_filters_list() -> None:
    page = (Path(__file__).resolve().parents[3] / "docs" / "code.md").read_text()
    section = page[page.index("### The seccomp filter") : page.index("### What it does not cover")]
    named = set(re.findall(r"`(\w+)`", section))
    assert set(DENIED) | set(ENOSYS) | set(ARG_RULES) <= named
