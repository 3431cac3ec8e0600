"""Choosing a page's tables from several extractors' candidates, by agreement.

Every extractor gets some tables wrong, and camelot's own ``accuracy`` figure measures how
well its parser agreed with itself, not whether the table is right. So candidates from
several extractors (`pdf.EXTRACTORS`) are grouped by overlapping bounding boxes, and per
group the candidate that agrees best with the others is kept:

    agreement(t) = mean over candidates u from other extractors of F1(relations(t), relations(u))

where relations are ICDAR 2013 adjacency relations (`metrics.adjacency_relations`). A group
needs candidates from at least ``min_support`` extractors (one extractor alone is not
evidence), and a candidate must be a table (at least two rows and two columns) to be
chosen; ties go to the candidate with fewer empty cells.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rewardsmith.verifiers.finance.metrics import prf, table_relations
from rewardsmith.verifiers.finance.tables import Cell, Table, split_stacked_rows
from rewardsmith.verifiers.finance.tidy import looks_like_prose, tidy

__all__ = ["ExtractedTable", "candidate_table", "choose_tables", "overlap"]


@dataclass(frozen=True)
class ExtractedTable:
    page: int
    bbox: tuple[float, float, float, float]
    """x0, top, x1, bottom in PDF points from the page's top left."""
    table: Table
    source: str
    support: int
    """How many extractors found a table here."""
    agreement: float
    pages: tuple[int, ...] = ()
    """Every page it covers, when merged across pages."""


def candidate_table(candidate: dict[str, Any]) -> Table:
    """A candidate's cells as a `Table`: spans where the extractor reported them (a spanning
    cell's text sits in its top-left slot), and rows that an extractor stacked into one
    (cells of k lines each) split, where no span crosses them."""
    spans = candidate.get("spans") or []
    grid = candidate["cells"]
    spanned = {r + dr for r, _, rs, _ in spans for dr in range(rs)}
    rows: list[list[Any]] = []
    new_index: dict[int, int] = {}
    for r, line in enumerate(grid):
        new_index[r] = len(rows)
        rows += [line] if r in spanned else split_stacked_rows([line])
    size = {(new_index[r], c): (rs, cs) for r, c, rs, cs in spans}
    covered = {
        (r + dr, c + dc)
        for (r, c), (rs, cs) in size.items()
        for dr in range(rs)
        for dc in range(cs)
        if dr or dc
    }
    cells = [
        tuple(
            Cell(" ".join(str(text).split()), *size.get((r, c), (1, 1)))
            for c, text in enumerate(line)
            if (r, c) not in covered
        )
        for r, line in enumerate(rows)
    ]
    return Table(tuple(cells))


RULED_FILL = 0.5
"""A ruled candidate with at least this share of non-empty cells is taken as drawn (a
chart's gridlines also make cells, nearly all empty)."""
CHART_MARKS = 3
"""A candidate holding this many chart marks (diagonal lines, curves, filled shapes) is
a chart with its labels, not a table."""


def choose_tables(
    candidates: Sequence[dict[str, Any]],
    page: int,
    min_support: int,
    marks: Sequence[Sequence[float]] = (),
) -> list[ExtractedTable]:
    """The page's tables: ruled tables as drawn, where their rules make a table; elsewhere
    the text-alignment candidates, grouped by overlap, the most agreed-on per group.
    `marks` are the page's chart marks (`page_layout.PageLayout.marks`)."""
    usable = [u for c in candidates if (u := _usable(c)) is not None]
    drawn = []
    for c in usable:
        group = [c, *_overlapping(c, usable)]
        if _as_drawn(c) and _support(group) >= min(min_support, 2):
            drawn.append(_chosen(c, page, group))
    rest = [
        c
        for c in usable
        if not _as_drawn(c)
        and not _marks_in(c["bbox"], marks)
        and not any(overlap(c["bbox"], t.bbox) > 0.5 for t in drawn)
    ]
    aligned = []
    for group in _groups(rest, min_support):
        if _support(group) >= min_support:
            best = max(group, key=lambda c: (_agreement(c, group), _fill(c["table"])))
            aligned.append(_chosen(best, page, group))
    return sorted(drawn + aligned, key=lambda t: t.bbox[1])


def _usable(c: dict[str, Any]) -> dict[str, Any] | None:
    """The candidate with its `Table` and relations, or None when it is no table."""
    if len(c["cells"]) < 2 or len(c["cells"][0]) < 2:
        return None
    table = candidate_table(c) if c["source"] == "ruled" else tidy(candidate_table(c))
    if not table.rows or looks_like_prose(table):
        return None
    return {**c, "table": table, "relations": table_relations(table)}


def _support(group: list[dict[str, Any]]) -> int:
    return len({c["source"] for c in group})


def _as_drawn(c: dict[str, Any]) -> bool:
    """A ruled candidate whose rules give every cell, most of them filled."""
    return c["source"] == "ruled" and not c.get("incomplete") and _fill(c["table"]) >= RULED_FILL


def _marks_in(bbox: Sequence[float], marks: Sequence[Sequence[float]]) -> bool:
    x0, top, x1, bottom = bbox
    inside = 0
    for m in marks:
        cx, cy = (m[0] + m[2]) / 2, (m[1] + m[3]) / 2
        inside += x0 <= cx <= x1 and top <= cy <= bottom
    return inside >= CHART_MARKS


def _overlapping(c: dict[str, Any], usable: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [u for u in usable if u is not c and overlap(c["bbox"], u["bbox"]) > 0.5]


def _chosen(best: dict[str, Any], page: int, group: list[dict[str, Any]]) -> ExtractedTable:
    x0, top, x1, bottom = best["bbox"]
    return ExtractedTable(
        page, (x0, top, x1, bottom), best["table"], best["source"],
        _support(group), _agreement(best, group), (page,),
    )  # fmt: skip


def _groups(usable: list[dict[str, Any]], min_support: int) -> list[list[dict[str, Any]]]:
    """Candidates of one table. Smallest first, each joins the group it overlaps. One that
    overlaps several groups either merged several tables (dropped, when each of them is
    supported on its own) or is the whole of a table that others split (the groups join)."""
    groups: list[list[dict[str, Any]]] = []
    spanners = []
    for c in sorted(usable, key=lambda c: _area(c["bbox"])):
        homes = [g for g in groups if any(overlap(c["bbox"], u["bbox"]) > 0.5 for u in g)]
        if not homes:
            groups.append([c])
        elif len(homes) == 1:
            homes[0].append(c)
        else:
            spanners.append((c, homes))
    for c, homes in spanners:
        homes = [g for g in homes if g in groups]
        if len(homes) > 1 and all(_support(g) >= min_support for g in homes):
            continue
        joined = [c, *(u for g in homes for u in g)]
        groups = [g for g in groups if g not in homes] + [joined]
    return groups


def _area(bbox: Sequence[float]) -> float:
    return (bbox[2] - bbox[0]) * (bbox[3] - bbox[1])


def _agreement(c: dict[str, Any], group: list[dict[str, Any]]) -> float:
    others = [u for u in group if u["source"] != c["source"]]
    if not others:
        return 0.0
    scores = []
    for u in others:
        a, b = c["relations"], u["relations"]
        scores.append(prf(sum((a & b).values()), sum(a.values()), sum(b.values())).f1)
    return sum(scores) / len(scores)


def _fill(table: Table) -> float:
    cells = [c for row in table.grid() for c in row]
    return sum(bool(c.strip()) for c in cells) / max(1, len(cells))


def overlap(a: Sequence[float], b: Sequence[float]) -> float:
    """Intersection over the smaller box's area."""
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    if w <= 0 or h <= 0:
        return 0.0
    smaller = min((a[2] - a[0]) * (a[3] - a[1]), (b[2] - b[0]) * (b[3] - b[1]))
    return w * h / smaller if smaller > 0 else 0.0
