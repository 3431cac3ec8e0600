"""Per-run IPC and UTS namespaces: nothing one run leaves in SysV or POSIX IPC reaches the
next run on the same warm server, nor the other program of a pair, in every mode."""

from __future__ import annotations

import socket
import textwrap

import pytest

from rewardsmith.verifiers.sandbox import ForkServer, Limits, Program

pytestmark = pytest.mark.sandbox

QUICK = Limits(wall_s=5, cpu_s=5, memory_bytes=256 << 20, processes=16)
KEY = 0x5EC7

# Each writer leaves an object under a fixed key or name; each reader looks for it.
_LIBC = "import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\n"
WRITERS = {
    "shm": f"""
        seg = libc.shmget({KEY}, 4096, 0o1666)  # IPC_CREAT | 0666
        libc.shmat.restype = ctypes.c_void_p
        addr = ctypes.c_void_p(libc.shmat(seg, None, 0))
        ctypes.memmove(addr, b"the answer is 42", 16)
        print("wrote", seg)
    """,
    "sem": f"print('wrote', libc.semget({KEY}, 1, 0o1666))",
    "msg": f"""
        q = libc.msgget({KEY}, 0o1666)
        msg = (ctypes.c_long * 3)(1, 0x34325f5f, 0)
        print("wrote", libc.msgsnd(q, msg, 8, 0))
    """,
    "mqueue": """
        rt = ctypes.CDLL("librt.so.1", use_errno=True)
        print("wrote", rt.mq_open(b"/rs-covert", 0o100 | 0o2, 0o666, None))  # O_CREAT|O_RDWR
    """,
}
READERS = {
    "shm": f"print('seen' if libc.shmget({KEY}, 0, 0) >= 0 else 'absent')",
    "sem": f"print('seen' if libc.semget({KEY}, 0, 0) >= 0 else 'absent')",
    "msg": f"print('seen' if libc.msgget({KEY}, 0) >= 0 else 'absent')",
    "mqueue": """
        rt = ctypes.CDLL("librt.so.1", use_errno=True)
        print('seen' if rt.mq_open(b"/rs-covert", 0) >= 0 else 'absent')
    """,
}


def _py(*parts: str) -> Program:
    return Program(python=_LIBC + "\n".join(textwrap.dedent(p) for p in parts), limits=QUICK)


@pytest.mark.parametrize("kind", sorted(WRITERS))
def test_ipc_objects_do_not_survive_into_the_next_run(mode_server: ForkServer, kind: str) -> None:
    wrote = mode_server.run_programs([_py(WRITERS[kind])])[0]
    assert wrote.ok and wrote.stdout.startswith(b"wrote ") and b"-1" not in wrote.stdout, wrote
    # In the same run the object is there (the reader works) ...
    both = mode_server.run_programs([_py(WRITERS[kind], READERS[kind])])[0]
    assert both.stdout.endswith(b"seen\n"), both
    # ... and in the next run it is gone.
    later = mode_server.run_programs([_py(READERS[kind])])[0]
    assert later.ok and later.stdout == b"absent\n", later


@pytest.mark.parametrize("kind", sorted(WRITERS))
def test_a_pair_does_not_share_ipc(mode_server: ForkServer, kind: str) -> None:
    # The candidate writes, then tells the judge over their socket; the judge then looks.
    candidate = _py(WRITERS[kind], "import socket\nsocket.socket(fileno=3).sendall(b'x')\n")
    judge = _py("import socket\ns = socket.socket(fileno=3)\ns.recv(1)\n", READERS[kind])
    looked, wrote = mode_server.run_programs([judge, candidate])
    assert wrote.stdout.startswith(b"wrote "), wrote
    assert looked.stdout == b"absent\n", looked


def test_each_run_has_its_own_hostname_and_cannot_change_it(mode_server: ForkServer) -> None:
    rename = "print(os.uname().nodename, flush=True)\n__import__('socket').sethostname('pwned')\n"
    r = mode_server.run_programs([_py(rename)])[0]
    assert r.stdout.strip() == b"rewardsmith-sandbox" != socket.gethostname().encode(), r
    assert r.signal is not None or r.exit_code != 0  # refused: SIGSYS (seccomp)
    assert mode_server.run_programs([_py("print(os.uname().nodename)")])[0].stdout == (
        b"rewardsmith-sandbox\n"
    )
