"""The role an executor worker serves (a `rewardsmith.verifiers.warm` worker): run batches of
pickled (verifier, sample) jobs and send back the verdicts as they finish (those of cheap
jobs a millisecond's worth at a time).

Requests from the pool (`_pool`):

- ``("import", [module, ...])``: import the modules of the verifiers about to come, then
  answer ``("imported", modules)``. The pool starts no job's clock before that answer, so a
  verifier module that is slow to import (torch, a big CLI) costs the start-up, not the
  first job's limit.
- ``("jobs", [(run_id, payload, timeout_s), ...])``: run them in order, each as one unit
  of the warm runtime (its own clock shared with nested layers, its output range, the
  memory check), and answer ``("results", [(run_id, outcome, unit), ...], stop)`` in
  bunches. ``stop`` says the worker must be replaced (a memory overrun, or bloated): the
  jobs after it in the batch were not run.
"""

from __future__ import annotations

import contextlib
import importlib
import pickle
import time

from rewardsmith.graders._backend import Outcome, run_work
from rewardsmith.verifiers.types import Failure, Verdict
from rewardsmith.verifiers.warm._runtime import Channel, Unit, run_unit

FLUSH_S = 0.001
"""Results of a batch of cheap jobs go back together, at least this often (seconds)."""

Result = tuple[int, Outcome, Unit]


def serve(channel: Channel) -> None:
    """Serve import and job requests until the pool closes the pipe."""
    while (message := channel.recv()) is not None:
        kind, body = message
        if kind == "import":
            for name in body:  # a module that fails here fails its jobs, with the reason
                with contextlib.suppress(Exception):
                    importlib.import_module(name)
            channel.send(("imported", body))
        else:
            _run_batch(channel, body)


def _run_batch(channel: Channel, jobs: list[tuple[int, bytes, float | None]]) -> None:
    outbox: list[Result] = []
    flushed = time.monotonic()
    for n, (run_id, payload, timeout_s) in enumerate(jobs, start=1):  # run in order
        outbox.append((run_id, *_run(payload, timeout_s)))
        stop = outbox[-1][2].recycle
        now = time.monotonic()
        if stop or n == len(jobs) or now - flushed >= FLUSH_S:
            _send(channel, outbox, stop)
            outbox, flushed = [], now
        if stop:
            return


def _run(payload: bytes, timeout_s: float | None) -> tuple[Outcome, Unit]:
    try:
        verifier, work = pickle.loads(payload)
    except Exception as exc:  # a job that cannot be unpickled here is the infrastructure's
        return _unusable("job could not be unpickled in the worker", exc), Unit((0, 0))
    outcome, unit = run_unit(lambda: run_work(verifier, work), timeout_s)
    if unit.deadline is not None:
        name = getattr(verifier, "name", type(verifier).__name__)
        version = getattr(verifier, "version", "?")
        limit, inside = unit.deadline["limit_s"], unit.deadline["inside"]
        message = f"killed after the {limit:g} s time limit of the job (during a {inside} step)"
        outcome = Verdict.timed_out(name, version, Failure.VERIFIER_TIMEOUT, message)
    return outcome, unit


def _unusable(what: str, exc: BaseException) -> Verdict:
    return Verdict.errored("?", "?", Failure.VERIFIER_CRASH, f"{what}: {type(exc).__name__}: {exc}")


def _send(channel: Channel, results: list[Result], stop: bool) -> None:
    """Send finished results as one message; the pool streams them on at once."""
    try:
        channel.send(("results", results, stop))
    except Exception:  # evidence that does not pickle must not kill the worker
        for n, (job_id, outcome, unit) in enumerate(results, start=1):
            last = stop and n == len(results)
            try:
                channel.send(("results", [(job_id, outcome, unit)], last))
            except Exception as exc:
                bad = _unusable("verdict could not be pickled", exc)
                channel.send(("results", [(job_id, bad, unit)], last))
