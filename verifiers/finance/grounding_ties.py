"""What ties a cited figure to the page beyond its digits (for `grounding`): the year it
is said to be for, the figures it is derived from, and claims written so that no digit
can be checked.

- **Years** (`column_years`, `cited_year`, `leading_year`): a page line of years ("Item 2024 2023 %
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

from rewardsmith.verifiers.finance.figures import Figure, is_year
from rewardsmith.verifiers.finance.quantities import DOWN_WORDS, UP_WORDS

__all__ = [
    "DERIVING",
    "PRIOR_LABEL",
    "YEAR_AS_AMOUNT",
    "cited_year",
    "column_years",
    "derived",
    "figure_years",
    "leading_year",
    "move_to_level",
    "named_years",
    "unchecked_claims",
]

_YEAR = re.compile(r"(?<![\w.,])(?:FY\s?)?((?:19|20)\d{2})(?![\w%,])")
_AFTER_YEAR = re.compile(
    r"^\s*(?:in|for|during|of)?\s*\(?(?:fiscal\s+(?:year\s+)?)?(?:FY\s?)?"
    r"((?:19|20)\d{2})\b(?!\s*:)",
    re.I,
)
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
QUANTITY_NOUN = re.compile(
    r"\b(?:revenues?|sales|turnover|income|profits?|earnings|ebitda|margin|assets|"
    r"liabilities|equity|funds|debt|borrowings|cash|expenses?|costs?|receivables|payables|"
    r"dividends?|capex|capital)\b",
    re.I,
)
"""Nouns of a financial quantity: a claim naming one must name a row the page prints."""
_SAME_QUANTITY = {
    "revenues": "revenue", "sales": "revenue", "turnover": "revenue",
    "profit": "income", "profits": "income", "earnings": "income",
    "expense": "cost", "expenses": "cost", "costs": "cost",
    "borrowings": "debt", "dividends": "dividend", "capex": "capital",
}  # fmt: skip
"""The usual names of one quantity, by one of them: "turnover" is revenue, "borrowings" debt."""


def quantities_named(words: frozenset[str] | set[str]) -> set[str]:
    """The quantities `words` (lower case) name, each by one name (`_SAME_QUANTITY`)."""
    return {_SAME_QUANTITY.get(w, w) for w in words if QUANTITY_NOUN.fullmatch(w)}


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


_NAMED_YEAR = re.compile(r"(?<![\w.,])(?:FY\s?)?((?:19|20)\d{2})(?:[AEae](?=\W|$))?(?![\w%]|,\d)")
PRIOR_LABEL = re.compile(
    r"\b(?:PY|prior[- ]years?|previous[- ]years?|last[- ]years?|the\s+year\s+before)(?:'s)?"
    r"(?:\s+(?:figure|amount|value))?\s*:?\s*(?:[$€£¥]\s?)?$",
    re.I,
)
"""A figure labelled the prior year's in words ("(PY: 150,239)", "(last year 150,239)")."""
_BASE_YEAR = re.compile(
    r"\b(?:compared\s+(?:to|with)|relative\s+to|from|vs\.?|versus|than|since|over|on|"
    r"against)\s+(?:fiscal\s+(?:year\s+)?)?(?:FY\s?)?(?:19|20)\d{2}\b",
    re.I,
)
"""A year named as the base of a comparison ("compared to 2023", "down from 2023"): the
year another figure is for, not the one beside it."""


def named_years(text: str) -> set[int]:
    """The years `text` names ("What was 2024 revenue?", "FY2024", "In 2024, ...")."""
    return {int(y) for y in _NAMED_YEAR.findall(text)}


_SENTENCE_END = re.compile(r"[.!?;](?=\s)|\n")


def figure_years(text: str, spans: list[tuple[Figure, int, int]]) -> list[int | None]:
    """The year each figure of `text` is said to be for, None where none is written: the
    year just after it ("122,445 in 2024", "(2024)", "for fiscal 2024"), else the
    one year named between it and the figure before it in its sentence ("2023:
    150,239", "In 2023 it was 150,239"), a comparison's base ("compared to 2023",
    "down from 2023") aside. A year already taken by the figure before ("150,239 in
    2023 and 122,445") ties nothing else, and no year carries over to a later
    figure, so a figure with no year written beside it has none."""
    years: list[int | None] = []
    previous_end = 0
    for _, start, end in spans:
        opened = max((m.end() for m in _SENTENCE_END.finditer(text, 0, start)), default=0)
        before = text[max(opened, previous_end) : start]
        after = _AFTER_YEAR.match(text[end : end + 32])
        named = named_years(_BASE_YEAR.sub(" ", before))
        if after:
            years.append(int(after.group(1)))
            previous_end = end + after.end()
        else:
            years.append(named.pop() if len(named) == 1 else None)
            previous_end = end
    return years


def leading_year(first_clause: str) -> int | None:
    """The year a sentence opens with, for all its figures ("In 2024, total assets were
    28,147", "FY2024 total assets: 28,147", "Total assets (2024): 28,147"): one year in the
    first clause, which states no figure of its own."""
    years = set(_YEAR.findall(first_clause))
    rest = _YEAR.sub(" ", first_clause)
    return int(years.pop()) if len(years) == 1 and not re.search(r"\d", rest) else None


_TO = re.compile(r"(?<!\bup )(?<!\bequal )\bto\s*(?:[$€£¥]\s?)?$", re.I)
_FROM = re.compile(r"\bfrom\s*(?:[$€£¥]\s?)?$", re.I)
_YEAR_WORDS = re.compile(r"\(?\b(?:in|for)?\s*(?:FY\s?)?(?:19|20)\d{2}\)?|,", re.I)
_MOVE = re.compile(rf"\b(?:(?P<up>{UP_WORDS})|(?P<down>{DOWN_WORDS}))\b(?!\s+to\b\s*\d)", re.I)


def move_to_level(
    text: str, spans: list[tuple[Figure, int, int]], i: int
) -> tuple[int, Figure | None]:
    """Whether figure `i` of `text` is the level a quantity moved to ("rose to 122,445":
    +1, "fell from 150,239 to 122,445": -1 and 150,239, "went from X to Y": 0 and X,
    "decreased to Y in 2024 from X in 2023"), as (direction, the level it moved from)."""
    amounts = [k for k, (f, _, _) in enumerate(spans) if not is_year(f)]
    if i not in amounts:
        return 0, None
    at = amounts.index(i)
    start = spans[i][1]
    before_end = spans[amounts[at - 1]][2] if at else 0
    if not _TO.search(text[before_end:start]):
        return 0, None
    move = [m for m in _MOVE.finditer(text, 0, start)]
    direction = (1 if move[-1].group("up") else -1) if move else 0
    return direction, _moved_from(text, spans, amounts, at)


def _moved_from(
    text: str, spans: list[tuple[Figure, int, int]], amounts: list[int], at: int
) -> Figure | None:
    """The amount beside amount `at` written as where a move started ("from X to")."""
    if at:
        earlier_start = spans[amounts[at - 1]][1]
        opened = spans[amounts[at - 2]][2] if at > 1 else 0
        gap = _YEAR_WORDS.sub(" ", text[spans[amounts[at - 1]][2] : spans[amounts[at]][1]])
        if _FROM.search(text[opened:earlier_start]) and re.fullmatch(
            r"\s*to\s*(?:[$€£¥]\s?)?", gap
        ):
            return spans[amounts[at - 1]][0]
    if at + 1 < len(amounts):
        gap = text[spans[amounts[at]][2] : spans[amounts[at + 1]][1]]
        if _FROM.search(_YEAR_WORDS.sub(" ", gap).strip()) and len(gap) < 40:
            return spans[amounts[at + 1]][0]
    return None


def unchecked_claims(sentence: str) -> list[str]:
    """Spans of `sentence` that claim an amount no printed digit can check."""
    return [m.group(0) for m in _UNCHECKED.finditer(sentence)][:10]


Term = tuple[frozenset[str], Figure, int | None]
"""A printed figure as a term: (its row label, the figure, its column year)."""


def derived(figure: Figure, negative: bool, terms: list[Term], page_scale: float) -> bool:
    """Is `figure` the change of one named row between its two years (an amount, or a
    growth in %, with the sign its words give), or in % the ratio of two named rows in one
    year, at the precision written? `terms` are the figures of the rows the sentence
    names (one or two rows); a figure of one significant digit derives nothing."""
    rows = {label for label, _, _ in terms}
    if not 1 <= len(rows) <= 2 or _significant(figure) < 2:
        return False
    amounts = [(r, f, y) for r, f, y in terms if f.unit not in ("%", "bp") and y][
        :MAX_DERIVED_TERMS
    ]
    stated = -abs(figure.value) if negative else figure.value
    scale = figure.scale if figure.scale != 1.0 else page_scale

    def value(f: Figure) -> float:
        return f.absolute * (page_scale if f.scale == 1.0 else 1.0)

    for (ra, a, ya), (rb, b, yb) in itertools.permutations(amounts, 2):
        if ra == rb and ya is not None and yb is not None and ya > yb:  # new a, old b
            change = value(a) - value(b)
            if figure.unit == "%" and value(b):
                if _rounds_to(change / abs(value(b)) * 100, stated, figure.decimals):
                    return True
            elif figure.unit not in ("%", "bp") and _rounds_to(
                change / scale, stated, figure.decimals
            ):
                return True
        share = value(a) / value(b) * 100 if value(b) else math.nan
        if (
            ra != rb
            and ya == yb
            and figure.unit == "%"
            and _rounds_to(share, figure.value, figure.decimals)
        ):
            return True
    return False


def _significant(figure: Figure) -> int:
    digits = round(abs(figure.value) * 10**figure.decimals)
    return len(str(digits)) if digits else 0


def _rounds_to(value: float, stated: float, decimals: int) -> bool:
    return math.isfinite(value) and math.isclose(round(value, decimals), stated, abs_tol=1e-9)
