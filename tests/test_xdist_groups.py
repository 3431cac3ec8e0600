"""`make test` runs pytest-xdist workers (TEST_WORKERS) with ``--dist loadgroup``; tests/conftest.py
puts tests that must share a worker in one group (fixed process markers, a module's
expensive fixture). A pytest or xdist upgrade once dropped every group without a word
(pytest-dev/pytest-xdist#1386): this run fails if the groups stop reaching the scheduler."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
# Two of its tests share a module-scoped fixture (its junit report), four do not.
TARGET = "tests/verifiers/diagnostics/parsers/test_junit.py"


def test_tests_sharing_a_module_fixture_run_on_one_worker() -> None:
    pytest.importorskip("xdist")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-n", "2", "--dist", "loadgroup", "-v", "-p",
         "no:cacheprovider", TARGET],
        cwd=REPO, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:]
    grouped = re.findall(r"\[(gw\d)\] .*PASSED .*@module:" + re.escape(TARGET), done.stdout)
    assert len(grouped) == 2 and len(set(grouped)) == 1, done.stdout[-3000:]


def test_slow_ungrouped_tests_are_handed_out_before_the_others() -> None:
    """The mesh verdict pins (slow, no group) are collected after test_junit's free tests;
    under loadgroup they must still start first after the groups, not last (--setup-plan:
    the order is shown, nothing runs)."""
    pytest.importorskip("xdist")
    slow = "tests/verifiers/mesh/test_verdicts_pinned.py"
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-n", "1", "--dist", "loadgroup", "-v", "--setup-plan",
         "-p", "no:cacheprovider", TARGET, slow],
        cwd=REPO, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    order = re.findall(r"^(tests/[^:\s]+)::.* $", done.stdout, re.MULTILINE)
    assert len(order) == 8, done.stdout[-3000:]
    assert order == [TARGET] * 2 + [slow] * 2 + [TARGET] * 4, done.stdout[-3000:]
