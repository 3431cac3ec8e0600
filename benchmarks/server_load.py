"""Load test of `rewardsmith serve` on loopback: good requests among poisoned ones.

Starts the real server (uvicorn, pool executors) as a subprocess with a spec whose one
verifier hangs on a trigger completion, then sends N requests from C concurrent clients.
A tenth are poisoned, in equal parts: malformed JSON, a body over the size limit, and a
sample that makes the verifier hang until the executor kills it. Checks that every good
request gets the right reward, every bad one a clear error, and that the server is still
up at the end; reports p50/p99 latency of the good requests and the throughput.

    python benchmarks/server_load.py [--requests 2000] [--clients 32]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.support.plugin import install_plugin  # noqa: E402

SPEC = "grader:\n  weighted:\n    components:\n      echo: {verify: hang_when, trigger: HANG}\n"
BODY_LIMIT = 256 * 1024


@dataclass
class LoadResult:
    good_latencies_s: list[float] = field(default_factory=list)
    wrong_rewards: list[str] = field(default_factory=list)
    bad_statuses: dict[str, list[int]] = field(default_factory=dict)
    hang_rewards: list[object] = field(default_factory=list)
    elapsed_s: float = 0.0
    server_alive: bool = False

    @property
    def requests(self) -> int:
        return (
            len(self.good_latencies_s)
            + sum(len(v) for v in self.bad_statuses.values())
            + len(self.hang_rewards)
        )

    def summary(self) -> dict[str, object]:
        lat = sorted(self.good_latencies_s)
        return {
            "requests": self.requests,
            "good": len(lat),
            "wrong_rewards": len(self.wrong_rewards),
            "bad_statuses": {k: sorted(set(v)) for k, v in self.bad_statuses.items()},
            "hang_rewards": sorted({json.dumps(r) for r in self.hang_rewards}),
            "p50_ms": round(1000 * statistics.median(lat), 1) if lat else None,
            "p99_ms": round(1000 * lat[int(0.99 * (len(lat) - 1))], 1) if lat else None,
            "throughput_rps": round(self.requests / self.elapsed_s, 1) if self.elapsed_s else None,
            "server_alive": self.server_alive,
        }


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(
    workdir: Path, lanes: int, timeout_s: float
) -> tuple[subprocess.Popen[bytes], str]:
    plugin = install_plugin(workdir / "plugin")
    spec = workdir / "spec.yaml"
    spec.write_text(SPEC)
    port = _free_port()
    env = {**os.environ, "PYTHONPATH": f"{plugin}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    command = [
        sys.executable, "-m", "rewardsmith.cli.main", "serve", "--spec", str(spec),
        "--port", str(port), "--lanes", str(lanes), "--timeout", str(timeout_s),
        "--max-body-bytes", str(BODY_LIMIT), "--max-waiting", "1000",
    ]  # fmt: skip
    process = subprocess.Popen(command, env=env, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    wait_until_healthy(
        process, url, lambda: process.stderr.read().decode() if process.stderr else ""
    )
    return process, url


def wait_until_healthy(
    process: subprocess.Popen[bytes], url: str, last_words: Callable[[], str]
) -> None:
    """Wait for the server's /health (120 s at most); `last_words` says why it exited."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            time.sleep(0.2)
        if process.poll() is not None:
            raise RuntimeError(f"server exited: {last_words()}")
    process.kill()
    raise RuntimeError("server did not start within 120 s")


def _request(i: int, poison_every: int) -> tuple[str, bytes]:
    kind = "good"
    if i % poison_every == 0:
        kind = ("malformed", "huge", "hang")[(i // poison_every) % 3]
    if kind == "malformed":
        return kind, b'{"samples": [{"id": "1", "completion": '
    if kind == "huge":
        return kind, json.dumps(
            {"samples": [{"id": "h", "completion": "x" * (2 * BODY_LIMIT)}]}
        ).encode()
    completion = "HANG" if kind == "hang" else f"answer-{i % 7}"
    reference = f"answer-{i % 7}" if i % 2 else "something else"
    return kind, json.dumps(
        {"samples": [{"id": str(i), "completion": completion, "reference": reference}]}
    ).encode()


async def drive(url: str, requests: int, clients: int, poison_every: int = 10) -> LoadResult:
    result = LoadResult()
    queue: asyncio.Queue[int] = asyncio.Queue()
    for i in range(requests):
        queue.put_nowait(i)

    async def client(http: httpx.AsyncClient) -> None:
        while not queue.empty():
            i = queue.get_nowait()
            kind, body = _request(i, poison_every)
            start = time.perf_counter()
            reply = await http.post(
                f"{url}/score", content=body, headers={"content-type": "application/json"}
            )
            elapsed = time.perf_counter() - start
            if kind == "good":
                expected = 1.0 if i % 2 else 0.0
                value = reply.json()["rewards"][0]["value"] if reply.status_code == 200 else None
                if value != expected:
                    result.wrong_rewards.append(f"{i}: {reply.status_code} {reply.text[:200]}")
                result.good_latencies_s.append(elapsed)
            elif kind == "hang":
                reward = (
                    reply.json()["rewards"][0] if reply.status_code == 200 else reply.status_code
                )
                result.hang_rewards.append(
                    {"value": reward["value"], "failure": reward["infra_failure"]}
                    if isinstance(reward, dict)
                    else reward
                )
            else:
                result.bad_statuses.setdefault(kind, []).append(reply.status_code)

    start = time.perf_counter()
    async with httpx.AsyncClient(timeout=120) as http:
        await asyncio.gather(*(client(http) for _ in range(clients)))
        result.elapsed_s = time.perf_counter() - start
        result.server_alive = (await http.get(f"{url}/health")).status_code == 200
    return result


def run(requests: int, clients: int, lanes: int, timeout_s: float) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as tmp:
        process, url = start_server(Path(tmp), lanes, timeout_s)
        try:
            result = asyncio.run(drive(url, requests, clients))
        finally:
            process.terminate()
            process.wait(timeout=30)
    return result.summary()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--lanes", type=int, default=4)
    parser.add_argument("--timeout", type=float, default=1.0, help="verifier timeout in the server")
    args = parser.parse_args()
    summary = run(args.requests, args.clients, args.lanes, args.timeout)
    print(
        json.dumps(
            {"machine": f"{platform.machine()}, {os.cpu_count()} cores", **summary}, indent=1
        )
    )


if __name__ == "__main__":
    main()
