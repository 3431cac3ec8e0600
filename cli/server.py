"""The HTTP reward server: the same grader and executor as the CLI, behind FastAPI.

Endpoints:

- ``POST /score``: ``{"samples": [Sample, ...]}`` → ``{"rewards": [Reward.to_dict(), ...]}``.
- ``POST /get_reward``: OpenRLHF's remote reward contract, ``{"query": [...], "prompts":
  [...], "labels": [...]}`` → ``{"rewards": [...], "scores": [...], "extra_logs": {...}}``.
- ``GET /health`` and ``GET /metrics`` (Prometheus text).

Protection: a request body over ``max_body_bytes`` is refused with 413 while it is being
read (a missing Content-Length does not help); more than ``max_samples`` samples, 413;
malformed JSON, 400; a bad sample, 422 naming the field. Requests are scored on *lanes*,
each an executor with its own worker processes, so a verifier that hangs holds one lane
until the executor kills it at ``timeout_s`` while the others go on. When every lane is
busy and ``max_waiting`` requests already wait, the server answers 503 with
``Retry-After`` (back-pressure) instead of queueing without bound. With ``token`` set,
scoring endpoints need ``Authorization: Bearer <token>``.
"""

from __future__ import annotations

import asyncio
import hmac
import json
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, PlainTextResponse
from pydantic import ValidationError

from rewardsmith.cli.metrics import ServerMetrics
from rewardsmith.datasets.dumps import field_path
from rewardsmith.datasets.mapping import MappingProblem, to_sample
from rewardsmith.graders import Executor, Grader, Reward
from rewardsmith.verifiers.types import Sample

__all__ = ["ServerConfig", "create_app"]


@dataclass(frozen=True)
class ServerConfig:
    lanes: int = 4
    """Requests scored at once; each lane is an executor with its own workers."""
    workers_per_lane: int = 1
    backend: str = "pool"
    """Executor backend per lane: pool (isolated, killable) or inline (tests only)."""
    timeout_s: float = 30.0
    """Seconds one verifier may take on one sample before its process is killed."""
    max_body_bytes: int = 8 * 1024 * 1024
    max_samples: int = 1024
    max_waiting: int = 64
    """Requests allowed to wait for a lane; beyond that, 503 with Retry-After."""
    token: str | None = None

    def __post_init__(self) -> None:
        if self.lanes < 1 or self.workers_per_lane < 1:
            raise ValueError("lanes and workers_per_lane must be at least 1")
        if self.backend not in ("pool", "inline"):
            raise ValueError("backend must be 'pool' or 'inline'")


class HTTPProblem(Exception):
    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None):
        super().__init__(message)
        self.status, self.message, self.headers = status, message, headers or {}


class _Lanes:
    """Executors handed out one request at a time, with a bounded waiting line."""

    def __init__(self, config: ServerConfig, metrics: ServerMetrics) -> None:
        self.config, self.metrics = config, metrics
        self.free: asyncio.Queue[Executor] = asyncio.Queue()
        self.all = [
            Executor(config.backend, workers=config.workers_per_lane, timeout_s=config.timeout_s)
            for _ in range(config.lanes)
        ]
        for executor in self.all:
            self.free.put_nowait(executor)

    @asynccontextmanager
    async def lane(self) -> AsyncIterator[Executor]:
        if self.free.empty() and self.metrics.waiting >= self.config.max_waiting:
            raise HTTPProblem(503, "server busy: every lane is in use", {"Retry-After": "1"})
        self.metrics.waiting += 1
        try:
            executor = await self.free.get()
        finally:
            self.metrics.waiting -= 1
        try:
            yield executor
        finally:
            self.free.put_nowait(executor)

    def close(self) -> None:
        for executor in self.all:
            executor.close()


def create_app(grader: Grader, config: ServerConfig | None = None) -> FastAPI:
    """A FastAPI app that scores with `grader`; see the module docstring."""
    config = config or ServerConfig()
    metrics = ServerMetrics()
    state: dict[str, _Lanes] = {}

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        state["lanes"] = _Lanes(config, metrics)
        yield
        state["lanes"].close()

    app = FastAPI(title="rewardsmith", lifespan=lifespan)

    async def scored(request: Request, endpoint: str, handler: Any) -> JSONResponse:
        start = time.perf_counter()
        status = 200
        metrics.in_flight += 1
        try:
            _check_token(request, config)
            body = await _read_json(request, config.max_body_bytes)
            payload = await handler(body, state["lanes"])
            return JSONResponse(payload)
        except HTTPProblem as problem:
            status = problem.status
            return JSONResponse({"error": problem.message}, status, headers=problem.headers)
        finally:
            metrics.in_flight -= 1
            metrics.observe(endpoint, status, time.perf_counter() - start)

    async def score_samples(samples: list[Sample], lanes: _Lanes) -> list[Reward]:
        if len(samples) > config.max_samples:
            raise HTTPProblem(413, f"{len(samples)} samples; at most {config.max_samples}")
        async with lanes.lane() as executor:
            rewards = await grader.ascore(samples, executor)
        metrics.scored(len(rewards), sum(r.failed for r in rewards))
        return rewards

    async def native(body: Any, lanes: _Lanes) -> dict[str, Any]:
        samples = _native_samples(body)
        rewards = await score_samples(samples, lanes)
        return {"rewards": [r.to_dict() for r in rewards]}

    async def openrlhf(body: Any, lanes: _Lanes) -> dict[str, Any]:
        samples = _openrlhf_samples(body)
        rewards = await score_samples(samples, lanes)
        return _openrlhf_reply(rewards)

    @app.post("/score")
    async def score_endpoint(request: Request) -> JSONResponse:
        return await scored(request, "/score", native)

    @app.post("/get_reward")
    async def openrlhf_endpoint(request: Request) -> JSONResponse:
        return await scored(request, "/get_reward", openrlhf)

    @app.get("/health")
    async def health() -> dict[str, Any]:
        return {"status": "ok", "verifiers": sorted(grader.verifiers), "lanes": config.lanes}

    @app.get("/metrics")
    async def metrics_endpoint() -> PlainTextResponse:
        return PlainTextResponse(metrics.render())

    return app


def _check_token(request: Request, config: ServerConfig) -> None:
    if config.token is None:
        return
    given = request.headers.get("authorization", "")
    expected = f"Bearer {config.token}"
    if not hmac.compare_digest(given.encode(), expected.encode()):
        raise HTTPProblem(401, "missing or wrong bearer token", {"WWW-Authenticate": "Bearer"})


async def _read_json(request: Request, limit: int) -> Any:
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise HTTPProblem(413, f"body of {declared} bytes; the limit is {limit}")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise HTTPProblem(413, f"body over the {limit}-byte limit")
        chunks.append(chunk)
    try:
        return json.loads(b"".join(chunks))
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as exc:
        raise HTTPProblem(400, f"body is not valid JSON: {exc}"[:300]) from None


def _native_samples(body: Any) -> list[Sample]:
    if not isinstance(body, dict) or not isinstance(body.get("samples"), list):
        raise HTTPProblem(422, 'expected {"samples": [{"id": ..., "completion": ...}, ...]}')
    samples = []
    for i, item in enumerate(body["samples"]):
        try:
            samples.append(Sample.model_validate(item))
        except ValidationError as exc:
            first = exc.errors()[0]
            raise HTTPProblem(
                422, f"samples[{i}].{field_path(first['loc'])}: {first['msg']}"
            ) from None
    return samples


def _openrlhf_samples(body: Any) -> list[Sample]:
    if not isinstance(body, dict) or not isinstance(body.get("query"), list):
        raise HTTPProblem(422, 'expected {"query": [...], "prompts": [...], "labels": [...]}')
    queries = body["query"]
    n = len(queries)
    columns = {"prompts": body.get("prompts", [""] * n), "labels": body.get("labels", [None] * n)}
    for name, column in columns.items():
        if not isinstance(column, list) or len(column) != n:
            raise HTTPProblem(422, f"{name} must be a list as long as query ({n})")
    samples = []
    for i in range(n):
        record = {
            "query": queries[i],
            "prompts": columns["prompts"][i],
            "labels": columns["labels"][i],
        }
        try:
            samples.append(to_sample(record, default_id=str(i), mapping="openrlhf"))
        except MappingProblem as exc:
            raise HTTPProblem(422, f"item {i}: {exc}") from None
        except ValidationError as exc:
            raise HTTPProblem(422, f"item {i}: {exc.errors()[0]['msg']}") from None
    return samples


def _openrlhf_reply(rewards: list[Reward]) -> dict[str, Any]:
    """OpenRLHF reads `rewards` (for the advantage) and `scores` (for dynamic filtering)
    as numbers. A sample lost to an infrastructure failure is ``null`` unless the spec
    states a fallback; `extra_logs` counts them so they are never silent."""
    values = [r.value for r in rewards]
    components = sorted({name for r in rewards for name in r.components})
    extra_logs: dict[str, list[float | None]] = {
        name: [r.components[name].raw if name in r.components else None for r in rewards]
        for name in components
    }
    extra_logs["infra_failure"] = [1.0 if r.failed else 0.0 for r in rewards]
    return {"rewards": values, "scores": values, "extra_logs": extra_logs}
