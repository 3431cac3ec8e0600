"""``rewardsmith serve``: the HTTP reward server (see `rewardsmith.cli.server`)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from rewardsmith.cli.score import build_grader

__all__ = ["serve"]


def serve(
    spec: Annotated[Path | None, typer.Option(help="A YAML reward spec.")] = None,
    verifier: Annotated[
        list[str] | None,
        typer.Option("--verifier", "-v", help="Instead of --spec: NAME[:k=v,...]."),
    ] = None,
    host: Annotated[str, typer.Option(help="Address to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on.")] = 8000,
    lanes: Annotated[int, typer.Option(help="Requests scored at once.")] = 4,
    workers_per_lane: Annotated[int, typer.Option(help="Worker processes per lane.")] = 1,
    timeout: Annotated[
        float, typer.Option(help="Seconds one verifier may take per sample.")
    ] = 30.0,
    max_body_bytes: Annotated[int, typer.Option(help="Largest request body accepted.")] = 8 << 20,
    max_samples: Annotated[int, typer.Option(help="Most samples in one request.")] = 1024,
    max_waiting: Annotated[int, typer.Option(help="Requests that may wait for a lane.")] = 64,
    token_env: Annotated[
        str, typer.Option(help="Environment variable holding the bearer token (unset: no auth).")
    ] = "REWARDSMITH_TOKEN",
) -> None:
    """Serve rewards over HTTP: /score, OpenRLHF's /get_reward, /health, /metrics."""
    import uvicorn

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
    )
    uvicorn.run(create_app(grader, config), host=host, port=port, log_level="warning")
