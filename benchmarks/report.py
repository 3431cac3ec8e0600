"""Report benchmark: peak memory and time of ``rewardsmith report`` on 10k, 100k and 200k
scored rows, against the report as it was before issue 16 (which loaded every row).

    .venv/bin/python benchmarks/report.py [--sizes 10000 100000 200000] [--repeats 2]

The scored files are made the way ``rewardsmith score`` makes them: 2,000 distinct rows
(capitals answered right, wrong and untagged; multi-turn tool-calling episodes; steps of
an agent; long answers) are scored through a real `Scorer` (inline executor) with
``exact_match`` and ``format``, and written with `ScoredWriter` again and again under
fresh ids and 50 task names until the file has the size asked for. Every run of a report
is its own process (``python -m rewardsmith.cli.main report ...``); its peak resident
memory is the kernel's (``wait4`` rusage ``ru_maxrss``), its time the wall clock.
The old report is ``cli/report.py`` (with the ``cli/scored.py`` it read with) at the
commit before this work (``--baseline``), taken from git and run on the same files;
runs interleave new, old, new, old, after one untimed run of the new report whose page
is checked for the row count.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from rewardsmith.datasets.scored import ScoredWriter
from rewardsmith.graders import Scorer
from rewardsmith.verifiers.types import Sample

REPO = Path(__file__).resolve().parents[1]
BASELINE = "95761a5"
"""main with the Scorer merged, before this work: the report that loads every row."""

CAPITALS = [("France", "Paris"), ("Japan", "Tokyo"), ("Kenya", "Nairobi"), ("Peru", "Lima"),
            ("Canada", "Ottawa"), ("Egypt", "Cairo"), ("Norway", "Oslo")]  # fmt: skip


def _base_rows(n: int) -> list[dict]:
    """``n`` distinct dump rows of four kinds."""
    rows = []
    for i in range(n):
        country, capital = CAPITALS[i % len(CAPITALS)]
        prompt = f"What is the capital of {country}? Answer inside <answer></answer>. ({i})"
        kind = i % 10
        if kind < 6:  # right, wrong or untagged single answers
            answers = [f"<answer>{capital}</answer>", "<answer>Lyon</answer>", capital]
            completion: object = answers[i % 3] + " " + "because " * (i % 40)
        elif kind < 8:  # a tool-calling episode
            completion = [
                {"role": "assistant", "content": None, "tool_calls": [{"type": "function",
                 "function": {"name": "search", "arguments": {"query": f"capital of {country}"}}}]},
                {"role": "tool", "name": "search", "content": f"{capital} is the capital. " * 5},
                {"role": "assistant",
                 "content": f"<answer>{'Rome' if i % 4 == 0 else capital}</answer>"},
            ]  # fmt: skip
        elif kind < 9:  # an agent's steps
            completion = [{"action": f"lookup('{country}')", "observation": capital * 3},
                          {"action": f"<answer>{capital}</answer>"}]  # fmt: skip
        else:  # a long answer
            completion = "Let me think. " * 200 + f"<answer>{capital}</answer>"
        rows.append({"prompt": prompt, "completion": completion, "task": "capitals",
                     "reference": f"<answer>{capital}</answer>"})  # fmt: skip
    return rows


def make_scored(path: Path, rows: int, distinct: int = 2000) -> None:
    base = _base_rows(distinct)
    samples = [Sample(id=str(i), **row) for i, row in enumerate(base)]
    with Scorer(["exact_match", "format:required_tags=answer"], backend="inline") as scorer:
        rewards = [r.to_dict() for r in scorer.score(samples)]
    with ScoredWriter(path, resume=False) as out:
        for i in range(rows):
            row, reward = base[i % distinct], rewards[i % distinct]
            task = f"task-{i % 50}"
            out.write({**row, "id": f"r{i}", "task": task,
                       "rewardsmith": {**reward, "id": f"r{i}", "task": task}})  # fmt: skip


def old_report_module(folder: Path, baseline: str) -> Path:
    """The old ``cli/report.py`` and the ``cli/scored.py`` it read with, as module files."""

    def show(path: str) -> str:
        shown = subprocess.run(["git", "show", f"{baseline}:{path}"], cwd=REPO, check=True,
                               capture_output=True, text=True)  # fmt: skip
        return shown.stdout

    report = show("cli/report.py").replace("rewardsmith.cli.scored", "old_scored")
    (folder / "old_scored.py").write_text(show("cli/scored.py"))
    target = folder / "old_report.py"
    target.write_text(report)
    return target


def measure(command: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(peak resident MB, wall seconds) of one process."""
    start = time.perf_counter()
    process = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE)  # fmt: skip
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise RuntimeError(f"{command} failed: {process.stderr.read().decode()[-2000:]}")
    return usage.ru_maxrss / 1024, elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 200_000])
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--baseline", default=BASELINE)
    parser.add_argument("--no-baseline", action="store_true", help="only the new report")
    args = parser.parse_args()
    print(f"date {datetime.now(UTC):%Y-%m-%d %H:%M} UTC; load {Path('/proc/loadavg').read_text()}")
    with tempfile.TemporaryDirectory(prefix="rewardsmith-bench-report-") as tmp:
        folder = Path(tmp)
        old = None if args.no_baseline else old_report_module(folder, args.baseline)
        env = {**os.environ, "PYTHONPATH": str(folder), "MPLBACKEND": "Agg"}
        results = []
        for size in args.sizes:
            scored = folder / f"scored-{size}.jsonl"
            started = time.perf_counter()
            make_scored(scored, size)
            made = time.perf_counter() - started
            size_mb = scored.stat().st_size / 2**20
            print(f"{size} rows: {size_mb:.0f} MB, made in {made:.0f} s", flush=True)
            new_cmd = [sys.executable, "-m", "rewardsmith.cli.main", "report", str(scored),
                       "-o", str(folder / "new.html")]  # fmt: skip
            old_cmd = [sys.executable, "-c", "import sys, pathlib, old_report; "
                       "old_report.report(pathlib.Path(sys.argv[1]), pathlib.Path(sys.argv[2]))",
                       str(scored), str(folder / "old.html")]  # fmt: skip
            runs: dict[str, list[tuple[float, float]]] = {"new": [], "old": []}
            measure(new_cmd, env)  # once untimed: the page must say how many rows it read
            if f"<b>{size}</b> samples" not in (folder / "new.html").read_text():
                raise RuntimeError(f"the new report did not count {size} rows")
            for _ in range(args.repeats):
                runs["new"].append(measure(new_cmd, env))
                print(f"  new: {runs['new'][-1][0]:.0f} MB, {runs['new'][-1][1]:.1f} s", flush=True)
                if old is not None:
                    runs["old"].append(measure(old_cmd, env))
                    print(f"  old: {runs['old'][-1][0]:.0f} MB, {runs['old'][-1][1]:.1f} s",
                          flush=True)  # fmt: skip
            results.append({"rows": size, "file_mb": round(size_mb, 1), **{
                f"{k}_{what}": [round(r[i], 1) for r in v]
                for k, v in runs.items() if v for i, what in ((0, "peak_mb"), (1, "seconds"))
            }})  # fmt: skip
            scored.unlink()
            (folder / "new.html").unlink(missing_ok=True)
            (folder / "old.html").unlink(missing_ok=True)
        print(json.dumps(results, indent=1))
        print(f"load at the end {Path('/proc/loadavg').read_text()}")


if __name__ == "__main__":
    main()
