"""Which mode a machine gets, that it is reported, and that a forced mode is honoured."""

from __future__ import annotations

import pytest

from rewardsmith.verifiers.code import CodeTests
from rewardsmith.verifiers.sandbox import ForkServer, Limits, Program, modes, run_python
from rewardsmith.verifiers.sandbox.modes import Host, Mode, select_mode
from rewardsmith.verifiers.types import Sample

V1 = {"memory": "/sys/fs/cgroup/memory", "pids": "/p", "cpuacct": "/c"}
V2 = ("cpu", "memory", "pids")


@pytest.mark.parametrize(
    ("host", "requested", "mode"),
    [
        (Host(root=True, arch="x86_64", cgroup_v1=V1), None, Mode.PRIVILEGED),
        (Host(root=True, arch="x86_64", cgroup_v1={"memory": "/m"}), None, Mode.ROOTLESS),
        (
            Host(
                root=True,
                arch="x86_64",
                cgroup_v2="/sys/fs/cgroup",
                cgroup_v2_controllers=("cpu", "memory", "pids"),
            ),
            None,
            Mode.CGROUP2,
        ),
        (  # not root: a delegated v2 scope is only used when asked for
            Host(
                root=False,
                arch="x86_64",
                cgroup_v2="/sys/fs/cgroup",
                cgroup_v2_controllers=("memory", "pids"),
            ),
            None,
            Mode.ROOTLESS,
        ),
        (Host(root=False, arch="x86_64", cgroup_v1=V1), None, Mode.ROOTLESS),
        (Host(root=True, arch="x86_64", cgroup_v1=V1), "rootless", Mode.ROOTLESS),
        (Host(root=False, arch="x86_64"), "cgroup2", Mode.CGROUP2),
        (Host(root=True, arch="x86_64", cgroup_v1=V1), "auto", Mode.PRIVILEGED),
        (Host(root=False, arch="x86_64", user_namespaces=False), None, None),
        (Host(root=True, arch="x86_64"), "jail", None),
    ],
)
def test_mode_selection(
    host: Host, requested: str | None, mode: Mode | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(modes.ENV_MODE, raising=False)
    chosen, why = select_mode(host, requested)
    assert chosen is mode and why


def test_the_environment_variable_forces_a_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(modes.ENV_MODE, "rootless")
    assert select_mode(Host(root=True, arch="x86_64", cgroup_v1=V1))[0] is Mode.ROOTLESS
    monkeypatch.setenv(modes.ENV_MODE, "nonsense")
    chosen, why = select_mode(Host(root=True, arch="x86_64", cgroup_v1=V1))
    assert chosen is None and "nonsense" in why


def test_probe_reads_this_machine() -> None:
    host = modes.probe()
    assert host.arch and isinstance(host.root, bool)
    assert host.user_namespaces is None  # only checked when asked: it starts a process


def test_every_result_and_code_verdict_names_the_mode() -> None:
    result = run_python("print(1)", limits=Limits(wall_s=5))
    assert result.mode in {m.value for m in Mode}
    ref = {"format": "calls", "fn": "f", "cases": [{"input": "(1,)", "output": "1"}]}
    verdict = CodeTests()(Sample(id="1", completion="def f(x):\n    return x\n", reference=ref))
    assert verdict.evidence["sandbox_mode"] == result.mode
    stdio = {"format": "stdio", "cases": [{"input": "", "output": "1"}]}
    verdict = CodeTests()(Sample(id="2", completion="print(1)", reference=stdio))
    assert verdict.evidence["sandbox_mode"] == result.mode


@pytest.mark.sandbox
def test_a_forced_mode_is_the_mode_of_its_results(mode: str) -> None:
    with ForkServer(mode=mode) as server:
        result = server.run_programs([Program(python="print(1)")])[0]
    assert server.mode == mode and result.mode == mode and result.stdout == b"1\n"


def test_an_impossible_mode_gives_an_error_result_not_an_exception() -> None:
    server = ForkServer(mode="no-such-mode")
    result = server.run_programs([Program(python="print(1)")])[0]
    server.close()
    assert result.error and "no-such-mode" in result.error and result.mode is None
