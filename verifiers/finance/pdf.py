"""Raw extraction from one PDF, run inside a killable worker (never in the scoring process).

`extract_pdf` opens a PDF with PLAYA (the parser under camelot 2), lays out each page once
(`page_layout.read_page`) and returns plain JSON-able data per page: its text, words, text
lines (for captions) and images, and every candidate table from every extractor asked for,
each with its bounding box in top-left coordinates:

- ``stream`` and ``network``: camelot's text-alignment parsers, handed the page's layout
  (so the page is parsed once, not once per flavor);
- ``ruled``: tables drawn with ruling lines, read from the vector graphics (`ruled`).

camelot's ``lattice`` and ``hybrid`` render every page to an image first (several times a
parse) and are not used; ``ruled`` reads the same lines from the drawing operations.
Choosing among the candidates happens later, in `rewardsmith.verifiers.finance.reference`.

A PDF encrypted with only an owner password (permissions, no user password) opens with
the empty password, as every viewer opens it; one that needs a user password is refused.

It must stay a module-level function of an importable module: `call_with_limits` sends it to
a worker process by name.
"""

from __future__ import annotations

import logging
import os
import warnings
from typing import Any

from rewardsmith.verifiers.finance.page_layout import PageLayout, read_page
from rewardsmith.verifiers.finance.ruled import ruled_tables

__all__ = ["EXTRACTORS", "PdfProblem", "extract_pdf", "pdf_problem"]

EXTRACTORS = ("stream", "network", "ruled")


class PdfProblem(ValueError):
    """The PDF cannot be read as asked (encrypted, not a PDF, too many pages)."""


def pdf_problem(path: str, max_bytes: int) -> str | None:
    """A cheap pre-check in the scoring process: missing, empty, too large, or not a PDF."""
    try:
        size = os.path.getsize(path)
        with open(path, "rb") as handle:
            head = handle.read(1024)
    except OSError as exc:
        return f"cannot open PDF {path!r}: {exc.strerror or exc}"
    if size == 0:
        return f"PDF {path!r} is empty (0 bytes)"
    if size > max_bytes:
        return f"PDF {path!r} has {size} bytes; the limit is {max_bytes}"
    if b"%PDF-" not in head:
        return f"{path!r} is not a PDF (no %PDF- header in its first 1 KB)"
    return None


def _wanted(total: int, pages: tuple[int, ...] | None, max_pages: int) -> list[int]:
    if total == 0:
        raise PdfProblem("PDF has no pages")
    # Pages past the end are skipped (a cited page may be invented); none left is an error.
    wanted = [p for p in pages if 1 <= p <= total] if pages else list(range(1, total + 1))
    if not wanted:
        raise PdfProblem(f"page {(pages or (0,))[0]} does not exist: the PDF has {total} pages")
    if len(wanted) > max_pages:
        raise PdfProblem(
            f"PDF has {total} pages and {len(wanted)} were asked for; the limit is {max_pages} "
            "(name the pages to read)"
        )
    return wanted


def _open(path: str) -> Any:
    import playa

    try:
        return playa.open(path, space="page", password="")
    except playa.PDFPasswordIncorrect:
        raise PdfProblem("PDF is encrypted: it cannot be read without its password") from None


def extract_pdf(
    path: str,
    pages: tuple[int, ...] | None = None,
    tables: tuple[str, ...] = EXTRACTORS,
    max_pages: int = 50,
) -> dict[str, Any]:
    """Text, words, lines, images and candidate tables of the given pages (1-based; None =
    all). `tables` names the extractors to run (`EXTRACTORS`); ``()`` reads text only."""
    unknown = set(tables) - set(EXTRACTORS)
    if unknown:
        raise ValueError(f"unknown table extractors {sorted(unknown)}; known: {EXTRACTORS}")
    logging.getLogger("playa").setLevel(logging.ERROR)
    logging.getLogger("camelot").setLevel(logging.ERROR)
    with _open(path) as pdf:
        total = len(pdf.pages)
        wanted = _wanted(total, pages, max_pages)
        out: dict[str, Any] = {"n_pages": total, "pages": {}, "problems": []}
        for number in wanted:
            layout = read_page(pdf.pages[number - 1])
            out["pages"][number] = _page_data(path, layout, tables, out["problems"])
    return out


def _page_data(
    path: str, layout: PageLayout, tables: tuple[str, ...], problems: list[str]
) -> dict[str, Any]:
    found = ruled_tables(layout) if "ruled" in tables else []
    for flavor in ("stream", "network"):
        if flavor in tables:
            found += _camelot_tables(path, layout, flavor, problems)
    return {
        "width": layout.width,
        "height": layout.height,
        "text": layout.text,
        "words": [list(w) for w in layout.words],
        "lines": [list(line) for line in layout.lines],
        "images": [list(box) for box in layout.images],
        "marks": [list(box) for box in layout.marks],
        "tables": found,
    }


def _camelot_tables(
    path: str, layout: PageLayout, flavor: str, problems: list[str]
) -> list[dict[str, Any]]:
    from camelot.parsers import Network, Stream

    page_layout, dimensions, images, horizontal, vertical, rotation = layout.camelot
    parser = (Stream if flavor == "stream" else Network)()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            parser.prepare_page_parse(
                path, page_layout, dimensions, layout.number, images, horizontal, vertical,
                rotation, {},
            )  # fmt: skip
            found = parser.extract_tables()
        except Exception as exc:  # one flavor failing on a page leaves the others' candidates
            problem = f"camelot {flavor}, page {layout.number}: {type(exc).__name__}: {exc}"
            problems.append(problem[:300])
            return []
    out = []
    for table in found:
        x1, y1, x2, y2 = table._bbox  # PDF space: origin bottom left
        cells = table.df.fillna("").astype(str).values.tolist()
        bbox = [x1, layout.height - y2, x2, layout.height - y1]
        out.append({"source": flavor, "bbox": bbox, "cells": cells})
    return out
