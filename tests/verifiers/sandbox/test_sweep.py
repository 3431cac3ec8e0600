"""The sweep of `/tmp/rewardsmith-sandbox-*` folders left by servers whose client is gone."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

SANDBOX_DIR = Path(__file__).resolve().parents[3] / "verifiers" / "sandbox"


def _dead_pid() -> int:
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


def _sweep() -> None:
    # How the server is started (see _process): its folder on the path, `_frames` by path.
    frames = SANDBOX_DIR.parent / "warm" / "_frames.py"
    code = (
        f"import sys, importlib.util as u; sys.path.insert(0, {str(SANDBOX_DIR)!r})\n"
        f"s = u.spec_from_file_location('_frames', {str(frames)!r}); m = u.module_from_spec(s)\n"
        "sys.modules['_frames'] = m; s.loader.exec_module(m); import _server\n"
        "_server._sweep_stale_dirs()"
    )
    subprocess.run([sys.executable, "-c", code], check=True, timeout=60)


def test_sweep_removes_empty_leftovers_and_their_parents_but_not_live_ones() -> None:
    dead, tag = _dead_pid(), f"sweeptest{os.getpid()}"
    made = {
        "empty_base": Path(f"/tmp/rewardsmith-sandbox-{dead}-{tag}a"),  # root/ already gone
        "with_root": Path(f"/tmp/rewardsmith-sandbox-{dead}-{tag}b"),
        "live": Path(f"/tmp/rewardsmith-sandbox-{os.getpid()}-{tag}c"),
        "not_empty": Path(f"/tmp/rewardsmith-sandbox-{dead}-{tag}d"),
    }
    for path in made.values():
        path.mkdir()
    (made["with_root"] / "root").mkdir()
    (made["live"] / "root").mkdir()
    (made["not_empty"] / "root").mkdir()
    (made["not_empty"] / "root" / "kept").write_text("rmdir only, never rmtree")
    try:
        _sweep()
        assert not made["empty_base"].exists()
        assert not made["with_root"].exists()
        assert (made["live"] / "root").is_dir()
        assert (made["not_empty"] / "root" / "kept").exists()
    finally:
        for path in made.values():
            for sub in (path / "root" / "kept", path / "root", path):
                if sub.is_dir():
                    sub.rmdir()
                elif sub.exists():
                    sub.unlink()
