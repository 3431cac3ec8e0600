"""Tables drawn with ruling lines, found from the page's vector graphics.

A ruled table is a grid of cells whose borders the PDF draws as lines or thin rectangles.
camelot's ``lattice`` finds them by rendering the page to an image and looking for lines
with OpenCV, which costs several times a page parse; the lines are already in the PDF's
drawing operations, so this reads them there (as pdfplumber's ``lines`` strategy does):

1. ruling segments are snapped (positions within `SNAP` points become one) and joined
   (collinear pieces with gaps up to `SNAP`);
2. every crossing of a horizontal and a vertical segment is a corner;
3. a cell is the smallest rectangle whose four corners exist and whose four sides lie on
   segments; cells sharing corners form one table;
4. the table's row and column boundaries are the distinct cell edges, so a cell that
   covers several of them spans rows or columns;
5. each word goes to the cell holding its centre, lines kept apart (``\n``); a spanning
   cell whose words stand in separate columns with column-wide gaps between them is a
   row whose column rules are missing, and is split by its words; one whose text crosses
   boundaries in some other way, below the header, marks the table ``incomplete`` (its
   drawing does not give its structure).

Input is one `PageLayout`; output is candidate tables as plain data.
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from typing import Any

from rewardsmith.verifiers.finance.figures import is_data_cell
from rewardsmith.verifiers.finance.page_layout import PageLayout

__all__ = ["SNAP", "ruled_tables"]

SNAP = 4.0
"""Points within which two rule positions are the same, and a gap still joins a rule."""
MIN_CELLS = 4


def ruled_tables(page: PageLayout) -> list[dict[str, Any]]:
    """Candidate tables (``source``, ``bbox``, ``cells``, ``spans``) from the page's rules."""
    horizontal = _join(_snap(page.horizontal))
    vertical = _join(_snap(page.vertical))
    if len(horizontal) < 2 or len(vertical) < 2:
        return []
    corners = _corners(horizontal, vertical)
    cells = _cells(corners)
    return [
        table
        for group in _groups(cells)
        if len(group) >= MIN_CELLS and (table := _table(group, page)) is not None
    ]


Segment = tuple[float, float, float]  # position, start, end


def _snap(segments: list[Segment]) -> list[Segment]:
    """Positions closer than SNAP become their cluster's mean."""
    out: list[Segment] = []
    cluster: list[Segment] = []
    for seg in sorted(segments):
        if cluster and seg[0] - cluster[-1][0] > SNAP:
            out += _at_mean(cluster)
            cluster = []
        cluster.append(seg)
    return out + _at_mean(cluster)


def _at_mean(cluster: list[Segment]) -> list[Segment]:
    if not cluster:
        return []
    mean = sum(s[0] for s in cluster) / len(cluster)
    return [(mean, min(a, b), max(a, b)) for _, a, b in cluster]


def _join(segments: list[Segment]) -> list[Segment]:
    """Collinear segments that touch or nearly touch become one."""
    joined: list[Segment] = []
    for pos, start, end in sorted(segments):
        if joined and joined[-1][0] == pos and start <= joined[-1][2] + SNAP:
            joined[-1] = (pos, joined[-1][1], max(end, joined[-1][2]))
        else:
            joined.append((pos, start, end))
    return joined


Corner = tuple[float, float]  # x, y


def _corners(horizontal: list[Segment], vertical: list[Segment]) -> dict[Corner, tuple[int, int]]:
    """Every crossing, with the indices of its horizontal and vertical segment."""
    corners: dict[Corner, tuple[int, int]] = {}
    for i, (y, x0, x1) in enumerate(horizontal):
        for j, (x, top, bottom) in enumerate(vertical):
            if x0 - SNAP <= x <= x1 + SNAP and top - SNAP <= y <= bottom + SNAP:
                corners[(x, y)] = (i, j)
    return corners


Cell = tuple[float, float, float, float]  # x0, top, x1, bottom


def _cells(corners: dict[Corner, tuple[int, int]]) -> list[Cell]:
    """For each corner, the smallest rectangle to its lower right bounded by rules."""
    by_row: dict[int, list[float]] = defaultdict(list)  # horizontal segment -> xs on it
    by_col: dict[int, list[float]] = defaultdict(list)  # vertical segment -> ys on it
    for (x, y), (h, v) in corners.items():
        by_row[h].append(x)
        by_col[v].append(y)
    for values in (*by_row.values(), *by_col.values()):
        values.sort()
    cells: list[Cell] = []
    for (x, y), (h, v) in sorted(corners.items(), key=lambda c: (c[0][1], c[0][0])):
        rights = [r for r in by_row[h] if r > x]
        belows = [b for b in by_col[v] if b > y]
        cell = _first_closed(corners, x, y, h, v, rights, belows)
        if cell is not None:
            cells.append(cell)
    return cells


def _first_closed(
    corners: dict[Corner, tuple[int, int]],
    x: float,
    y: float,
    h: int,
    v: int,
    rights: list[float],
    belows: list[float],
) -> Cell | None:
    for below in belows:
        bottom_h = corners[(x, below)][0]
        for right in rights:
            far = corners.get((right, below))
            if far is None:
                continue
            right_v = corners[(right, y)][1]
            if far == (bottom_h, right_v):  # bottom and right sides lie on rules too
                return (x, y, right, below)
    return None


def _groups(cells: list[Cell]) -> list[list[Cell]]:
    """Cells that share a corner belong to one table (union-find on corners)."""
    parent = list(range(len(cells)))

    def find(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    owner: dict[Corner, int] = {}
    for i, (x0, top, x1, bottom) in enumerate(cells):
        for corner in ((x0, top), (x1, top), (x0, bottom), (x1, bottom)):
            if corner in owner:
                parent[find(i)] = find(owner[corner])
            else:
                owner[corner] = i
    groups: dict[int, list[Cell]] = defaultdict(list)
    for i, cell in enumerate(cells):
        groups[find(i)].append(cell)
    return list(groups.values())


Word = tuple[str, float, float, float, float]  # text, x0, top, x1, bottom


def _table(cells: list[Cell], page: PageLayout) -> dict[str, Any] | None:
    xs = sorted({c[0] for c in cells} | {c[2] for c in cells})
    ys = sorted({c[1] for c in cells} | {c[3] for c in cells})
    if len(xs) < 3 or len(ys) < 3:
        return None
    col = {x: i for i, x in enumerate(xs)}
    row = {y: i for i, y in enumerate(ys)}
    slot: dict[tuple[int, int], Cell] = {}  # every grid slot -> the cell covering it
    for cell in cells:
        for r in range(row[cell[1]], row[cell[3]]):
            for c in range(col[cell[0]], col[cell[2]]):
                slot[(r, c)] = cell
    words: dict[Cell, list[Word]] = defaultdict(list)
    for word in page.words:
        _, x0, top, x1, bottom = word
        r = bisect.bisect(ys, (top + bottom) / 2) - 1
        c = bisect.bisect(xs, (x0 + x1) / 2) - 1
        if (r, c) in slot:
            words[slot[(r, c)]].append(word)
    grid = [[""] * (len(xs) - 1) for _ in range(len(ys) - 1)]
    spans: list[list[int]] = []
    unsplit_rows = []
    for cell in cells:
        r0, c0, r1, c1 = row[cell[1]], col[cell[0]], row[cell[3]], col[cell[2]]
        lines = _lines(words[cell])
        split = _split_by_columns(lines, xs, c0, c1) if c1 - c0 > 1 else None
        if split is None:
            grid[r0][c0] = "\n".join(" ".join(w[0] for w in line) for line in lines)
            if r1 - r0 > 1 or c1 - c0 > 1:
                spans.append([r0, c0, r1 - r0, c1 - c0])
            full_width = c1 - c0 == len(xs) - 1  # a title or a note row
            if c1 - c0 > 1 and not full_width and _columns_of(words[cell], xs) > 1:
                unsplit_rows.append(r0)
            continue
        for c, text in split.items():  # a row whose column rules are missing: words decide
            grid[r0][c] = text
            if r1 - r0 > 1:
                spans.append([r0, c, r1 - r0, 1])
    # A header may group sub-columns without rules; a body row that reads across columns
    # as one text means the drawing does not give this table's structure.
    body = next((r for r, line in enumerate(grid) if any(map(is_data_cell, line[1:]))), 0)
    return {
        "source": "ruled",
        "bbox": [xs[0], ys[0], xs[-1], ys[-1]],
        "cells": grid,
        "spans": spans,
        "incomplete": any(r >= body for r in unsplit_rows),
    }


def _lines(words: list[Word]) -> list[list[Word]]:
    """A cell's words in printed lines, top to bottom, each left to right."""
    lines: list[list[Word]] = []
    for word in sorted(words, key=lambda w: ((w[2] + w[4]) / 2, w[1])):
        middle = (word[2] + word[4]) / 2
        if lines and lines[-1][0][2] <= middle <= lines[-1][0][4]:
            lines[-1].append(word)
        else:
            lines.append([word])
    return [sorted(line, key=lambda w: w[1]) for line in lines]


def _columns_of(words: list[Word], xs: list[float]) -> int:
    return len({bisect.bisect(xs, (w[1] + w[3]) / 2) for w in words})


def _split_by_columns(
    lines: list[list[Word]], xs: list[float], c0: int, c1: int
) -> dict[int, str] | None:
    """A spanning cell's text split at the column boundaries it crosses, when its words
    stand in separate columns with column-wide gaps between them (rows ruled, columns
    not); None when it reads as one text (a spanning header: word gaps only)."""
    out: dict[int, list[str]] = defaultdict(list)
    for line in lines:
        phrases: list[list[Word]] = []
        for word in line:
            gap = word[1] - phrases[-1][-1][3] if phrases else 0.0
            if phrases and gap < 0.6 * (word[4] - word[2]):  # a word space, not a column gap
                phrases[-1].append(word)
            else:
                phrases.append([word])
        used = set()
        for phrase in phrases:
            first = bisect.bisect(xs, phrase[0][1]) - 1
            last = bisect.bisect(xs, phrase[-1][3] - 0.01) - 1
            if first != last or first in used or not c0 <= first < c1:
                return None  # a phrase crosses a boundary, or two share a column
            used.add(first)
            out[first].append(" ".join(w[0] for w in phrase))
    if len(out) < 2:
        return None
    return {c: "\n".join(texts) for c, texts in out.items()}
