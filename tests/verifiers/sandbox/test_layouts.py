"""The sandbox under any path layout: checkout, venv, Python install, data and work dir
under /tmp, behind a symbolic link, on another mount; in every mode that runs here.

Each case builds the layout in a scratch folder under /tmp (see `layout_probe`), scores the
demo's code rows from the copied checkout with its own venv, and reads a data file from
the layout in a jailed command and a jailed Python. The hostile rows (an always-equal
object, an early exit) run only in the sandbox, from the scratch copy.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from sandbox_support import MODES, unavailable

from rewardsmith.verifiers.sandbox import ForkServer, Program

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]

PROBE = Path(__file__).with_name("layout_probe.py")
SANDBOX_DIR = Path(__file__).resolve().parents[3] / "verifiers" / "sandbox"
EXPECTED = {  # the demo's code rows: one right, four the model's failures
    "code-add-right": [1.0, "pass", None],
    "code-add-off_by_one": [0.0, "fail", "model"],
    "code-add-always_equal_hack": [0.0, "error", "model"],
    "code-add-exit_hack": [0.0, "error", "model"],
    "code-add-syntax_error": [0.0, "error", "model"],
}


def _modes() -> list[str]:
    runnable = [m for m in MODES if unavailable(m) is None]
    if not runnable:
        pytest.skip("no sandbox mode runs here: " + "; ".join(str(unavailable(m)) for m in MODES))
    return runnable


@pytest.mark.parametrize("layout", ["tmp", "symlink", "mount"])
def test_code_rows_and_data_work_from_a_layout(layout: str) -> None:
    if layout == "mount" and os.geteuid() != 0:
        pytest.skip("mounting a tmpfs for the layout needs root")
    modes = _modes()
    import tempfile

    with tempfile.TemporaryDirectory(prefix="rewardsmith-layout-", dir="/tmp") as scratch:
        done = subprocess.run(
            [sys.executable, str(PROBE), scratch, layout, *modes],
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        report = json.loads(done.stdout.strip().splitlines()[-1])
    for mode in modes:
        got = report[mode]
        assert "crashed" not in got, got
        assert got["imported_from"].startswith(scratch), got["imported_from"]
        if layout == "mount":  # the Python install itself is the one bound under /tmp
            assert got["python"].startswith(scratch), got["python"]
        assert got["data"] == ["data under the layout\n"] * 2, got["data"]
        assert got["score_exit"] == 0, got["score_output"]
        rows = {k: v[:3] for k, v in got["rows"].items()}
        assert rows == EXPECTED, (mode, got["rows"])
        assert {v[3] for v in got["rows"].values()} == {mode}


def test_a_template_that_cannot_be_made_says_why_from_its_child(tmp_path: Path) -> None:
    # A plain folder is no mount point: pivot_root refuses it in the child (or, without
    # root, unshare does). The error carries the child's own traceback, not a bare line.
    code = (
        f"import sys; sys.path.insert(0, {str(SANDBOX_DIR)!r}); import _root\n"
        f"try:\n    _root.make_template({str(tmp_path)!r})\n"
        "except OSError as exc:\n    print(exc)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True
    )
    out = done.stdout
    assert "the jail's mount namespace could not be made (in its child)" in out, out
    assert "Traceback" in out and "_template_child" in out, out
    assert "Error: [Errno" in out, out  # the errno the kernel gave


def test_a_server_that_cannot_start_puts_its_exception_in_every_result() -> None:
    mode = _modes()[0]
    with ForkServer(preload=("no_such_module_for_this_test",), mode=mode) as server:
        result = server.run_programs([Program(command=("true",))])[0]
    assert server.mode is None and result.error is not None
    assert "ModuleNotFoundError: No module named 'no_such_module_for_this_test'" in result.error
    assert "_server.py" in result.error, result.error  # where it was raised
