"""The loop a `rewardsmith.verifiers.killable` worker process runs.

Started as ``python -m rewardsmith.verifiers._killable_worker REQUEST_FD REPLY_FD`` by
`killable.py`, not through `multiprocessing`: a daemonic executor worker may not start
multiprocessing children, and `multiprocessing` would re-import the caller's main module.
The first message carries the caller's ``sys.path``, the memory limit and the modules to
preload; each later one is a pickled ``(fn, args, kwargs)``, answered with ``("ok", value)``
or ``("error", text)``. A watchdog thread ends the process when its parent is gone, even
in the middle of a call that never returns.
"""

from __future__ import annotations

import os
import pickle
import resource
import sys
import threading
import time
import traceback
from multiprocessing.connection import Connection
from typing import Any

PARENT_POLL_S = 0.5


def _exit_when_orphaned(parent: int) -> None:
    while True:
        time.sleep(PARENT_POLL_S)
        if os.getppid() != parent:
            os._exit(0)


def _setup(message: bytes) -> None:
    path, memory_bytes, preload = pickle.loads(message)
    sys.path[:] = path
    if memory_bytes:
        resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    for module in preload:
        __import__(module)


def _answer(request: bytes) -> tuple[str, Any]:
    try:
        fn, args, kwargs = pickle.loads(request)
        return ("ok", fn(*args, **kwargs))
    except BaseException as exc:  # everything, RecursionError and MemoryError included
        detail = "".join(traceback.format_exception_only(type(exc), exc)).strip()
        return ("error", detail[-2000:])


def main(request_fd: int, reply_fd: int) -> None:
    threading.Thread(target=_exit_when_orphaned, args=(os.getppid(),), daemon=True).start()
    requests = Connection(request_fd, writable=False)
    replies = Connection(reply_fd, readable=False)
    try:
        _setup(requests.recv_bytes())
    except BaseException as exc:
        replies.send(("error", f"worker set-up failed: {type(exc).__name__}: {exc}"))
        return
    replies.send(("ready", None))
    while True:
        try:
            request = requests.recv_bytes()
        except (EOFError, OSError):
            return
        reply = _answer(request)
        try:
            replies.send(reply)
        except Exception as exc:  # an unpicklable result is the function's error
            replies.send(("error", f"result could not be sent back: {exc}"))


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]))
