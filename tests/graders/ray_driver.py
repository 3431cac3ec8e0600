"""A driver that joins a running Ray cluster and scores traced jobs on it, for
test_ray_cluster.py: ``python -m ray_driver (env|arg) TRACE_DIR JOBS SECONDS CPUS``.

``env`` joins through ``RAY_ADDRESS`` (already in the environment), ``arg`` through
``Executor(ray_address=...)``; neither asks for a CPU count. It waits until the cluster has
CPUS CPUs, then prints one JSON line per result as it streams in, and ``{"error": ...}`` if
it cannot join.
"""

from __future__ import annotations

import json
import os
import sys
import time

PREFIX = "@@ "
"""Starts each line meant for the test (Ray may print its own lines on stdout too)."""


def say(message: dict) -> None:
    print(PREFIX + json.dumps(message), flush=True)


def main(mode: str, trace_dir: str, jobs: int, seconds: float, cpus: int) -> None:
    import ray
    from containment_kit import Traced

    from rewardsmith.graders import Executor, Job
    from rewardsmith.verifiers.types import Sample

    address = os.environ["RAY_ADDRESS"]
    if mode == "arg":
        del os.environ["RAY_ADDRESS"]
    work = [
        Job(Traced(trace_dir), Sample(id=f"j{i}", completion="x", meta={"seconds": seconds}))
        for i in range(jobs)
    ]
    try:
        executor = Executor("ray", timeout_s=120, cache=False, ray_address=address)
        executor.run(work[:0])  # joins the cluster
    except RuntimeError as exc:
        say({"error": str(exc)})
        return
    deadline = time.monotonic() + 60
    while ray.cluster_resources().get("CPU", 0) < cpus and time.monotonic() < deadline:
        time.sleep(0.1)
    say({"cpus": ray.cluster_resources().get("CPU", 0)})
    with executor:
        for result in executor.stream(work):
            verdict = result.verdict
            line = {
                "index": result.index,
                "status": verdict.status.value,
                "attempts": result.attempts,
                "node": verdict.evidence.get("node"),
                "feedback": verdict.feedback,
            }
            say(line)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5]))
