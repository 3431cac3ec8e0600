"""What one PDF page holds, read once: words, text lines, ruling lines and images.

Every consumer of a page (the table extractors, grounding, captions, scan detection) reads
the same layout, made by one pass of PLAYA's pdfminer-compatible layout analysis
(`playa.miner.extract_page`, the parser camelot 2 itself uses). Parsing a page is most of
the cost of extracting its tables, so it is done once and shared: camelot's ``stream`` and
``network`` parsers are handed this layout instead of parsing the page again.

Coordinates here are PDF points from the page's *top left* (``x0, top, x1, bottom``), as
pdfplumber reports them; the layout itself is bottom-left (PDF space).

It runs inside the killable parsing worker (never in the scoring process).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

__all__ = ["PageLayout", "read_page"]

MAX_WORDS = 20_000
"""Words kept per page (a hostile page can hold millions of glyphs)."""
MAX_SEGMENTS = 5_000
"""Ruling segments kept per direction per page (the ruled-table search is quadratic)."""
Box = tuple[float, float, float, float]


@dataclass
class PageLayout:
    """One page's layout in top-left coordinates, plus the raw layout for camelot."""

    number: int
    width: float
    height: float
    words: list[tuple[str, float, float, float, float]] = field(default_factory=list)
    lines: list[tuple[str, float, float, float, float]] = field(default_factory=list)
    """Text lines (a row of a table prints as several: one per cell)."""
    horizontal: list[tuple[float, float, float]] = field(default_factory=list)
    """Horizontal ruling segments ``(y, x0, x1)``."""
    vertical: list[tuple[float, float, float]] = field(default_factory=list)
    """Vertical ruling segments ``(x, top, bottom)``."""
    images: list[Box] = field(default_factory=list)
    marks: list[Box] = field(default_factory=list)
    """Graphics that are neither rules nor boxes (diagonal lines, polylines, filled
    shapes): what charts are drawn with, and tables are not."""
    camelot: tuple[Any, ...] = ()
    """``(layout, dimensions, images, horizontal_text, vertical_text, rotation)``, as
    camelot's parsers take them in ``prepare_page_parse``."""

    @property
    def text(self) -> str:
        """The page's text, one printed row per line, left to right."""
        return "\n".join(" ".join(t for t, *_ in row) for row in rows_of(self.lines))


def rows_of(
    lines: list[tuple[str, float, float, float, float]],
) -> Iterator[list[tuple[str, float, float, float, float]]]:
    """Text lines grouped into printed rows: lines whose vertical middles lie within the
    other's height, each row sorted left to right."""
    row: list[tuple[str, float, float, float, float]] = []
    for line in sorted(lines, key=lambda t: ((t[2] + t[4]) / 2, t[1])):
        middle = (line[2] + line[4]) / 2
        if row and not any(r[2] <= middle <= r[4] for r in row):
            yield sorted(row, key=lambda t: t[1])
            row = []
        row.append(line)
    if row:
        yield sorted(row, key=lambda t: t[1])


def read_page(page: Any) -> PageLayout:
    """Lay out a PLAYA page (opened with ``space="page"``), de-rotating it when its text
    runs sideways, as camelot does."""
    from camelot.utils import get_image_char_and_text_objects, get_page_layout, get_rotation

    layout, dimensions = get_page_layout(page)
    images, chars, horizontal_text, vertical_text = get_image_char_and_text_objects(layout)
    rotation = get_rotation(chars, horizontal_text, vertical_text)
    if rotation:
        turn = -90 if rotation == "clockwise" else 90
        page.set_initial_ctm(page.space, page.rotate + turn)
        layout, dimensions = get_page_layout(page)
        images, chars, horizontal_text, vertical_text = get_image_char_and_text_objects(layout)
    width, height = dimensions
    result = PageLayout(page.page_idx + 1, float(width), float(height))
    result.camelot = (layout, dimensions, images, horizontal_text, vertical_text, rotation)
    for line in horizontal_text:
        _add_line(result, line)
    boxes: list[tuple[Box, bool]] = []
    for item in _graphics(layout):
        _add_graphic(result, item, boxes)
    _add_boxes(result, boxes)
    result.images = [_flip(image.bbox, height) for image in images]
    result.horizontal = result.horizontal[:MAX_SEGMENTS]
    result.vertical = result.vertical[:MAX_SEGMENTS]
    return result


def _flip(bbox: Box, height: float) -> Box:
    x0, y0, x1, y1 = bbox
    return (float(x0), float(height - y1), float(x1), float(height - y0))


def _add_line(page: PageLayout, line: Any) -> None:
    text = line.get_text().strip()
    if not text:
        return
    page.lines.append((text, *_flip(line.bbox, page.height)))
    word: list[Any] = []
    for char in [*line, None]:  # None flushes the last word
        blank = char is None or not hasattr(char, "bbox") or not char.get_text().strip()
        if not blank:
            word.append(char)
            continue
        if word and len(page.words) < MAX_WORDS:
            x0 = min(c.bbox[0] for c in word)
            y0 = min(c.bbox[1] for c in word)
            x1 = max(c.bbox[2] for c in word)
            y1 = max(c.bbox[3] for c in word)
            text = "".join(c.get_text() for c in word)
            page.words.append((text, *_flip((x0, y0, x1, y1), page.height)))
        word = []


def _graphics(layout: Any) -> Iterator[Any]:
    """Rects, lines and curves, inside figures too."""
    from playa.miner import LTCurve, LTFigure

    for item in layout:
        if isinstance(item, LTFigure):
            yield from _graphics(item)
        elif isinstance(item, LTCurve):  # LTRect and LTLine are curves
            yield item


_THIN = 2.0
"""A rectangle thinner than this many points is drawn as a line (a rule)."""
_MARK = 3.0
"""Smaller shapes (a rounded corner, a bullet) are not chart marks."""
_INSET = 6.0
"""A filled box inset at most this much in a filled box, on every side, shades the same
cell (Word fills a cell, then the cell's text area inside its padding)."""
_MAX_BOXES = 2000
"""Past this many boxes on a page the inset test (quadratic) is skipped."""


def _add_boxes(page: PageLayout, boxes: list[tuple[Box, bool]]) -> None:
    """The edges of each box are rules, except a shading box inset in another: its edges
    would cut a cell's padding off as a column (or row) of its own."""
    check = len(boxes) <= _MAX_BOXES
    for box, filled in boxes:
        if check and filled and any(_inset(box, other) for other, f in boxes if f):
            continue
        x0, top, x1, bottom = box
        page.horizontal += [(top, x0, x1), (bottom, x0, x1)]
        page.vertical += [(x0, top, bottom), (x1, top, bottom)]


def _inset(inner: Box, outer: Box) -> bool:
    gaps = (inner[0] - outer[0], inner[1] - outer[1], outer[2] - inner[2], outer[3] - inner[3])
    return inner != outer and all(0 <= g <= _INSET for g in gaps)


def _add_graphic(page: PageLayout, item: Any, boxes: list[tuple[Box, bool]]) -> None:
    x0, top, x1, bottom = _flip(item.bbox, page.height)
    if len(page.horizontal) > MAX_SEGMENTS and len(page.vertical) > MAX_SEGMENTS:
        return
    if bottom - top <= _THIN and x1 - x0 > _THIN:
        page.horizontal.append(((top + bottom) / 2, x0, x1))
    elif x1 - x0 <= _THIN and bottom - top > _THIN:
        page.vertical.append(((x0 + x1) / 2, top, bottom))
    elif type(item).__name__ == "LTRect":  # a box (a border, a shaded cell): edges are rules
        boxes.append(((x0, top, x1, bottom), bool(getattr(item, "fill", False))))
    elif min(x1 - x0, bottom - top) > _MARK and len(page.marks) < MAX_SEGMENTS:
        page.marks.append((x0, top, x1, bottom))
