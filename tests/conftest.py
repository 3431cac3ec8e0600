"""Shared fixtures. Domain folders add their own conftest.py beside their tests."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.page_runner import PageRunner

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
# unique per test) must not overlap under pytest-xdist (`make test` runs two workers): the
# rootless rerun runs the same files again as another user. `--dist loadgroup` keeps each
# group on one worker, in order; without xdist the mark does nothing.
SAME_WORKER = {
    "fixed-process-markers": (
        "tests/verifiers/code/test_abuse.py",
        "tests/verifiers/sandbox/test_jail.py",
        "tests/verifiers/sandbox/test_rootless_rerun.py",
    ),
}


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for group, files in SAME_WORKER.items():
        for item in items:
            if item.nodeid.split("::", 1)[0] in files:
                item.add_marker(pytest.mark.xdist_group(group))
