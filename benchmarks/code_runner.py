"""Code-runner throughput on HumanEval's 164 canonical solutions, side by side in one run.

Runners, each over every task with the same number of parallel workers, interleaved: one
round runs every runner once (A, B, C, D), and the rounds repeat, so load that comes and
goes on a shared machine falls on all of them alike. Ratios are taken within a round.

- ``ours-calls``: `code_tests` on the structured form (the calls HumanEval's tests make,
  with the canonical outputs as expected values), full isolation, one jail per sample.
- ``ours-check``: `code_tests` on HumanEval's own ``check(candidate)``, full isolation,
  two jails per sample (the judge and the candidate).
- ``evalplus``: the evalplus package's harness (`untrusted_check`) on the same calls and
  expected outputs, no isolation beyond its in-process guard, a forked process per sample.
- ``bare``: a fresh ``python -I -S`` per sample running the program and ``check``, no
  isolation: the floor a naive runner cannot beat without warm workers.

``ours-*`` run once per sandbox mode asked for (``--modes privileged,rootless``; the mode is
forced with ``REWARDSMITH_SANDBOX_MODE`` in the runner's process).

Run: ``.venv/bin/python benchmarks/code_runner.py [--workers 2] [--rounds 5]
[--modes privileged,rootless] [--mutants] [--compare-with OLD]``; ``--compare-with`` adds
``old-ours-*`` runners, the same runners on an older rewardsmith, in the same rounds. With
``--mutants`` it also runs the external check (broken variants of every solution).

Each row also has ``cpu_ms_per_sample``: the CPU of the runner's whole process tree over
the timed part (sandbox servers, forkers and jails included), per sample. On idle cores
throughput follows it; on a loaded machine it is the steadier figure (load inflates it
for every runner, so compare runners of the same round).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import humaneval_data as he

from rewardsmith.verifiers.code import CodeTests
from rewardsmith.verifiers.types import Sample

CACHE = Path(__file__).resolve().parents[1] / "build" / "humaneval_cases.json"


def load_cases(tasks: list[dict[str, Any]]) -> dict[str, Any]:
    if CACHE.exists():
        return json.loads(CACHE.read_text())
    cases = {}
    for task in tasks:
        cases[task["task_id"]] = he.recorded_cases(task)
    CACHE.parent.mkdir(exist_ok=True)
    CACHE.write_text(json.dumps(cases))
    return cases


# ----------------------------------------------------------------------------- runners


def ours(samples: list[Sample], workers: int) -> list[bool]:
    verifier = CodeTests(wall_s=20, call_timeout_s=10)
    with ThreadPoolExecutor(workers) as pool:
        verdicts = list(pool.map(verifier, samples))
    for sample, v in zip(samples, verdicts, strict=True):
        if v.status.value != "pass":  # say why, so a failure under load can be told apart
            print(sample.id, v.status.value, v.feedback[:300], file=sys.stderr)
    return [v.status.value == "pass" for v in verdicts]


def _evalplus_one(job: tuple[str, str, list[Any], str, list[Any]]) -> bool:
    from evalplus.eval import PASS, untrusted_check

    _, code, inputs, entry, expected = job
    status, _ = untrusted_check("humaneval", code, inputs, entry, expected, 0, [1.0] * len(inputs))
    return status == PASS


def evalplus(jobs: list[tuple[str, str, list[Any], str, list[Any]]], workers: int) -> list[bool]:
    with ProcessPoolExecutor(workers) as pool:
        return list(pool.map(_evalplus_one, jobs))


def _bare_one(program: str) -> bool:
    done = subprocess.run(
        [sys.executable, "-I", "-S", "-"], input=program.encode(), capture_output=True, timeout=60
    )
    return done.returncode == 0


def bare(programs: list[str], workers: int) -> list[bool]:
    with ThreadPoolExecutor(workers) as pool:
        return list(pool.map(_bare_one, programs))


def run_one(runner: str, workers: int) -> list[bool]:
    """One runner over every usable task, in this process (the parent times it)."""
    tasks = he.tasks()
    cases = load_cases(tasks)
    usable = [t for t in tasks if cases[t["task_id"]] is not None]
    code = {t["task_id"]: t["prompt"] + t["canonical_solution"] for t in usable}
    if runner == "ours-calls":
        samples = [
            Sample(
                id=t["task_id"],
                completion=code[t["task_id"]],
                reference=he.calls_reference(t, cases[t["task_id"]]),
            )
            for t in usable
        ]
        ours(samples[:workers], workers)  # start the warm servers, as a running scorer has them
        return _timed_part(lambda: ours(samples, workers))
    if runner == "ours-check":
        samples = [
            Sample(
                id=t["task_id"],
                completion=t["canonical_solution"],
                reference=he.humaneval_reference(t),
            )
            for t in usable
        ]
        ours(samples[:workers], workers)
        return _timed_part(lambda: ours(samples, workers))
    if runner == "evalplus":
        decoded = {t["task_id"]: he.decoded_cases(cases[t["task_id"]]) for t in usable}
        jobs = [
            (
                t["task_id"],
                code[t["task_id"]],
                [c[0] for c in decoded[t["task_id"]]],
                t["entry_point"],
                [c[1] for c in decoded[t["task_id"]]],
            )
            for t in usable
        ]
        return _timed_part(lambda: evalplus(jobs, workers))
    programs = [
        code[t["task_id"]] + "\n" + t["test"] + f"\ncheck({t['entry_point']})\n" for t in usable
    ]
    return _timed_part(lambda: bare(programs, workers))


def _timed_part(fn: Callable[[], list[bool]]) -> list[bool]:
    """Report the timed part's wall clock and CPU on stdout's last line (warm-up and data
    loading are outside it): `cpu_s` is this process and what it reaped; `tree_cpu_s`
    also counts the live processes under it (sandbox servers, their forkers and the jails
    those reaped; evalplus's pool workers), the figure to read on a shared machine."""
    import resource

    def cpu() -> float:
        usage = [
            resource.getrusage(who) for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
        ]
        return sum(u.ru_utime + u.ru_stime for u in usage)

    c0, tree0, t0 = cpu(), _tree_cpu_s(), time.perf_counter()
    results = fn()
    wall, ours_cpu, tree_cpu = time.perf_counter() - t0, cpu() - c0, _tree_cpu_s() - tree0
    print(
        json.dumps(
            {
                "wall_s": wall,
                "cpu_s": ours_cpu,
                "tree_cpu_s": tree_cpu,
                "passed": sum(results),
                "n": len(results),
            }
        )
    )
    return results


def _tree_cpu_s() -> float:
    """CPU seconds of this process and of every process under it, each with what it has
    reaped (utime, stime, cutime, cstime in /proc): a process that ends in between is then
    counted in its parent's reaped time."""
    stats, children = {}, {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        stats[int(name)] = sum(int(x) for x in fields[11:15])
        children.setdefault(int(fields[1]), []).append(int(name))
    ticks, todo = 0, [os.getpid()]
    while todo:
        pid = todo.pop()
        ticks += stats.get(pid, 0)
        todo += children.get(pid, [])
    return ticks / os.sysconf("SC_CLK_TCK")


def timed(runner: str, workers: int) -> dict[str, Any]:
    """Run one runner in a fresh process; its servers and children are reaped inside it, so
    RUSAGE_CHILDREN here holds the CPU of the whole tree, and the child reports its own.
    ``ours-check@rootless`` runs ``ours-check`` with the sandbox forced to that mode."""
    import resource

    name, _, mode = runner.partition("@")
    env = {**os.environ}
    env.pop("REWARDSMITH_SANDBOX_MODE", None)
    if mode:
        env["REWARDSMITH_SANDBOX_MODE"] = mode
    if name.startswith("old-"):  # the same runner on an older rewardsmith (--compare-with)
        name = name[len("old-") :]
        env["PYTHONPATH"] = OLD[0] + os.pathsep + env.get("PYTHONPATH", "")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run(
        [sys.executable, __file__, "--runner", name, "--workers", str(workers)],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    inner = json.loads(done.stdout.strip().splitlines()[-1])
    failed = json.loads(done.stderr.strip().splitlines()[-1])["failed"]
    tree_cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    row = {
        "runner": runner,
        "samples": inner["n"],
        "passed": inner["passed"],
        "seconds": round(inner["wall_s"], 2),
        "per_s": round(inner["n"] / inner["wall_s"], 1),
        "tree_cpu_s_incl_setup": round(tree_cpu, 2),
        "cpu_ms_per_sample": round(1000 * inner["tree_cpu_s"] / inner["n"], 2),
        "failed": failed,
        "load_avg_1m": round(os.getloadavg()[0], 2),
    }
    print(json.dumps(row), flush=True)
    return row


OLD: list[str] = []
"""A folder holding an older rewardsmith (`--compare-with`), measured beside this one."""


def runners(modes: list[str]) -> list[str]:
    ours = [f"{r}@{m}" for m in modes for r in ("ours-calls", "ours-check")]
    if OLD:
        ours += [f"old-{r}@{m}" for m in modes for r in ("ours-calls", "ours-check")]
    return [*ours, "evalplus", "bare"]


def throughput(
    tasks: list[dict[str, Any]], workers: int, rounds: int, modes: list[str]
) -> list[dict[str, Any]]:
    """Every runner once per round, in the same order each round (A, B, C, D, A, B, ...)."""
    load_cases(tasks)  # record once, outside every timed run
    return [{**timed(r, workers), "round": i} for i in range(rounds) for r in runners(modes)]


def summarise(rows: list[dict[str, Any]], modes: list[str]) -> None:
    """Median samples/s per runner, and the median of the within-round ratios."""
    import statistics

    by_round: dict[int, dict[str, float]] = {}
    cpu: dict[int, dict[str, float]] = {}
    for row in rows:
        by_round.setdefault(row["round"], {})[row["runner"]] = row["per_s"]
        cpu.setdefault(row["round"], {})[row["runner"]] = row["cpu_ms_per_sample"]
    names = runners(modes)
    for name in names:
        values = [r[name] for r in by_round.values()]
        ms = [r[name] for r in cpu.values()]
        print(
            f"{name:22s} median {statistics.median(values):7.1f} samples/s   {values}"
            f"   tree CPU ms/sample median {statistics.median(ms):6.2f}  {ms}"
        )
    for ours in names[:-2]:
        for other in ("evalplus", "bare"):
            ratios = [r[ours] / r[other] for r in by_round.values()]
            text = ", ".join(f"{x:.2f}" for x in ratios)
            print(f"{ours} / {other}: median {statistics.median(ratios):.2f}x  (rounds: {text})")
            # on idle cores throughput follows CPU per sample: the other's over ours
            ratios = [r[other] / r[ours] for r in cpu.values()]
            text = ", ".join(f"{x:.2f}" for x in ratios)
            median = statistics.median(ratios)
            print(f"    CPU per sample, {other} / {ours}: median {median:.2f}x ({text})")


def mutant_check(tasks: list[dict[str, Any]], workers: int) -> dict[str, Counter[str]]:
    """Canonical solutions must pass; broken variants must fail unless they happen to be
    correct (listed so a person can confirm)."""
    verifier = CodeTests(wall_s=20, call_timeout_s=10)
    counts: dict[str, Counter[str]] = {}
    jobs = []
    for t in tasks:
        jobs.append(("canonical", t, t["canonical_solution"]))
        for kind, program in he.mutants(t).items():
            if program is not None:
                jobs.append((kind, t, program))
    samples = [
        Sample(id=t["task_id"], completion=p, reference=he.humaneval_reference(t))
        for _, t, p in jobs
    ]
    with ThreadPoolExecutor(workers) as pool:
        verdicts = list(pool.map(verifier, samples))
    for (kind, t, _), v in zip(jobs, verdicts, strict=True):
        counts.setdefault(kind, Counter())[v.status.value] += 1
        if kind != "canonical" and v.status.value == "pass":
            print(f"  {kind} of {t['task_id']} passes (check by hand that it is correct)")
    for kind, c in counts.items():
        print(json.dumps({"variant": kind, **c}))
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--rounds", type=int, default=5, help="interleaved rounds")
    parser.add_argument(
        "--modes",
        default="privileged,rootless",
        help="sandbox modes for the ours-* runners, comma-separated",
    )
    parser.add_argument("--mutants", action="store_true", help="also run the external check")
    parser.add_argument(
        "--compare-with",
        help="also run the ours-* runners on an older rewardsmith: a folder holding a "
        "`rewardsmith/` namespace of an older checkout (see benchmarks/executor.py compare)",
    )
    parser.add_argument("--runner", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.compare_with:
        OLD.append(args.compare_with)
    if args.runner:
        results = run_one(args.runner, args.workers)
        ids = [t["task_id"] for t in he.tasks() if load_cases([])[t["task_id"]] is not None]
        failed = [i for i, ok in zip(ids, results, strict=True) if not ok]
        print(json.dumps({"failed": failed}), file=sys.stderr)
        return
    tasks = he.tasks()
    modes = [m for m in args.modes.split(",") if m]
    print(
        json.dumps(
            {
                "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                "cores": os.cpu_count(),
                "workers": args.workers,
                "rounds": args.rounds,
                "modes": modes,
                "load_avg": os.getloadavg(),
            }
        )
    )
    rows = throughput(tasks, args.workers, args.rounds, modes)
    summarise(rows, modes)
    print(json.dumps({"load_avg_end": os.getloadavg()}))
    if args.mutants:
        mutant_check(tasks, args.workers)


if __name__ == "__main__":
    main()
