"""Numbers written another way than in digits: repeating decimals, English words, bases.

`as_plain` rewrites a whole answer (or gold) that is one such number into a form the
comparison reads; anything else is returned unchanged. Pure string work, linear.

* **Repeating decimals**: ``0.\\overline{3}``, ``0.\\dot{6}``, ``0.\\dot{1}\\dot{2}``
  (dots over the first and last digit of the period), ``0.(3)``, and a decimal whose
  last digits repeat before an ellipsis (``0.333...``, ``0.1666\\ldots``: a period of one
  digit shown at least twice, or of two to six digits shown twice). ``3.14159...`` shows
  no period and stays as it is. Each becomes its exact fraction.
* **English number words** (``five``, ``twelve``, ``one hundred and twenty-three``,
  ``two thousand twenty-four``, ``one million``, ``negative five``), up to the billions,
  and simple fractions (``one half``, ``three quarters``, ``two thirds``).
* **Sets in words**: ``no solution``, ``none``, ``the empty set`` are ``\\emptyset``;
  ``all real numbers``, ``all reals`` are ``(-\\infty, \\infty)``.
* **Bases**: ``1011_2``, ``1011_{2}``, ``(1011)_2``, ``2A_{16}``, ``1011_{\\text{two}}``
  (bases 2 to 36) are `Based` numbers; `decide` compares them by value, and reads a bare
  numeral answered for a based gold in the gold's base (``1011`` for ``1011_2``; ``11``
  then is 3, not eleven).

    >>> as_plain(r"0.\\overline{3}"), as_plain("0.1666..."), as_plain(r"\\text{twelve}")
    ('\\\\frac{1}{3}', '\\\\frac{1}{6}', '12')
    >>> based("1011_{2}")
    Based(digits='1011', base=2, value=11)
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

__all__ = [
    "Based",
    "as_plain",
    "based",
    "in_base",
    "repeating_decimals",
    "spelled_values",
    "words_to_digits",
]

_ONES = [
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen",
    "eighteen", "nineteen",
]  # fmt: skip
_TENS = ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
_WORD_VALUES = {w: i for i, w in enumerate(_ONES)} | {w: 20 + 10 * i for i, w in enumerate(_TENS)}
_SCALES = {"thousand": 10**3, "million": 10**6, "billion": 10**9}
_DENOMINATORS = {
    "half": 2, "halves": 2, "third": 3, "thirds": 3, "quarter": 4, "quarters": 4,
    "fourth": 4, "fourths": 4, "fifth": 5, "fifths": 5, "sixth": 6, "sixths": 6,
    "seventh": 7, "sevenths": 7, "eighth": 8, "eighths": 8, "ninth": 9, "ninths": 9,
    "tenth": 10, "tenths": 10, "hundredth": 100, "hundredths": 100, "thousandth": 1000,
    "thousandths": 1000, "millionth": 10**6, "millionths": 10**6,
}  # fmt: skip
_TEXT = re.compile(
    r"^\$*\s*(?:\\(?:text|textbf|textrm|mathrm|mbox)\s*\{([^{}]*)\}|([^\\$]*))\s*\$*$"
)
# Sets named in words: "no solution" is the empty set, "all real numbers" the real line.
_SET_WORDS = {
    **dict.fromkeys(
        ("no solution", "no solutions", "no real solution", "no real solutions", "none",
         "the empty set", "empty set", "no such number", "no real roots", "no roots"),
        r"\emptyset",
    ),
    **dict.fromkeys(
        ("all real numbers", "all reals", "every real number", "all real x",
         "all real values", "the set of all real numbers"),
        r"(-\infty, \infty)",
    ),
}  # fmt: skip
_DIGIT_NAMES = {"two": 2, "eight": 8, "ten": 10, "sixteen": 16, "three": 3, "five": 5}

_D = r"\d{1,40}"
_OVERLINE = re.compile(
    rf"(-?)(\d{{0,40}})\.(\d{{0,40}})\\(?:overline|bar)\s*(?:\{{\s*({_D})\s*\}}|(\d))"
)
_PARENS = re.compile(rf"(-?)(\d{{1,40}})\.(\d{{0,40}})\(({_D})\)")
_DOTS = re.compile(r"(-?)(\d{1,40})\.(\d{0,40})((?:\\dot\s*\{\s*\d\s*\}|\\dot\s*\d|\d){1,40})")
_DOT = re.compile(r"\\dot\s*\{?\s*(\d)\s*\}?")
_ELLIPSIS = re.compile(r"(-?)(\d{1,40})\.(\d{1,40})\s*(?:\\ldots|\\dots|\\cdots|\.\.\.|…)")
_BASED = re.compile(
    r"\(?([0-9A-Za-z]{1,64})\)?_\s*(?:\{\s*\(?(\d{1,2})\)?\s*\}|\(?(\d)\)?"
    r"|\{\s*\\(?:text|mathrm)\s*\{\s*([a-z]+|\d{1,2})\s*\}\s*\}|\{\s*(two|eight|sixteen)\s*\})"
)


@dataclass(frozen=True, slots=True)
class Based:
    digits: str
    base: int
    value: int


def _fraction_text(value: Fraction) -> str:
    if value.denominator == 1:
        return str(value.numerator)
    sign = "-" if value < 0 else ""
    return rf"{sign}\frac{{{abs(value.numerator)}}}{{{value.denominator}}}"


def _repeating(sign: str, whole: str, fixed: str, period: str) -> str:
    """The exact value of ``whole.fixed(period)(period)...``."""
    value = Fraction(int(whole or "0")) + Fraction(int(fixed or "0"), 10 ** len(fixed))
    value += Fraction(int(period), (10 ** len(period) - 1) * 10 ** len(fixed))
    return _fraction_text(-value if sign else value)


def _period(digits: str) -> tuple[str, str] | None:
    """(fixed part, period) of digits shown before an ellipsis, if they end in a period."""
    for size in range(1, 7):
        shown = 3 if size == 1 and len(digits) > 2 else 2
        if len(digits) >= size * shown and digits[-size:] * shown == digits[-size * shown :]:
            rest = digits
            while rest.endswith(digits[-size:]):
                rest = rest[:-size]
            block = digits[len(rest) : len(rest) + size]
            return rest, block
    return None


def _decimal(text: str) -> str | None:
    if m := _OVERLINE.fullmatch(text):
        return _repeating(m[1], m[2], m[3], m[4] or m[5])
    if m := _PARENS.fullmatch(text):
        return _repeating(m[1], m[2], m[3], m[4])
    if (m := _DOTS.fullmatch(text)) and "\\dot" in m[4]:
        tail = m[4]
        first = _DOT.search(tail)
        assert first is not None
        digits = _DOT.sub(r"\1", tail)
        fixed = m[3] + _DOT.sub(r"\1", tail[: first.start()])
        return _repeating(m[1], m[2], fixed, digits[len(fixed) - len(m[3]) :])
    if (m := _ELLIPSIS.fullmatch(text)) and (found := _period(m[3])):
        return _repeating(m[1], m[2], *found)
    return None


def _integer(words: list[str]) -> int | None:
    total, group = 0, None
    for word in words:
        if word.isdigit() and group is None and len(word) <= 40:  # "2 million"
            group = int(word)
        elif word in _WORD_VALUES:
            group = (group or 0) + _WORD_VALUES[word]
        elif word == "hundred" and group is not None and group < 100:
            group *= 100
        elif word in _SCALES and group is not None:
            total, group = total + group * _SCALES[word], None
        elif word != "and":
            return None
    if group is None and total == 0:
        return None
    return total + (group or 0)


def _words(text: str) -> str | None:
    words = text.lower().replace("-", " ").replace(",", " ").split()
    if not words or len(words) > 24:
        return None
    sign = words[0] in ("negative", "minus")
    words = words[sign:]
    if words and words[-1] in _DENOMINATORS and len(words) >= 2:
        top = 1 if words[:-1] in (["a"], ["an"], ["one"]) else _integer(words[:-1])
        value = None if top is None else Fraction(top, _DENOMINATORS[words[-1]])
    else:
        number = _integer(words)
        value = None if number is None else Fraction(number)
    if value is None:
        return None
    return _fraction_text(-value if sign else value)


def based(text: str) -> Based | None:
    """A numeral with a base subscript, if the whole text is one with valid digits."""
    match = _BASED.fullmatch(text.strip().strip("$").strip())
    if match is None:
        return None
    named = match[4] or match[5] or ""
    base = int(match[2] or match[3] or 0) or (
        int(named) if named.isdigit() else _DIGIT_NAMES.get(named, 0)
    )
    digits = match[1]
    if not digits[0].isdigit() and (base <= 10 or len(digits) < 2):
        return None  # "a_{16}" is the 16th term, not hex 10
    return in_base(digits, base)


def in_base(digits: str, base: int) -> Based | None:
    """`digits` read in `base` (2 to 36), if they are valid there."""
    if not 2 <= base <= 36:
        return None
    try:
        return Based(digits, base, int(digits, base))
    except ValueError:
        return None


_INNER = re.compile(
    rf"{_OVERLINE.pattern}|{_PARENS.pattern}|(-?)(\d{{1,40}})\.(\d{{0,40}})"
    r"(?:\\dot\s*\{\s*\d\s*\}|\\dot\s*\d|\d){0,40}\\dot\s*\{?\s*\d\s*\}?"
)


def repeating_decimals(text: str) -> str:
    """`text` with every repeating decimal written with a bar, dots or parentheses
    replaced by its fraction in parentheses (``x = 0.\\overline{3}``)."""
    if not re.search(r"\\(?:overline|bar|dot)|\d\.\d*\(", text):
        return text
    return _INNER.sub(lambda m: f"({_decimal(m.group()) or m.group()})", text)


_NUMBER_WORD = "|".join([*_ONES, *_TENS, "hundred", "thousand", "million", "billion"])
_WORD_RUN = re.compile(
    rf"\b(?:{_NUMBER_WORD})(?:(?:[\s-]+|\s+and\s+)(?:{_NUMBER_WORD}))*\b", re.IGNORECASE
)


_DENOMINATOR_WORD = "|".join(_DENOMINATORS)
# A run of number words, or a fraction in words ("one half", "a third", "three quarters").
_SPELLED = re.compile(
    rf"\b(?:(?:a|an)[\s-]+(?:{_DENOMINATOR_WORD})|(?:{_NUMBER_WORD})"
    rf"(?:(?:[\s-]+|\s+and\s+)(?:{_NUMBER_WORD}))*(?:[\s-]+(?:{_DENOMINATOR_WORD}))?)\b",
    re.IGNORECASE,
)


def spelled_values(line: str) -> list[tuple[re.Match[str], str]]:
    """Each run of number words in `line` and its value as digits ("five" 5, "one half"
    1/2, "a third" 1/3)."""
    found = ((m, _words(m.group())) for m in _SPELLED.finditer(line))
    return [(m, value) for m, value in found if value is not None]


def words_to_digits(line: str) -> str:
    """`line` with each run of English number words written in digits ("five ways" is
    "5 ways"); for reading a number off a last line that has none in digits."""
    return _WORD_RUN.sub(_run_in_digits, line)


def _run_in_digits(match: re.Match[str]) -> str:
    value = _integer(match.group().lower().replace("-", " ").split())
    return match.group() if value is None else str(value)


def as_plain(text: str) -> str:
    """`text` as digits when the whole of it is a repeating decimal or number words."""
    bare = text.strip().strip("$").strip()
    bare = bare[:-1].rstrip() if re.search(r"[^.]\.$", bare) else bare  # not "..."
    if len(bare) > 300:
        return text
    if "." in bare:
        found = _decimal(bare.replace(" ", ""))
        if found is not None:
            return found
    words = _TEXT.fullmatch(bare)
    if words is not None and re.search("[a-z]{3}", bare, re.IGNORECASE):
        phrase = " ".join(((words[1] if words[1] is not None else words[2]) or "").lower().split())
        if phrase.rstrip(".") in _SET_WORDS:
            return _SET_WORDS[phrase.rstrip(".")]
        if phrase.rstrip(".") in ("dne", "does not exist", "doesn't exist"):
            return r"\text{does not exist}"
        found = _words((words[1] if words[1] is not None else words[2]) or "")
        if found is not None:
            return found
    return text
