"""A CPU-time budget for one comparison in the killable worker: the model's limit.

Two clocks bound a comparison, and they tell whose fault an overrun is:

* **CPU time** (this module): the seconds of processor the comparison itself used. Load
  on the machine does not change it, so passing it means the answer is expensive to
  check: `Failure.CHECK_LIMIT`, the model's fault, score 0. It is enforced inside the
  worker by a CPU-time interval timer (``ITIMER_PROF``): when it fires, `BudgetExceeded`
  is raised in the comparison at its next Python instruction. The timer repeats every
  50 ms until disarmed, in case a library swallows the first one; `BudgetExceeded` is a
  `BaseException`, so ``except Exception`` blocks in sympy do not.
* **wall-clock time** (`rewardsmith.verifiers.killable`, the last line of defence): the
  worker is killed when the call takes longer than the verifier's ``timeout_s``, which is
  several times the CPU budget. A comparison that has not used its CPU budget by then was
  starved of the CPU (an overloaded machine, a stopped worker) or was stuck in one long C
  call; the first is the infrastructure's, and `rewardsmith.verifiers.math.cost` bounds
  the sizes of numbers before parsing so that the second does not happen. So a wall-clock
  kill is `Failure.VERIFIER_TIMEOUT`, kept out of the reward.

Signals reach only the main thread; elsewhere (a comparison run in a thread, as tests may)
the budget is not armed and only the cost estimate and the wall clock apply.

    >>> with cpu_budget(5.0) as spent:
    ...     total = sum(range(1000))
    >>> 0.0 <= spent() < 5.0
    True
"""

from __future__ import annotations

import signal
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

__all__ = ["BudgetExceeded", "cpu_budget"]

_REPEAT_S = 0.05
_armed = False


class BudgetExceeded(BaseException):
    """The comparison used its CPU-time budget."""


def _on_timer(signum: int, frame: object) -> None:
    if _armed:
        raise BudgetExceeded


@contextmanager
def cpu_budget(seconds: float) -> Iterator[Callable[[], float]]:
    """Raise `BudgetExceeded` in the body once it has used `seconds` of CPU time; yields a
    function that tells the CPU seconds used so far."""
    global _armed
    start = time.process_time()
    main = threading.current_thread() is threading.main_thread()
    if main:
        # Installed once and left in place: a timer signal that arrives after disarming
        # is then ignored, instead of SIGPROF's default action, which ends the process.
        if signal.getsignal(signal.SIGPROF) is not _on_timer:
            signal.signal(signal.SIGPROF, _on_timer)
        _armed = True
        signal.setitimer(signal.ITIMER_PROF, seconds, _REPEAT_S)
    try:
        yield lambda: time.process_time() - start
    finally:
        if main:
            _disarm()


def _disarm() -> None:
    global _armed
    try:  # the timer may fire (and raise) at any instruction until it is blocked
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGPROF})
    finally:
        _armed = False
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGPROF})
