"""Run every `rewardsmith ...` line of docs/cli.md, in order, from the repo root.

A line ending in ``# exit N`` must exit with N; every other line must exit 0. Blocks after
an ``<!-- not-run -->`` line (a server that runs until stopped) are skipped. Each line runs
in its own process, forked from one warm interpreter (the `page_runner` fixture).
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.page_runner import PageRunner

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / "docs" / "cli.md"
SHARED_DATA = REPO.parent / "shared" / "data"
BLOCK = re.compile(r"(<!-- not-run -->\s*)?```bash\n(.*?)```", re.DOTALL)


def _commands() -> list[tuple[str, int]]:
    commands = []
    for skip, block in BLOCK.findall(PAGE.read_text()):
        for line in block.splitlines():
            if skip or not line.startswith("rewardsmith "):
                continue
            command, _, comment = line.partition("  # exit ")
            commands.append((command, int(comment) if comment else 0))
    return commands


@pytest.mark.slow
def test_cli_page_examples_run(page_runner: PageRunner) -> None:
    commands = _commands()
    assert len(commands) >= 8
    env = {
        **os.environ,
        "COLUMNS": "200",
        "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
    }
    for i, (command, expected) in enumerate(commands):
        if "../shared/data" in command and not SHARED_DATA.is_dir():
            continue  # third-party files not in the repo: that line only is left out
        if i == 0:  # the installed `rewardsmith` script itself, once
            argv = shlex.split(command)
            result = subprocess.run(
                argv, cwd=REPO, env=env, capture_output=True, text=True, timeout=300
            )
        else:
            result = page_runner.cli(shlex.split(command), env=env, timeout=300)
        assert result.returncode == expected, (
            f"{command}\n{result.stdout[-2000:]}\n{result.stderr[-2000:]}"
        )
