"""The process-pool backend: long-lived workers, a pipe each, killed to enforce timeouts.

Why not `multiprocessing.Pool`: it cannot kill one job's process, and a worker that dies
mid-job leaves that job's result waiting forever. Here every worker has its own pipe and
its own short queue of jobs; the parent waits on all pipes and all process
sentinels at once (``multiprocessing.connection.wait``), so it sees a result, a death or
an expired deadline as soon as it happens.

- A job past its deadline: the worker is SIGKILLed and replaced; the job comes back as a
  VERIFIER_TIMEOUT infrastructure failure.
- A worker that dies (segfault, OOM kill, ``os._exit``): the job it was running comes back
  as WORKER_DIED. When several cheap jobs were out on that worker, their results come
  back a millisecond's worth at a time, so the culprit is not known: all of them are
  queued again, each to run alone, where a second death (or hang) names its job. A
  deterministic killer in a bunch of cheap jobs therefore runs three times, not two.
  A worker found dead while idle is replaced before it is given a job, blaming none.
- More jobs are sent to a busy worker only when all are estimated cheap (up to
  `PREFETCH_DEPTH`), so a cheap job never waits behind an expensive one, and cheap jobs
  do not pay a round trip each.
- A job's clock starts only once its worker is ready. A new worker first re-imports the
  parent's main module (multiprocessing's "prepare" step), which for a big CLI takes
  about a second; had the clock started at the send, a 1 s limit would kill every fresh
  worker mid-import, and its replacement too, forever. So a worker says `READY` before
  it serves, jobs wait in the parent until then, and a ready worker is preferred to a
  starting one. A worker that dies while starting, or is not ready within
  ``start_timeout_s``, is killed and each of its jobs comes back as WORKER_DIED (an
  attempt used, so a worker that can never start ends in a verdict, not a loop).
"""

from __future__ import annotations

import contextlib
import multiprocessing
import time
from collections import deque
from multiprocessing.connection import wait
from typing import Any

from rewardsmith.graders._backend import Event, Task
from rewardsmith.graders._worker import READY, worker_main
from rewardsmith.verifiers.types import Failure

__all__ = ["PoolBackend"]

PREFETCH_BELOW_S = 0.005
"""Jobs estimated below this many seconds may queue behind others on the same worker."""
PREFETCH_DEPTH = 64
"""At most this many cheap jobs wait on one worker (all are requeued if it dies)..."""
PREFETCH_BUDGET_S = 0.02
"""...and at most this many estimated seconds of them, so a queued job starts soon."""
START_TIMEOUT_S = 60.0
"""A worker not ready this many seconds after its start is killed (its jobs fail)."""


def _heavy(task: Task) -> bool:
    """A job nothing may queue behind: expensive, or one to be run alone."""
    return task.alone or task.estimate_s >= PREFETCH_BELOW_S


class _Worker:
    def __init__(self, context: Any, start_timeout_s: float) -> None:
        self.conn, child = context.Pipe(duplex=True)
        self.process = context.Process(target=worker_main, args=(child,), daemon=True)
        self.process.start()
        child.close()
        self.born = time.monotonic()
        self.start_timeout_s = start_timeout_s
        self.ready = False  # True once the worker said READY
        self.queue: deque[Task] = deque()
        self.queued_s = 0.0  # estimated seconds of the queued jobs
        self.expensive = 0  # queued jobs that must run alone (see _heavy)
        self.outbox: list[tuple[int, bytes]] = []
        self.head_started = 0.0  # when the head job's clock started (once ready)

    def can_queue(self, task: Task) -> bool:
        """A cheap job may wait behind others only if all are cheap, few and short."""
        return (
            self.expensive == 0
            and len(self.queue) < PREFETCH_DEPTH
            and self.queued_s + task.estimate_s <= PREFETCH_BUDGET_S
        )

    def send(self, task: Task) -> None:
        if not self.queue:
            self.head_started = time.monotonic()
        self.queued_s += task.estimate_s
        self.expensive += _heavy(task)
        self.queue.append(task)
        self.outbox.append((task.run_id, task.payload()))

    def flush(self) -> None:
        """Send what was queued since the last flush as one message (one write, one wake-up).

        Nothing goes to a worker still starting: it would not read it, and a large
        message would block this process on a full pipe.
        """
        if self.outbox and self.ready:
            batch, self.outbox = self.outbox, []
            self.conn.send(batch)

    def mark_ready(self) -> None:
        """The worker finished starting: the head job's clock starts now."""
        self.ready = True
        self.head_started = time.monotonic()

    def check_ready(self) -> bool:
        """Whether the worker is ready, reading its READY if it is waiting (no blocking).

        Only for an idle worker: a busy one's messages are read by the pool's drain.
        """
        if not self.ready and not self.queue:
            with contextlib.suppress(EOFError, OSError):
                if self.conn.poll() and self.conn.recv() == READY:
                    self.mark_ready()
        return self.ready

    def start_expired(self) -> bool:
        return not self.ready and time.monotonic() >= self.born + self.start_timeout_s

    def pop(self) -> Task:
        task = self.queue.popleft()
        self.queued_s = max(0.0, self.queued_s - task.estimate_s) if self.queue else 0.0
        self.expensive -= _heavy(task)
        self.head_started = time.monotonic()
        return task

    def deadline(self) -> float | None:
        """When to act if nothing comes back: the start-up limit, then the head job's."""
        if not self.queue:
            return None
        if not self.ready:
            return self.born + self.start_timeout_s
        if self.queue[0].timeout_s is None:
            return None
        return self.head_started + self.queue[0].timeout_s

    def kill(self) -> None:
        self.process.kill()
        self.process.join(5)
        self.conn.close()

    def stop(self) -> None:
        with contextlib.suppress(OSError):
            self.conn.send(None)
        self.process.join(1)
        if self.process.is_alive():
            self.kill()
        else:
            self.conn.close()


class PoolBackend:
    """A fixed number of worker processes; dead or killed ones are replaced at once."""

    def __init__(
        self,
        workers: int,
        start_method: str = "forkserver",
        start_timeout_s: float = START_TIMEOUT_S,
    ) -> None:
        self._context = multiprocessing.get_context(start_method)
        if start_method == "forkserver":
            # Workers fork from a server that has already imported the worker loop and the
            # caller's main module, so a replacement for a killed worker starts in
            # milliseconds instead of re-importing the main module (a CLI, a trainer).
            self._context.set_forkserver_preload(["__main__", "rewardsmith.graders._worker"])
        self._start_timeout_s = start_timeout_s
        self._workers = [self._new_worker() for _ in range(workers)]
        self._unsent: list[Event] = []
        self._picked: _Worker | None = None

    def _new_worker(self) -> _Worker:
        return _Worker(self._context, self._start_timeout_s)

    def _restart(self, index: int) -> _Worker:
        """Kill worker ``index`` and start its replacement (its queue is the caller's)."""
        self._workers[index].kill()
        worker = self._workers[index] = self._new_worker()
        return worker

    @property
    def size(self) -> int:
        return len(self._workers)

    def accepts(self, task: Task) -> bool:
        self._picked = self._pick(task)
        return self._picked is not None

    def _pick(self, task: Task) -> _Worker | None:
        # By preference: an idle ready worker; for a cheap job, the shortest queue of
        # cheap jobs on a ready worker (no idling through a round trip on cheap work).
        # A worker still starting gets jobs only while no worker at all is ready; else
        # the job waits here for whichever is free first, a busy worker or a new one.
        starting: _Worker | None = None
        for index, worker in enumerate(self._workers):
            if worker.queue:
                continue
            worker.check_ready()
            if not worker.process.is_alive() or worker.start_expired():
                worker = self._restart(index)  # died idle or never started: blame none
            if worker.ready:
                return worker
            starting = starting or worker
        cheap = [] if _heavy(task) else [w for w in self._workers if w.queue and w.can_queue(task)]
        ready = [w for w in cheap if w.ready]
        if ready:
            return min(ready, key=lambda w: w.queued_s)
        if any(w.ready for w in self._workers):
            return None
        return starting or min(cheap, key=lambda w: w.queued_s, default=None)

    def submit(self, task: Task) -> None:
        worker, self._picked = self._picked, None
        assert worker is not None, "submit() only right after accepts() said yes"
        try:
            task.payload()
        except Exception as exc:  # an unpicklable verifier or sample cannot leave this process
            message = f"job could not be pickled for a worker: {type(exc).__name__}: {exc}"
            self._unsent.append((task, task.infra_verdict(Failure.VERIFIER_CRASH, message)))
            return
        worker.send(task)

    def busy(self) -> bool:
        return bool(self._unsent) or any(w.queue for w in self._workers)

    def poll(self, timeout: float | None) -> list[Event]:
        if self._unsent:
            unsent, self._unsent = self._unsent, []
            return unsent
        for worker in self._workers:
            # A worker that died before we noticed fails the send; the checks below report it.
            with contextlib.suppress(OSError):
                worker.flush()
        deadlines = [d for w in self._workers if (d := w.deadline()) is not None]
        if deadlines:
            until = max(0.0, min(deadlines) - time.monotonic())
            timeout = until if timeout is None else min(timeout, until)
        handles: list[Any] = []
        for worker in self._workers:
            if worker.queue:
                handles += [worker.conn, worker.process.sentinel]
            elif not worker.ready:  # its READY may free a job that waits for a worker
                handles.append(worker.conn)
        ready = set(wait(handles, timeout)) if handles else set()
        events: list[Event] = []
        for index, worker in enumerate(self._workers):
            events += self._drain(worker)
            if not worker.queue:
                if not worker.check_ready() and not worker.process.is_alive():
                    self._restart(index)  # died while starting, before it had a job
            elif worker.process.sentinel in ready or not worker.process.is_alive():
                events += self._replace(index, Failure.WORKER_DIED, "the worker process died")
            elif (d := worker.deadline()) is not None and time.monotonic() >= d:
                timeout_s = worker.queue[0].timeout_s
                message = f"killed after the {timeout_s} s time limit"
                events += self._replace(index, Failure.VERIFIER_TIMEOUT, message)
        return events

    def _drain(self, worker: _Worker) -> list[Event]:
        events: list[Event] = []
        try:
            while worker.queue and worker.conn.poll():
                message = worker.conn.recv()
                if message == READY:  # start-up is over: send its jobs, start the clock
                    worker.mark_ready()
                    worker.flush()
                    continue
                for run_id, verdict in message:
                    task = worker.pop()
                    if run_id == task.run_id:
                        events.append((task, verdict))
        except (EOFError, OSError):
            pass  # died mid-message: the sentinel check reports it
        return events

    def _replace(self, index: int, failure: Failure, message: str) -> list[Event]:
        worker = self._workers[index]
        elapsed = time.monotonic() - worker.head_started
        exitcode = worker.process.exitcode
        self._restart(index)
        if not worker.queue:
            return []
        if not worker.ready:
            return _start_failed(worker, failure, exitcode)
        head, *rest = worker.queue
        if rest:
            # Several cheap jobs were out and their results come back in bunches: the
            # culprit may be any of them. Run each again alone, where a death or a hang
            # names its job; none of them has used up an attempt.
            for task in worker.queue:
                task.alone = True
            return [(task, None) for task in worker.queue]
        if failure is Failure.WORKER_DIED:
            message = f"{message} (exit code {exitcode if exitcode is not None else 'unknown'})"
        return [(head, head.infra_verdict(failure, message, elapsed))]

    def abort(self) -> None:
        self._unsent = []
        for index, worker in enumerate(self._workers):
            if worker.queue:
                self._restart(index)

    def close(self) -> None:
        for worker in self._workers:
            worker.stop()
        self._workers = []


def _start_failed(worker: _Worker, failure: Failure, exitcode: int | None) -> list[Event]:
    """Each job of a worker that never became ready fails as WORKER_DIED, using an attempt:
    none of them ran, but a worker that can never start must end in verdicts, not a loop."""
    if failure is Failure.WORKER_DIED:
        why = f"died while starting (exit code {exitcode if exitcode is not None else 'unknown'})"
    else:
        why = f"was not ready {worker.start_timeout_s} s after it started and was killed"
    message = (
        f"the worker process {why}, before it ran the job. A new worker first re-imports "
        "the main module of the parent process: check that it imports quickly and cleanly"
    )
    elapsed = time.monotonic() - worker.born
    return [
        (task, task.infra_verdict(Failure.WORKER_DIED, message, elapsed)) for task in worker.queue
    ]
