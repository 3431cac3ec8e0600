"""`make test` runs two pytest-xdist workers with ``--dist loadgroup``; tests/conftest.py
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
