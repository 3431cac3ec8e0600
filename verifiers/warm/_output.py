"""A worker's stdout and stderr: one unlinked file, read back by byte range, capped.

Why a file and not a pipe: a pipe must be drained by the caller while the worker writes (a
full pipe blocks the worker, and a hundred megabytes of prints would wake the caller
thousands of times), and the caller cannot tell which of a bunch of quick jobs wrote which
bytes. A file opened for appending takes every write at once, from the worker, from C code
and from its children alike, and each unit of work reports the range it added
(`_runtime.run_unit`); the caller reads only the head and tail it keeps. The file is
emptied while its worker is idle, and a unit that writes past a hard limit is stopped.
"""

from __future__ import annotations

import fcntl
import os
import tempfile

EMPTY_AT_BYTES = 8 << 20
"""An idle worker's file is emptied once it holds more than this."""


class OutputFile:
    """The file a worker's fds 1 and 2 point to (append mode, deleted from the start)."""

    def __init__(self) -> None:
        # Kept open as long as this object lives, so that a killed worker's output can
        # still be read for its verdict; the file object closes it when dropped.
        self._file = tempfile.TemporaryFile(prefix="rewardsmith-output-", buffering=0)  # noqa: SIM115
        self.fd = self._file.fileno()
        flags = fcntl.fcntl(self.fd, fcntl.F_GETFL)
        fcntl.fcntl(self.fd, fcntl.F_SETFL, flags | os.O_APPEND)

    def size(self) -> int:
        return os.fstat(self.fd).st_size

    def text(self, start: int, end: int, keep: int) -> tuple[str, int]:
        """The output in [start, end): at most ``keep`` bytes of it (its head and its tail,
        with the size of the cut between), decoded, and the number of bytes it had."""
        total = max(0, end - start)
        if total == 0:
            return "", 0
        if total <= keep:
            data = os.pread(self.fd, total, start)
        else:
            head = keep // 2
            tail = keep - head
            cut = f"\n[... {total - keep} bytes of output not kept ...]\n".encode()
            data = os.pread(self.fd, head, start) + cut + os.pread(self.fd, tail, end - tail)
        return data.decode("utf-8", errors="replace"), total

    def empty_if_large(self) -> None:
        """Empty the file if it grew large; only while the worker is idle (ranges restart)."""
        if self.size() > EMPTY_AT_BYTES:
            os.ftruncate(self.fd, 0)

    def close(self) -> None:
        self._file.close()
