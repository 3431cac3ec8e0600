"""Each isolation claim in the sandbox's module docstring, tested adversarially.

Scratch files live under the test's tmp_path; hostile programs aim at those paths, never at
real files. Time limits are generous (the machine is shared): a test asserts what ended a
run, never how fast.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import sys
import textwrap
import threading
from pathlib import Path

import psutil
import pytest

from rewardsmith.verifiers.sandbox import (
    ForkServer,
    LimitHit,
    Limits,
    Program,
    run,
    run_python,
)

pytestmark = pytest.mark.sandbox

REPO = Path(__file__).resolve().parents[3]
VENV = Path(sys.prefix)
QUICK = Limits(wall_s=5, cpu_s=5, memory_bytes=256 << 20, processes=32)


def py(code: str, **kw: object) -> object:
    return run_python(textwrap.dedent(code), limits=kw.pop("limits", QUICK), **kw)  # type: ignore[arg-type]


def test_program_runs_as_nobody_without_capabilities() -> None:
    r = py(
        """
        import os
        status = dict(l.split(':\\t', 1) for l in open('/proc/self/status').read().splitlines())
        print(os.getuid(), os.getgid(), os.getgroups(), status['CapEff'].strip(),
              status['CapBnd'].strip() != '', status['NoNewPrivs'].strip())
        """
    )
    assert r.stdout.split() == [b"65534", b"65534", b"[]", b"0000000000000000", b"True", b"1"]


def test_exec_and_warm_python_give_the_same_jail() -> None:
    probe = "import os; print(os.getuid(), os.getcwd(), sorted(os.listdir('/')))"
    a = run(["python3", "-I", "-c", probe], limits=QUICK)
    b = run_python(probe, limits=QUICK)
    assert a.stdout == b.stdout and a.exit_code == b.exit_code == 0
    # The venv's top folder is there, holding only the venv's own read-only bind.
    assert b"/box" in a.stdout and f"'{VENV.parts[1]}'".encode() in a.stdout


@pytest.mark.parametrize(
    "path",
    [
        str(REPO / "pyproject.toml"),
        str(REPO.parent / "shared"),
        "/root/.bashrc",
        "/home",
        "/var/log",
        "/srv",
    ],
)
def test_host_files_outside_system_dirs_are_invisible(path: str) -> None:
    r = py(f"import os; print(os.path.exists({path!r}) and os.listdir({path!r}) != [])")
    assert r.stdout == b"False\n"


def test_scratch_file_of_the_host_is_invisible_and_unchanged(tmp_path) -> None:
    secret = tmp_path / "gold.txt"
    secret.write_text("the answer is 42")
    r = py(
        f"""
        import os
        for p in ({str(secret)!r}, {str(tmp_path)!r} + '/new.txt'):
            try:
                open(p, 'a').write('pwned')
                print('wrote', p)
            except OSError as e:
                print(type(e).__name__)
        """
    )
    assert b"wrote" not in r.stdout
    assert secret.read_text() == "the answer is 42"
    assert sorted(os.listdir(tmp_path)) == ["gold.txt"]


@pytest.mark.parametrize("path", ["/usr/evil", "/etc/evil", "/evil", str(VENV / "evil")])
def test_system_view_is_read_only(path: str) -> None:
    r = py(f"open({path!r}, 'w')")
    assert r.exit_code == 1 and (b"Read-only" in r.stderr or b"Permission" in r.stderr)


def test_no_network_to_a_loopback_server_of_the_host() -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    server.settimeout(3)
    port = server.getsockname()[1]
    accepted: list[object] = []

    def accept() -> None:
        with contextlib.suppress(OSError):
            accepted.append(server.accept())

    t = threading.Thread(target=accept)
    t.start()
    r = py(
        f"""
        import socket
        for host in ('127.0.0.1', '1.1.1.1', 'example.com'):
            try:
                socket.create_connection((host, {port} if host == '127.0.0.1' else 80), timeout=2)
                print('connected', host)
            except OSError as e:
                print('refused', host)
        """
    )
    t.join()
    server.close()
    assert r.stdout.count(b"refused") == 3 and not accepted


def test_environment_is_scrubbed_even_in_process_memory(monkeypatch) -> None:
    monkeypatch.setenv("RS_TEST_SECRET", "hunter2-token")
    with ForkServer() as server:  # started with the secret in the parent's environment
        r = server.run_programs(
            [
                Program(
                    python=textwrap.dedent(
                        """
                        import ctypes, os
                        found = 'hunter2' in str(dict(os.environ))
                        for pid in os.listdir('/proc'):
                            if pid.isdigit():
                                try:
                                    found |= b'hunter2' in open(f'/proc/{pid}/environ', 'rb').read()
                                except OSError:
                                    pass
                        for line in open('/proc/self/maps'):
                            if '[stack]' in line:
                                lo, hi = (int(x, 16) for x in line.split()[0].split('-'))
                                found |= b'hunter2' in ctypes.string_at(lo, hi - lo)
                        print(found, sorted(os.environ))
                        """
                    ),
                    limits=QUICK,
                )
            ]
        )[0]
    assert r.stdout.startswith(b"False ['HOME', 'LANG', 'PATH', 'TMPDIR']"), r


def test_the_programs_environment_is_its_own_in_python_and_for_its_children() -> None:
    """Warm Python gets the program's variables in `os.environ` and in the C environment a
    child inherits, the same set in both: none of the server's are left in either."""
    code = textwrap.dedent(
        """
        import os, subprocess
        child = subprocess.run(["env"], capture_output=True, text=True).stdout
        print(sorted(os.environ.items()) == sorted(
            tuple(line.split("=", 1)) for line in child.splitlines()))
        print(sorted(os.environ))
        """
    )
    r = run_python(code, env={"RS_EXTRA": "1"}, limits=QUICK)
    assert r.stdout.split(b"\n")[:2] == [
        b"True",
        b"['HOME', 'LANG', 'PATH', 'RS_EXTRA', 'TMPDIR']",
    ], r


def test_own_pid_namespace_hides_and_protects_the_host() -> None:
    me = os.getpid()
    r = py(
        f"""
        import os, signal
        print(sorted(int(p) for p in os.listdir('/proc') if p.isdigit()))
        for pid in range(1, 4000):
            if pid == os.getpid():
                continue
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        try:
            os.kill({me}, 0)
            print('sees host pid')
        except OSError:
            print('host hidden')
        """
    )
    pids, verdict = r.stdout.splitlines()
    assert set(eval(pids)) <= {1, 2} and verdict == b"host hidden"  # at most init and itself
    assert run_python("print('server still serves')", limits=QUICK).stdout


def _leftovers(marker: str) -> list[psutil.Process]:
    found = []
    for proc in psutil.process_iter(["cmdline"]):
        if marker in " ".join(proc.info["cmdline"] or []):
            found.append(proc)
    return found


def test_setsid_daemons_and_zombies_die_with_the_program() -> None:
    r = py(
        """
        import os
        for _ in range(3):
            if os.fork() == 0:
                os.setsid()
                if os.fork() == 0:
                    os.execv('/bin/sleep', ['sleep', '3617.25'])
                os._exit(0)
        for _ in range(3):
            if os.fork() == 0:
                os._exit(0)   # zombies: never reaped
        print('parent exits')
        """
    )
    assert r.stdout == b"parent exits\n"
    assert _leftovers("3617.25") == []


def test_a_forked_daemon_cannot_rewrite_files_later() -> None:
    r = py(
        """
        import os, time
        open('result.txt', 'w').write('honest')
        if os.fork() == 0:
            os.setsid()
            time.sleep(0.5)
            open('result.txt', 'w').write('forged')
            os._exit(0)
        """,
        collect=("result.txt",),
    )
    assert r.files == {"result.txt": b"honest"}


@pytest.mark.parametrize(
    ("code", "limits", "hit"),
    [
        ("import time; time.sleep(60)", QUICK.replace(wall_s=1), LimitHit.WALL_TIME),
        ("while True: pass", QUICK.replace(cpu_s=1, wall_s=30), LimitHit.CPU_TIME),
        (
            "x = []\nwhile True:\n    x.append(bytearray(1 << 22))",
            QUICK.replace(memory_bytes=128 << 20),
            LimitHit.MEMORY,
        ),
        (
            "import os\nwhile True:\n    try: os.fork()\n    except OSError: pass",
            QUICK.replace(processes=16, wall_s=3),
            LimitHit.PROCESSES,
        ),
        (
            "import threading, time\nfor _ in range(10**4):\n"
            "    threading.Thread(target=time.sleep, args=(30,)).start()",
            QUICK.replace(processes=16),
            LimitHit.PROCESSES,
        ),
        ("import sys\nwhile True: sys.stdout.write('x' * 4096)", QUICK, LimitHit.OUTPUT),
        ("import os\nos.close(1)\nwhile True: pass", QUICK.replace(wall_s=2, cpu_s=30), None),
        (
            "import signal\nsignal.signal(signal.SIGXFSZ, signal.SIG_DFL)\n"
            "open('big', 'wb').write(b'x' * (4 << 20))",
            QUICK.replace(file_bytes=1 << 20),
            LimitHit.FILE_SIZE,
        ),
        (
            "for i in range(100):\n    open(f'f{i}', 'wb').write(b'x' * (1 << 20))",
            QUICK.replace(disk_bytes=8 << 20),
            LimitHit.DISK,
        ),
    ],
    ids=["sleep", "busy", "memory", "fork-bomb", "threads", "flood", "closed-out", "fsize", "disk"],
)
@pytest.mark.slow
def test_each_limit_is_enforced_and_named(code: str, limits: Limits, hit: LimitHit | None) -> None:
    # Exec'd, so the program is not the namespace's init (warm Python is; see _jail).
    r = run(["python3", "-I", "-c", code], limits=limits)
    expected = hit or LimitHit.WALL_TIME  # closed stdout then spin: the wall clock ends it
    assert r.limit_hit is expected, r
    assert r.exit_code != 0 and r.error is None
    assert not r.ok


@pytest.mark.parametrize(
    "code",
    [
        "import os\nwhile True:\n    try: os.fork()\n    except OSError: pass",
        "import threading, time\nwhile True:\n    try: threading.Thread(target=time.sleep,"
        " args=(60,)).start()\n    except RuntimeError: pass",
    ],
    ids=["fork-bomb", "thread-bomb"],
)
def test_a_program_refused_a_process_is_stopped_there_not_at_its_deadline(code: str) -> None:
    # With a cgroup, a fork refused at pids.max ends the run (checked every 50 ms): a bomb
    # that retries forever used to spin until its wall clock, a minute here. Rootless
    # mode has no such counter and still runs to its (here short) deadline.
    cgroup = run(["python3", "-I", "-c", "pass"], limits=QUICK).mode == "privileged"
    limits = QUICK.replace(wall_s=60 if cgroup else 3, cpu_s=60, processes=16)
    r = run(["python3", "-I", "-c", code], limits=limits)
    assert r.limit_hit is LimitHit.PROCESSES, r
    if cgroup:
        assert r.wall_s < 20, r


def test_output_is_capped_and_flagged() -> None:
    r = py("import sys\nsys.stdout.write('y' * 100000)", limits=QUICK.replace(output_bytes=1000))
    assert len(r.stdout) == 1000 and r.stdout_truncated and r.limit_hit is LimitHit.OUTPUT


def test_open_files_limit_is_contained() -> None:
    r = py("fs = []\nwhile True: fs.append(open('/dev/null'))", limits=QUICK.replace(open_files=64))
    assert r.exit_code == 1 and b"Too many open files" in r.stderr


@pytest.mark.parametrize(("stdin", "expected"), [(None, b"''\n"), (b"abc\n", b"'abc\\n'\n")])
def test_stdin_is_dev_null_unless_given(stdin: bytes | None, expected: bytes) -> None:
    r = py("import sys; print(repr(sys.stdin.read()))", stdin=stdin)
    assert r.stdout == expected


def test_large_stdin_does_not_deadlock() -> None:
    data = b"z" * (4 << 20)
    r = py("import sys; print(len(sys.stdin.buffer.read()))", stdin=data)
    assert r.stdout == b"4194304\n"


def test_clock_cannot_be_changed() -> None:
    r = py("import time\ntime.clock_settime(time.CLOCK_REALTIME, 0)")
    assert r.signal == signal.SIGSYS and "denies" in r.describe()  # seccomp: see test_seccomp


def test_collect_reads_back_regular_files_only() -> None:
    r = py(
        """
        import os
        os.makedirs('out', exist_ok=True)
        open('out/mesh.stl', 'wb').write(b'solid x')
        open('big.bin', 'wb').write(b'0' * 5000)
        os.symlink('/etc/passwd', 'link')
        os.symlink('/etc', 'dirlink')
        os.mkdir('adir')
        """,
        collect=("out/mesh.stl", "big.bin", "link", "dirlink/passwd", "adir", "absent"),
        limits=QUICK.replace(collect_bytes=4096),
    )
    assert r.files == {"out/mesh.stl": b"solid x"}
    assert set(r.missing) == {"big.bin", "link", "dirlink/passwd", "adir", "absent"}


def test_readonly_files_cannot_be_changed_or_removed() -> None:
    r = py(
        """
        import os
        for act in (lambda: open('test_x.py', 'w'), lambda: os.remove('test_x.py'),
                    lambda: os.rename('test_x.py', 'y.py'), lambda: os.chmod('test_x.py', 0o777)):
            try:
                act()
                print('changed')
            except OSError:
                print('refused')
        print(open('test_x.py').read())
        open('mine.txt', 'w').write('ok')
        """,
        readonly_files={"test_x.py": b"assert True"},
    )
    assert r.stdout.split() == [b"refused"] * 4 + [b"assert", b"True"]


def test_file_names_must_stay_inside_the_work_dir() -> None:
    for name in ("../x", "/etc/passwd", ""):
        with pytest.raises(ValueError, match="relative"):
            Program(python="pass", files={name: b""})


def test_missing_command_is_a_program_failure_not_a_crash() -> None:
    r = run(["/nonexistent/tool"], limits=QUICK)
    assert r.exit_code == 127 and r.error is None and b"cannot execute" in r.stderr


def test_two_programs_talk_only_through_their_socket() -> None:
    judge = Program(
        python="import socket\ns = socket.socket(fileno=3)\ns.sendall(b'ping')\n"
        "print(s.recv(4).decode(), __import__('os').getuid())",
        limits=QUICK,
    )
    candidate = Program(
        # It prints before it answers: once the judge is done, the candidate is stopped.
        python="import socket, os\ns = socket.socket(fileno=3)\nprint(os.getuid(), flush=True)\n"
        "s.sendall(s.recv(4)[::-1])",
        limits=QUICK,
    )
    with ForkServer() as server:
        a, b = server.run_programs([judge, candidate])
    assert a.stdout == b"gnip 65534\n" and b.stdout == b"65533\n"


def test_fork_server_is_not_picklable() -> None:
    import pickle

    with ForkServer() as server, pytest.raises(TypeError, match="live process"):
        pickle.dumps(server)


def test_preloaded_modules_are_already_imported() -> None:
    code = "import sys; print('decimal' in sys.modules)"
    assert run_python(code, limits=QUICK, preload=("decimal",)).stdout == b"True\n"
    assert run_python(code, limits=QUICK).stdout == b"False\n"


def test_server_outlives_the_thread_that_started_it() -> None:
    # PR_SET_PDEATHSIG would kill it when a pool thread exits: the server must not use it.
    started: list[ForkServer] = []
    worker = threading.Thread(target=lambda: started.append(ForkServer()))
    worker.start()
    worker.join()
    with started[0] as server:
        result = server.run_programs([Program(python="print('alive')", limits=QUICK)])[0]
    assert result.stdout == b"alive\n" and result.error is None


def test_no_core_dumps_and_a_fresh_tmp_per_run() -> None:
    first = py(
        "import resource\nopen('/tmp/left.txt', 'w').write('x')\n"
        "print(resource.getrlimit(resource.RLIMIT_CORE))"
    )
    second = py("import os\nprint(os.path.exists('/tmp/left.txt'), os.listdir('.'))")
    assert first.stdout == b"(0, 0)\n" and second.stdout == b"False []\n"


def test_a_server_that_cannot_start_gives_an_error_result_not_an_exception() -> None:
    server = ForkServer(preload=("no_such_module_for_rewardsmith_tests",))
    result = server.run_programs([Program(python="print(1)", limits=QUICK)])[0]
    server.close()
    assert result.error is not None and "failed to start" in result.error
    assert result.exit_code is None and not result.ok
