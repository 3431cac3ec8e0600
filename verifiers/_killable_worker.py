"""The role a `rewardsmith.verifiers.killable` worker serves (see `verifiers.warm`).

Each request is ``(call, seconds)``: ``call`` the pickled ``(fn, args, kwargs)`` (unpickled
here, so that a function that cannot be imported is the call's error, not the worker's
death) and ``seconds`` the call's allowance, which nested layers inside it share. The
answer is ``("ok", value, unit)`` or ``("error", text, unit)``; `unit` is what the runtime
saw (memory, output range; `_runtime.Unit`).
"""

from __future__ import annotations

import pickle
import traceback
from typing import Any

from rewardsmith.verifiers.warm._runtime import Channel, run_unit
from rewardsmith.verifiers.warm.budget import JobDeadline


def serve(channel: Channel) -> None:
    while (request := channel.recv()) is not None:
        call, seconds = request
        (status, value), unit = _run(call, seconds)
        try:
            channel.send((status, value, unit))
        except Exception as exc:  # an unpicklable result is the function's error
            channel.send(("error", f"result could not be sent back: {exc}", unit))


def _run(call: bytes, seconds: float | None) -> tuple[tuple[str, Any], Any]:
    result, unit = run_unit(lambda: _answer(call), seconds)
    if unit.deadline is not None:
        result = ("error", "the call's time ran out in a nested step")
    return result, unit


def _answer(call: bytes) -> tuple[str, Any]:
    try:
        fn, args, kwargs = pickle.loads(call)
        return ("ok", fn(*args, **kwargs))
    except JobDeadline:
        raise  # the runtime's to report
    except BaseException as exc:  # everything else: RecursionError, MemoryError, SystemExit
        detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        return ("error", detail[-2000:])
