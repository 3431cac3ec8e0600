"""Tables as the finance verifiers see them, and readers for the forms a model writes.

A `Table` is a list of rows of `Cell`s; a cell may span rows or columns (HTML ``rowspan``
and ``colspan``). `Table.grid()` lays the cells on a rectangular grid, repeating a spanning
cell's text in every slot it covers (the convention of GriTS, Smock et al. 2023).

`read_table` accepts what models write: Markdown pipes, CSV (comma, tab or semicolon),
HTML ``<table>`` and JSON (a list of rows, a list of records, or ``{"header", "rows"}``).
Every reader is linear in the input and capped: a model's table is hostile input.

    >>> t = read_table("| Item | 2023 |\\n|---|---|\\n| Revenue | 1,234 |")
    >>> t.grid()
    [['Item', '2023'], ['Revenue', '1,234']]
    >>> html = '<table><tr><td colspan="2">Total</td></tr><tr><td>a</td><td>b</td></tr></table>'
    >>> read_table(html).grid()
    [['Total', 'Total'], ['a', 'b']]
"""

from __future__ import annotations

import csv
import io
import json
import re
import unicodedata
from dataclasses import dataclass
from html.parser import HTMLParser
from typing import Any

__all__ = ["Cell", "Table", "TableFormatError", "read_table", "split_stacked_rows"]

MAX_TABLE_CHARS = 500_000
MAX_CELLS = 20_000
MAX_SPAN = 1_000


class TableFormatError(ValueError):
    """The text holds no table we can read; the message says why."""


@dataclass(frozen=True, slots=True)
class Cell:
    text: str
    rowspan: int = 1
    colspan: int = 1


@dataclass(frozen=True)
class Table:
    """Rows of cells, header first when there is one."""

    rows: tuple[tuple[Cell, ...], ...]

    @classmethod
    def from_grid(cls, grid: list[list[Any]]) -> Table:
        """A span-free table from a list of rows (None becomes an empty cell)."""
        return cls(tuple(tuple(Cell(_text(v)) for v in row) for row in grid))

    @property
    def n_cells(self) -> int:
        return sum(len(r) for r in self.rows)

    @property
    def cells(self) -> list[Cell]:
        """Every cell in reading order (the index `placements` refers to)."""
        return [cell for row in self.rows for cell in row]

    def placements(self) -> dict[tuple[int, int], tuple[int, int, int]]:
        """Each grid slot a cell covers -> (the cell's index, its top row, its left column).

        Cells fill a row from the left, skipping slots that a cell spanning down from a
        row above already covers (HTML's table layout)."""
        placed: dict[tuple[int, int], tuple[int, int, int]] = {}
        index = 0
        for r, row in enumerate(self.rows):
            c = 0
            for cell in row:
                while (r, c) in placed:
                    c += 1
                for dr in range(cell.rowspan):
                    for dc in range(cell.colspan):
                        placed[(r + dr, c + dc)] = (index, r, c)
                c += cell.colspan
                index += 1
        return placed

    def grid(self) -> list[list[str]]:
        """Cells laid on a rectangular grid; a spanning cell fills every slot it covers."""
        placed, cells = self.placements(), self.cells
        height = max((r for r, _ in placed), default=-1) + 1
        width = max((c for _, c in placed), default=-1) + 1
        return [
            [cells[placed[(r, c)][0]].text if (r, c) in placed else "" for c in range(width)]
            for r in range(height)
        ]


def split_stacked_rows(grid: list[list[Any]]) -> list[list[Any]]:
    """Split rows that a PDF extractor stacked into one (cells holding k lines each).

    A row is split when at least two cells hold k > 1 lines and every non-empty cell
    holds exactly k; header cells that merely wrap are left alone.
    """
    out: list[list[Any]] = []
    for row in grid:
        lines = [str(v).split("\n") if v else [] for v in row]
        counts = {len(x) for x in lines if x}
        k = counts.pop() if len(counts) == 1 else 1
        if k > 1 and sum(len(x) == k for x in lines) >= 2:
            out += [[x[i] if x else "" for x in lines] for i in range(k)]
        else:
            out.append(list(row))
    return out


# What a cell's text can carry that a reader does not see: invisible characters, Markdown
# emphasis around the whole cell or inline HTML formatting anywhere in it, letters of another
# script that look Latin inside a Latin word ("Тotal" with a Cyrillic Te), accents on Latin
# letters ("Totál"). None of it may hide a label ("**Total**") from the checks. Superscripts
# stay: "Revenue<sup>1</sup>" is a footnote, and dropping the tag would glue it on.
_INVISIBLE = re.compile("[\u200b\u200c\u200d\u2060\ufeff\u00ad]")
_INLINE_HTML = re.compile(
    r"</?(?:b|i|u|s|em|strong|span|code|mark|small|big|font|del|ins|tt|kbd|var)\b[^>]*>", re.I
)
_LINE_BREAK = re.compile(r"<br\s*/?>", re.IGNORECASE)
_EMPHASIS = re.compile(r"(\*\*|__|\*|_|`)(.+?)\1")
_LOOK_ALIKES = str.maketrans(
    "АВСЕНІЈКМОРЅТХУаеіјорсухΑΒΕΖΗΙΚΜΝΟΡΤΥΧοτ", "ABCEHIJKMOPSTXYaeijopcyxABEZHIKMNOPTYXot"
)
_LATIN = re.compile("[A-Za-z]")


def _text(value: Any) -> str:
    if value is None:
        return ""
    text = _LINE_BREAK.sub(" ", _INLINE_HTML.sub("", _INVISIBLE.sub("", str(value))))
    text = re.sub(r"\s+", " ", text).strip()
    while (emphasised := _EMPHASIS.fullmatch(text)) is not None:
        text = emphasised.group(2).strip()
    if not text.isascii():  # fold look-alikes only inside words that are partly Latin
        text = " ".join(_latin(w) if _LATIN.search(w) else w for w in text.split())
    return text


def _latin(word: str) -> str:
    """A word that is partly Latin, as a reader reads it: look-alike letters of other scripts
    as the Latin ones, accents dropped ("Тotál" is "Total")."""
    decomposed = unicodedata.normalize("NFD", word.translate(_LOOK_ALIKES))  # "¹" stays
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def read_table(text: str) -> Table:
    """Read a table written as Markdown, CSV, HTML or JSON (detected in that order of hints)."""
    if not isinstance(text, str):
        raise TableFormatError(f"expected text, got {type(text).__name__}")
    if len(text) > MAX_TABLE_CHARS:
        raise TableFormatError(f"table text has {len(text)} characters; limit {MAX_TABLE_CHARS}")
    body = _strip_fences(text)
    if not body:
        raise TableFormatError("no table: the text is empty")
    if re.search(r"<table\b", body, re.IGNORECASE):
        table = _read_html(body)
    elif body[0] in "[{":
        table = _read_json(body)
    elif _looks_markdown(body):
        table = _read_markdown(body)
    else:
        table = _read_csv(body)
    if not table.rows or table.n_cells == 0:
        raise TableFormatError("no table rows found")
    if table.n_cells > MAX_CELLS:
        raise TableFormatError(f"table has {table.n_cells} cells; limit {MAX_CELLS}")
    return table


def _strip_fences(text: str) -> str:
    """The body of the first fenced block or ``<answer>`` element (found with str.find: a
    lazy regex is quadratic on thousands of unclosed fences)."""
    start = text.find("```")
    if start >= 0:
        newline = text.find("\n", start)
        end = text.find("```", newline) if newline >= 0 else -1
        if end >= 0:
            return text[newline + 1 : end].strip()
    start, end = text.find("<answer>"), text.find("</answer>")
    if 0 <= start < end:
        return text[start + len("<answer>") : end].strip()
    return text.strip()


def _looks_markdown(body: str) -> bool:
    lines = [line for line in body.splitlines() if line.strip()]
    return sum(line.count("|") >= 1 for line in lines) >= max(1, len(lines) // 2)


def _read_markdown(body: str) -> Table:
    if len(_pipe_blocks(body)) > 1:  # two tables offered for one: a hedge, not an answer
        raise TableFormatError("the answer holds several tables; write the one table asked for")
    rows: list[list[str]] = []
    for line in body.splitlines():
        line = line.strip()
        if "|" not in line:
            continue
        line = line.strip("|")
        cells = [c.strip() for c in line.split("|")]
        if len(rows) == 1 and all(re.fullmatch(r":?-+:?", c) for c in cells):
            continue  # the |---|---| line under the header (a dash elsewhere is a zero)
        rows.append(cells)
        if len(rows) * 2 > MAX_CELLS:
            break
    return Table.from_grid(rows)


def _pipe_blocks(body: str) -> list[int]:
    """The row counts of the runs of ``|`` lines with at least two rows (a Markdown table
    holds no other line; a lone ``|`` line among notes is not a table)."""
    blocks, run = [], 0
    for line in [*body.splitlines(), ""]:
        if "|" in line:
            run += 1
            continue
        if run >= 2:
            blocks.append(run)
        run = 0
    return blocks


def _read_csv(body: str) -> Table:
    sample = body[:4096]
    delimiter = max(",\t;", key=sample.count)
    if sample.count(delimiter) == 0:
        raise TableFormatError("not a table: no |, comma, tab or semicolon separators found")
    reader = csv.reader(io.StringIO(body), delimiter=delimiter)
    rows: list[list[str]] = []
    try:
        for row in reader:
            if row:
                rows.append(row)
            if len(rows) * 2 > MAX_CELLS:
                break
    except csv.Error as exc:
        raise TableFormatError(f"malformed CSV: {exc}") from None
    return Table.from_grid(rows)


def _read_json(body: str) -> Table:
    try:
        data = json.loads(body)
    except (json.JSONDecodeError, RecursionError) as exc:
        raise TableFormatError(f"not valid JSON: {exc}"[:300]) from None
    if isinstance(data, dict) and isinstance(data.get("rows"), list):
        header = data.get("header") or data.get("columns") or []
        data = ([header] if header else []) + data["rows"]
    if isinstance(data, list) and data and all(isinstance(r, dict) for r in data):
        keys = list(dict.fromkeys(k for r in data for k in r))
        return Table.from_grid([keys] + [[r.get(k) for k in keys] for r in data])
    if isinstance(data, list) and all(isinstance(r, list) for r in data):
        if any(isinstance(v, list | dict) for r in data for v in r):
            raise TableFormatError("JSON table cells must be scalars, not nested lists or objects")
        return Table.from_grid(data)
    raise TableFormatError(
        'JSON table must be a list of rows, a list of records, or {"header": [...], "rows": [...]}'
    )


class _HtmlTable(HTMLParser):
    """Collects the first <table>: rows of (text, rowspan, colspan)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.rows: list[list[Cell]] = []
        self.depth = 0
        self.done = False
        self.cell: list[str] | None = None
        self.spans = (1, 1)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if self.done:
            return
        if tag == "table":
            self.depth += 1
        elif tag == "tr" and self.depth == 1:
            self.rows.append([])
        elif tag in ("td", "th") and self.depth == 1:
            if not self.rows:
                self.rows.append([])
            a = dict(attrs)
            self.spans = (_span(a.get("rowspan")), _span(a.get("colspan")))
            self.cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self.cell is not None:
            self.rows[-1].append(Cell(_text("".join(self.cell)), *self.spans))
            self.cell = None
        elif tag == "table" and self.depth:
            self.depth -= 1
            self.done = self.depth == 0

    def handle_data(self, data: str) -> None:
        if self.cell is not None and self.depth == 1:  # text of nested tables stays out
            self.cell.append(data)


def _span(value: str | None) -> int:
    try:
        return min(max(int(value or 1), 1), MAX_SPAN)
    except ValueError:
        return 1


def _read_html(body: str) -> Table:
    parser = _HtmlTable()
    parser.feed(body)
    parser.close()
    if parser.cell is not None and parser.rows:  # unclosed last cell: keep what it said
        parser.rows[-1].append(Cell(_text("".join(parser.cell)), *parser.spans))
    rows = tuple(tuple(r) for r in parser.rows if r)
    table = Table(rows)
    spanned = sum(c.rowspan * c.colspan for r in rows for c in r)
    if spanned > MAX_CELLS:
        raise TableFormatError(f"spans cover {spanned} grid slots; limit {MAX_CELLS}")
    return table
