"""Shared fixtures: the sandbox modes this machine can run, and a server per mode.

Tests that take `mode` or `mode_server` run once per mode that works here (privileged
needs root and cgroup v1; rootless needs user namespaces) and skip the others, saying why.
Tests without them use the machine's default mode (so the unprivileged rerun in CI puts
every one of them through the rootless mode). Helpers live in `sandbox_support`.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from sandbox_support import MODES, unavailable

from rewardsmith.verifiers.sandbox import ForkServer


@pytest.fixture(params=MODES, scope="module")
def mode(request: pytest.FixtureRequest) -> str:
    reason = unavailable(request.param)
    if reason:
        pytest.skip(reason)
    return str(request.param)


@pytest.fixture(scope="module")
def mode_server(mode: str) -> Iterator[ForkServer]:
    with ForkServer(mode=mode) as server:
        assert server.mode == mode, server.error
        yield server
