"""What ties a cited figure to the page beyond its digits (for `grounding`): the year it
is said to be for, the figures it is derived from, and claims written so that no digit
can be checked.

- **Years** (`column_years`, `cited_year`): a page line of years ("Item 2024 2023 %
  change") heads the columns below it, so "Revenue was 150,239 in 2024" is not grounded by
  the 2023 column; a cited figure's year is the one written just after it ("150,239 in
  2023", "(2023)") or the one year its clause names before it.
- **Derived figures** (`derived`): a difference, ratio or growth of two figures printed on
  rows the sentence names ("Revenue fell by $27,794 thousand", "84.2% of total assets",
  "Cash rose 65.1%") is grounded by those figures, at the precision written.
- **Unchecked claims** (`unchecked_claims`): amounts in words ("nine hundred million
  dollars"), multiples and fractions ("7x", "doubled", "by a third") and a year written as
  an amount ("Total assets were 2019") are claims no digit on the page can check: they fail.
"""

from __future__ import annotations

import itertools
import math
import re

from rewardsmith.verifiers.finance.figures import Figure
from rewardsmith.verifiers.finance.quantities import DOWN_WORDS, UP_WORDS

__all__ = [
    "DERIVING",
    "YEAR_AS_AMOUNT",
    "cited_year",
    "column_years",
    "derived",
    "unchecked_claims",
]

_YEAR = re.compile(r"(?<![\w.,])(?:FY\s?)?((?:19|20)\d{2})(?![\w%,])")
_AFTER_YEAR = re.compile(r"^\s*(?:in|for|during|of)?\s*\(?(?:FY\s?)?((?:19|20)\d{2})\b", re.I)
_NUMBER_WORD = (
    r"one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|"
    r"fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy|"
    r"eighty|ninety|hundred"
)
_UNCHECKED = re.compile(
    rf"\b(?:{_NUMBER_WORD})(?:[\s-]+(?:and\s+)?(?:{_NUMBER_WORD}))*\s+(?:hundred|thousand|"
    r"million|billion)\b|\b\d+(?:\.\d+)?\s?(?:x|times)\b|\b(?:doubled|tripled|quadrupled|"
    r"halved|twice|thrice)\b|\bby\s+(?:a\s+|one\s+)?(?:half|third|quarter|fifth)\b",
    re.I,
)
YEAR_AS_AMOUNT = re.compile(
    r"\b(?:was|were|is|are|totall?ed|reached|amounted\s+to|stood\s+at)\s+(?:[$€£¥]\s?)?$", re.I
)
"""Words before a year-shaped number that make it an amount ("Total assets were 2019")."""
MAX_DERIVED_TERMS = 12
DERIVING = re.compile(
    rf"\b(?:by|of|difference|more|less|change[sd]?|growth|increase[sd]?|decrease[sd]?|"
    rf"{UP_WORDS}|{DOWN_WORDS})\s*(?:[$€£¥]\s?)?$",
    re.I,
)
"""Words just before a figure that make it a change, difference or share of others."""


def column_years(line: str) -> list[int] | None:
    """The years a header line names, in order, or None when it is no header of years."""
    years = [int(y) for y in _YEAR.findall(line)]
    words = re.sub(r"(?:FY\s?)?(?:19|20)\d{2}|%|[^A-Za-z%]+", " ", line).split()
    return years if len(years) >= 2 and len(words) <= 4 else None


def cited_year(before_in_clause: str, after: str) -> int | None:
    """The year a cited figure is said to be for, or None."""
    match = _AFTER_YEAR.match(after[:24])
    if match:
        return int(match.group(1))
    years = set(_YEAR.findall(before_in_clause))
    return int(years.pop()) if len(years) == 1 else None


def unchecked_claims(sentence: str) -> list[str]:
    """Spans of `sentence` that claim an amount no printed digit can check."""
    return [m.group(0) for m in _UNCHECKED.finditer(sentence)][:10]


def derived(figure: Figure, negative: bool, terms: list[Figure], page_scale: float) -> bool:
    """Is `figure` a difference, ratio (in %) or growth (in %) of two of `terms`, at the
    precision it is written?"""
    amounts = [t for t in terms if t.unit not in ("%", "bp")][:MAX_DERIVED_TERMS]
    stated = -abs(figure.value) if negative else figure.value
    for a, b in itertools.permutations(amounts, 2):
        x = a.absolute * (page_scale if a.scale == 1.0 else 1.0)
        y = b.absolute * (page_scale if b.scale == 1.0 else 1.0)
        if figure.unit == "%":
            options = [x / y * 100 if y else math.nan, (x - y) / abs(y) * 100 if y else math.nan]
            if any(_rounds_to(o, stated, figure.decimals) for o in options):
                return True
        elif figure.unit not in ("bp",):
            scale = figure.scale if figure.scale != 1.0 else page_scale
            if _rounds_to(abs(x - y) / scale, abs(figure.value), figure.decimals):
                return True
    return False


def _rounds_to(value: float, stated: float, decimals: int) -> bool:
    return math.isfinite(value) and math.isclose(round(value, decimals), stated, abs_tol=1e-9)
