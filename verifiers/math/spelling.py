"""Ways of writing the same text that are not mathematics: escaped backslashes and the
decimal comma. Both are rewritten before extraction and comparison, conservatively.

**Doubled backslashes.** A completion or gold that went through one string escape too many
(a JSON string stored inside JSON, a Python literal pasted as raw text) reaches us as
``\\\\frac{1}{2}``: every LaTeX command has two backslashes. In LaTeX ``\\\\`` is a line break,
so ``\\\\frac`` would be a line break and the word "frac": no real answer is written so. The
text is unescaped once only when *every* command in it is doubled and there is at least
one (the string escapes ``\\n``, ``\\t``, ``\\r`` that come with such text do not count as
commands); a text with another single-backslash command (a matrix whose rows end in
``\\\\``) is left as it is.

    >>> repair_escapes(r"\\\\left(\\\\frac{1}{5}, 2\\\\right)")
    '\\\\left(\\\\frac{1}{5}, 2\\\\right)'
    >>> repair_escapes(r"\\begin{pmatrix} 1 \\\\ 2 \\end{pmatrix}") == (
    ...     r"\\begin{pmatrix} 1 \\\\ 2 \\end{pmatrix}")
    True

**Escapes read as control characters.** The same mishap the other way round: ``"\\frac"``
written into a JSON or Python string with one backslash is read as a form feed and "rac"
(``\\b`` in ``\\boxed``, ``\\beta`` becomes a backspace). Those two control characters never
occur in real text, so they are put back as ``\\f`` and ``\\b``.

**Decimal comma.** ``2,74`` is 2.74 in much of Europe, and a list of 2 and 74 or the number
274 elsewhere. We read a comma as a decimal point only when the *other* side is a single
decimal written with a point (so a decimal is what is asked for or given) and the comma
cannot be a thousands separator: ``1000,99``, ``2,74``, ``0,111`` qualify; ``1,234`` (one to
three digits, not starting with 0, then exactly three) stays the thousands reading 1234,
and ``1, 22`` (a space after the comma) stays a list.

    >>> decimal_comma("2.74", "2,74")
    ('2.74', '2.74')
    >>> decimal_comma("1.234", "1,234")
    ('1.234', '1,234')
"""

from __future__ import annotations

import re

__all__ = ["decimal_comma", "repair_escapes"]

# Zero-width spaces and joiners, the word joiner and the byte-order mark: nothing on screen.
# Also the soft hyphen, the Mongolian vowel separator, LTR/RTL marks and the invisible
# operators (function application, times, separator, plus): "1\u20622" shows "12".
_INVISIBLE = re.compile("[\u00ad\u180e\u200b-\u200f\u2060-\u2064\ufeff]")
_DOUBLED_COMMAND = re.compile(r"\\\\[A-Za-z]")
# \n, \t, \r are the string escapes that come with such text (a newline written as two
# characters), not commands: they do not count as single-backslash commands.
_SINGLE_COMMAND = re.compile(r"(?<!\\)\\(?![ntr])[A-Za-z]")
_COMMA_DECIMAL = re.compile(r"-?\d+,\d+")
_POINT_DECIMAL = re.compile(r"-?\d*\.\d+")
_THOUSANDS_LIKE = re.compile(r"-?[1-9]\d{0,2},\d{3}")


def repair_escapes(text: str) -> str:
    """``text`` without invisible characters, with form feeds and backspaces put back as
    ``\\f`` and ``\\b``, then unescaped once if every LaTeX command in it has a doubled
    backslash."""
    if _INVISIBLE.search(text):  # "1\u200b2" is 12 on screen; "o\u200br" is an "or"
        text = _INVISIBLE.sub("", text)
    if "\f" in text or "\b" in text:  # never in real text: a "\\frac" read as "\f" + "rac"
        text = text.replace("\f", "\\f").replace("\b", "\\b")
    if _DOUBLED_COMMAND.search(text) is None or _SINGLE_COMMAND.search(text) is not None:
        return text
    return text.replace("\\\\", "\\")


def _bare(text: str) -> str:
    return text.strip().strip("$").strip()


def _comma_as_point(text: str) -> str | None:
    bare = _bare(text)
    if _COMMA_DECIMAL.fullmatch(bare) and not _THOUSANDS_LIKE.fullmatch(bare):
        return bare.replace(",", ".")
    return None


def decimal_comma(gold: str, answer: str) -> tuple[str, str]:
    """``(gold, answer)`` with a decimal comma on one side read as a point, when the other
    side is a decimal written with a point; otherwise both unchanged."""
    if _POINT_DECIMAL.fullmatch(_bare(gold)):
        return gold, _comma_as_point(answer) or answer
    if _POINT_DECIMAL.fullmatch(_bare(answer)):
        return _comma_as_point(gold) or gold, answer
    return gold, answer
