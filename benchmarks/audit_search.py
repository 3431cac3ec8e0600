"""`rewardsmith audit --search` with a large budget: violations found per hour of CPU, per
domain, on every bundled task set and the seed sets of the tests.

For each task set (``datasets/*/audit.yaml`` and ``tests/cli/search_sets/*``), one search
per seed (``--seeds``) with ``--budget`` rewrites scored per leaf verifier, on the inline
executor (the verifiers' own jails and killable workers still run: code in the sandbox,
meshes in a worker). A leaf's domain is its verifier's (math, code, finance, 3d, text).
Per domain it prints: rewrites scored, CPU seconds (this process and its children),
witnesses (distinct minimal chains), distinct relations broken, violations per CPU hour,
and for each relation broken the fewest rewrites it took to find its first witness.

CPU seconds are ``getrusage`` of this process and its reaped children plus the CPU times of
its live descendants (the math and mesh workers, the sandbox's processes); a worker that
ended between two readings is lost, so the figures are a lower bound; wall time is printed
beside them.

Run: ``.venv/bin/python benchmarks/audit_search.py [--budget 300] [--seeds 0 1]
[--seconds 120] [--json PATH]`` (from the repository root: the seed sets name their
files from there).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import psutil

_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]

from rewardsmith.cli.audit import bundled_task_sets, load_task_set  # noqa: E402
from rewardsmith.cli.audit_search import run_search  # noqa: E402
from rewardsmith.graders import Executor  # noqa: E402

ROOT = _HERE.parent
SEED_SETS = ROOT / "tests" / "cli" / "search_sets"
DOMAINS = {
    "math": "math",
    "code_tests": "code",
    "numeric_answer": "finance",
    "table_match": "finance",
    "mesh_compare": "3d",
}


def _cpu() -> float:
    """CPU seconds of this process, its reaped children, and its live descendants (the
    math and mesh workers and the sandbox's processes stay alive between samples)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    total = own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime
    for child in psutil.Process().children(recursive=True):
        try:
            times = child.cpu_times()
        except psutil.Error:  # it ended between the listing and the reading
            continue
        total += times.user + times.system + times.children_user + times.children_system
    return total


def _sets() -> list[Path]:
    return [*bundled_task_sets(), *sorted(p.parent for p in SEED_SETS.glob("*/audit.yaml"))]


def run(budget: int, seeds: list[int], seconds: float) -> dict[str, dict[str, Any]]:
    table: dict[str, dict[str, Any]] = defaultdict(
        lambda: {"rewrites": 0, "cpu_s": 0.0, "wall_s": 0.0, "witnesses": 0, "first": {}}
    )
    for folder in _sets():
        grader, rows = load_task_set(folder)
        for seed in seeds:
            cpu, wall = _cpu(), time.monotonic()
            with Executor("inline") as executor:
                result = run_search(
                    grader, rows, executor, budget=budget, seconds=seconds, seed=seed
                )
            domains = {r.leaf: DOMAINS.get(r.verifier, "text") for r in result.rows}
            domain = next(iter(set(domains.values())), "text") if domains else "text"
            row = table[domain]
            row["rewrites"] += sum(r.tries for r in result.rows)
            row["cpu_s"] += _cpu() - cpu
            row["wall_s"] += time.monotonic() - wall
            row["witnesses"] += len(result.witnesses)
            for w in result.witnesses:
                key = f"{folder.name}:{w.relation}"
                row["first"][key] = min(row["first"].get(key, w.found_after), w.found_after)
            print(
                f"{folder.name} seed {seed}: {len(result.witnesses)} witnesses, "
                f"{_cpu() - cpu:.1f} s CPU, load {os.getloadavg()}",
                flush=True,
            )
    return dict(table)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--budget", type=int, default=300)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    parser.add_argument("--seconds", type=float, default=120.0)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    os.chdir(ROOT)
    started = time.monotonic()
    table = run(args.budget, args.seeds, args.seconds)
    print(f"\nbudget {args.budget} per leaf, seeds {args.seeds}, load {os.getloadavg()}")
    print("| domain | rewrites | CPU s | wall s | witnesses | relations broken | per CPU hour |")
    print("|---|---|---|---|---|---|---|")
    for domain, row in sorted(table.items()):
        rate = row["witnesses"] / row["cpu_s"] * 3600 if row["cpu_s"] else 0.0
        print(
            f"| {domain} | {row['rewrites']} | {row['cpu_s']:.1f} | {row['wall_s']:.1f} | "
            f"{row['witnesses']} | {len(row['first'])} | {rate:,.0f} |"
        )
    for domain, row in sorted(table.items()):
        for key, took in sorted(row["first"].items(), key=lambda kv: kv[1]):
            print(f"  {domain} {key}: first witness after {took} rewrites")
    print(f"total wall {time.monotonic() - started:.0f} s")
    if args.json is not None:
        args.json.write_text(json.dumps(table, indent=2))


if __name__ == "__main__":
    main()
