"""Masking source text: comments, string contents and disabled blocks blanked out.

`mask(source, language)` keeps every offset (a blanked character becomes a space, a newline
stays), so patterns and brace matching run on what a compiler would see and their offsets
still point into the original. Disabled: ``#if 0`` / ``#if false`` blocks (C, C++), Rust
items under a ``#[cfg(...)]`` that is false on this machine, a Go file under
``//go:build ignore``.

    >>> mask('f("}"); /* } */ g();', "c")
    'f(" ");         g();'
"""

from __future__ import annotations

import re

__all__ = ["mask", "matching"]

_LINE_COMMENT = {"c": "//", "cpp": "//", "java": "//", "javascript": "//", "go": "//", "rust": "//"}
_QUOTES = {
    "c": "\"'",
    "cpp": "\"'",
    "java": "\"'",
    "javascript": "\"'`",
    "go": "\"'`",
    "rust": '"',
}


def mask(source: str, language: str) -> str:
    """`source` with comments, string and character contents and disabled blocks blanked
    out (newlines kept), so offsets still match the original."""
    out = list(source)
    i, n = 0, len(source)
    line, quotes = _LINE_COMMENT.get(language, "//"), _QUOTES.get(language, "\"'")
    while i < n:
        ch = source[i]
        if source.startswith(line, i):
            end = source.find("\n", i)
            end = n if end < 0 else end
            begin, stop = i, end
        elif source.startswith("/*", i):
            end = _block_comment_end(source, i, nested=language == "rust")
            begin, stop = i, end
        elif ch in quotes and not (language == "rust" and _is_lifetime(source, i)):
            end = _string_end(source, i, ch)
            closed = end > i + 1 and source[end - 1] == ch
            begin, stop = i + 1, end - 1 if closed else end  # keep the quotes themselves
        else:
            i += 1
            continue
        for k in range(begin, stop):
            if out[k] != "\n":
                out[k] = " "
        i = max(end, i + 1)
    text = "".join(out)
    if language in ("c", "cpp"):
        text = _blank_disabled_preprocessor(text)
    elif language == "rust":
        text = _blank_cfg_items(text)
    elif language == "go" and re.search(r"^//go:build\s+ignore\b", source, re.M):
        text = re.sub(r"[^\n]", " ", text)
    return text


def _block_comment_end(s: str, i: int, nested: bool) -> int:
    depth, j = 1, i + 2
    while j < len(s) and depth:
        if nested and s.startswith("/*", j):
            depth, j = depth + 1, j + 2
        elif s.startswith("*/", j):
            depth, j = depth - 1, j + 2
        else:
            j += 1
    return j


def _string_end(s: str, i: int, quote: str) -> int:
    j = i + 1
    while j < len(s):
        if s[j] == "\\" and quote != "`":
            j += 2
            continue
        if s[j] == quote:
            return j + 1
        if s[j] == "\n" and quote != "`":
            return j  # an unterminated literal ends at the line (as compilers recover)
        j += 1
    return len(s)


def _is_lifetime(s: str, i: int) -> bool:
    """Rust: `'a` (a lifetime) is not a character literal; `'a'`, `'\\n'` are."""
    return s[i] == "'" and not re.match(r"'(?:\\.[^']*|[^'\\])'", s[i : i + 12])


_PP = re.compile(r"^[ \t]*#[ \t]*(if|ifdef|ifndef|elif|else|endif)\b(.*)$", re.M)


def _blank_disabled_preprocessor(text: str) -> str:
    """Blank ``#if 0`` / ``#if false`` blocks up to their ``#else``/``#elif``/``#endif``."""
    out = list(text)
    stack: list[tuple[bool, int]] = []  # (disabled, where the disabled part starts)
    for m in _PP.finditer(text):
        kind, rest = m.group(1), m.group(2).strip()
        if kind in ("if", "ifdef", "ifndef"):
            disabled = kind == "if" and rest in ("0", "false", "(0)")
            stack.append((disabled, m.end()))
        elif stack and kind in ("else", "elif", "endif"):
            disabled, begin = stack.pop()
            if disabled:
                _blank(out, begin, m.start())
            if kind != "endif":
                stack.append((False, m.end()))
    for disabled, begin in stack:
        if disabled:
            _blank(out, begin, len(text))
    return "".join(out)


_CFG = re.compile(r"#\[\s*cfg\s*\((?P<pred>[^\]]*)\)\s*\]")
_TRUE_CFG = {
    "unix",
    'target_os = "linux"',
    'target_family = "unix"',
    'target_pointer_width = "64"',
    'target_arch = "x86_64"',
}


def _blank_cfg_items(text: str) -> str:
    """Blank the item after a ``#[cfg(...)]`` that is false here (``any()``, ``test``, an
    unknown name): the compiler never sees it."""
    out = list(text)
    for m in _CFG.finditer(text):
        if " ".join(m.group("pred").split()) in _TRUE_CFG:
            continue
        end = _item_end(text, m.end())
        _blank(out, m.start(), end)
    return "".join(out)


def _item_end(text: str, i: int) -> int:
    brace, semi = text.find("{", i), text.find(";", i)
    if brace < 0 or (0 <= semi < brace):
        return len(text) if semi < 0 else semi + 1
    return matching(text, brace)


def _blank(out: list[str], begin: int, end: int) -> None:
    for k in range(begin, end):
        if out[k] != "\n":
            out[k] = " "


def matching(text: str, open_at: int) -> int:
    """Offset just past the brace matching the one at `open_at` (end of text if none)."""
    depth = 0
    for k in range(open_at, len(text)):
        if text[k] == "{":
            depth += 1
        elif text[k] == "}":
            depth -= 1
            if depth == 0:
                return k + 1
    return len(text)
