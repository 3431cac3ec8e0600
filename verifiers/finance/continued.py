"""Tables that run over a page break, joined back into one.

A long statement printed over two pages comes out of any extractor as two tables: the
first ends at the foot of page n, the second opens page n+1, usually under a caption that
says so ("Revenue by region (continued)") and with the header repeated. The second table
continues the first when it is the first table on the next page, has as many columns, and

- its caption (the text just above it, or its own title row) says "continued" or repeats
  the first table's caption; or
- it repeats the first table's header rows; or
- it has no caption of its own and opens with a data row.

A caption of its own that differs ("Table 5: Cash flows") starts a new table. When joined,
the second part's title rows and repeated header rows are dropped.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from rewardsmith.verifiers.finance.choose import ExtractedTable
from rewardsmith.verifiers.finance.headers import detect_header
from rewardsmith.verifiers.finance.tables import Table

__all__ = ["caption_of", "merge_continued"]

Line = Sequence[object]  # (text, x0, top, x1, bottom)
CAPTION_GAP = 40.0
"""A caption sits at most this many points above its table."""
_CONTINUED = re.compile(r"\(?\b(continued|cont'?d|cont\.)\)?", re.IGNORECASE)


def caption_of(table: ExtractedTable, lines: Sequence[Line]) -> str:
    """The text printed just above the table (up to two lines), and its own title rows.

    An extractor's box may take the caption in while its cells leave it out, so a line
    near the top edge that is none of the table's cells counts as above it."""
    x0, top, x1, _ = table.bbox
    cells = {" ".join(c.split()).casefold() for row in table.table.grid() for c in row}
    above = [
        line
        for line in lines
        if top - CAPTION_GAP <= float(line[4]) <= top + CAPTION_GAP  # type: ignore[arg-type]
        and float(line[1]) < x1  # type: ignore[arg-type]
        and float(line[3]) > x0  # type: ignore[arg-type]
        and " ".join(str(line[0]).split()).casefold() not in cells
        and not any(" ".join(str(line[0]).split()).casefold() in c for c in cells if c)
    ]
    above.sort(key=lambda line: float(line[2]))  # type: ignore[arg-type]
    text = " ".join(str(line[0]) for line in above[-2:])
    header = detect_header(table.table.grid())
    titles = " ".join(" ".join(table.table.grid()[i]) for i in header.title_rows)
    return " ".join(f"{text} {titles}".split())


def _base(caption: str) -> str:
    return re.sub(r"[^a-z0-9]+", " ", _CONTINUED.sub("", caption).casefold()).strip()


def merge_continued(
    tables: list[ExtractedTable], lines: dict[int, Sequence[Line]] | None = None
) -> list[ExtractedTable]:
    """Join each table that continues the last table of the page before (see module doc)."""
    lines = lines or {}
    merged: list[ExtractedTable] = []
    captions: list[str] = []
    for t in sorted(tables, key=lambda t: (t.page, t.bbox[1])):
        caption = caption_of(t, lines.get(t.page, ()))
        prev = merged[-1] if merged else None
        if prev is not None and _continues(prev, captions[-1], t, caption, merged):
            merged[-1] = _join(prev, t)
        else:
            merged.append(t)
            captions.append(caption)
    return merged


def _continues(
    prev: ExtractedTable,
    prev_caption: str,
    t: ExtractedTable,
    caption: str,
    merged: list[ExtractedTable],
) -> bool:
    first_on_page = all(m.page != t.page for m in merged)
    if not (first_on_page and t.page == prev.pages[-1] + 1 and _width(prev) == _width(t)):
        return False
    if _CONTINUED.search(caption) or (caption and _base(caption) == _base(prev_caption)):
        return True
    if _repeated_header_rows(prev.table, t.table):
        return True
    if caption:
        return False  # a caption of its own: a new table
    grid = t.table.grid()
    return detect_header(grid).body_start == 0


def _repeated_header_rows(prev: Table, t: Table) -> int:
    """How many of `t`'s leading rows repeat `prev`'s header rows (title rows aside)."""
    head = detect_header(prev.grid())
    header = [_texts(prev.grid()[i]) for i in head.header_rows]
    if not header:
        return 0
    grid = t.grid()
    mine = detect_header(grid)
    start = max(mine.title_rows, default=-1) + 1
    rows = [_texts(r) for r in grid[start : start + len(header)]]
    return start + len(header) if rows == header else 0


def _join(prev: ExtractedTable, t: ExtractedTable) -> ExtractedTable:
    drop = _repeated_header_rows(prev.table, t.table)
    if not drop:
        drop = max(detect_header(t.table.grid()).title_rows, default=-1) + 1
    rows = t.table.rows[drop:]
    return replace(
        prev,
        table=Table(prev.table.rows + rows),
        support=min(prev.support, t.support),
        agreement=min(prev.agreement, t.agreement),
        pages=(*prev.pages, t.page),
    )


def _width(t: ExtractedTable) -> int:
    grid = t.table.grid()
    return len(grid[0]) if grid else 0


def _texts(row: Sequence[str]) -> list[str]:
    return [" ".join(c.split()).casefold() for c in row]
