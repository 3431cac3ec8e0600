"""Pool workers that are slow to start: a job's time limit starts when its worker is ready.

Each case runs ``python -m slow_start_main <scenario>`` in a fresh interpreter, because
what makes a worker slow is the parent's *main module*: multiprocessing re-imports it in
every new worker, as it does the whole CLI under ``python -m rewardsmith.cli.main serve``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


def run_scenario(scenario: str, **env: str) -> list[list[dict]]:
    """The scenario's results: per batch, per job, a dict (see slow_start_main)."""
    result = subprocess.run(
        [sys.executable, "-m", "slow_start_main", scenario],
        cwd=HERE,
        env={**os.environ, "PYTHONPATH": str(HERE), **env},
        capture_output=True,
        text=True,
        timeout=240,  # a hang is a failure, never a stuck suite (the runs take seconds)
    )
    assert result.returncode == 0, result.stderr[-3000:]
    return json.loads(result.stdout.splitlines()[-1])


@pytest.mark.slow
def test_slow_starting_workers_do_not_time_out_trivial_jobs():
    # Each new worker takes 2 s to import the main module; the limit is 1 s. Were the
    # clock started at the send, every job would time out, each replacement worker too
    # (the death spiral seen with `rewardsmith serve --timeout 1`).
    first, with_hang, after = run_scenario("spiral", RS_TEST_WORKER_IMPORT_S="2")
    assert [r["status"] for r in first] == ["pass"]
    hang, trivial = with_hang
    assert hang["failure"] == "verifier_timeout" and "1 s time limit" in hang["feedback"]
    assert trivial["status"] == "pass"  # on the cold replacement of the killed worker
    assert [r["status"] for r in after] == ["pass", "pass"]
    assert all(r["attempts"] == 1 for batch in (first, with_hang, after) for r in batch)


@pytest.mark.slow
def test_jobs_wait_for_a_ready_worker_rather_than_a_starting_one(tmp_path):
    # Worker A is killed for a hang; its replacement takes an hour to start (it is
    # killed at exit), while worker B stays ready. The sleeps queued behind the first
    # one wait for B instead of being handed to A's replacement, where they would sit.
    env = {"RS_TEST_WORKER_IMPORT_S": "3600", "RS_TEST_SLOW_FLAG": str(tmp_path / "slow")}
    warm, (hang, *sleeps) = run_scenario("prefer_ready", **env)
    assert [r["status"] for r in warm] == ["pass", "pass"]
    assert hang["failure"] == "verifier_timeout"
    assert [(r["status"], r["attempts"]) for r in sleeps] == [("pass", 1)] * 8
    assert len({r["pid"] for r in sleeps}) == 1  # all on the worker that was ready


@pytest.mark.parametrize(
    ("scenario", "env", "words"),
    [
        ("never_ready", {"RS_TEST_WORKER_IMPORT_S": "3600"}, "was not ready 1 s after it"),
        ("import_fails", {"RS_TEST_WORKER_IMPORT_FAILS": "1"}, "failed to start (worker set-up"),
    ],
)
def test_a_worker_that_cannot_start_is_a_worker_failure_not_a_hang(scenario, env, words):
    ((result,),) = run_scenario(scenario, **env)
    assert result["status"] == "error" and result["failure"] == "worker_died"
    assert words in result["feedback"] and "main module" in result["feedback"]
    assert result["attempts"] == 2  # retried once on a new worker, then reported
