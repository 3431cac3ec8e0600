"""The cgroup v2 path's logic, against a fake cgroup tree in a temp dir.

The project's machines mount cgroup v2 without controllers, so the real thing cannot run
here (docs/code.md says it is untested on a real v2 host). The fake tree is plain files
laid out as the kernel lays them out; `FakeKernel` fills a new cgroup's files the way the
kernel would when the code makes the directory.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from rewardsmith.verifiers.sandbox import modes
from rewardsmith.verifiers.sandbox._client import server_config

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "verifiers" / "sandbox"))
import _cgroup  # the server's module, loaded the way the server loads it

# Files the code only writes start empty: a plain file, unlike the kernel's, would keep
# the tail of a longer old value under a shorter new one.
FILES = {
    "cgroup.controllers": "cpuset cpu io memory hugetlb pids rdma misc\n",
    "cgroup.subtree_control": "",
    "cgroup.procs": "",
    "cgroup.kill": "",
    "memory.max": "",
    "memory.swap.max": "",
    "memory.peak": "0\n",
    "memory.events": "low 0\nhigh 0\nmax 0\noom 0\noom_kill 0\noom_group_kill 0\n",
    "pids.max": "",
    "pids.events": "max 0\n",
    "cpu.max": "",
    "cpu.stat": "usage_usec 0\nuser_usec 0\nsystem_usec 0\n",
}


class FakeKernel:
    """A cgroup v2 mount in a temp dir: every directory made under it gets the files."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.populate(root)

    def populate(self, path: Path, **overrides: str) -> None:
        path.mkdir(parents=True, exist_ok=True)
        for name, text in {**FILES, **overrides}.items():
            if not (path / name).exists():
                (path / name).write_text(text)

    def read(self, *parts: str) -> str:
        return (self.root.joinpath(*parts)).read_text()


@pytest.fixture
def kernel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeKernel:
    fake = FakeKernel(tmp_path / "cgroup")
    real_makedirs = os.makedirs

    def makedirs(name: str, mode: int = 0o777, exist_ok: bool = False) -> None:
        real_makedirs(name, mode, exist_ok)
        if str(name).startswith(str(fake.root)):
            fake.populate(Path(name))

    monkeypatch.setattr(_cgroup.os, "makedirs", makedirs)
    return fake


def test_root_makes_its_own_subtree_with_controllers_enabled(kernel: FakeKernel) -> None:
    base = _cgroup.v2_base(str(kernel.root), "", root=True)
    assert base == str(kernel.root / "rewardsmith-sandbox")
    assert kernel.read("cgroup.subtree_control") == "+memory +pids +cpu"
    assert kernel.read("rewardsmith-sandbox", "cgroup.subtree_control") == "+memory +pids +cpu"


def test_not_root_moves_the_server_into_a_leaf_of_its_delegated_scope(kernel: FakeKernel) -> None:
    own = "/user.slice/user-1000.slice/user@1000.service/app.slice/run-r1.scope"
    kernel.populate(kernel.root / own.lstrip("/"))
    base = _cgroup.v2_base(str(kernel.root), own, root=False)
    assert base == str(kernel.root) + own
    assert (Path(base) / "server" / "cgroup.procs").read_text() == "0"  # "0": the writer
    assert (Path(base) / "cgroup.subtree_control").read_text() == "+memory +pids +cpu"


def test_controllers_already_enabled_are_left_alone(kernel: FakeKernel) -> None:
    (kernel.root / "cgroup.subtree_control").write_text("cpu memory pids\n")
    _cgroup.v2_base(str(kernel.root), "", root=True)
    assert kernel.read("cgroup.subtree_control") == "cpu memory pids\n"


def test_a_tree_without_memory_or_pids_is_refused(kernel: FakeKernel) -> None:
    (kernel.root / "cgroup.controllers").write_text("cpu io\n")
    with pytest.raises(OSError, match="memory, pids"):
        _cgroup.v2_base(str(kernel.root), "", root=True)


def test_limits_are_written_and_counters_read(kernel: FakeKernel) -> None:
    base = _cgroup.v2_base(str(kernel.root), "", root=True)
    cg = _cgroup.CgroupV2(base, "srv-0")
    leaf = Path(cg.path)
    assert leaf.name == "srv-0-1" and cg.join_fds()
    (leaf / "cpu.stat").write_text("usage_usec 1500\n")  # the waiting jail's own start-up
    cg.prepare(memory_bytes=256 << 20, processes=32, cpus=1.5)
    assert (leaf / "memory.max").read_text() == str(256 << 20)
    assert (leaf / "memory.swap.max").read_text() == "0"
    assert (leaf / "pids.max").read_text() == "32"
    assert (leaf / "cpu.max").read_text() == "150000 100000"
    (leaf / "memory.peak").write_text("73400320\n")
    (leaf / "memory.events").write_text("max 3\noom 1\noom_kill 1\n")
    (leaf / "pids.events").write_text("max 2\n")
    (leaf / "cpu.stat").write_text("usage_usec 4500\nuser_usec 4000\n")
    assert cg.stats() == {
        "peak_memory_bytes": 73400320,
        "cpu_ns": 3_000_000,
        "oom": True,
        "pids_max_hit": True,
    }


def test_each_run_gets_a_fresh_leaf_and_the_old_one_is_removed(kernel: FakeKernel) -> None:
    base = _cgroup.v2_base(str(kernel.root), "", root=True)
    cg = _cgroup.CgroupV2(base, "srv-1")
    first = Path(cg.path)
    for name in FILES:  # a real cgroup's files vanish with it; the fake's must go by hand
        (first / name).unlink()
    cg.recycle()
    assert not first.exists() and Path(cg.path).name == "srv-1-2"
    assert cg.stats()["oom"] is False and cg.stats()["cpu_ns"] == 0
    assert (Path(cg.path) / "cgroup.kill").read_text() == ""  # not killed yet


def test_kill_writes_cgroup_kill_and_never_signals_itself_or_pid_1(
    kernel: FakeKernel, monkeypatch: pytest.MonkeyPatch
) -> None:
    signalled: list[int] = []
    monkeypatch.setattr(_cgroup.os, "kill", lambda pid, sig: signalled.append(pid))
    base = _cgroup.v2_base(str(kernel.root), "", root=True)
    cg = _cgroup.CgroupV2(base, "srv-2")
    (Path(cg.path) / "cgroup.procs").write_text(f"0\n1\n{os.getpid()}\n4242\n")
    assert cg.kill_all(timeout_s=0.05) is False  # still "there": the fake never empties
    assert (Path(cg.path) / "cgroup.kill").read_text() == "1"
    assert set(signalled) == {4242}


def test_older_kernels_without_memory_peak_or_cgroup_kill_still_work(kernel: FakeKernel) -> None:
    base = _cgroup.v2_base(str(kernel.root), "", root=True)
    leaf = kernel.root / "rewardsmith-sandbox" / "old-1"
    kernel.populate(leaf)
    for name in ("memory.peak", "cgroup.kill", "memory.swap.max"):
        (leaf / name).unlink()
    cg = _cgroup.CgroupV2(base, "old")
    cg.prepare(memory_bytes=64 << 20, processes=8, cpus=1)
    assert cg.stats()["peak_memory_bytes"] == 0 and cg.kill_all(timeout_s=0.05)


def test_not_root_starts_the_server_in_a_delegated_scope() -> None:
    host = modes.Host(root=False, arch="x86_64", cgroup_v2="/sys/fs/cgroup")
    config, wrapper = server_config(modes.Mode.CGROUP2, host, "n", (), ())
    assert wrapper[:3] == ("systemd-run", "--user", "--scope") and "Delegate=yes" in wrapper
    assert config["userns"] and config["cgroup_mount"] == "/sys/fs/cgroup"
    root = modes.Host(root=True, arch="x86_64", cgroup_v2="/sys/fs/cgroup")
    config, wrapper = server_config(modes.Mode.CGROUP2, root, "n", (), ())
    assert wrapper == () and not config["userns"]
