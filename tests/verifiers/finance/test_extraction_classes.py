"""Classes of table-extraction errors found on the benchmark's sources (issue 29), each on
small PDFs written here: the class is rejected or read right, and tables that look like
it keep being read (both directions).

- A list laid out in two columns (markers in one, items in the other, headings and
  paragraphs between them) is not a table: no row pairs a label with a value.
- A ruled table with shaded cells whose shading is drawn as two boxes, the cell's and an
  inset one for its text (as Word writes it): the sliver between their edges is not a
  column.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from fpdf import FPDF

from rewardsmith.verifiers.finance.pdf import extract_pdf
from rewardsmith.verifiers.finance.reference import document_from_raw


def _tables(path: Path) -> list[list[list[str]]]:
    document = document_from_raw(extract_pdf(str(path), None))
    return [t.table.grid() for t in document.tables]


def _page() -> FPDF:
    pdf = FPDF(format="A4", unit="pt")
    pdf.set_auto_page_break(False)
    pdf.add_page()
    pdf.set_font("Helvetica", "", 10)
    return pdf


LIST_MARKERS = {
    "numbers": ["1.", "2.", "3.", "4.", "5."],
    "letters": ["a)", "b)", "c)", "d)", "e)"],
    "roman": ["(i)", "(ii)", "(iii)", "(iv)", "(v)"],
    "stars": ["*"] * 5,
    "dots": ["\u00b7"] * 5,
    "mixed": ["1.", "2.", "a)", "b)", "3."],
}
ITEMS = [
    "Enumeration of the first point",
    "Second point of the list",
    "Nested point that is short",
    "Another point, somewhat longer than the others",
    "Last point",
]


def _list_page(path: Path, markers: list[str], heading_between: bool) -> Path:
    pdf = _page()
    y = 80.0
    for line in ("Title of the section", "Some content, written as a sentence."):
        pdf.text(60, y, line)
        y += 16
    for n, (marker, item) in enumerate(zip(markers, ITEMS, strict=True)):
        if heading_between and n == 3:
            pdf.text(60, y, "Another heading")
            y += 16
        pdf.text(72, y, marker)
        pdf.text(100, y, item)
        y += 16
    pdf.output(str(path))
    return path


@pytest.mark.parametrize("heading_between", [False, True])
@pytest.mark.parametrize("style", sorted(LIST_MARKERS))
def test_a_list_in_two_columns_is_not_a_table(
    tmp_path: Path, style: str, heading_between: bool
) -> None:
    path = _list_page(tmp_path / "list.pdf", LIST_MARKERS[style], heading_between)
    assert _tables(path) == []


TABLE_ROWS = [
    ["", "Item", "2024", "2023"],
    ["1.", "Revenue", "1,200", "1,100"],
    ["2.", "Cost of sales", "(400)", "(380)"],
    ["3.", "Operating expenses", "(300)", "(290)"],
    ["4.", "Operating result", "500", "430"],
]


@pytest.mark.parametrize("numbered", [True, False])
def test_a_table_with_numbered_rows_is_still_a_table(tmp_path: Path, numbered: bool) -> None:
    pdf = _page()
    rows = TABLE_ROWS if numbered else [row[1:] for row in TABLE_ROWS]
    xs = [72, 100, 300, 380][-len(rows[0]) :]
    for r, row in enumerate(rows):
        for x, text in zip(xs, row, strict=True):
            pdf.text(x, 100 + 16 * r, text)
    pdf.output(str(tmp_path / "numbered.pdf"))
    tables = _tables(tmp_path / "numbered.pdf")
    assert len(tables) == 1
    assert [cell for row in tables[0] for cell in row if cell] == [
        cell for row in rows for cell in row if cell
    ]


GRID = [
    ["Header A", "Header B", "Header C"],
    ["Row 1", "Alpha", "Beta"],
    ["Row 2", "Gamma", "Delta"],
]


def _ruled_page(path: Path, border: str) -> Path:
    """A 3 x 3 ruled table; borders as single lines or double rules, or a shaded header
    whose cells are filled twice, whole and inset 5 pt (Word's cell and text shading)."""
    pdf = _page()
    x0, y0, w, h = 80.0, 100.0, 120.0, 20.0
    xs = [x0 + w * c for c in range(4)]
    ys = [y0 + h * r for r in range(4)]
    pdf.set_line_width(0.5)
    pdf.set_fill_color(0, 0, 0)
    for x in xs:
        if border == "lines":
            pdf.line(x, ys[0], x, ys[-1])
        elif border == "double":
            pdf.line(x - 1.5, ys[0], x - 1.5, ys[-1])
            pdf.line(x + 1.5, ys[0], x + 1.5, ys[-1])
        else:
            pdf.line(x, ys[0], x, ys[-1])
    for y in ys:
        pdf.line(xs[0], y, xs[-1], y)
    if border == "shaded":
        pdf.set_fill_color(220, 220, 220)
        for x in xs[:-1]:
            pdf.rect(x, ys[0], w, h, style="F")
            pdf.rect(x + 5, ys[0], w - 10, h - 1.5, style="F")
    for r, row in enumerate(GRID):
        for c, text in enumerate(row):
            pdf.text(xs[c] + 6, ys[r] + 14, text)
    pdf.output(str(path))
    return path


@pytest.mark.parametrize("border", ["lines", "double", "shaded"])
def test_a_ruled_table_has_the_columns_it_prints(tmp_path: Path, border: str) -> None:
    assert _tables(_ruled_page(tmp_path / "ruled.pdf", border)) == [GRID]
