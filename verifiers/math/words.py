"""Text answers are words, compared as words: never as products of one-letter symbols.

Read as mathematics, ``\\text{listen}`` is the product l*i*s*t*e*n, which equals
``\\text{silent}`` (an anagram) and differs from ``\\text{Listen}`` (``e`` turns into
Euler's number, ``E`` does not). `as_words` recognises an answer that is text as a whole
and returns its words in a canonical form (lower case, single spaces, no final period),
so ``\\text{Even}`` equals ``even`` and ``listen`` never equals ``silent``.

An answer is text when, after its math delimiters and text macros (``\\text``,
``\\textbf``, ``\\mathrm``, ...) are removed, it is letters, spaces, hyphens and
apostrophes only, and

* it was written in a text macro and has a word of two or more letters, or
* it has a word of four or more letters, or a common answer word (``yes``, ``no``,
  ``odd``, ...), or several words one of which has three or more letters.

A bare ``xy``, ``abc`` or ``a b`` stays mathematics (a product of symbols), as do single
letters and the names the parser knows (``pi``, ``infinity``, ``sin``).

    >>> as_words(r"\\text{ Even }")
    'even'
    >>> as_words(r"$\\textbf{The midpoints}$.")
    'the midpoints'
    >>> as_words("abc") is None and as_words(r"\\text{x}") is None
    True
"""

from __future__ import annotations

import re

from rewardsmith.verifiers.math.tokens import KNOWN_NAMES

__all__ = ["as_words"]

_TEXT_MACRO = re.compile(
    r"\\(?:text|textbf|textit|textrm|textsf|texttt|textnormal|mbox|mathrm|mathbf|mathit|"
    r"mathsf|emph)\s*\{([^{}]*)\}"
)
_WORD = r"[A-Za-z]+(?:['’-][A-Za-z]+)*"
_WORDS = re.compile(rf"{_WORD}(?:\s+{_WORD})*")
_DELIMITERS = re.compile(r"^(?:\$+|\\\(|\\\[)|(?:\$+|\\\)|\\\])$")
_SPACING = re.compile(r"\\[,;:! ]|~|\\(?:display|text|script)style(?![A-Za-z])")  # render nothing
# Short words that are answers, not products of letters.
_COMMON = frozenset((
    "yes", "no", "odd", "even", "all", "none", "both", "true", "false", "not", "nil", "any",
    "one", "two", "six", "ten",
))  # fmt: skip
_SEPARATORS = frozenset({"or", "and"})
_MAX_CHARS = 300


def _bare(answer: str) -> tuple[str, bool]:
    """The answer without delimiters, spacing and text macros; and whether all its letters
    were inside text macros (``x \\text{ cm}`` has a bare ``x``: it is not text)."""
    text = answer.strip().rstrip(".").strip()
    for _ in range(2):
        text = _DELIMITERS.sub("", text).strip()
    unwrapped = _TEXT_MACRO.sub(r" \1 ", text)
    unwrapped = _SPACING.sub(" ", unwrapped).strip().rstrip(".!").strip()
    outside = _TEXT_MACRO.sub(" ", text)
    return unwrapped, unwrapped != text and not re.search("[A-Za-z]", outside)


def as_words(answer: str) -> str | None:
    """The canonical words of a text answer, or None when the answer is mathematics."""
    if len(answer) > _MAX_CHARS or not re.search("[A-Za-z]{2}", answer):
        return None
    text, wrapped = _bare(answer)
    if not _WORDS.fullmatch(text):
        return None
    words = [w.replace("’", "'") for w in text.lower().split()]
    content = [w for w in words if w not in _SEPARATORS]
    longest = max((len(w) for w in content), default=0)
    if longest < 2 or (len(words) == 1 and words[0] in KNOWN_NAMES):
        return None
    if not wrapped:
        several = len(content) > 1 and longest >= 3
        if not (longest >= 4 or several or (len(words) == 1 and words[0] in _COMMON)):
            return None
    return " ".join(words)
