"""Programs that run inside the jail (stdlib only), shipped there as source text.

`agent` runs next to the candidate's code and answers calls on fd 3; `judge` runs the
trusted tests in a separate jail, with the candidate's functions replaced by proxies that
send the arguments over fd 3 and decode plain values back. Neither is imported by the
scoring process except to read its source.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

_HERE = Path(__file__).resolve().parent


def program_source(entry: str, main: str | None = None, extra: Sequence[str] = ()) -> str:
    """values.py + the wire helpers + `entry` (``agent`` or ``judge``) and the `extra`
    files as one script that calls `main` (default ``<entry>_main``)."""
    parts = [_HERE.parent / "values.py", _HERE / "wire.py", _HERE / f"{entry}.py"]
    parts += [_HERE / f"{name}.py" for name in extra]
    lines: list[str] = []
    for path in parts:
        lines.extend(
            line
            for line in path.read_text().splitlines()
            if line != "from __future__ import annotations"
        )
    lines.append(f"{main or entry + '_main'}()")
    return "from __future__ import annotations\n" + "\n".join(lines) + "\n"
