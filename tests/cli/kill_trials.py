"""Kill ``rewardsmith score`` with SIGKILL at random points, resume, and compare.

``python kill_trials.py FOLDER TRIALS SEED`` prints one JSON object: per trial the kill
delay and what the resumed output holds against an uninterrupted run's (ids lost,
duplicated, values or run digests that differ). The command is imported once and each
run is a fork of this process (a kill costs no interpreter start), running the real CLI
in-process: same code path as the command line, with the inline backend.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sys
import time
from pathlib import Path
from typing import Any

from rewardsmith.cli.main import app

ROWS = 200


def write_dump(path: Path) -> None:
    with path.open("w") as out:
        for i in range(ROWS):
            answer = "yes" if i % 3 else "no"
            row = {"id": f"r{i:04d}", "prompt": "p", "completion": answer, "reference": "yes"}
            out.write(json.dumps(row) + "\n")


def run_score(dump: Path, output: Path, *extra: str) -> int:
    """A fork that runs the command; its pid."""
    pid = os.fork()
    if pid == 0:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        args = ["score", str(dump), "-o", str(output), "-v", "exact_match", "--backend"]
        args += ["inline", "--chunk-size", "7", *extra]
        code = 0
        try:
            app(args=args, standalone_mode=False)
        except SystemExit as exc:
            code = int(exc.code or 0)
        except BaseException:
            code = 99
        os._exit(code if isinstance(code, int) else 1)
    return pid


def wait(pid: int) -> int:
    return os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1])


def rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def compare(got: list[dict[str, Any]], want: dict[str, dict[str, Any]]) -> dict[str, Any]:
    ids = [r["id"] for r in got]
    differ = [
        r["id"]
        for r in got
        if r["id"] in want
        and (
            r["rewardsmith"]["value"] != want[r["id"]]["rewardsmith"]["value"]
            or r["rewardsmith"]["run"] != want[r["id"]]["rewardsmith"]["run"]
        )
    ]
    return {
        "lost": sorted(set(want) - set(ids)),
        "duplicated": len(ids) - len(set(ids)),
        "differ": differ,
    }


def _timed_run(dump: Path, output: Path) -> float:
    """Seconds of one uninterrupted run. The kill points are drawn within the fastest of
    three: on a machine whose load falls, a run timed slow would leave most kills after
    the end."""
    output.unlink(missing_ok=True)
    start = time.monotonic()
    assert wait(run_score(dump, output)) == 0
    return time.monotonic() - start


def main(folder: Path, trials: int, seed: int) -> dict[str, Any]:
    dump = folder / "dump.jsonl"
    write_dump(dump)
    reference = folder / "reference.jsonl"
    took = min(_timed_run(dump, reference) for _ in range(3))
    want = {r["id"]: r for r in rows(reference)}
    rng = random.Random(seed)
    report: dict[str, Any] = {"uninterrupted_s": took, "trials": []}
    for n in range(trials):
        output = folder / f"out-{n}.jsonl"
        delay = rng.uniform(0, took)
        pid = run_score(dump, output)
        time.sleep(delay)
        os.kill(pid, signal.SIGKILL)
        killed = wait(pid) == -signal.SIGKILL  # False: it had already finished
        resumed = wait(run_score(dump, output))
        outcome = compare(rows(output), want) if output.exists() else {"lost": ["all"]}
        report["trials"].append({"delay": delay, "killed": killed, "exit": resumed, **outcome})
    return report


if __name__ == "__main__":
    result = main(Path(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]))
    print(json.dumps(result))
