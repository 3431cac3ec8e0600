"""Which rows of a table are its header, and what each column is called.

A statement as printed (or as an extractor returns it) rarely starts with one header row:

    Contoso plc - Consolidated Balance Sheet ($ in millions)     <- a title row
    ($ in millions)                                              <- a units row
                          Year ended December 31                 <- a spanning header
                          2024            2023                   <- the bottom header level
    Revenue               1,234           1,111                  <- the body starts here

`detect_header` finds them: the body starts at the first row holding a figure past the stub
columns (the leading columns of row labels); the rows above it are title rows (one text,
in the stub column or naming a statement or table), units rows ("$ in millions"), or
header levels. A header cell left blank beside a spanning one takes its text (a spanning
header is written once, in its first column). Each column's key is the shortest run of
levels, from the bottom up, that tells the columns apart (so "2024" under "Year ended
December 31" is keyed "2024"); a column that names exactly one year is keyed by it
("FY2024", "FY24", "Dec 31, 2024" and "2024" agree), beside columns that name none ("%
change"), wherever the keys stay distinct.

    >>> grid = [["Contoso plc - Balance Sheet ($ in millions)", "", ""],
    ...         ["", "Year ended December 31", ""], ["", "FY2024", "FY2023"],
    ...         ["Cash", "1,234", "1,111"]]
    >>> h = detect_header(grid)
    >>> h.title_rows, h.header_rows, h.body_start, h.column_keys, h.scale
    ((0,), (1, 2), 3, ('', '2024', '2023'), 1000000.0)
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from rewardsmith.verifiers.finance.figures import is_data_cell, scale_from_header
from rewardsmith.verifiers.finance.quantities import fiscal_year

__all__ = ["HeaderLayout", "detect_header"]

_YEAR = re.compile(r"(?<!\d)(19\d\d|20\d\d)(?!\d)")
_TITLE_WORDS = re.compile(
    r"\b(statements?|balance sheets?|income|cash flows?|consolidated|report|schedule|"
    r"table|figure|exhibit|plc|inc|ltd|llc|group|corp|company|continued)\b",
    re.IGNORECASE,
)
_UNITS_ONLY = re.compile(
    r"^\W*(?:(?:amounts?|figures?)\s+)?(?:in\s+)?(?:[$€£]|usd|eur|gbp)?\s*(?:in\s+)?"
    r"(?:thousands?|millions?|billions?|'?000s?|mn|bn|m|k)(?:\s+of\s+\w+)?"
    r"(?:\s*(?:[$€£]|usd|eur|gbp|dollars|euros?|pounds))?(?:,?\s*except[^)]*)?\W*$",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class HeaderLayout:
    """Where the header of a table ends and what its columns are called."""

    title_rows: tuple[int, ...]
    unit_rows: tuple[int, ...]
    header_rows: tuple[int, ...]
    """Header levels, top to bottom."""
    body_start: int
    stub_columns: int
    """Leading columns that label the rows (no figures in the body)."""
    column_keys: tuple[str, ...]
    scale: float
    """The multiplier the title or units rows declare (1 when none)."""

    def evidence(self) -> dict[str, Any]:
        return {
            "title_rows": list(self.title_rows),
            "unit_rows": list(self.unit_rows),
            "header_rows": list(self.header_rows),
            "body_start": self.body_start,
            "stub_columns": self.stub_columns,
            "column_keys": list(self.column_keys),
        }


def _filled(row: list[str]) -> list[str]:
    return [c.strip() for c in row if c.strip()]


def _first_data_row(grid: list[list[str]], stub: int) -> int:
    for i, row in enumerate(grid):
        if any(is_data_cell(c) for c in row[stub:]):
            return i
    return len(grid)


def _stub_columns(grid: list[list[str]], body_start: int) -> int:
    """Leading columns with no figure in any body row (at least 0, at most width - 1)."""
    width = len(grid[0]) if grid else 0
    body = grid[body_start:] or grid
    stub = 0
    while stub < width - 1 and not any(stub < len(r) and is_data_cell(r[stub]) for r in body):
        stub += 1
    return stub


def _is_title(row: list[str], stub: int) -> bool:
    texts = set(_filled(row))
    if len(texts) != 1:
        return False
    text = texts.pop()
    in_stub = any(c.strip() for c in row[: max(stub, 1)])
    return in_stub or bool(_TITLE_WORDS.search(text)) or len(row) == 1


def _stub_only(row: list[str], stub: int) -> bool:
    return not any(c.strip() for c in row[max(stub, 1) :])


def _is_units(row: list[str]) -> bool:
    texts = _filled(row)
    return len(set(texts)) == 1 and bool(_UNITS_ONLY.match(texts[0]))


def detect_header(grid: list[list[str]]) -> HeaderLayout:
    """The title, units and header rows of `grid`, its stub columns and column keys."""
    if not grid or not grid[0]:
        return HeaderLayout((), (), (), 0, 0, (), 1.0)
    width = max(len(r) for r in grid)
    grid = [list(r) + [""] * (width - len(r)) for r in grid]
    guess = _stub_columns(grid, _first_data_row(grid, 1 if width > 1 else 0))
    body_start = _first_data_row(grid, guess)
    stub = _stub_columns(grid, body_start)
    if body_start == len(grid):  # no figures at all: a text table, header on top
        body_start = 1 if len(grid) > 1 else 0
    titles: list[int] = []
    units: list[int] = []
    levels: list[int] = []
    for i in range(body_start):
        row = grid[i]
        if not _filled(row):
            continue
        if _is_units(row):
            units.append(i)
        elif not levels and _is_title(row, stub):
            titles.append(i)
        else:
            levels.append(i)
    # Label-only rows under the column headers open the body (a section heading,
    # "Non-current assets"): they are not header levels.
    spanning = [i for i in levels if not _stub_only(grid[i], stub)]
    while spanning and levels[-1] > spanning[-1]:
        body_start = levels.pop()
    declared = " ".join(" ".join(grid[i]) for i in (*titles, *units))
    keys = _column_keys([grid[i] for i in levels], stub, width)
    return HeaderLayout(
        tuple(titles), tuple(units), tuple(levels), body_start, stub, keys,
        scale_from_header(declared) if declared else 1.0,
    )  # fmt: skip


def _spread(row: list[str], stub: int) -> list[str]:
    """A spanning header written once, in its first column, fills the blanks after it."""
    out, current = list(row), ""
    for c in range(stub, len(row)):
        if row[c].strip():
            current = row[c].strip()
        else:
            out[c] = current
    return out


def _column_keys(levels: list[list[str]], stub: int, width: int) -> tuple[str, ...]:
    if not levels:
        return ("",) * width
    spread = [_spread(r, stub) for r in levels[:-1]] + [levels[-1]]
    columns = [[_norm(r[c]) for r in spread] for c in range(width)]
    data = range(stub, width)
    years = [_years(" ".join(columns[c])) for c in data]
    if all(len(y) == 1 for y in years) and len({y[0] for y in years}) == len(years):
        return tuple(
            [" / ".join(x for x in columns[c] if x) for c in range(stub)] + [y[0] for y in years]
        )
    for depth in range(1, len(levels) + 1):
        keys = [" / ".join(x for x in columns[c][-depth:] if x) for c in range(width)]
        if len({keys[c] for c in data}) == len(data):
            break
    # A column that names one year is keyed by it beside columns that name none ("FY24",
    # "Dec 31, 2024" beside "% change"), where the keys stay distinct.
    yearly = list(keys)
    for c, found in zip(data, years, strict=True):
        if len(found) == 1:
            yearly[c] = found[0]
    if len({yearly[c] for c in data}) == len(data):
        return tuple(yearly)
    return tuple(keys)


def _years(text: str) -> list[str]:
    """The distinct years a header names ("2024", "FY2024", "Dec 31, 2024", and the two-digit
    "FY24", "FY'24"), in order."""
    found = list(dict.fromkeys(_YEAR.findall(text)))
    if not found and (year := fiscal_year(text)) is not None:
        found = [str(year)]
    return found


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()
