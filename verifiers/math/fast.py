"""The in-process fast path: plain numbers and multiple-choice letters.

Most gold answers are integers, decimals or simple fractions, and most predictions for them
are too. Those are compared here with `fractions.Fraction`, bounded by construction (at
most `MAX_DIGITS` digits per number, patterns without backtracking), so no worker round
trip is paid. Anything else (and any text these patterns do not fully match) goes to the
worker. The rules are the worker's rules (exactness and the rounding rule of
`rewardsmith.verifiers.math.equivalence`), and the tests check that both paths agree.

    >>> as_number(r"-\\frac{3}{4}")
    SimpleNumber(value=Fraction(-3, 4), decimals=None, significant=0)
    >>> choice_letter(r"\\text{(B)}")
    'B'
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from fractions import Fraction

__all__ = [
    "MAX_DIGITS", "SimpleNumber", "as_number", "choice_letter", "numbers_equal",
    "other_choices", "split_choice",
]  # fmt: skip

MAX_DIGITS = 40
_D = rf"\d{{1,{MAX_DIGITS}}}"
_INT_OR_DECIMAL = re.compile(
    rf"([-+]?)({_D}|{_D}(?:,\d{{3}}){{1,10}})(?:\.({_D}))?|([-+]?)\.({_D})"
)
_FRACTION = re.compile(
    rf"([-+]?)\s*(?:\\[dt]?frac\{{\s*({_D})\s*\}}\{{\s*({_D})\s*\}}|({_D})\s*/\s*({_D}))"
)
# Delimiters and spaces go; a space between two digits or after a comma stays, so neither
# "1 2" nor the list "32, 349" is read as one number.
_WRAPPERS = re.compile(r"^\$+|\$+$|^\\\(|\\\)$|^\\\[|\\\]$|\\[!;]|(?<![\d,])\s+|\s+(?!\d)")
# "(B)", "B", "B.", "Option B" alone; with trailing text (its value) only after "(B)" or
# "B." ("(B) 12", "B: 12"), never after a bare letter, so "D = (0, 1)" is not the choice D.
_CHOICE = re.compile(
    r"(?:(?i:option|choice)\s*)?(?:\(([A-J])\)|([A-J])([.:)])?)(?:\s+(.*))?", re.DOTALL
)
_TEXT_MACRO = re.compile(r"\\(?:text|textbf|textrm|textit|mathrm|mathbf|mbox)\s*\{([^{}]*)\}")
# Spacing and style switches, which show nothing themselves ("\\displaystyle B" is B).
_SPACING = re.compile(
    r"\\[,;:! ]|\\q?quad(?![A-Za-z])|~|\\(?:displaystyle|textstyle|mathstrut)(?![A-Za-z])"
)
# Another letter in what follows a choice ("(C) or (D)", "C, D"): several choices.
_ANOTHER_LETTER = re.compile(r"(?:^|[\s,;/])\(?([A-J])\)?(?=$|[\s,;/.])")


@dataclass(frozen=True, slots=True)
class SimpleNumber:
    value: Fraction
    decimals: int | None
    """Digits after the decimal point when written as a decimal; None otherwise."""
    significant: int


def as_number(text: str) -> SimpleNumber | None:
    """An integer, a decimal or a simple fraction, else None (the worker will decide)."""
    if len(text) > 4 * MAX_DIGITS:
        return None
    text = _WRAPPERS.sub("", text).rstrip(".")
    match = _INT_OR_DECIMAL.fullmatch(text)
    if match:
        if match.group(5) is not None:
            sign, whole, fraction = match.group(4), "0", match.group(5)
        else:
            sign, whole, fraction = match.group(1), match.group(2), match.group(3)
        whole = whole.replace(",", "")
        value = Fraction(int(whole + (fraction or "")), 10 ** len(fraction or ""))
        significant = len((whole + (fraction or "")).lstrip("0"))
        decimals = len(fraction) if fraction is not None else None
        return SimpleNumber(-value if sign == "-" else value, decimals, significant)
    match = _FRACTION.fullmatch(text)
    if match:
        top, bottom = match.group(2) or match.group(4), match.group(3) or match.group(5)
        if int(bottom) == 0:
            return None
        value = Fraction(int(top), int(bottom))
        return SimpleNumber(-value if match.group(1) == "-" else value, None, 0)
    return None


def _terminates(value: Fraction) -> bool:
    q = value.denominator
    for p in (2, 5):
        while q % p == 0:
            q //= p
    return q == 1


def _rounds_to(literal: SimpleNumber, other: Fraction, rounding_digits: int) -> bool:
    if literal.decimals is None or rounding_digits <= 0 or _terminates(other):
        return False
    if literal.value.denominator == 1:  # "12.0" (a float column) states 12 exactly
        return False
    if literal.significant < rounding_digits:
        return False
    return abs(other - literal.value) <= Fraction(1, 2 * 10**literal.decimals)


def numbers_equal(
    gold: SimpleNumber, pred: SimpleNumber, rel_tol: float, rounding_digits: int
) -> tuple[bool, str]:
    """The same decision the worker makes for these two numbers, and its rule name."""
    if _rounds_to(pred, gold.value, rounding_digits) or _rounds_to(
        gold, pred.value, rounding_digits
    ):
        return True, "rounded"
    if gold.value == pred.value:
        return True, "exact"
    if rel_tol > 0:
        scale = max(abs(gold.value), abs(pred.value))
        if abs(gold.value - pred.value) <= Fraction(rel_tol) * scale:
            return True, "tolerance"
    return False, "exact"


def split_choice(text: str) -> tuple[str, str] | None:
    """``(C) 12`` -> ``("C", "12")``; ``\\text{(C) } 12``, ``Option C``, ``B.`` -> the letter
    and what follows it ("" when nothing does); None when `text` is not a choice."""
    text = text.strip().strip("$").strip()
    if len(text) > 200:
        return None
    text = " ".join(_SPACING.sub(" ", _TEXT_MACRO.sub(r" \1 ", text)).split())
    match = _CHOICE.fullmatch(text)
    if match is None:
        return None
    letter = match.group(1) or match.group(2)
    rest = (match.group(4) or "").strip()
    if rest and match.group(2) and not match.group(3):  # "D = (0, 1)": a bare letter
        return None
    return letter, rest


def choice_letter(text: str, *, alone: bool = False) -> str | None:
    """``B``, ``(B)``, ``B.``, ``(B) 12``, ``\\text{(B)}`` -> ``"B"``; else None.

    `alone=True` (for gold answers) accepts the letter with nothing after it.
    """
    found = split_choice(text)
    if found is None or (alone and found[1]):
        return None
    return found[0]


def other_choices(rest: str, letter: str) -> bool:
    """Whether the text after a choice names another choice ("(C) or (D)")."""
    return any(m.group(1) != letter for m in _ANOTHER_LETTER.finditer(rest))
