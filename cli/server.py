"""The HTTP reward server: one `Scorer` behind FastAPI, the same object as every other door.

Endpoints:

- ``POST /score``: ``{"samples": [Sample, ...]}`` → ``{"rewards": [Reward.to_dict(), ...]}``.
- ``POST /get_reward``: OpenRLHF's remote reward contract, ``{"query": [...], "prompts":
  [...], "labels": [...]}`` → ``{"rewards": [...], "scores": [...], "extra_logs": {...}}``.
  OpenRLHF sends no task: a label that is an object ``{"task": ..., "reference": ...}``
  (or its JSON text) routes its sample; otherwise ``ServerConfig.task`` (``serve --task``),
  else the spec's ``default_task``.
- ``GET /health`` and ``GET /metrics`` (Prometheus text).

Protection: a request body over ``max_body_bytes`` is refused with 413 while it is being
read (a missing Content-Length does not help); more than ``max_samples`` samples, 413;
malformed or hostile JSON (a 200,000-digit integer, NaN or Infinity, nesting deeper than
``MAX_JSON_DEPTH``), 400; a bad sample, 422 naming the field. At most ``lanes`` requests
are scored at once, each on its own lane of the Scorer (its own executor and worker
processes), so a verifier that hangs holds one lane until it is killed at ``timeout_s``
while the others go on. When every lane is busy and ``max_waiting`` requests already
wait, the answer is 503 with ``Retry-After`` (back-pressure). With ``token`` set, scoring
endpoints need ``Authorization: Bearer <token>``.

Slow clients: a request's body must arrive within ``body_timeout_s`` (else 408, and the
connection closes); until it has, the request is not counted in flight and holds no lane.
Its headers must arrive within ``header_timeout_s`` of the connection opening (or of the
last response on it), else the connection is closed (see `serve`'s protocol). A client
that hangs up is one log line, never a traceback.

Shutting down (`drain`, called on SIGTERM by ``rewardsmith serve``): new requests, those
waiting for a lane and those whose body is still arriving get 503 with ``Retry-After`` at
once; requests being scored get until the grace period ends, then a 503 too, so every
request is answered.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import json
import logging
import math
import time
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, PlainTextResponse
from pydantic import ValidationError
from starlette.requests import ClientDisconnect

from rewardsmith.cli.metrics import ServerMetrics
from rewardsmith.datasets.dumps import field_path, most_specific
from rewardsmith.datasets.mapping import MappingProblem
from rewardsmith.graders import Grader, Reward, Scorer
from rewardsmith.graders.integrations.openrlhf import openrlhf_samples
from rewardsmith.verifiers.types import Sample

__all__ = ["MAX_JSON_DEPTH", "ServerConfig", "create_app"]

MAX_JSON_DEPTH = 64
"""Arrays and objects nested deeper than this are refused (no sample needs more)."""
RETRY_AFTER_S = 5
"""What a 503 during shutdown tells clients to wait before trying again (another replica)."""

access_log = logging.getLogger("rewardsmith.server.access")
log = logging.getLogger("rewardsmith.server")


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
    task: str | None = None
    """The task of `/get_reward` samples whose label names none."""
    body_timeout_s: float = 10.0
    """Seconds a request's whole body may take to arrive; then 408."""
    header_timeout_s: float = 10.0
    """Seconds a connection may take to send a request's headers; then it is closed."""

    def __post_init__(self) -> None:
        if self.lanes < 1 or self.workers_per_lane < 1:
            raise ValueError("lanes and workers_per_lane must be at least 1")
        if not (self.body_timeout_s > 0 and self.header_timeout_s > 0):
            raise ValueError("body_timeout_s and header_timeout_s must be positive")
        if self.backend not in ("pool", "inline"):
            raise ValueError("backend must be 'pool' or 'inline'")

    def scorer(self, grader: Grader) -> Scorer:
        """The Scorer these settings describe."""
        return Scorer(
            grader,
            backend="inline" if self.backend == "inline" else "pool",
            workers=self.workers_per_lane,
            timeout_s=self.timeout_s,
            lanes=self.lanes,
            # Nothing remembered per sample: a verdict cache's key holds the whole sample
            # (the id too), so a server, which rarely sees a sample twice, would keep every
            # verdict it gave, up to 200,000 per lane (measured: +34 MiB in a 10-minute
            # soak), and the executor's per-sample times as many (+9 MiB in 10 minutes).
            cache=False,
        )


class HTTPProblem(Exception):
    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None):
        super().__init__(message)
        self.status, self.message, self.headers = status, message, headers or {}


def _shutting_down(what: str) -> HTTPProblem:
    return HTTPProblem(503, f"server shutting down: {what}", {"Retry-After": str(RETRY_AFTER_S)})


class _Admission:
    """At most ``lanes`` requests score at once and ``max_waiting`` wait; `drain` turns
    every waiting request away with 503 and lets no new one in."""

    def __init__(self, config: ServerConfig, metrics: ServerMetrics) -> None:
        self.config, self.metrics = config, metrics
        self.free = config.lanes
        self.waiting: deque[asyncio.Future[None]] = deque()
        self.draining = False
        self.deadline = asyncio.Event()
        """Set when the grace period is over: requests still scoring are answered 503."""
        self.stopping = asyncio.Event()
        """Set when the drain starts: bodies still arriving are answered 503."""

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        if self.draining:
            raise _shutting_down("not taking new requests")
        if self.free > 0:
            self.free -= 1
        else:
            if len(self.waiting) >= self.config.max_waiting:
                raise HTTPProblem(503, "server busy: every lane is in use", {"Retry-After": "1"})
            turn: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self.waiting.append(turn)
            self.metrics.waiting += 1
            try:
                await turn
            finally:
                self.metrics.waiting -= 1
        try:
            yield
        finally:
            self._release()

    def _release(self) -> None:
        while self.waiting:
            turn = self.waiting.popleft()
            if not turn.done():
                turn.set_result(None)  # the lane passes straight to the next in line
                return
        self.free += 1

    def drain(self, grace_s: float) -> None:
        self.draining = True
        self.stopping.set()
        while self.waiting:
            turn = self.waiting.popleft()
            if not turn.done():
                turn.set_exception(_shutting_down("the request was still waiting for a lane"))
        asyncio.get_running_loop().call_later(max(grace_s, 0.0), self.deadline.set)


def create_app(reward: Grader | Scorer, config: ServerConfig | None = None) -> FastAPI:
    """A FastAPI app that scores with one `Scorer` (built from ``config`` when given a
    `Grader`); see the module docstring. ``app.state.drain(grace_s)`` starts a shutdown."""
    config = config or ServerConfig()
    scorer = reward if isinstance(reward, Scorer) else config.scorer(reward)
    metrics = ServerMetrics()
    state: dict[str, Any] = {}

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        state["admission"] = _Admission(config, metrics)
        state["loop"] = asyncio.get_running_loop()
        yield
        scorer.close(timeout_s=1.0)  # a lane stuck in a hang is left to die with the process

    def drain(grace_s: float) -> None:
        """Start a shutdown (safe from a signal handler or another thread)."""
        state["loop"].call_soon_threadsafe(state["admission"].drain, grace_s)

    app = FastAPI(title="rewardsmith", lifespan=lifespan)
    app.state.scorer = scorer
    app.state.drain = drain

    async def scored(request: Request, endpoint: str, handler: Any) -> JSONResponse:
        start = time.perf_counter()
        status, samples = 200, 0
        counted = False
        try:
            _check_token(request, config)
            body = await _receive(request, config, state["admission"])
            metrics.in_flight += 1  # only once its body is here: a slow client holds nothing
            counted = True
            batch = handler(body)
            samples = len(batch)
            rewards = await score_samples(batch)
            return JSONResponse(_reply(endpoint, rewards))
        except HTTPProblem as problem:
            status = problem.status
            return JSONResponse({"error": problem.message}, status, headers=problem.headers)
        except ClientDisconnect:
            status = 499  # nginx's "client closed request": nobody is left to answer
            log.info("%s hung up before its %s request was answered", _who(request), endpoint)
            return JSONResponse({"error": "client disconnected"}, status)
        finally:
            if counted:
                metrics.in_flight -= 1
            elapsed = time.perf_counter() - start
            metrics.observe(endpoint, status, elapsed)
            access_log.info(
                "%s %s %d %d samples %.1f ms",
                request.client.host if request.client else "-",
                endpoint,
                status,
                samples,
                1000 * elapsed,
            )

    async def score_samples(samples: list[Sample]) -> list[Reward]:
        if len(samples) > config.max_samples:
            raise HTTPProblem(413, f"{len(samples)} samples; at most {config.max_samples}")
        admission = state["admission"]
        async with admission.slot():
            scoring = asyncio.ensure_future(scorer.ascore(samples))
            deadline = asyncio.ensure_future(admission.deadline.wait())
            done, _ = await asyncio.wait({scoring, deadline}, return_when=asyncio.FIRST_COMPLETED)
            deadline.cancel()
            if scoring not in done:
                raise _shutting_down("the grace period ended before this request was scored")
            return scoring.result()

    def openrlhf(body: Any) -> list[Sample]:
        try:
            return openrlhf_samples(body, task=config.task)
        except (MappingProblem, ValueError) as exc:
            raise HTTPProblem(422, str(exc)[:500]) from None

    @app.post("/score")
    async def score_endpoint(request: Request) -> JSONResponse:
        return await scored(request, "/score", _native_samples)

    @app.post("/get_reward")
    async def openrlhf_endpoint(request: Request) -> JSONResponse:
        return await scored(request, "/get_reward", openrlhf)

    @app.get("/health")
    async def health() -> dict[str, Any]:
        return {
            "status": "draining" if state["admission"].draining else "ok",
            "verifiers": sorted(scorer.grader.verifiers),
            "lanes": config.lanes,
            "fingerprint": scorer.fingerprint().digest,
        }

    @app.get("/metrics")
    async def metrics_endpoint() -> PlainTextResponse:
        return PlainTextResponse(metrics.render(scorer.stats))

    return app


def _reply(endpoint: str, rewards: list[Reward]) -> dict[str, Any]:
    if endpoint == "/get_reward":
        from rewardsmith.graders.integrations.openrlhf import openrlhf_reply

        return openrlhf_reply(rewards)
    return {"rewards": [r.to_dict() for r in rewards]}


def _who(request: Request) -> str:
    return f"{request.client.host}:{request.client.port}" if request.client else "a client"


async def _receive(request: Request, config: ServerConfig, admission: _Admission) -> Any:
    """The request's JSON body, if it all arrives within ``body_timeout_s`` (else 408) and
    before a shutdown starts (else 503)."""
    reading = asyncio.ensure_future(_read_json(request, config.max_body_bytes))
    stopping = asyncio.ensure_future(admission.stopping.wait())
    done, _ = await asyncio.wait(
        {reading, stopping}, timeout=config.body_timeout_s, return_when=asyncio.FIRST_COMPLETED
    )
    stopping.cancel()
    if reading in done:
        return reading.result()
    reading.cancel()
    with contextlib.suppress(asyncio.CancelledError, ClientDisconnect):
        await reading
    if stopping in done:
        raise _shutting_down("the request's body had not all arrived")
    log.info("%s sent no whole body within %g s: 408", _who(request), config.body_timeout_s)
    raise HTTPProblem(
        408,
        f"request body not received within {config.body_timeout_s:g} s",
        {"Connection": "close"},
    )


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
    return parse_json(b"".join(chunks))


def parse_json(raw: bytes) -> Any:
    """Strict JSON: no NaN or Infinity (written or overflowing, like ``1e999``), integers
    of at most 4,300 digits, nesting at most `MAX_JSON_DEPTH` deep; else a 400."""
    try:
        value = json.loads(raw, parse_constant=_no_constant, parse_float=_finite_float)
    except RecursionError:
        raise HTTPProblem(
            400, f"body is not valid JSON: it nests deeper than {MAX_JSON_DEPTH}"
        ) from None
    except (ValueError, UnicodeDecodeError) as exc:
        # ValueError covers JSONDecodeError and Python's limit on integer digits.
        raise HTTPProblem(400, f"body is not valid JSON: {exc}"[:300]) from None
    if _depth_exceeds(value, MAX_JSON_DEPTH):
        raise HTTPProblem(400, f"body is not valid JSON: it nests deeper than {MAX_JSON_DEPTH}")
    return value


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number (NaN and Infinity are refused)")


def _finite_float(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise ValueError(f"{text[:40]} overflows to {number} (only finite numbers are accepted)")
    return number


def _depth_exceeds(value: Any, limit: int) -> bool:
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth > limit:
                return True
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)
    return False


def _native_samples(body: Any) -> list[Sample]:
    if not isinstance(body, dict) or not isinstance(body.get("samples"), list):
        raise HTTPProblem(422, 'expected {"samples": [{"id": ..., "completion": ...}, ...]}')
    samples = []
    for i, item in enumerate(body["samples"]):
        try:
            samples.append(Sample.model_validate(item))
        except ValidationError as exc:
            error = most_specific(exc)
            raise HTTPProblem(
                422, f"samples[{i}].{field_path(error['loc'])}: {error['msg']}"
            ) from None
    return samples
