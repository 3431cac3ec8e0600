"""A main module that is slow to import in pool workers, as ``rewardsmith.cli.main`` is.

Run as ``python -m slow_start_main <scenario>`` (with this folder on ``PYTHONPATH``); it
prints one JSON line: per batch, each job's status, failure, attempts, feedback and the
worker's pid (where the verifier reports it).

multiprocessing re-imports the parent's main module in every new pool worker (its
"prepare" step, under the name ``__mp_main__``). Here that import sleeps
``RS_TEST_WORKER_IMPORT_S`` seconds, or raises when ``RS_TEST_WORKER_IMPORT_FAILS`` is
set, as a big CLI that imports everything (or a broken one) would. With
``RS_TEST_SLOW_FLAG`` (a path), only workers started after the first batch, when the
parent creates that file, are slow. The parent process, where the name is ``__main__``,
pays nothing.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

FLAG = os.environ.get("RS_TEST_SLOW_FLAG")

if __name__ == "__mp_main__":  # a pool worker re-importing the main module
    if os.environ.get("RS_TEST_WORKER_IMPORT_FAILS"):
        raise ImportError("this main module cannot be imported in a worker")
    if FLAG is None or os.path.exists(FLAG):
        time.sleep(float(os.environ.get("RS_TEST_WORKER_IMPORT_S", "0")))


def _batches(scenario: str) -> tuple[dict[str, Any], list[list[tuple[Any, ...]]]]:
    """Executor settings and batches of jobs: (verifier, sample id[, time limit])."""
    from grader_testkit import Cheap, Hang, Sleep

    if scenario == "spiral":
        # One worker and a 1 s limit: each fresh worker needs longer to start (the test
        # says how long), and a hang is killed, so the trivial jobs after it land on a
        # cold replacement.
        settings = {"workers": 1, "timeout_s": 1.0}
        return settings, [
            [(Cheap(), "first")],
            [(Hang(), "hang"), (Cheap(), "after-kill-1")],
            [(Cheap(), "after-kill-2"), (Cheap(), "after-kill-3")],
        ]
    if scenario == "prefer_ready":
        # Two workers, both warmed up; then a hang is killed at 0.5 s and its replacement
        # starts cold (never ready, with RS_TEST_SLOW_FLAG) while the other worker still
        # has sleeps to run: they wait for the ready worker, not for the cold one.
        warm = [(Sleep(0.01), "warm-1"), (Sleep(0.01), "warm-2")]
        sleeps = [(Sleep(0.15), f"s{i}") for i in range(8)]  # 1.2 s in all, on one worker
        return {"workers": 2, "timeout_s": 30.0}, [warm, [(Hang(), "hang", 0.5), *sleeps]]
    if scenario == "never_ready":
        return {"workers": 1, "timeout_s": 0.5, "start_timeout_s": 1.0}, [[(Cheap(), "x")]]
    if scenario == "import_fails":
        return {"workers": 1, "timeout_s": 5.0}, [[(Cheap(), "x")]]
    raise SystemExit(f"unknown scenario {scenario!r}")


def main(scenario: str) -> None:
    from rewardsmith.graders import Executor, Job
    from rewardsmith.verifiers.types import Sample

    settings, batches = _batches(scenario)
    out = []
    with Executor("pool", cache=False, **settings) as executor:
        for batch in batches:
            jobs = [
                Job(spec[0], Sample(id=spec[1], completion="a", reference="a"), *spec[2:])
                for spec in batch
            ]
            results = sorted(executor.stream(jobs), key=lambda r: r.index)
            out.append(
                [
                    {
                        "status": r.verdict.status.value,
                        "failure": r.verdict.failure,
                        "attempts": r.attempts,
                        "feedback": r.verdict.feedback,
                        "pid": r.verdict.evidence.get("pid"),
                    }
                    for r in results
                ]
            )
            if FLAG is not None:
                open(FLAG, "w").close()  # from now on, new workers are slow to start
    print(json.dumps(out))


if __name__ == "__main__":
    main(sys.argv[1])
