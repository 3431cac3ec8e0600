"""Cleaning the tables that text-alignment extractors return.

camelot's ``stream`` and ``network`` find a table from how its words line up, so they see
each printed line as a row and take in the text around the table. `tidy` undoes the
three common mistakes:

- caption and note lines glued to the table (a first or last row holding one cell of
  prose or a caption: "Table 8.21 - Leading brands", "Source: Eurostat") are cut off; a
  short label stays (a section heading such as "Current liabilities:");
- a label that wraps over several lines becomes one label: a line holding only a label
  that continues the row above ("(Douwe Egberts)", lower case) joins it, and label-only
  lines next to a row of figures with no label of its own become that row's label;
- rows and columns left empty are dropped.

`looks_like_prose` rejects what is not a table at all: paragraphs (most cells long
sentences), bulleted lists (a column of bullets), a single column of text, and lists
laid out in two columns (markers, items, headings between them: no row holds two
cells of content).
"""

from __future__ import annotations

import re

from rewardsmith.verifiers.finance.tables import Cell, Table

__all__ = ["looks_like_prose", "tidy"]

_CAPTION = re.compile(r"^\s*(table|figure|chart|graph|source|sources|note|notes)\b|^\s*[*(†]")
_BULLET = re.compile(r"^[•▪◦●○■□o·*]$")  # not dashes: a dash is a printed zero
_MARKER = re.compile(r"^(?:[•▪◦●○■□·*]|\(?(?:\d{1,3}|[a-zA-Z]|[ivxIVX]{1,4})[.)])$")
"""A list item's bullet or enumerator ("•", "1.", "a)", "(iv)")."""
LONG_TEXT = 45
"""A one-cell row longer than this is prose, not a table row."""


def _filled(row: list[str]) -> list[int]:
    return [i for i, c in enumerate(row) if c.strip()]


def _is_caption(row: list[str]) -> bool:
    """A one-cell row of prose or a caption; a short label ("Current liabilities:") is a
    section heading of the table and stays."""
    cells = _filled(row)
    if len(cells) != 1:
        return False
    text = row[cells[0]].strip()
    return bool(_CAPTION.match(text)) or len(text) > LONG_TEXT


def _trim(grid: list[list[str]]) -> list[list[str]]:
    multi = [i for i, r in enumerate(grid) if len(_filled(r)) >= 2]
    if not multi:
        return grid
    start, end = multi[0], multi[-1] + 1
    while start > 0 and not _is_caption(grid[start - 1]) and _filled(grid[start - 1]):
        start -= 1  # a spanning header line above the first full row stays
    tail = end
    while tail < len(grid) and not _is_caption(grid[tail]) and len(_filled(grid[tail])) == 1:
        tail += 1  # a last row whose other cells are empty is still a row
    return grid[start:tail]


def _continues_label(row: list[str]) -> bool:
    text = row[0].strip()
    return _filled(row) == [0] and bool(text) and (text[0].islower() or text[0] in "(&/")


def _join_wrapped(grid: list[list[str]]) -> list[list[str]]:
    out: list[list[str]] = []
    pending: list[str] = []  # label-only lines waiting for a row of figures without label
    for row in grid:
        row = list(row)
        only_label = _filled(row) == [0]
        if only_label and out and _continues_label(row) and not pending and out[-1][0].strip():
            out[-1][0] = f"{out[-1][0].strip()} {row[0].strip()}"
            continue
        if only_label:
            pending.append(row[0].strip())
            continue
        if pending and not row[0].strip() and _filled(row):
            row[0] = " ".join(pending)
        else:
            out += [[p] + [""] * (len(row) - 1) for p in pending]
        pending = []
        out.append(row)
    width = len(grid[0]) if grid else 0
    return out + [[p] + [""] * (width - 1) for p in pending]


def _drop_empty(grid: list[list[str]]) -> list[list[str]]:
    rows = [r for r in grid if _filled(r)]
    if not rows:
        return []
    keep = [c for c in range(len(rows[0])) if any(r[c].strip() for r in rows)]
    return [[r[c] for c in keep] for r in rows]


def tidy(table: Table) -> Table:
    """The table without glued captions, with wrapped labels joined (see module doc)."""
    grid = [[" ".join(c.split()) for c in row] for row in table.grid()]
    grid = _drop_empty(_join_wrapped(_trim(_drop_empty(grid))))
    return Table(tuple(tuple(Cell(c) for c in row) for row in grid))


def _contents(row: list[str]) -> list[str]:
    """A row's filled cells that are more than a list item's marker."""
    return [t for t in (c.strip() for c in row) if t and not _MARKER.match(t)]


def looks_like_prose(table: Table) -> bool:
    """True for paragraphs, bulleted lists and single columns of text."""
    grid = table.grid()
    if not grid:
        return True
    width = len(grid[0])
    columns = [[r[c].strip() for r in grid if r[c].strip()] for c in range(width)]
    if sum(len(col) >= 2 for col in columns) < 2:
        return True
    if any(col and all(_BULLET.match(t) for t in col) for col in columns):
        return True
    if not any(len(_contents(row)) >= 2 for row in grid):
        return True  # a list, or headings and paragraphs: no row pairs a label and a value
    cells = [t for col in columns for t in col]
    return sum(len(t) > 60 for t in cells) * 2 >= len(cells)
