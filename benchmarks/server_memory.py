"""Memory of the reward server's whole process tree: PSS idle, after N requests, after a soak.

Starts the real ``rewardsmith serve`` (``python -m rewardsmith.cli.main serve``) with a
math, a code or a mixed (math + code) spec, and reads the proportional set size (PSS) of
every process of its tree from ``/proc/<pid>/smaps_rollup``. PSS splits each shared page
between the processes that map it, so the tree's sum counts a page once; summed RSS would
count every page shared by forked workers once per worker. Figures:

- ``idle``: once ``/health`` answers (workers started, nothing scored yet);
- ``after N``: after ``--requests`` single-sample requests from ``--clients`` clients;
- ``soak``: after ``--soak-s`` seconds more of the same load, read every ``--every-s``
  seconds (growth = last reading minus the first; each reading also gives the server
  process's own PSS, where growth that is not the workers' shows);
- ``throughput``: requests per second during the soak (every reward checked right).

With ``--base DIR`` each spec is measured for this checkout and for another version of
the code laid out as a ``rewardsmith`` namespace under DIR (see ``--help``), in turns, so
both see the same machine load. ``os.getloadavg()`` is printed with every figure.

    python benchmarks/server_memory.py --specs math,code,mixed --requests 60 --soak-s 60 \
        --base /tmp/base-memory/root
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.server_load import _free_port, wait_until_healthy  # noqa: E402

LEAVES = {
    "math": "math: {verify: math, tasks: [math]}",
    "code": "code: {verify: code_tests, tasks: [code], wall_s: 10}",
}
SPECS = {"math": ["math"], "code": ["code"], "mixed": ["math", "code"]}
MATH = [(rf"so \boxed{{{n * n}}}", str(n * n), 1.0) for n in range(2, 9)] + [
    (r"\boxed{\frac{1}{2}}", "0.5", 1.0),
    (r"\boxed{7}", "8", 0.0),
]
TESTS = {"format": "asserts", "asserts": ["assert sq(3) == 9", "assert sq(-2) == 4"]}
CODE = [
    ("def sq(x):\n    return x * x", TESTS, 1.0),
    ("def sq(x):\n    return x ** 2", TESTS, 1.0),
    ("def sq(x):\n    return x + x", TESTS, 0.0),
]


def spec_text(name: str) -> str:
    leaves = "\n".join(f"      {LEAVES[leaf]}" for leaf in SPECS[name])
    return f"grader:\n  weighted:\n    components:\n{leaves}\n"


def request(spec: str, i: int) -> tuple[dict[str, object], float]:
    """The i-th request body for ``spec`` and the reward it must get."""
    tasks = SPECS[spec]
    task = tasks[i % len(tasks)]
    cases = MATH if task == "math" else CODE
    completion, reference, expected = cases[(i // len(tasks)) % len(cases)]
    sample = {
        "id": str(i),
        "task": task,
        "completion": completion,
        "reference": reference,
    }
    return {"samples": [sample]}, expected * len(tasks)  # a weighted sum rescales skips


# ---------------------------------------------------------------------------- memory


def tree(root: int) -> list[int]:
    """``root`` and every process below it."""
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                stat = Path(f"/proc/{name}/stat").read_bytes()
            except OSError:
                continue
            parent = int(stat[stat.rfind(b")") + 2 :].split()[1])
            children.setdefault(parent, []).append(int(name))
    found, frontier = [root], [root]
    while frontier:
        for child in children.get(frontier.pop(), ()):
            found.append(child)
            frontier.append(child)
    return found


def pss_kib(pid: int) -> int:
    """The PSS of one process in KiB (0 if it is gone)."""
    try:
        text = Path(f"/proc/{pid}/smaps_rollup").read_text()
    except OSError:
        return 0
    for line in text.splitlines():
        if line.startswith("Pss:"):
            return int(line.split()[1])
    return 0


@dataclass
class Reading:
    mib: float
    processes: int
    load: tuple[float, float, float]
    server_mib: float
    """The server process alone (where growth that is not the workers' shows)."""

    def __str__(self) -> str:
        load = "/".join(f"{x:.1f}" for x in self.load)
        return (
            f"{self.mib:7.1f} MiB PSS in {self.processes:2d} processes, server "
            f"{self.server_mib:5.1f} MiB (load {load})"
        )


def measure(root: int) -> Reading:
    pids = tree(root)
    pss = {pid: pss_kib(pid) for pid in pids}
    return Reading(sum(pss.values()) / 1024, len(pids), os.getloadavg(), pss[root] / 1024)


def show_tree(root: int) -> None:
    """One line per process of the tree: its PSS and its command (``--tree``)."""
    for pid in tree(root):
        try:
            argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        command = " ".join(a.decode(errors="replace") for a in argv)[:110]
        print(f"    {pss_kib(pid) / 1024:6.1f} MiB  {pid:7d}  {command}")


# ---------------------------------------------------------------------------- load


@dataclass
class Load:
    requests: int = 0
    wrong: list[str] = field(default_factory=list)
    elapsed_s: float = 0.0

    @property
    def rps(self) -> float:
        return self.requests / self.elapsed_s if self.elapsed_s else 0.0


async def drive(url: str, spec: str, clients: int, count: int | None, seconds: float) -> Load:
    """``count`` requests, or as many as fit in ``seconds``, from ``clients`` clients."""
    load = Load()
    start = time.perf_counter()
    counter = iter(range(10**9))

    def more() -> int | None:
        i = next(counter)
        if count is not None:
            return i if i < count else None
        return i if time.perf_counter() - start < seconds else None

    async def client(http: httpx.AsyncClient) -> None:
        while (i := more()) is not None:
            body, expected = request(spec, i)
            reply = await http.post(f"{url}/score", json=body)
            value = reply.json()["rewards"][0]["value"] if reply.status_code == 200 else None
            load.requests += 1
            if value is None or abs(value - expected) > 1e-9:
                load.wrong.append(f"{i}: {reply.status_code} {reply.text[:300]}")

    async with httpx.AsyncClient(timeout=120) as http:
        await asyncio.gather(*(client(http) for _ in range(clients)))
    load.elapsed_s = time.perf_counter() - start
    return load


def start_server(
    workdir: Path, spec: str, lanes: int, code_root: Path | None
) -> tuple[subprocess.Popen[bytes], str]:
    (workdir / "spec.yaml").write_text(spec_text(spec))
    port = _free_port()
    command = [
        sys.executable, "-m", "rewardsmith.cli.main", "serve", "--spec", "spec.yaml",
        "--port", str(port), "--lanes", str(lanes), "--max-waiting", "1000",
    ]  # fmt: skip
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if code_root is not None:
        env["PYTHONPATH"] = str(code_root)
    log = open(workdir / "server.log", "wb")  # noqa: SIM115 (closed with the process)
    process = subprocess.Popen(command, stdout=log, stderr=log, env=env, cwd=workdir)
    url = f"http://127.0.0.1:{port}"
    wait_until_healthy(process, url, lambda: (workdir / "server.log").read_text()[-3000:])
    return process, url


def code_of(code_root: Path | None) -> str:
    """Where that interpreter imports rewardsmith from (a check that --base is used)."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if code_root is not None:
        env["PYTHONPATH"] = str(code_root)
    probe = "import rewardsmith.graders as g; print(g.__file__)"
    return subprocess.run(
        [sys.executable, "-c", probe], env=env, capture_output=True, text=True, cwd="/"
    ).stdout.strip()


# ---------------------------------------------------------------------------- one run


def run_one(spec: str, label: str, code_root: Path | None, args: argparse.Namespace) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        process, url = start_server(Path(tmp), spec, args.lanes, code_root)
        try:
            time.sleep(args.settle_s)
            idle = measure(process.pid)
            print(f"{spec:5s} {label:4s} idle          {idle}", flush=True)
            warm = asyncio.run(drive(url, spec, args.clients, args.requests, 0))
            after = measure(process.pid)
            print(f"{spec:5s} {label:4s} after {args.requests:<4d}    {after}", flush=True)
            soak, readings = Load(), [after]
            end = time.monotonic() + args.soak_s
            while (left := end - time.monotonic()) > 0:
                part = asyncio.run(drive(url, spec, args.clients, None, min(args.every_s, left)))
                soak.requests += part.requests
                soak.elapsed_s += part.elapsed_s
                soak.wrong += part.wrong
                readings.append(measure(process.pid))
                at = args.soak_s - max(0.0, end - time.monotonic())
                print(f"{spec:5s} {label:4s}   soak {at:5.0f}s  {readings[-1]}", flush=True)
            last, first = readings[-1], readings[1 if len(readings) > 2 else 0]
            if args.tree:
                show_tree(process.pid)
            print(
                f"{spec:5s} {label:4s} soak {args.soak_s:g}s     {last}  growth "
                f"{last.mib - first.mib:+.1f} MiB "
                f"(server {last.server_mib - first.server_mib:+.1f}), "
                f"{soak.rps:.1f} req/s, wrong {len(warm.wrong) + len(soak.wrong)}",
                flush=True,
            )
            for line in (warm.wrong + soak.wrong)[:3]:
                print("   wrong:", line)
        finally:
            process.terminate()
            process.wait(timeout=60)
    return {
        "spec": spec,
        "code": label,
        "idle_mib": round(idle.mib, 1),
        "after_mib": round(after.mib, 1),
        "soak_mib": round(last.mib, 1),
        "soak_min_max_mib": [round(f(r.mib for r in readings[1:]), 1) for f in (min, max)],
        "server_mib": [round(r.server_mib, 1) for r in (idle, *readings)],
        "processes": last.processes,
        "soak_rps": round(soak.rps, 1),
        "wrong": len(warm.wrong) + len(soak.wrong),
        "load": [round(x, 2) for x in last.load],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--specs", default="math,code,mixed")
    parser.add_argument("--requests", type=int, default=60)
    parser.add_argument("--soak-s", type=float, default=30.0)
    parser.add_argument("--every-s", type=float, default=10.0)
    parser.add_argument("--settle-s", type=float, default=2.0, help="wait before 'idle'")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--lanes", type=int, default=4)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--tree", action="store_true", help="show each process after the soak")
    parser.add_argument(
        "--base",
        type=Path,
        help="also serve this code (a dir holding rewardsmith/<folder> links to a "
        "`git archive` of the base commit), in turns with this checkout",
    )
    args = parser.parse_args()
    versions: list[tuple[str, Path | None]] = [("new", None)]
    if args.base is not None:
        versions.insert(0, ("base", args.base.resolve()))
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, python {sys.version.split()[0]}")
    for label, root in versions:
        print(f"code {label}: {code_of(root)}")
    results = []
    for _ in range(args.rounds):
        for spec in args.specs.split(","):
            for label, root in versions:
                results.append(run_one(spec, label, root, args))
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
