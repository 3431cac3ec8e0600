"""A reward batch that raises or hangs: a bounded number of retries, then the batch is skipped.

A reward source is a plugin (a grader on a process pool, a remote reward server, a learned
model); any of them can raise for one batch or stop answering. The trainer must neither
turn that into rewards of 0 (a silent wrong signal) nor die without a word. So every call
gets a deadline (`DeadlineSource`), a failed or late batch is submitted again up to
`reward_retries` times (`await_rewards`), and a batch that still fails is skipped: no
update that step, a warning with the cause, and a count in `reward/skipped_batches`.

A call that hangs keeps running in a daemon thread (a Python thread cannot be killed), so
it never blocks the run or the process's exit; verifiers themselves are killed at their
own hard limit by the executor.

The training step reaches the source as ``step=`` when its `score` (or `ascore`) takes
one (a `GraderReward` does: step-dependent shaping). A source with a `state` (running
normalisation) has it snapshotted after each batch, so a checkpoint saves the state as of
the last batch trained on, not one that includes the batch already scored for the next
step (`reward_overlap: one_step`), which is scored again on resume.
"""

from __future__ import annotations

import asyncio
import copy
import inspect
import logging
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import Future
from typing import Any

from rewardsmith.trainer.rewards import RewardBatch, RewardPipeline, RewardSource
from rewardsmith.verifiers.types import Sample

__all__ = ["DeadlineSource", "await_rewards"]

log = logging.getLogger("rewardsmith.trainer")


class DeadlineSource:
    """`source` with a deadline per call: past `timeout_s` a call raises TimeoutError.

    It has only `score` (which runs the source's async `ascore` when it has one), so a
    `RewardPipeline` around it runs each call on its thread and gets the error back.
    """

    KEEP_STATES = 4
    """Reward-state snapshots kept (by step): the one a checkpoint needs is at most one
    step behind the newest."""

    def __init__(self, source: RewardSource, timeout_s: float) -> None:
        self.source = source
        self.timeout_s = timeout_s
        self._states: dict[int, dict[str, Any]] = {}
        self._states_lock = threading.Lock()  # written on the reward thread, read at save

    def score(self, samples: Sequence[Sample], step: int | None = None) -> RewardBatch:
        box: Future[RewardBatch] = Future()
        worker = threading.Thread(
            target=self._call, args=(list(samples), step, box), daemon=True, name="reward-call"
        )
        worker.start()
        try:
            batch = box.result(timeout=self.timeout_s)
        except TimeoutError:
            raise TimeoutError(
                f"the reward source gave no answer for {len(samples)} samples in "
                f"{self.timeout_s:g} s (reward_batch_timeout_s)"
            ) from None
        if len(batch.values) != len(samples):
            raise ValueError(
                f"the reward source returned {len(batch.values)} rewards for {len(samples)} samples"
            )
        return batch

    def _call(self, samples: list[Sample], step: int | None, box: Future[RewardBatch]) -> None:
        try:
            ascore: Any = getattr(self.source, "ascore", None)
            call = ascore or self.source.score
            kwargs = {"step": step} if step is not None and _takes_step(call) else {}
            result = asyncio.run(ascore(samples, **kwargs)) if ascore else call(samples, **kwargs)
            if step is not None:
                self._snapshot(step)
            box.set_result(result)
        except BaseException as exc:  # handed to the waiting thread, which reports it
            box.set_exception(exc)

    def _snapshot(self, step: int) -> None:
        state = getattr(self.source, "state", None)  # a property (GraderReward) or a method
        if callable(state):
            state = state()
        if state is None:
            return
        with self._states_lock:
            self._states[step] = copy.deepcopy(dict(state))
            for old in sorted(self._states)[: -self.KEEP_STATES]:
                del self._states[old]

    def state_through(self, step: int) -> dict[str, Any] | None:
        """The source's state after the newest batch of step <= `step` (None: no state)."""
        with self._states_lock:
            done = [s for s in self._states if s <= step]
            return self._states[max(done)] if done else None

    def load_state(self, state: Mapping[str, Any] | None) -> None:
        """Restore the source's state from a checkpoint (nothing when either has none)."""
        load: Callable[[Mapping[str, Any]], None] | None = getattr(self.source, "load_state", None)
        if state is not None and load is not None:
            load(state)


def _takes_step(call: Callable[..., Any]) -> bool:
    """Whether `call` accepts ``step=`` (the RewardSource protocol does not require it)."""
    try:
        params = inspect.signature(call).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.name == "step" or p.kind is inspect.Parameter.VAR_KEYWORD for p in params)


def await_rewards(
    first: Future[RewardBatch],
    samples: Sequence[Sample],
    pipeline: RewardPipeline,
    retries: int,
    step: int,
) -> tuple[RewardBatch | None, int]:
    """The batch's rewards, submitting it again after a failure, at most `retries` times.

    Returns (rewards or None when every attempt failed, the number of retries made).
    """
    future = first
    for attempt in range(retries + 1):
        try:
            return future.result(), attempt
        except Exception as exc:
            log.warning(
                "step %d: the reward source failed on attempt %d of %d: %s: %s",
                step,
                attempt + 1,
                retries + 1,
                type(exc).__name__,
                exc,
            )
            if attempt < retries:
                future = pipeline.submit(samples, step)
    log.error(
        "step %d: no rewards after %d attempts; the batch is skipped (no update this step)",
        step,
        retries + 1,
    )
    return None, retries
