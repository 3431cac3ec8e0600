"""Run real compilers and interpreters on broken programs the tests write, once per session.

Each test module hands a table of ``name -> source`` and a command template to `build_all`;
the programs are written to their own folders under a session temp dir and run in
parallel (the machine has two cores and the tools are mostly waiting on process start).
These are our own test programs, not model output, so they run directly, without the
sandbox. A tool that is missing skips the module with the reason.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

VENV_BIN = Path(__file__).resolve().parents[3] / ".venv" / "bin"


@dataclass(frozen=True)
class Run:
    """What one tool run printed (stdout and stderr together) and its exit code."""

    log: str
    returncode: int
    folder: Path


def require(tool: str) -> None:
    """Skip the calling test, saying which tool is missing, when `tool` is not installed."""
    if shutil.which(tool) is None and not (VENV_BIN / tool).exists():
        pytest.skip(f"{tool} is not installed on this machine")


def _run_one(folder: Path, filename: str, source: str, command: str, timeout: float) -> Run:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / filename).write_text(source)
    env = {
        **os.environ,
        "NO_COLOR": "1",
        "PATH": f"{VENV_BIN}:{os.environ.get('PATH', '')}",
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",  # the pytest runs need no plugins: faster
    }
    proc = subprocess.run(
        command,
        shell=True,
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        errors="replace",
    )
    return Run(proc.stdout + proc.stderr, proc.returncode, folder)


@pytest.fixture(scope="session")
def build_all(
    tmp_path_factory: pytest.TempPathFactory,
) -> Callable[..., Mapping[str, Run]]:
    """``build_all(tag, filename, cases, command)``: run `command` on each case's file.

    The first word of `command` is the tool; without it the tests skip.
    """
    cache: dict[str, Mapping[str, Run]] = {}

    def build(
        tag: str, filename: str, cases: Mapping[str, str], command: str, timeout: float = 120
    ) -> Mapping[str, Run]:
        require(command.lstrip("( ").split()[0])
        if tag not in cache:
            root = tmp_path_factory.mktemp(tag)
            with ThreadPoolExecutor(max_workers=3) as pool:
                futures = {
                    name: pool.submit(_run_one, root / name, filename, src, command, timeout)
                    for name, src in cases.items()
                }
                cache[tag] = {name: f.result() for name, f in futures.items()}
        return cache[tag]

    return build


@pytest.fixture(scope="session")
def build_together(tmp_path_factory: pytest.TempPathFactory) -> Callable[..., Run]:
    """``build_together(tag, files, command)``: write all `files` to one folder, run once.

    For tools that start slowly (the JVM): one javac over many files instead of one each.
    """
    cache: dict[str, Run] = {}

    def build(tag: str, files: Mapping[str, str], command: str, timeout: float = 300) -> Run:
        require(command.lstrip("( ").split()[0])
        if tag not in cache:
            root = tmp_path_factory.mktemp(tag)
            for filename, source in files.items():
                (root / filename).write_text(source)
            cache[tag] = _run_one(root, ".keep", "", command, timeout)
        return cache[tag]

    return build
