"""Turn a raw build log (bytes or text, any line endings, colours) into clean, capped text.

Logs come from processes that ran model-written code, so they are hostile: they can be
huge, hold invalid UTF-8 or NUL bytes, carry terminal escape sequences (``\\x1b[31m``, and
OSC titles or hyperlinks that gcc and cargo emit), or use ``\\r\\n`` and bare ``\\r``. Every
parser reads the output of `clean_log`, which bounds the work: it keeps the first
`max_chars` characters (the first errors are the ones that matter; later ones are mostly
cascades), and `lines` cuts each line before any regular expression sees it.
"""

from __future__ import annotations

import re
from typing import NamedTuple

__all__ = ["DEFAULT_MAX_CHARS", "Line", "clean_log", "lines"]

DEFAULT_MAX_CHARS = 8_000_000
MAX_LINE = 4_000
"""Characters of one line that parsers look at; a longer line is cut (not dropped)."""

# CSI sequences (colours, cursor moves) and OSC sequences (titles, hyperlinks), plus the
# lone two-byte escapes. Each alternative consumes at least one character: linear time.
_ANSI = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]{0,4096}(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]"
)


class Line(NamedTuple):
    """One line of the cleaned log and where it starts (a tuple: logs have millions)."""

    offset: int
    text: str


def clean_log(log: str | bytes | None, max_chars: int = DEFAULT_MAX_CHARS) -> tuple[str, bool]:
    """Decode, strip terminal escapes, normalise line endings, cap the size.

    Returns the text and whether it was truncated. Invalid UTF-8 becomes U+FFFD.

        >>> clean_log(b"\\x1b[1;31merror\\x1b[0m: bad\\r\\n\\xff")
        ('error: bad\\n\\ufffd', False)
    """
    if log is None:
        return "", False
    truncated = len(log) > max_chars
    if truncated:
        log = log[:max_chars]
    text = log.decode("utf-8", errors="replace") if isinstance(log, bytes) else log
    if "\x1b" in text:
        text = _ANSI.sub("", text)
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    if "\x00" in text:
        text = text.replace("\x00", "")
    return text, truncated


def lines(text: str) -> list[Line]:
    """The lines of `text` with their offsets, each cut to `MAX_LINE` characters."""
    out: list[Line] = []
    offset = 0
    for raw in text.split("\n"):
        out.append(Line(offset, raw[:MAX_LINE]))
        offset += len(raw) + 1
    return out
