"""The sandbox and code tests again, as an unprivileged user, through the rootless mode.

Run as root where an unprivileged user exists (``.ci/run`` creates ``rewardsmith-ci``;
``REWARDSMITH_TEST_USER`` names another, or a bare uid), this reruns
``tests/verifiers/sandbox`` and ``tests/verifiers/code`` as that user (see `as_user`), so
CI checks both modes in one ``make test``: the same jail claims, limits, hack and abuse
corpora. Elsewhere it skips and says why.
"""

from __future__ import annotations

import os
import pwd
import re
import subprocess
import sys
from pathlib import Path

import pytest
from sandbox_support import RERUN_USER

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[3]
USER = RERUN_USER


def _user_or_skip() -> str:
    if os.geteuid() != 0:
        pytest.skip("not root: this is the unprivileged run itself (or no way to make one)")
    if not USER.isdigit():
        try:
            pwd.getpwnam(USER)
        except KeyError:
            pytest.skip(f"no unprivileged user {USER!r} (.ci/run creates it)")
    return USER


def test_sandbox_and_code_tests_pass_as_an_unprivileged_user() -> None:
    user = _user_or_skip()
    command = [
        sys.executable,
        str(Path(__file__).with_name("as_user.py")),
        user,
        "--",
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-x",
        "-p",
        "no:cacheprovider",
        "tests/verifiers/sandbox",
        "tests/verifiers/code",
    ]
    # No mode is forced: not root, the sandbox must choose rootless by itself.
    env = {k: v for k, v in os.environ.items() if k != "REWARDSMITH_SANDBOX_MODE"}
    done = subprocess.run(
        command, cwd=REPO, env=env, capture_output=True, text=True, timeout=900, check=False
    )
    tail = (done.stdout + done.stderr)[-6000:]
    print(tail)
    assert done.returncode == 0, tail
    passed = re.search(r"(\d+) passed", done.stdout)
    assert passed and int(passed[1]) > 200, tail  # the suites ran, not just skipped
