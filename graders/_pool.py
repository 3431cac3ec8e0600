"""The process-pool backend: warm workers (`rewardsmith.verifiers.warm`), killed to enforce
limits, a queue each.

Why not `multiprocessing.Pool`: it cannot kill one job's process, and a worker that dies
mid-job leaves that job's result waiting forever. Here every worker has its own pipes and
its own short queue of jobs; the parent waits on all pipes and all process sentinels at
once, so it sees a result, a death or an expired deadline as soon as it happens. Each
worker is a warm worker: its tree is killed as a whole, its output is captured (each job's
output, capped, goes into that job's verdict: ``evidence["output"]``) and it has a memory
limit.

- A job past its deadline: the worker's tree is killed and replaced; the job comes back as
  a VERIFIER_TIMEOUT infrastructure failure naming the job's limit (``evidence["limits"]``).
- A job whose worker goes over ``memory_bytes``: killed and replaced the same way, as a
  VERIFIER_MEMORY failure; an overrun found only after the job (its peak) is the same
  verdict. A worker that finished a job still holding over half its limit is replaced
  without blame, so one big allocation does not stay behind for every later job.
- A worker that dies (segfault, OOM kill, ``os._exit``): the job it was running comes back
  as WORKER_DIED. When several cheap jobs were out on that worker, their results come
  back a millisecond's worth at a time, so the culprit is not known: all of them are
  queued again, each to run alone, where a second death (or hang, or overrun) names its
  job. A deterministic killer in a bunch of cheap jobs therefore runs three times, not
  two. A worker found dead while idle is replaced before it is given a job, blaming none.
- More jobs are sent to a busy worker only when all are estimated cheap (up to
  `PREFETCH_DEPTH`), so a cheap job never waits behind an expensive one, and cheap jobs
  do not pay a round trip each.
- A job's clock starts only once its worker is ready for it. A new worker first imports the
  parent's main module (as multiprocessing's spawn does, so verifiers defined there
  unpickle), which for a big CLI takes about a second, and a verifier's module the first
  time one of its jobs comes. Had the clock started at the send, a 1 s limit would kill
  every fresh worker mid-import, and its replacement too, forever. So a worker says it is
  ready, then that it imported the module, before its job's clock starts; jobs wait in the
  parent until then, and a ready worker is preferred to a starting one. A worker that dies
  while starting, or is not ready within ``start_timeout_s``, is killed and each of its
  jobs comes back as WORKER_DIED (an attempt used, so a worker that can never start ends
  in a verdict, not a loop).
"""

from __future__ import annotations

import contextlib
import time
from collections import deque
from typing import Any

from rewardsmith.graders._backend import Event, Task
from rewardsmith.graders._contained import contained, output_evidence, start_failed
from rewardsmith.verifiers.types import Failure
from rewardsmith.verifiers.warm import Ending, Role, WarmProcess, WarmSpec, forkserver, wait_any
from rewardsmith.verifiers.warm.forkserver import ForkServer
from rewardsmith.verifiers.warm.process import setup_of

__all__ = ["PoolBackend", "WorkerLimits"]

ROLE = "rewardsmith.graders._worker:serve"
PREFETCH_BELOW_S = 0.005
"""Jobs estimated below this many seconds may queue behind others on the same worker."""
PREFETCH_DEPTH = 64
"""At most this many cheap jobs wait on one worker (all are requeued if it dies)..."""
PREFETCH_BUDGET_S = 0.02
"""...and at most this many estimated seconds of them, so a queued job starts soon."""
START_TIMEOUT_S = 60.0
"""A worker not ready this many seconds after its start is killed (its jobs fail)."""
_ALREADY_THERE = frozenset({"__main__", "builtins"})


def _heavy(task: Task) -> bool:
    """A job nothing may queue behind: expensive, or one to be run alone."""
    return task.alone or task.estimate_s >= PREFETCH_BELOW_S


class _Worker:
    """One warm worker as the pool sees it: its queue of jobs and the clock of the head."""

    def __init__(self, spec: WarmSpec, forks: ForkServer | None = None) -> None:
        self.proc = WarmProcess(spec, forks)
        self.queue: deque[Task] = deque()
        self.queued_s = 0.0  # estimated seconds of the queued jobs
        self.expensive = 0  # queued jobs that must run alone (see _heavy)
        self.outbox: list[tuple[int, bytes, float | None]] = []
        self.modules: set[str] = set(_ALREADY_THERE)  # imported in the worker, or asked for
        self.importing: list[str] = []  # to ask for with the next flush
        self.awaiting_import = False  # asked; its answer starts the head's clock
        self.import_asked = 0.0
        self.head_started = 0.0  # when the head job's clock started
        self.mark = 0  # where in the output file the head job's output begins
        self.next_watch = 0.0
        self.retire = False  # said it must be replaced (memory): no more jobs

    @property
    def ready(self) -> bool:
        return self.proc.ready

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
            self.next_watch = self.head_started + self.proc.spec.watch_s
            self.mark = self.proc.output.size()
        self.queued_s += task.estimate_s
        self.expensive += _heavy(task)
        self.queue.append(task)
        if task.module not in self.modules:
            self.modules.add(task.module)
            self.importing.append(task.module)
        self.outbox.append((task.run_id, task.payload(), task.timeout_s))

    def flush(self) -> None:
        """Send what was queued since the last flush as one message (one write, one wake-up).
        Nothing goes to a worker still starting: it would not read it yet."""
        if self.ready and (self.outbox or self.importing):
            if self.importing:
                self.proc.send(("import", self.importing))
                self.importing = []
                self.awaiting_import, self.import_asked = True, time.monotonic()
            if self.outbox:
                batch, self.outbox = self.outbox, []
                self.proc.send(("jobs", batch))
        self.proc.flush()

    def started(self) -> None:
        """The worker became ready for the head job (started, or imported): clock on."""
        self.head_started = time.monotonic()
        self.next_watch = self.head_started + self.proc.spec.watch_s

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
            return self.proc.start_deadline
        if self.awaiting_import:
            return self.import_asked + self.proc.spec.start_timeout_s
        if self.queue[0].timeout_s is None:
            return None
        return self.head_started + self.queue[0].timeout_s

    def watching(self) -> bool:
        """Whether the head job runs now (so memory and output are worth a look)."""
        return bool(self.queue) and self.ready and not self.awaiting_import


class WorkerLimits:
    """What every worker of a pool runs under (kept together: one `WarmSpec`)."""

    def __init__(
        self,
        memory_bytes: int | None = None,
        output_bytes: int = 8192,
        start_timeout_s: float = START_TIMEOUT_S,
        main_module: bool = True,
    ) -> None:
        self.spec = WarmSpec(
            Role(ROLE, preload=("rewardsmith.graders._worker",), main_module=main_module),
            memory_bytes=memory_bytes,
            output_bytes=output_bytes,
            start_timeout_s=start_timeout_s,
        )


def _fork_server(spec: WarmSpec) -> ForkServer | None:
    """The fork server the pool's workers come from, shared with every pool of this process
    whose workers are set up alike (the reward server's lanes). None where the caller's main
    module must be imported in each worker: its import may do anything (sleep, start a
    thread, read the environment), so each worker does it as a fresh interpreter would."""
    role = spec.launch
    if not isinstance(role, Role):
        return None
    setup = setup_of(role, spec)
    if setup["main"] is not None:
        return None
    forks = forkserver.acquire(setup, spec.start_timeout_s)
    if forks.broken is not None:  # workers start fresh, as without it
        forkserver.release(forks)
        return None
    return forks


class PoolBackend:
    """A fixed number of warm workers; dead, killed or bloated ones are replaced at once."""

    def __init__(self, workers: int, limits: WorkerLimits | None = None) -> None:
        self._spec = (limits or WorkerLimits()).spec
        self._forks = _fork_server(self._spec)
        self._workers = [self._new() for _ in range(workers)]
        self._spare: _Worker | None = None
        self._unsent: list[Event] = []
        self._picked: _Worker | None = None

    def _restart(self, index: int) -> _Worker:
        """Kill worker ``index`` and put the spare in its place (its queue is the caller's).

        A new worker is a fork of the fork server (milliseconds), or, where workers must
        import the caller's main module, a fresh interpreter and its imports (a few tenths
        of a second, more for a big main module). So after the first replacement the pool keeps one
        spare starting or ready, and the next replacement is at once the spare while a
        new spare starts: a verifier that keeps getting killed costs its limits, not
        start-ups as well. (One more idle worker, only in a pool that has replaced one.)
        """
        self._workers[index].proc.kill()
        worker, self._spare = self._spare, self._new()
        if worker is None or not worker.proc.alive:
            if worker is not None:
                worker.proc.kill()
            worker = self._new()
        self._workers[index] = worker
        return worker

    def _new(self) -> _Worker:
        return _Worker(self._spec, self._forks)

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
            if worker.proc.check_start() is not None or not worker.proc.alive:
                worker = self._restart(index)  # died idle or never started: blame none
            if worker.ready:
                return worker
            starting = starting or worker
        cheap = [] if _heavy(task) else [w for w in self._workers if w.queue and w.can_queue(task)]
        ready = [w for w in cheap if w.ready and not w.retire]
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
            with contextlib.suppress(OSError):  # died before we noticed: reported below
                worker.flush()
        self._wait(timeout)
        events: list[Event] = []
        for index, worker in enumerate(self._workers):
            events += self._drain(worker)
            events += self._check(index, worker)
        return events

    def _wait(self, timeout: float | None) -> None:
        """Until a reply, a death, a drained pipe, a deadline or a look at memory is due."""
        now = time.monotonic()
        wake = [d for w in self._workers if (d := w.deadline()) is not None]
        wake += [w.next_watch for w in self._workers if w.watching()]
        if wake:
            until = max(0.0, min(wake) - now)
            timeout = until if timeout is None else min(timeout, until)
        read: list[int] = []
        write: list[int] = []
        for worker in self._workers:
            if worker.queue or not worker.ready:  # a hello may free a job that waits
                r, w = worker.proc.handles()
                read += r
                write += w
        if read or write:
            wait_any(read, write, timeout)

    def _drain(self, worker: _Worker) -> list[Event]:
        if not worker.queue:
            return []
        was_ready = worker.ready
        try:
            frames = worker.proc.receive()
        except Exception:  # a message that does not unpickle: the worker is broken
            worker.proc.kill()
            return []
        events: list[Event] = []
        if worker.ready and not was_ready:  # start-up is over: send its jobs, start the clock
            worker.started()
        for kind, *body in frames:
            if kind == "imported":
                worker.awaiting_import = False
                worker.started()
            elif kind == "results":
                events += self._results(worker, *body)
        if worker.ready and (worker.outbox or worker.importing):
            with contextlib.suppress(OSError):
                worker.flush()
        if not worker.queue:
            worker.proc.output.empty_if_large()
            worker.mark = 0 if worker.proc.output.size() == 0 else worker.mark
        return events

    def _results(self, worker: _Worker, results: list[Any], stop: bool) -> list[Event]:
        events: list[Event] = []
        for run_id, outcome, unit in results:
            task = worker.pop()
            worker.mark = unit.output[1]
            if run_id == task.run_id:
                events.append((task, contained(task, outcome, unit, worker.proc)))
        if stop:
            worker.retire = True
        return events

    def _check(self, index: int, worker: _Worker) -> list[Event]:
        """Deaths, start failures, deadlines and limits of one worker, after the drain."""
        if worker.retire:
            requeue = [(task, None) for task in worker.queue]  # never ran on it
            self._restart(index)
            return requeue
        if not worker.queue:
            if not worker.ready and worker.proc.check_start() is not None:
                self._restart(index)  # died while starting, before it had a job
            return []
        if not worker.ready:
            if worker.proc.check_start() is not None:
                return self._replace(index, Failure.WORKER_DIED, "")
            return []
        if worker.proc.replies.closed or not worker.proc.alive:
            return self._replace(index, Failure.WORKER_DIED, worker.proc.why(Ending.DIED))
        now = time.monotonic()
        if (deadline := worker.deadline()) is not None and now >= deadline:
            if worker.awaiting_import:
                return self._replace_unready(index, worker, "did not import its verifier")
            limit = worker.queue[0].timeout_s
            return self._replace(
                index, Failure.VERIFIER_TIMEOUT, worker.proc.why(Ending.TIMEOUT, limit)
            )
        if worker.watching() and now >= worker.next_watch:
            worker.next_watch = now + self._spec.watch_s
            over = worker.proc.watch()
            if over is Ending.MEMORY:
                return self._replace(index, Failure.VERIFIER_MEMORY, worker.proc.why(over))
            if over is Ending.OUTPUT:
                return self._replace(index, Failure.VERIFIER_CRASH, worker.proc.why(over))
        return []

    def _replace(self, index: int, failure: Failure, message: str) -> list[Event]:
        worker = self._workers[index]
        elapsed = time.monotonic() - worker.head_started
        output = worker.proc.output.text(
            worker.mark, worker.proc.output.size(), self._spec.output_bytes
        )
        if not worker.ready:
            message = worker.proc.ready_error or message
        self._restart(index)
        if not worker.queue:
            return []
        if not worker.ready:
            return start_failed(list(worker.queue), worker.proc.born, message)
        head, *rest = worker.queue
        if rest:
            # Several cheap jobs were out and their results come back in bunches: the
            # culprit may be any of them. Run each again alone, where a death, a hang or
            # an overrun names its job; none of them has used up an attempt.
            for task in worker.queue:
                task.alone = True
            return [(task, None) for task in worker.queue]
        evidence = output_evidence(*output)
        if failure is Failure.VERIFIER_TIMEOUT and head.timeout_s is not None:
            evidence["limits"] = [
                {"layer": "job", "limit_s": head.timeout_s, "elapsed_s": round(elapsed, 6)}
            ]
        return [(head, head.infra_verdict(failure, message, elapsed, evidence))]

    def _replace_unready(self, index: int, worker: _Worker, why: str) -> list[Event]:
        worker.proc.ready_error = f"{why} {self._spec.start_timeout_s:g} s after it was asked"
        worker.proc.ready = False
        return self._replace(index, Failure.WORKER_DIED, worker.proc.ready_error)

    def abort(self) -> None:
        self._unsent = []
        for index, worker in enumerate(self._workers):
            if worker.queue:
                self._restart(index)

    def close(self) -> None:
        everyone = [*self._workers, *([self._spare] if self._spare is not None else [])]
        for worker in everyone:
            worker.proc.begin_stop()
        until = time.monotonic() + 1.0
        for worker in everyone:
            worker.proc.finish_stop(until)
        self._workers, self._spare = [], None
        if self._forks is not None:
            forkserver.release(self._forks)
            self._forks = None
