"""Executor benchmark: rewardsmith's executor beside multiprocessing.Pool.imap and plain Ray
tasks, on the same jobs, in one run.

    .venv/bin/python benchmarks/executor.py            # full run (about 6 minutes)
    .venv/bin/python benchmarks/executor.py --quick    # smaller workload, no Ray
    .venv/bin/python benchmarks/executor.py --compare-with OLD --rounds 2 --no-ray

Workloads:
- cheap: N exact-match checks (the real `exact_match` verifier, microseconds each):
  throughput and overhead per job against `Pool.imap` (chunksize 1, its default, and 64)
  and against one plain Ray task per job.
- mixed: cheap checks plus jobs that sleep or spin (burn CPU) for 0.1 to 2 s, in shuffled
  dump order: makespan of first-in-first-out against expensive-first, each against a
  lower bound on the optimum, max(total work / workers, longest job). Expensive-first
  uses the executor's measured history from one earlier pass over the same dump (cache
  off), which is how a trainer rescoring the same prompts sees it.
- restart: a job killed at its 0.2 s limit, then one cheap job on the same one-worker
  executor: how long the cheap job takes, which is mostly the start of the killed
  worker's replacement (the cost a hostile sample that hangs adds beyond its limit).

Every pool is started and warmed before its clock starts: start-up is not measured.
Figures are wall-clock medians of ``--repeats`` runs on a shared machine; read ratios.

``--compare-with OLD`` measures another version of rewardsmith beside this one: OLD is a
folder holding a ``rewardsmith/`` namespace of an older checkout (see `compare`). The
script runs itself once per version per round, the versions taking turns (old, new, old,
new ...), and prints each runner's median per version and the ratio new / old.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import Any

TESTKIT = str(Path(__file__).resolve().parents[1] / "tests" / "graders")
sys.path.insert(0, TESTKIT)

from grader_testkit import Hang, Sleep, Spin  # noqa: E402  (test-support verifiers, by path)

from rewardsmith.graders import Executor, Job  # noqa: E402
from rewardsmith.verifiers.protocol import run_verifier  # noqa: E402
from rewardsmith.verifiers.text import ExactMatch  # noqa: E402
from rewardsmith.verifiers.types import Sample, Verdict  # noqa: E402

WORKERS = 2
RESULTS: dict[str, float] = {}
"""Every runner's median seconds, by section and runner (what --json writes)."""


def run_job(job: Job) -> Verdict:
    """What a plain pool runs: the same call the executor's workers make."""
    return run_verifier(job.verifier, job.sample)


def cheap_jobs(n: int) -> list[Job]:
    verifier = ExactMatch()
    answers = ["Paris", "paris.", "London", "The answer is Paris"]
    return [
        Job(verifier, Sample(id=f"c{i}", completion=answers[i % 4], reference="paris"))
        for i in range(n)
    ]


def mixed_jobs(
    n_cheap: int, n_slow: int, order: str = "shuffled", seed: int = 0
) -> tuple[list[Job], list[float]]:
    """Cheap checks plus slow jobs of 0.1-2 s (half sleep, half spin), shuffled or in
    ascending order of duration (the longest job last: the worst case for FIFO)."""
    rng = random.Random(seed)
    jobs = cheap_jobs(n_cheap)
    durations = [0.0] * n_cheap
    for i in range(n_slow):
        seconds = round(rng.uniform(0.1, 2.0), 2)
        verifier = Sleep() if i % 2 else Spin()
        jobs.append(Job(verifier, Sample(id=f"s{i}", completion="x", meta={"seconds": seconds})))
        durations.append(seconds)
    positions = list(range(len(jobs)))
    rng.shuffle(positions)
    if order == "ascending":
        positions.sort(key=lambda i: durations[i])
    return [jobs[i] for i in positions], [durations[i] for i in positions]


def interleaved(
    runners: dict[str, Callable[[], Any]], repeats: int, section: str
) -> dict[str, float]:
    """Median wall time of each runner, the runners taking turns (ABCABC...), so that a
    change in the load of this shared machine hits all of them alike."""
    times: dict[str, list[float]] = {name: [] for name in runners}
    for _ in range(repeats):
        for name, fn in runners.items():
            start = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - start)
    medians = {name: statistics.median(ts) for name, ts in times.items()}
    RESULTS.update({f"{section}: {name}": t for name, t in medians.items()})
    return medians


def mp_pool(stack: ExitStack) -> Any:
    """A started, warmed multiprocessing pool (fork, as `Pool()` is on Linux)."""
    pool = multiprocessing.get_context("fork").Pool(WORKERS)

    def stop() -> None:
        pool.close()  # let workers exit on their own (terminate() would SIGTERM them)
        pool.join()

    stack.callback(stop)
    pool.map(run_job, cheap_jobs(WORKERS))
    return pool


def executor(stack: ExitStack, **kw: Any) -> Executor:
    """A started, warmed executor with the cache off (every run does the work)."""
    ex = stack.enter_context(Executor(workers=WORKERS, cache=False, timeout_s=60, **kw))
    ex.run(cheap_jobs(WORKERS))
    return ex


def plain_ray(jobs: Sequence[Job]) -> Callable[[], Any]:
    import ray

    remote = ray.remote(run_job)
    ray.get([remote.remote(j) for j in jobs[:WORKERS]])  # warm
    return lambda: ray.get([remote.remote(j) for j in jobs])


def lower_bound(durations: Sequence[float]) -> float:
    """No schedule on WORKERS machines beats max(total / WORKERS, longest job)."""
    return max(sum(durations) / WORKERS, max(durations))


def row(name: str, seconds: float, n: int, base: float | None = None) -> str:
    ratio = f"{base / seconds:.2f}x" if base else "-"
    return f"| {name} | {seconds:.3f} | {n / seconds:,.0f} | {seconds / n * 1e6:,.0f} | {ratio} |"


def bench_cheap(n: int, repeats: int, use_ray: bool) -> list[str]:
    jobs = cheap_jobs(n)
    with ExitStack() as stack:
        pool, ex = mp_pool(stack), executor(stack)
        runners: dict[str, Callable[[], Any]] = {
            "inline, one process (no isolation)": lambda: [run_job(j) for j in jobs],
            "multiprocessing.Pool.imap, chunksize=1": lambda: list(pool.imap(run_job, jobs)),
            "multiprocessing.Pool.imap, chunksize=64": lambda: list(pool.imap(run_job, jobs, 64)),
            "rewardsmith Executor('pool')": lambda: ex.run(jobs),
        }
        if use_ray:
            ray_ex = executor(stack, backend="ray")
            runners["plain Ray tasks, one per job"] = plain_ray(jobs)
            runners["rewardsmith Executor('ray')"] = lambda: ray_ex.run(jobs)
        seconds = interleaved(runners, repeats, "cheap")
    base = seconds["multiprocessing.Pool.imap, chunksize=1"]
    return [
        f"Cheap jobs: {n} `exact_match` checks, {WORKERS} workers, median of {repeats} "
        "interleaved runs.",
        "",
        "| runner | seconds | jobs/s | µs/job | speed vs Pool.imap(chunksize=1) |",
        "|---|---|---|---|---|",
        *(row(name, t, n, base) for name, t in seconds.items()),
    ]


def bench_mixed(n_cheap: int, n_slow: int, repeats: int, use_ray: bool, order: str) -> list[str]:
    jobs, durations = mixed_jobs(n_cheap, n_slow, order)
    bound = lower_bound(durations)
    with ExitStack() as stack:
        pool, fifo, lpt = mp_pool(stack), executor(stack, schedule="fifo"), executor(stack)
        lpt.run(jobs)  # one earlier pass over the same dump fills the measured history
        runners: dict[str, Callable[[], Any]] = {
            "multiprocessing.Pool.imap, chunksize=1": lambda: list(pool.imap(run_job, jobs)),
            "rewardsmith Executor('pool'), FIFO": lambda: fifo.run(jobs),
            "rewardsmith Executor('pool'), expensive-first": lambda: lpt.run(jobs),
        }
        if use_ray:
            ray_lpt = executor(stack, backend="ray")
            ray_lpt.run(jobs)
            runners["plain Ray tasks, one per job"] = plain_ray(jobs)
            runners["rewardsmith Executor('ray'), expensive-first"] = lambda: ray_lpt.run(jobs)
        seconds = interleaved(runners, repeats, f"mixed {order}")
    rows = [
        f"Mixed jobs: {n_cheap} cheap checks + {n_slow} jobs sleeping or spinning 0.1-2 s "
        f"(total {sum(durations):.1f} s of work), {order}, {WORKERS} workers, median of "
        f"{repeats} interleaved runs. Lower bound on the optimal makespan: {bound:.2f} s.",
        "",
        "| runner | makespan s | makespan / lower bound | jobs/s |",
        "|---|---|---|---|",
    ]
    for name, t in seconds.items():
        rows.append(f"| {name} | {t:.2f} | {t / bound:.3f} | {len(jobs) / t:,.1f} |")
    return rows


def bench_restart(kills: int, repeats: int) -> list[str]:
    """A hang killed at 0.2 s, then a cheap job: the cheap job's time is mostly the start
    of the replacement. Back to back, and with 1 s of other work between two kills."""
    hang = [Job(Hang(), Sample(id="hang", completion="x"), timeout_s=0.2)]
    cheap = cheap_jobs(1)
    rows = [
        f"Restart: {kills * repeats} times a job killed at its 0.2 s limit, then one cheap "
        "job on the same one-worker executor; the cheap job's time, median and max.",
        "",
        "| kills | median s | max s |",
        "|---|---|---|",
    ]
    for gap_s, label in ((0.0, "back to back"), (1.0, "1 s of other work between kills")):
        with Executor(workers=1, cache=False, timeout_s=60) as ex:
            ex.run(cheap)
            times = []
            for _ in range(kills * repeats):
                ex.run(hang)
                start = time.perf_counter()
                ex.run(cheap)
                times.append(time.perf_counter() - start)
                time.sleep(gap_s)
        median = statistics.median(times)
        RESULTS[f"restart: next job after a kill, {label}"] = median
        rows.append(f"| {label} | {median:.3f} | {max(times):.3f} |")
    return rows


def compare(old: str, rounds: int, args: list[str]) -> None:
    """Run this script on ``old`` and on this checkout in turns; print medians and ratios.

    ``old`` holds ``rewardsmith/<folder>`` for each package folder of an older commit, e.g.
    ``git archive <commit> | tar -x -C /tmp/old/src`` and, for each folder of setup.py's
    SUBPACKAGE_FOLDERS, ``ln -s /tmp/old/src/<folder> /tmp/old/ns/rewardsmith/<folder>``:
    an implicit namespace package found on PYTHONPATH before the editable install.
    """
    runs: dict[str, list[dict[str, float]]] = {"old": [], "new": []}
    for _ in range(rounds):
        for version in ("old", "new"):
            env = dict(os.environ)
            if version == "old":
                env["PYTHONPATH"] = old + os.pathsep + env.get("PYTHONPATH", "")
            out = Path(f"/tmp/executor-bench-{os.getpid()}-{version}.json")
            command = [sys.executable, __file__, *args, "--json", str(out)]
            subprocess.run(command, env=env, check=True, stdout=subprocess.DEVNULL)
            runs[version].append(json.loads(out.read_text()))
            out.unlink()
    print(f"Before/after, {rounds} rounds per version, taken in turns (old, new, ...).\n")
    print("| runner | old s | new s | new / old |")
    print("|---|---|---|---|")
    for name in runs["new"][0]:
        old_s = statistics.median(r[name] for r in runs["old"] if name in r)
        new_s = statistics.median(r[name] for r in runs["new"])
        print(f"| {name} | {old_s:.3f} | {new_s:.3f} | {new_s / old_s:.2f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small workload, no Ray")
    parser.add_argument("--no-ray", action="store_true", help="leave out the Ray runners")
    parser.add_argument(
        "--order", choices=["shuffled", "ascending"], default="shuffled", help="mixed job order"
    )
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--section", choices=["all", "cheap", "mixed", "restart"], default="all")
    parser.add_argument("--json", help="also write every median to this file")
    parser.add_argument("--compare-with", help="an older rewardsmith to measure beside this one")
    parser.add_argument("--rounds", type=int, default=2, help="runs per version (--compare-with)")
    args = parser.parse_args()
    if args.compare_with:
        passed = [a for a in sys.argv[1:] if a not in ("--compare-with", args.compare_with)]
        passed = [a for a in passed if a != "--rounds" and a != str(args.rounds)]
        compare(args.compare_with, args.rounds, passed)
        return
    use_ray = not (args.quick or args.no_ray)
    if use_ray:
        import ray

        # Ray's workers import grader_testkit too.
        os.environ["PYTHONPATH"] = TESTKIT + os.pathsep + os.environ.get("PYTHONPATH", "")
        ray.init(num_cpus=WORKERS, include_dashboard=False, log_to_driver=False)
    n_cheap = 1000 if args.quick else 5000
    slow = (60, 8) if args.quick else (300, 16)
    print(
        f"# executor benchmark ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
        f"{os.cpu_count()} cores, python {sys.version.split()[0]})\n"
    )
    if args.section in ("all", "cheap"):
        print("\n".join(bench_cheap(n_cheap, args.repeats, use_ray)) + "\n", flush=True)
    if args.section in ("all", "mixed"):
        rows = bench_mixed(*slow, max(1, args.repeats // 2), use_ray, args.order)
        print("\n".join(rows) + "\n", flush=True)
    if args.section in ("all", "restart"):
        print("\n".join(bench_restart(4 if args.quick else 10, args.repeats)))
    if args.json:
        Path(args.json).write_text(json.dumps(RESULTS))


if __name__ == "__main__":
    main()
