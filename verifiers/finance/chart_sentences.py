"""How `chart_claims` splits a completion into claims it can decide, and reads what the
words say: clauses, comparisons, the order of "from ... to", and years not on the chart.

- **clauses**: sentences, split again at ";", ", and", "while", "whereas", "but", so that
  "Revenue was 151, and costs were 104" is two claims, one per series;
- **comparisons** (`comparison`): "Revenue in 2021 was lower than in 2022" and "Revenue
  was lower in 2019 than in 2020" compare the first category named with the one after
  "than", by meaning, not by the order a trend would read them; "Revenue in 2021 was
  higher than operating costs" compares two series in one category;
- **order** (`ordered`): "rose to 151 in 2021 from 132.5 in 2020" runs from 2020 to 2021:
  the category after "from" is the start, whatever the order of the sentence;
- **off the chart** (`off_chart`): a year the chart does not show ("Revenue in 2024 was
  190" on a chart of 2019-2023) is a claim the chart cannot support, so it fails (it is
  never dropped).

    >>> ordered(["2021", "2020"], "Revenue rose to 151 in 2021 from 132.5 in 2020")
    ['2020', '2021']
    >>> off_chart("Revenue in 2024 was 190", ["2019", "2020"])
    'year 2024 is not on the chart'
"""

from __future__ import annotations

import re

__all__ = ["LESS", "MORE", "clauses", "comparative", "off_chart", "ordered", "sentences"]

_SENTENCE = re.compile(r"(?<=[.;!?])\s+|\n+")
_CLAUSE = re.compile(r";|,\s*(?:and|but|while|whereas)\b|\b(?:while|whereas)\b", re.I)
MORE = r"higher|greater|more|larger|bigger|above|stronger"
LESS = r"lower|less|smaller|below|weaker"
_THAN = re.compile(rf"\b(?P<word>{MORE}|{LESS})\b(?P<between>[^.;]{{0,40}}?)\bthan\b", re.I)
_YEAR = re.compile(r"(?<![\w.,])(?:FY\s?)?((?:19|20)\d{2})(?![\w%])")


_FULL_STOP = re.compile(r"(?<=[.!?])\s+|\n+")


def sentences(text: str) -> list[str]:
    """The sentences of `text` up to a full stop (";" joins two clauses of one sentence, so
    "151 (approximately; I am not sure)" is one sentence whose words bear on both)."""
    return [s for s in _FULL_STOP.split(text) if s and s.strip()]


def clauses(text: str) -> list[str]:
    """The clauses of `text`, each read as at most one claim per series."""
    out = []
    for sentence in _SENTENCE.split(text):
        out += [c for c in _CLAUSE.split(sentence) if c and c.strip()]
    return out


_VERB = re.compile(
    r"\b(?:(?P<more>exceed(?:ed|s)?|surpass(?:ed|es)?|outpaced|outstripped|topped)|"
    r"(?P<less>trailed|lagged(?:\s+behind)?|fell\s+short\s+of))\b",
    re.I,
)


def comparative(clause: str) -> tuple[int, int] | None:
    """(+1 for "higher than" or "exceeded", -1 for "lower than" or "trailed", where the
    comparison ends), or None."""
    match = _THAN.search(clause)
    if match is None:
        verb = _VERB.search(clause)
        return None if verb is None else (1 if verb["more"] else -1, verb.end())
    sign = 1 if re.fullmatch(MORE, match["word"], re.I) else -1
    return sign, match.end()


def ordered(cats: list[str], clause: str) -> list[str]:
    """Two categories in the order a change runs: the one after "from" first."""
    if len(cats) != 2:
        return cats
    start = re.search(r"\bfrom\b", clause, re.I)
    if start is None:
        return cats
    after = [c for c in cats if clause.find(c, start.end()) >= 0]
    first = min(after, key=lambda c: clause.find(c, start.end())) if after else cats[0]
    return [first, next(c for c in cats if c != first)]


def off_chart(clause: str, categories: list[str]) -> str:
    """Why the clause speaks of a year the chart does not show, or ""."""
    if not any(_YEAR.fullmatch(c) for c in categories):
        return ""  # categories are not years: a year in the text is a date, not a category
    for match in _YEAR.finditer(clause):
        if match.group(1) not in categories:
            return f"year {match.group(1)} is not on the chart"
    return ""
