"""The loop a pool worker process runs: say it is ready, then receive batches of pickled
(verifier, sample) jobs and send back the verdicts as they finish (those of cheap jobs a
millisecond's worth at a time).

Kept tiny and import-light: a worker is forked from the forkserver with this module
preloaded. Its start-up can still be slow, because multiprocessing first re-imports the
parent's main module in every new worker (``python -m rewardsmith.cli.main serve`` costs
the whole CLI, about a second on a busy machine). So the first thing a worker sends is
`READY`, and the parent starts no job's clock before it (see `_pool`).
"""

from __future__ import annotations

import pickle
import time
from multiprocessing.connection import Connection

from rewardsmith.graders._backend import Outcome, run_work
from rewardsmith.verifiers.types import Failure, Verdict


def _unusable(what: str, exc: BaseException) -> Verdict:
    return Verdict.errored("?", "?", Failure.VERIFIER_CRASH, f"{what}: {type(exc).__name__}: {exc}")


FLUSH_S = 0.001
"""Results of a batch of cheap jobs go back together, at least this often (seconds)."""

READY = "ready"
"""The worker's first message: start-up is over, job clocks may start."""


def worker_main(conn: Connection) -> None:
    """Say `READY`, then serve batches of jobs until the parent sends None or closes the pipe."""
    try:
        conn.send(READY)
    except (EOFError, OSError):
        return
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            return
        if message is None:
            return
        outbox: list[tuple[int, Outcome]] = []
        flushed = time.monotonic()
        for n, (job_id, payload) in enumerate(message, start=1):  # run in order
            outbox.append((job_id, _run(payload)))
            now = time.monotonic()
            if n == len(message) or now - flushed >= FLUSH_S:
                _send(conn, outbox)
                outbox, flushed = [], now


def _run(payload: bytes) -> Outcome:
    try:
        verifier, work = pickle.loads(payload)
    except Exception as exc:  # a job that cannot be unpickled here is the infrastructure's
        return _unusable("job could not be unpickled in the worker", exc)
    return run_work(verifier, work)


def _send(conn: Connection, results: list[tuple[int, Outcome]]) -> None:
    """Send finished results as one message; the parent streams them on at once."""
    try:
        conn.send(results)
    except Exception:  # evidence that does not pickle must not kill the worker
        for job_id, outcome in results:
            try:
                conn.send([(job_id, outcome)])
            except Exception as exc:
                conn.send([(job_id, _unusable("verdict could not be pickled", exc))])
