"""Raw extraction from one PDF, run inside a killable worker (never in the scoring process).

`extract_pdf` opens a PDF with pypdf (page count, encryption), pdfplumber (words with
positions, page text, tables by its ``lines`` and ``text`` strategies) and camelot (tables by
the ``lattice``, ``stream``, ``network`` and ``hybrid`` flavors), and returns plain JSON-able
data: every candidate table from every extractor, each with its page and bounding box in
pdfplumber's top-left coordinates. Choosing among the candidates happens later, in
`rewardsmith.verifiers.finance.reference`.

It must stay a module-level function of an importable module: `call_with_limits` sends it to
a worker process by name.
"""

from __future__ import annotations

import logging
import os
import warnings
from typing import Any

__all__ = ["CAMELOT_FLAVORS", "PLUMBER_STRATEGIES", "PdfProblem", "extract_pdf", "pdf_problem"]

CAMELOT_FLAVORS = ("lattice", "stream", "network", "hybrid")
PLUMBER_STRATEGIES = ("lines", "text")
MAX_WORDS_PER_PAGE = 20_000


class PdfProblem(ValueError):
    """The PDF cannot be read as asked (encrypted, not a PDF, too many pages, no text layer)."""


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


def _page_numbers(
    path: str, pages: tuple[int, ...] | None, max_pages: int
) -> tuple[int, list[int]]:
    import pypdf

    reader = pypdf.PdfReader(path, strict=False)
    if reader.is_encrypted:
        raise PdfProblem("PDF is encrypted: it cannot be read without its password")
    total = len(reader.pages)
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
    return total, wanted


def extract_pdf(
    path: str,
    pages: tuple[int, ...] | None = None,
    tables: tuple[str, ...] = (*CAMELOT_FLAVORS, "plumber-lines", "plumber-text"),
    max_pages: int = 50,
) -> dict[str, Any]:
    """Words, text and candidate tables of the given pages (1-based; None = all).

    `tables` names the extractors to run: camelot flavors by name and pdfplumber strategies
    as ``"plumber-lines"``/``"plumber-text"``; ``()`` extracts only words and text.
    """
    import pdfplumber

    logging.getLogger("pdfminer").setLevel(logging.ERROR)
    total, wanted = _page_numbers(path, pages, max_pages)
    out: dict[str, Any] = {"n_pages": total, "pages": {}, "problems": []}
    with pdfplumber.open(path) as pdf:
        for number in wanted:
            out["pages"][number] = _plumber_page(pdf.pages[number - 1], tables)
    for flavor in (t for t in tables if t in CAMELOT_FLAVORS):
        _camelot_tables(path, wanted, flavor, out)
    return out


def _plumber_page(page: Any, tables: tuple[str, ...]) -> dict[str, Any]:
    words = page.extract_words(keep_blank_chars=False, use_text_flow=False)[:MAX_WORDS_PER_PAGE]
    found = []
    for strategy in PLUMBER_STRATEGIES:
        if f"plumber-{strategy}" not in tables:
            continue
        settings = {"vertical_strategy": strategy, "horizontal_strategy": strategy}
        for table in page.find_tables(settings):
            cells = [[c if c is not None else "" for c in row] for row in table.extract()]
            found.append(
                {"source": f"plumber-{strategy}", "bbox": list(table.bbox), "cells": cells}
            )
    return {
        "width": float(page.width),
        "height": float(page.height),
        "text": page.extract_text() or "",
        "words": [[w["text"], w["x0"], w["top"], w["x1"], w["bottom"]] for w in words],
        "tables": found,
    }


def _camelot_tables(path: str, wanted: list[int], flavor: str, out: dict[str, Any]) -> None:
    import camelot

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            found = camelot.read_pdf(path, flavor=flavor, pages=",".join(map(str, wanted)))
        except Exception as exc:  # one flavor failing leaves the others' candidates
            out["problems"].append(f"camelot {flavor}: {type(exc).__name__}: {exc}"[:300])
            return
    for table in found:
        page = out["pages"].get(int(table.page))
        if page is None:
            continue
        x1, y1, x2, y2 = table._bbox  # PDF space: origin bottom left
        height = page["height"]
        cells = table.df.fillna("").astype(str).values.tolist()
        bbox = [x1, height - y2, x2, height - y1]
        page["tables"].append({"source": flavor, "bbox": bbox, "cells": cells})
