"""The sources of PDFs with cell-level ground truth that `benchmarks/tables.py` reads.

Each source is a list of `Doc` (a PDF and the ICDAR 2013 cell adjacency relations of its
tables, summed over every table region of every page), or a sentence saying why it is not
available here (then the benchmark skips it and says so). Third-party PDFs are never in
this repository: they are read from `../shared/data` or from a cache folder
(`$REWARDSMITH_TABLES_CACHE`, default ``~/.cache/rewardsmith/tables``).

- ``icdar2013-eu``: the 27 EU documents of the ICDAR 2013 table competition with their
  ``*-str.xml`` cell grids (``../shared/data/pdf/icdar2013-eu``). Split in two by document
  number (odd: the half the extractor was tuned on in issue 19; even: held out).
- ``tagged``: tagged PDFs whose structure tree marks their tables (``Table``/``TR``/
  ``TH``/``TD``, with ``RowSpan``/``ColSpan``): the author's own cell grid, read from
  the tree, each cell's text from the characters of its marked content. Files: the
  tagged PDFs of pdfplumber's test folder (jsvine/pdfplumber, ``tests/pdfs/``, MIT),
  placed in ``<cache>/pdfplumber/``.
- ``pdfua``: the PDF/UA conformance files of the veraPDF corpus (veraPDF/veraPDF-corpus,
  ``PDF_UA-1/``, CC BY 4.0) that pass and tag a table, one file per distinct table,
  read like ``tagged``; placed in ``<cache>/verapdf/``.
- ``statements``: the reports this project generates (``datasets/finance``), ground
  truth from the generator's own rows (a table that runs onto the next page is one
  region per page, its header repeated, as the ICDAR ground truth counts it).
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pdfplumber

from rewardsmith.verifiers.finance.icdar import GroundTruthRegion, load_structure, relations_of

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "data" / "pdf"
Relations = Counter[tuple]


@dataclass(frozen=True)
class Doc:
    source: str
    name: str
    pdf: str
    truth: Relations


def cache_dir() -> Path:
    default = Path.home() / ".cache" / "rewardsmith" / "tables"
    return Path(os.environ.get("REWARDSMITH_TABLES_CACHE", default))


def icdar_eu() -> list[Doc] | str:
    folder = SHARED / "icdar2013-eu"
    if not folder.is_dir():
        return f"{folder} not found"
    docs = []
    for xml in sorted(folder.glob("*-str.xml")):
        pdf = xml.with_name(xml.name.replace("-str.xml", ".pdf"))
        if pdf.exists():  # eu-009b's ground truth has no PDF of its own
            truth = relations_of(load_structure(xml))
            docs.append(Doc("icdar2013-eu", pdf.stem, str(pdf), truth))
    return docs


TAGGED_FILES = (
    "150109DSP-Milw-505-90D.pdf",
    "WARN-Report-for-7-1-2015-to-03-25-2016.pdf",
    "pdf_structure.pdf",
    "pr-138-example.pdf",
    "word365_structure.pdf",
)
"""pdfplumber's tagged test PDFs whose structure tree holds a ``Table``."""


def tagged() -> list[Doc] | str:
    folder = cache_dir() / "pdfplumber"
    present = [folder / f for f in TAGGED_FILES if (folder / f).exists()]
    if not present:
        return f"none of {TAGGED_FILES} in {folder} (copy them from jsvine/pdfplumber tests/pdfs)"
    return [Doc("tagged", p.stem, str(p), relations_of(tagged_regions(p))) for p in present]


def tagged_regions(path: str | Path) -> list[GroundTruthRegion]:
    """Every ``Table`` of a tagged PDF's structure tree as ICDAR regions, one per table and
    page (a table's rows on each page it covers)."""
    from pdfplumber.structure import PDFStructTree

    with pdfplumber.open(path) as pdf:
        texts = _marked_texts(pdf)
        tables = [e for root in PDFStructTree(pdf) for e in _walk(root) if e.type == "Table"]
        return [r for n, t in enumerate(tables) for r in _regions(n, t, texts)]


def _walk(element: Any) -> list[Any]:
    return [element, *(e for child in element.children for e in _walk(child))]


Marked = dict[tuple[int, int], tuple[str, float]]


def _marked_texts(pdf: Any) -> Marked:
    """The text and left edge of each marked-content sequence, by (page number, MCID)."""
    chars: dict[tuple[int, int], list[dict[str, Any]]] = {}
    for page in pdf.pages:
        for char in page.chars:
            if char.get("mcid") is not None:
                chars.setdefault((page.page_number, char["mcid"]), []).append(char)
    return {
        key: ("".join(c["text"] for c in group), min(c["x0"] for c in group))
        for key, group in chars.items()
    }


def _regions(number: int, table: Any, texts: Marked) -> list[GroundTruthRegion]:
    rows = [e for e in _walk(table) if e.type == "TR"]
    taken: set[tuple[int, int]] = set()
    by_page: dict[int, list[tuple[int, int, int, int, str]]] = {}
    for r, row in enumerate(rows):
        c, row_page, placed = 0, None, []
        for cell in _in_printed_order(row, texts, any((r, j) in taken for j in range(99))):
            while (r, c) in taken:
                c += 1
            height = int(cell.attributes.get("RowSpan", 1))
            width = int(cell.attributes.get("ColSpan", 1))
            taken |= {(r + i, c + j) for i in range(height) for j in range(width)}
            parts = [(e.page_number, m) for e in _walk(cell) for m in e.mcids]
            row_page = row_page or next((p for p, _ in parts if p), None)
            text = " ".join(" ".join(texts.get(k, ("", 0.0))[0] for k in parts).split())
            placed.append((r, r + height - 1, c, c + width - 1, text))
            c += width
        by_page.setdefault(row_page or 0, []).extend(placed)
    return [_renumbered(number, page, cells) for page, cells in sorted(by_page.items())]


def _in_printed_order(row: Any, texts: Marked, spanned_into: bool) -> list[Any]:
    """A row's cells left to right as printed. Some writers tag a row's cells out of the
    order they print them (pdfplumber's WARN report does); in a row of single cells,
    the cells with text are put in the order of their left edges, the empty ones keep
    their slots. Rows with spans are left in tag order."""
    cells = [e for e in row.children if e.type in ("TH", "TD")]
    spans = any(int(e.attributes.get(k, 1)) > 1 for e in cells for k in ("RowSpan", "ColSpan"))
    if spans or spanned_into:
        return cells
    x = {id(e): _left(e, texts) for e in cells}
    filled = [e for e in cells if x[id(e)] is not None]
    ordered = iter(sorted(filled, key=lambda e: x[id(e)] or 0.0))
    return [next(ordered) if x[id(e)] is not None else e for e in cells]


def _left(cell: Any, texts: Marked) -> float | None:
    edges = [
        texts[k][1] for e in _walk(cell) for m in e.mcids if (k := (e.page_number, m)) in texts
    ]
    return min(edges) if edges else None


def _renumbered(
    number: int, page: int, cells: list[tuple[int, int, int, int, str]]
) -> GroundTruthRegion:
    """A page's part of a table, its rows counted from 0 (as ICDAR counts each region)."""
    top = min(cell[0] for cell in cells)
    return GroundTruthRegion(
        number, page, tuple((r0 - top, r1 - top, c0, c1, t) for r0, r1, c0, c1, t in cells)
    )


PDFUA_FILES = ("7.2-t03-pass-a.pdf", "7.2-t15-pass-a.pdf", "7.5-t01-pass-a.pdf")
"""veraPDF corpus PDF/UA-1 files (``7.2 Text/``, ``7.5 Tables/``) that tag a table; the
other passing files tag one of these same three tables again."""


def pdfua() -> list[Doc] | str:
    folder = cache_dir() / "verapdf"
    present = [folder / f for f in PDFUA_FILES if (folder / f).exists()]
    if not present:
        return f"none of {PDFUA_FILES} in {folder} (copy them from veraPDF/veraPDF-corpus)"
    return [Doc("pdfua", p.stem, str(p), relations_of(tagged_regions(p))) for p in present]


def statements() -> list[Doc] | str:
    from rewardsmith.datasets.finance import generate

    truth_file = ROOT / "datasets" / "finance" / "truth.json"
    if not truth_file.exists():
        return f"{truth_file} not found"
    import json

    docs = []
    for key, s in json.loads(truth_file.read_text()).items():
        pdf = ROOT / "datasets" / "finance" / f"{key}.pdf"
        regions = [generate.income_rows(s), generate.balance_rows(s)]
        regions += _split_at_pages(str(pdf), generate.region_rows(s), first_page=3)
        truth: Relations = Counter()
        for rows in regions:
            truth += _grid_region(rows).relations()
        docs.append(Doc("statements", key, str(pdf), truth))
    return docs


def _split_at_pages(pdf: str, rows: list[list[str]], first_page: int) -> list[list[list[str]]]:
    """A printed table's rows per page, its header repeated on each (as the generator
    draws it): each body row is on the first page with a line starting with its label."""
    with pdfplumber.open(pdf) as doc:
        pages = [doc.pages[n].extract_text() or "" for n in range(first_page - 1, len(doc.pages))]
    starts = [{line.rsplit(" ", 2)[0] for line in text.splitlines()} for text in pages]
    per_page: list[list[list[str]]] = [[] for _ in pages]
    for row in rows[1:]:
        page = next(n for n, labels in enumerate(starts) if row[0] in labels)
        per_page[page].append(row)
    return [[rows[0], *body] for body in per_page if body]


def _grid_region(rows: list[list[str]]) -> GroundTruthRegion:
    cells = tuple((r, r, c, c, text) for r, row in enumerate(rows) for c, text in enumerate(row))
    return GroundTruthRegion(0, 1, cells)


SOURCES: dict[str, Callable[[], list[Doc] | str]] = {
    "icdar2013-eu": icdar_eu,
    "tagged": tagged,
    "pdfua": pdfua,
    "statements": statements,
}
