"""``rewardsmith serve``: the HTTP reward server (see `rewardsmith.cli.server`).

It logs one start line on stderr (address, lanes, limits, the reward's fingerprint) once
it listens, and with ``--access-log`` one line per request. On SIGTERM or SIGINT it stops
taking requests, answers those waiting for a lane with 503 and ``Retry-After``, gives
those being scored until ``--grace`` seconds (then answers them 503 too), and exits.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from rewardsmith.cli.score import build_grader

__all__ = ["DEFAULT_GRACE_S", "serve"]

DEFAULT_GRACE_S = 20.0
"""Seconds in-flight requests get after SIGTERM (an orchestrator usually allows 30)."""


def serve(
    spec: Annotated[Path | None, typer.Option(help="A YAML reward spec.")] = None,
    verifier: Annotated[
        list[str] | None,
        typer.Option("--verifier", "-v", help="Instead of --spec: NAME[:k=v,...] (their mean)."),
    ] = None,
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on (0: any free port).")] = 8000,
    lanes: Annotated[int, typer.Option(help="Requests scored at once.")] = 4,
    workers_per_lane: Annotated[int, typer.Option(help="Worker processes per lane.")] = 1,
    timeout: Annotated[
        float, typer.Option(help="Seconds one verifier may take per sample.")
    ] = 30.0,
    max_body_bytes: Annotated[int, typer.Option(help="Largest request body accepted.")] = 8 << 20,
    max_samples: Annotated[int, typer.Option(help="Most samples in one request.")] = 1024,
    max_waiting: Annotated[int, typer.Option(help="Requests that may wait for a lane.")] = 64,
    task: Annotated[
        str | None, typer.Option(help="Task of /get_reward samples whose label names none.")
    ] = None,
    grace: Annotated[
        float, typer.Option(help="Seconds in-flight requests get after SIGTERM.")
    ] = DEFAULT_GRACE_S,
    body_timeout: Annotated[
        float, typer.Option(help="Seconds a request's body may take to arrive (then 408).")
    ] = 10.0,
    header_timeout: Annotated[
        float,
        typer.Option(help="Seconds a connection may take to send its headers (then closed)."),
    ] = 10.0,
    access_log: Annotated[bool, typer.Option(help="Log one line per request.")] = False,
    token_env: Annotated[
        str, typer.Option(help="Environment variable holding the bearer token (unset: no auth).")
    ] = "REWARDSMITH_TOKEN",
) -> None:
    """Serve rewards over HTTP: /score, OpenRLHF's /get_reward, /health, /metrics."""
    # Imported here: worker processes re-import the main module, and need no web stack.
    from rewardsmith.cli.server import ServerConfig, create_app

    grader = build_grader(spec, verifier or [])
    config = ServerConfig(
        lanes=lanes,
        workers_per_lane=workers_per_lane,
        timeout_s=timeout,
        max_body_bytes=max_body_bytes,
        max_samples=max_samples,
        max_waiting=max_waiting,
        token=os.environ.get(token_env) or None,
        task=task,
        body_timeout_s=body_timeout,
        header_timeout_s=header_timeout,
    )
    _log_to_stderr(access_log)
    app = create_app(grader, config)
    summary = f"lanes={lanes} timeout={timeout}s grace={grace}s body_timeout={body_timeout}s"
    server = _server(app, host, port, grace, summary, header_timeout)
    server.run()


def _stop_descendants() -> None:
    """Kill what this server started and left running (a worker still stuck in a check
    when the grace period ended): nothing of the server outlives it."""
    import psutil

    children = psutil.Process().children(recursive=True)
    for child in children:
        with contextlib.suppress(psutil.Error):
            child.kill()
    psutil.wait_procs(children, timeout=5)


def _log_to_stderr(access: bool) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(message)s"))
    for name, level in (("rewardsmith.server", logging.INFO), ("rewardsmith.server.access",
                        logging.INFO if access else logging.WARNING)):  # fmt: skip
        log = logging.getLogger(name)
        log.setLevel(level)
        if name == "rewardsmith.server":
            log.addHandler(handler)


def _protocol(header_timeout_s: float) -> Any:
    """uvicorn's HTTP/1.1 protocol, plus a header timeout: a connection that has not sent a
    request's whole headers within `header_timeout_s` of opening (or of its last response)
    is closed, with one log line (uvicorn itself waits for headers forever)."""
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    class Protocol(H11Protocol):
        _header_timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport: Any) -> None:
            super().connection_made(transport)
            self._arm()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            self._arm()

        def connection_lost(self, exc: Exception | None) -> None:
            self._disarm()
            super().connection_lost(exc)

        def handle_events(self) -> None:
            super().handle_events()
            if self.conn.their_state is not h11.IDLE:  # the headers are in
                self._disarm()

        def _arm(self) -> None:
            self._disarm()
            self._header_timer = self.loop.call_later(header_timeout_s, self._too_slow)

        def _disarm(self) -> None:
            if self._header_timer is not None:
                self._header_timer.cancel()
                self._header_timer = None

        def _too_slow(self) -> None:
            self._header_timer = None
            if self.conn.their_state is h11.IDLE and not self.transport.is_closing():
                who = f"{self.client[0]}:{self.client[1]}" if self.client else "a client"
                logging.getLogger("rewardsmith.server").info(
                    "%s sent no request headers within %g s: closed", who, header_timeout_s
                )
                self.transport.close()

    return Protocol


def _server(
    app: Any, host: str, port: int, grace: float, summary: str, header_timeout_s: float = 10.0
) -> Any:
    import uvicorn

    class Server(uvicorn.Server):
        """uvicorn, plus a start line once it listens and a drain on SIGTERM."""

        async def startup(self, sockets: Any = None) -> None:
            await super().startup(sockets)
            bound = [s.getsockname() for srv in self.servers for s in srv.sockets]
            where = ", ".join(f"http://{a[0]}:{a[1]}" for a in bound[:1])
            fingerprint = app.state.scorer.fingerprint().digest
            logging.getLogger("rewardsmith.server").info(
                "listening on %s %s reward=%s pid=%d", where, summary, fingerprint, os.getpid()
            )

        async def shutdown(self, sockets: Any = None) -> None:
            try:
                await super().shutdown(sockets)
            finally:  # here, not after run(): uvicorn re-raises the signal once it is done
                _stop_descendants()

        def handle_exit(self, sig: int, frame: Any) -> None:
            if not self.should_exit:
                logging.getLogger("rewardsmith.server").info(
                    "signal %d: draining, in-flight requests get %.0f s", sig, grace
                )
                app.state.drain(grace)
            super().handle_exit(sig, frame)

    config = uvicorn.Config(
        app,
        host=host,
        port=port,
        log_level="warning",
        http=_protocol(header_timeout_s),
        timeout_graceful_shutdown=int(grace) + 2,
    )
    return Server(config)
