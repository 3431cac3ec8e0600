"""Reward server under hostile math answers: one in five hostile against none, interleaved.

    .venv/bin/python benchmarks/hostile_load.py [--requests 800] [--clients 16] [--rounds 2]

Starts the real ``rewardsmith serve`` (uvicorn, pool executors, the real `math` verifier
and its killable workers) once, then drives it from `--clients` concurrent clients with
single-sample requests, in rounds of two loads each, interleaved (clean, hostile, clean,
hostile, ...) so that load from other work on the machine hits both alike:

* **clean**: completions and golds from ``tests/verifiers/math/cases.yaml`` in turn (right
  and wrong answers, in-process and worker checks alike);
* **hostile**: the same, except that every fifth request is an answer of the library's own
  ``math/expensive`` exploit class (`rewardsmith.verifiers.math.exploits`: towers of
  exponents, huge factorials and binomials, deep nesting, powers that explode when
  expanded).

Per load it reports throughput (requests/s), p50 and p99 latency, rewards that differ from
the case table's expected verdict, and for the hostile requests how they were scored (a
hostile answer must get reward 0 with failure ``check_limit``: never None, never a
timeout). The goal (issue 14): hostile throughput at least half of clean.

``--code-root DIR`` serves another version of the code, laid out as a ``rewardsmith``
namespace under DIR (for the figures "before": ``git archive <commit>`` unpacked, with
``DIR/rewardsmith/<folder>`` linking to each of its top-level folders); the requests are
built by this checkout either way.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.server_load import _free_port, wait_until_healthy  # noqa: E402
from rewardsmith.verifiers.math.exploits import math_exploits  # noqa: E402
from rewardsmith.verifiers.types import Sample  # noqa: E402
from tests.verifiers.math.case_table import load_cases  # noqa: E402

SPEC = "grader:\n  weighted:\n    components:\n      math: {verify: math}\n"
HOSTILE_EVERY = 5


@dataclass
class Request:
    body: bytes
    expected: float | None
    """The reward a clean request must get; None for a hostile one (it must get 0)."""


@dataclass
class LoadResult:
    latencies_s: list[float] = field(default_factory=list)
    wrong_rewards: list[str] = field(default_factory=list)
    hostile: Counter[str] = field(default_factory=Counter)
    elapsed_s: float = 0.0

    def summary(self) -> dict[str, object]:
        lat = sorted(self.latencies_s)
        return {
            "requests": len(lat),
            "throughput_rps": round(len(lat) / self.elapsed_s, 1),
            "p50_ms": round(1000 * statistics.median(lat), 1),
            "p99_ms": round(1000 * lat[int(0.99 * (len(lat) - 1))], 1),
            "wrong_rewards": len(self.wrong_rewards),
            "hostile_scored_as": dict(self.hostile),
        }


def _body(sample_id: str, completion: str, reference: str) -> bytes:
    sample = {"id": sample_id, "completion": completion, "reference": reference}
    return json.dumps({"samples": [sample]}).encode()


def build_requests(count: int, hostile: bool) -> list[Request]:
    cases = load_cases()
    golds = [c.gold for c in cases if c.expected][:25]
    attacks = [
        e.sample.completion_text
        for gold in golds
        for e in math_exploits(Sample(id="g", completion="", reference=gold), gold)
        if e.exploit_class == "math/expensive"
    ]
    requests = []
    for i in range(count):
        if hostile and i % HOSTILE_EVERY == HOSTILE_EVERY - 1:
            k = i // HOSTILE_EVERY
            requests.append(Request(_body(f"h{i}", attacks[k % len(attacks)], golds[k % 25]), None))
        else:
            case = cases[i % len(cases)]
            requests.append(Request(_body(f"c{i}", case.pred, case.gold), float(case.expected)))
    return requests


def start_server(
    workdir: Path, lanes: int, timeout_s: float, code_root: Path | None = None
) -> tuple[subprocess.Popen[bytes], str]:
    spec = workdir / "spec.yaml"
    spec.write_text(SPEC)
    port = _free_port()
    command = [
        sys.executable, "-m", "rewardsmith.cli.main", "serve", "--spec", str(spec),
        "--port", str(port), "--lanes", str(lanes), "--timeout", str(timeout_s),
        "--max-waiting", "1000",
    ]  # fmt: skip
    log = (workdir / "server.log").open("wb")  # read on failure; a pipe nobody reads fills
    env = {**os.environ, **({"PYTHONPATH": str(code_root)} if code_root else {})}
    process = subprocess.Popen(command, stderr=log, stdout=log, env=env, cwd=workdir)
    url = f"http://127.0.0.1:{port}"
    wait_until_healthy(process, url, lambda: _log_tail(workdir))
    return process, url


def _log_tail(workdir: Path) -> str:
    return (workdir / "server.log").read_text(errors="replace")[-3000:]


def _record(result: LoadResult, request: Request, reply: httpx.Response, index: int) -> None:
    reward = reply.json()["rewards"][0] if reply.status_code == 200 else None
    value = reward["value"] if reward else None
    if request.expected is None:
        verdict = reward["verdicts"]["math"] if reward else {}
        result.hostile[f"value {value}, {verdict.get('failure')}"] += 1
    elif value != request.expected:
        result.wrong_rewards.append(f"{index}: {reply.status_code} {reply.text[:300]}")


async def drive(url: str, requests: list[Request], clients: int) -> LoadResult:
    result = LoadResult()
    queue: asyncio.Queue[int] = asyncio.Queue()
    for i in range(len(requests)):
        queue.put_nowait(i)

    async def client(http: httpx.AsyncClient) -> None:
        while not queue.empty():
            i = queue.get_nowait()
            start = time.perf_counter()
            reply = await http.post(
                f"{url}/score", content=requests[i].body,
                headers={"content-type": "application/json"},
            )  # fmt: skip
            result.latencies_s.append(time.perf_counter() - start)
            _record(result, requests[i], reply, i)

    start = time.perf_counter()
    async with httpx.AsyncClient(timeout=300) as http:
        await asyncio.gather(*(client(http) for _ in range(clients)))
    result.elapsed_s = time.perf_counter() - start
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=800, help="requests per load")
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=2, help="clean+hostile pairs")
    parser.add_argument("--lanes", type=int, default=4, help="the server's lanes")
    parser.add_argument("--timeout", type=float, default=30.0, help="the server's job limit")
    parser.add_argument("--code-root", type=Path, help="serve this version of the code")
    args = parser.parse_args()
    loads = {
        name: build_requests(args.requests, name == "hostile") for name in ("clean", "hostile")
    }
    runs: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory() as tmp:
        process, url = start_server(Path(tmp), args.lanes, args.timeout, args.code_root)
        try:
            asyncio.run(drive(url, loads["clean"][:100], args.clients))  # warm every lane
            for round_ in range(args.rounds):
                for name, requests in loads.items():
                    summary = asyncio.run(drive(url, requests, args.clients)).summary()
                    runs.append({"round": round_, "load": name, **summary})
                    print(json.dumps(runs[-1]), flush=True)
        except httpx.HTTPError:
            print(f"server log:\n{_log_tail(Path(tmp))}", file=sys.stderr)
            raise
        finally:
            process.terminate()
            process.wait(timeout=30)
    ratios = [
        hostile["throughput_rps"] / clean["throughput_rps"]  # type: ignore[operator]
        for clean, hostile in zip(runs[::2], runs[1::2], strict=True)
    ]
    print(json.dumps({
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        "loadavg": Path("/proc/loadavg").read_text().split()[:3],
        "hostile_over_clean_throughput": [round(r, 3) for r in ratios],
    }))  # fmt: skip


if __name__ == "__main__":
    main()
