"""Scorer benchmark: many single-sample calls at once (as veRL's thread pool and OpenRLHF's
``asyncio.to_thread`` make them) against one batch of the same samples, on one Scorer.

    .venv/bin/python benchmarks/scorer_calls.py [--calls 64] [--repeats 7]

Three ways to score the same N samples with the real ``exact_match`` verifier on the
process pool (cache off, pool warmed before any clock starts), interleaved A, B, C, A, ...:

- one batch: ``scorer.score(samples)``;
- N concurrent calls: N threads each calling ``scorer.score([sample])`` at once;
- N sequential calls: one thread, one sample per call (what queued calls would cost
  without coalescing);
- N threads that start and meet at the barrier but make no call: the floor the
  concurrent case pays for its threads alone, whatever the Scorer does.

Reported as medians and ratios to one batch; also the number of executors the Scorer
started (the goal: one, and N concurrent calls costing about one batch).
"""

from __future__ import annotations

import argparse
import os
import statistics
import threading
import time

from rewardsmith.graders import Scorer
from rewardsmith.verifiers.types import Sample


def _samples(n: int, offset: int) -> list[Sample]:
    return [Sample(id=f"{offset}-{i}", completion=f"a{i}", reference=f"a{i % 3}") for i in range(n)]


def _batch(scorer: Scorer, samples: list[Sample]) -> None:
    scorer.score(samples)


def _concurrent(scorer: Scorer, samples: list[Sample], work: bool = True) -> None:
    barrier = threading.Barrier(len(samples))

    def call(sample: Sample) -> None:
        barrier.wait()
        if work:
            scorer.score([sample])

    threads = [threading.Thread(target=call, args=(s,)) for s in samples]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def _threads_only(scorer: Scorer, samples: list[Sample]) -> None:
    _concurrent(scorer, samples, work=False)


def _sequential(scorer: Scorer, samples: list[Sample]) -> None:
    for sample in samples:
        scorer.score([sample])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    ways = {
        "one batch": _batch,
        "concurrent calls": _concurrent,
        "threads, no call": _threads_only,
        "sequential calls": _sequential,
    }
    times: dict[str, list[float]] = {name: [] for name in ways}
    with Scorer(["exact_match"], backend="pool", workers=2, cache=False) as scorer:
        scorer.score(_samples(args.calls, -1))  # start and warm the pool
        for repeat in range(args.repeats):
            for k, (name, way) in enumerate(ways.items()):
                samples = _samples(args.calls, repeat * 10 + k)
                start = time.perf_counter()
                way(scorer, samples)
                times[name].append(time.perf_counter() - start)
        executors = len(scorer._lanes.executors) if scorer._lanes else 0
        batches = scorer._lanes.batches_run if scorer._lanes else 0
    base = statistics.median(times["one batch"])
    print(f"load average before: {os.getloadavg()}")
    print(f"{args.calls} samples, {args.repeats} repeats, executors started: {executors}")
    calls = args.calls * (1 + 2 * args.repeats) + args.repeats
    print(f"executor batches run: {batches} for {calls} score() calls in all")
    for name, values in times.items():
        median = statistics.median(values)
        print(
            f"{name:18s} median {1000 * median:8.1f} ms   ratio to one batch {median / base:5.2f}"
        )


if __name__ == "__main__":
    main()
