"""Shared fixtures. Domain folders add their own conftest.py beside their tests."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.page_runner import PageRunner

# One OpenMP thread, and threads that sleep rather than spin while they wait, for torch here
# and for every process a test starts (trainers, the vLLM server, the page runner), unless
# the caller set them: set before anything imports torch, whose OpenMP reads them once. The
# xdist workers already fill the cores, and waiting OpenMP threads spin on a core another
# worker needs. Measured, -n 0 at load 4-22: the chat-template learning test 106 CPU-s on
# two spinning threads, 28 with either setting; its file, the per-turn credit and the two
# vLLM files 333 CPU-s before, 141 after.
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = REPO_ROOT.parent / "shared" / "data"


@pytest.fixture(scope="session")
def shared_data() -> Path:
    """../shared/data: real third-party files. Skips where the folder is absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip(f"shared test data not found at {SHARED_DATA}")
    return SHARED_DATA


@pytest.fixture(scope="session")
def page_runner() -> Iterator[PageRunner]:
    """One warm interpreter for the docs and CLI page runs, forked per run
    (tests/support/page_runner.py): the imports are paid once a session, not per page."""
    runner = PageRunner(REPO_ROOT)
    yield runner
    runner.close()


# Tests that look for processes by a fixed marker anywhere on the machine (not one made
# unique per test) must not overlap under pytest-xdist (`make test` runs several workers): the
# rootless rerun runs the same files again as another user. `--dist loadgroup` keeps each
# group on one worker, in order; without xdist the mark does nothing.
SAME_WORKER = {
    "fixed-process-markers": (
        "tests/verifiers/code/test_abuse.py",
        "tests/verifiers/sandbox/test_jail.py",
        "tests/verifiers/sandbox/test_rootless_rerun.py",
    ),
}


# tryfirst: pytest-xdist reads the groups in its own pytest_collection_modifyitems, which
# runs before this conftest's (registered earlier) unless this one asks to go first.
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for group, files in SAME_WORKER.items():
        for item in items:
            if item.nodeid.split("::", 1)[0] in files:
                item.add_marker(pytest.mark.xdist_group(group))
    for item in items:
        if item.get_closest_marker("xdist_group") is None and _uses_a_module_fixture(item):
            item.add_marker(pytest.mark.xdist_group(f"module:{item.nodeid.split('::', 1)[0]}"))


def _uses_a_module_fixture(item: pytest.Item) -> bool:
    """Whether `item` shares a module-scoped fixture (a vLLM server, a Ray cluster, a batch of
    builds): spread over several workers, such a fixture is set up once on each (the vLLM engine
    twice at ~90 s), so the tests that share it go to one worker. Tests of the module that
    use none stay free. xdist runs the groups with the most tests first, so a big group does
    not land at the end of the run."""
    info = getattr(item, "_fixtureinfo", None)
    defs = info.name2fixturedefs.values() if info is not None else ()
    return any(chain and chain[-1].scope == "module" for chain in defs)


class _GroupSuffix:
    """On an xdist worker under ``--dist loadgroup``, the group rides to the scheduler as a
    ``@group`` suffix of the node id. pytest-xdist 3.8 writes it to the old ``_nodeid``
    field, which pytest 9.2 no longer reads (pytest-dev/pytest-xdist#1386): every group was
    silently dropped and the tests spread as if unmarked. Written here to the id pytest
    reads, after xdist's own hook, and only where it is missing."""

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        from _pytest.nodes import coerce_node_id

        for item in items:
            marker = item.get_closest_marker("xdist_group")
            if marker is not None and "@" not in item.nodeid.rpartition("]")[2]:
                item._id = coerce_node_id(f"{item.nodeid}@{marker.args[0]}")


class _SlowFirst:
    """On an xdist worker under ``--dist loadgroup``, the tests marked ``slow`` that belong to
    no group are collected first. xdist hands out the groups first (most tests first), then
    the ungrouped tests one by one in collection order: without this, a slow test late in
    the alphabet (the mesh verdicts, 3D pose views) starts when the other workers have
    nothing left and runs alone at the end. Only the ungrouped tests move, so every group
    keeps its order; a run without xdist keeps the files' order."""

    @pytest.hookimpl(trylast=True)  # after pytest's own fixture-driven reordering
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        items.sort(key=lambda item: not _slow_and_ungrouped(item))  # stable: else unmoved


def _slow_and_ungrouped(item: pytest.Item) -> bool:
    return bool(item.get_closest_marker("slow")) and not item.get_closest_marker("xdist_group")


def pytest_configure(config: pytest.Config) -> None:
    if getattr(config.option, "loadgroup", False):  # set on xdist workers only
        config.pluginmanager.register(_GroupSuffix(), "rewardsmith-group-suffix")
        config.pluginmanager.register(_SlowFirst(), "rewardsmith-slow-first")
