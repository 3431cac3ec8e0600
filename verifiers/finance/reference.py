"""Reference extraction: the tables, words and text of a PDF, chosen by agreement.

Every extractor gets some tables wrong, and camelot's own ``accuracy`` figure measures how
well its parser agreed with itself, not whether the table is right. So we run several
(camelot ``stream`` and ``hybrid`` and pdfplumber's ``lines`` strategy by default; camelot
``lattice`` and ``network`` and pdfplumber's ``text`` strategy on request), group their
candidate tables by overlapping bounding boxes, and per group keep the candidate that
agrees best with the others:

    agreement(t) = mean over candidates u from other extractors of F1(relations(t), relations(u))

where relations are ICDAR 2013 adjacency relations (`metrics.adjacency_relations`). A group
needs candidates from at least `min_support` extractors (one extractor alone is not
evidence), and a candidate must be consistent as a table (at least two rows and two columns)
to be chosen. On the ICDAR 2013 EU set this beats every single flavor: see
``docs/benchmarks.md``.

A table whose continuation opens the next page (same column count, first on its page) is
merged with it, so a table that spans pages comes back whole.

Parsing runs in a killable worker (`call_with_limits`) with a time and memory limit, so an
encrypted, truncated, image-only or 500-page PDF ends in a `DocumentResult` that names the
problem. Results are cached per file content hash (SHA-256) and settings.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from rewardsmith.verifiers.finance.figures import is_data_cell
from rewardsmith.verifiers.finance.metrics import prf, table_relations
from rewardsmith.verifiers.finance.pdf import extract_pdf, pdf_problem
from rewardsmith.verifiers.finance.tables import Table, split_stacked_rows
from rewardsmith.verifiers.killable import call_with_limits
from rewardsmith.verifiers.types import Failure, Verdict

__all__ = [
    "DEFAULT_SOURCES",
    "Document",
    "DocumentResult",
    "ExtractedTable",
    "ExtractionLimits",
    "choose_tables",
    "find_table",
    "load_document",
    "pdf_spec",
    "problem_verdict",
    "read_pdf_table",
]

DEFAULT_SOURCES = ("stream", "hybrid", "plumber-lines")


@dataclass(frozen=True)
class ExtractionLimits:
    """How much one PDF may cost. Part of every PDF verifier's config."""

    timeout_s: float = 120.0
    """Wall-clock limit for parsing one PDF; the worker is killed after it."""
    memory_bytes: int = 4 * 1024**3
    """Address-space limit of the parsing worker."""
    max_bytes: int = 50 * 1024**2
    """Larger files are refused before parsing."""
    max_pages: int = 50
    """More pages than this must be named (a cited page), or the file is refused."""
    sources: tuple[str, ...] = DEFAULT_SOURCES
    """Table extractors whose candidates are compared (camelot flavors, ``plumber-lines``,
    ``plumber-text``)."""
    min_support: int = 2
    """A table is kept only when this many extractors found it."""


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


@dataclass(frozen=True)
class Document:
    n_pages: int
    text: dict[int, str]
    words: dict[int, list[tuple[str, float, float, float, float]]]
    tables: list[ExtractedTable]
    problems: list[str] = field(default_factory=list)

    @property
    def pages_without_text(self) -> list[int]:
        return [p for p, w in self.words.items() if not w]


@dataclass(frozen=True)
class DocumentResult:
    """A `Document`, or why there is none: ``problem`` text and the `Failure` it maps to."""

    document: Document | None = None
    problem: str = ""
    failure: Failure | None = None


def choose_tables(
    candidates: Sequence[dict[str, Any]], page: int, min_support: int
) -> list[ExtractedTable]:
    """Group overlapping candidates from one page and keep the most agreed-on per group."""
    usable = [c for c in candidates if len(c["cells"]) >= 2 and len(c["cells"][0]) >= 2]
    for c in usable:
        c["table"] = Table.from_grid(split_stacked_rows(c["cells"]))
        c["relations"] = table_relations(c["table"])
    groups: list[list[dict[str, Any]]] = []
    for c in usable:
        home = next(
            (g for g in groups if any(_overlap(c["bbox"], u["bbox"]) > 0.5 for u in g)), None
        )
        if home is None:
            groups.append([c])
        else:
            home.append(c)
    chosen = []
    for group in groups:
        support = len({c["source"] for c in group})
        if support < min_support:
            continue
        scored = [(_agreement(c, group), _fill(c["table"]), c) for c in group]
        agreement, _, best = max(scored, key=lambda s: (s[0], s[1]))
        x0, top, x1, bottom = best["bbox"]
        chosen.append(
            ExtractedTable(
                page,
                (x0, top, x1, bottom),
                best["table"],
                best["source"],
                support,
                agreement,
                (page,),
            )
        )
    return sorted(chosen, key=lambda t: t.bbox[1])


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
    grid = table.grid()
    cells = [c for row in grid for c in row]
    return sum(bool(c.strip()) for c in cells) / max(1, len(cells))


def _overlap(a: Sequence[float], b: Sequence[float]) -> float:
    """Intersection over the smaller box's area."""
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    if w <= 0 or h <= 0:
        return 0.0
    smaller = min((a[2] - a[0]) * (a[3] - a[1]), (b[2] - b[0]) * (b[3] - b[1]))
    return w * h / smaller if smaller > 0 else 0.0


def merge_continued(tables: list[ExtractedTable]) -> list[ExtractedTable]:
    """Join a table that opens page n+1 to the last table of page n when it continues it.

    It continues it when the widths agree and its first row either repeats the header
    (dropped) or is a data row (holds a figure past the first column); a first row of new
    header text starts a new table.
    """
    merged: list[ExtractedTable] = []
    for t in sorted(tables, key=lambda t: (t.page, t.bbox[1])):
        prev = merged[-1] if merged else None
        if prev is not None and _continues(prev, t, merged):
            rows = t.table.rows
            if _texts(rows[0]) == _texts(prev.table.rows[0]):
                rows = rows[1:]
            merged[-1] = ExtractedTable(
                prev.page,
                prev.bbox,
                Table(prev.table.rows + rows),
                prev.source,
                min(prev.support, t.support),
                min(prev.agreement, t.agreement),
                (*prev.pages, t.page),
            )
        else:
            merged.append(t)
    return merged


def _continues(prev: ExtractedTable, t: ExtractedTable, merged: list[ExtractedTable]) -> bool:
    first_on_page = all(m.page != t.page for m in merged)
    if not (first_on_page and t.page == prev.pages[-1] + 1 and _width(prev) == _width(t)):
        return False
    first = _texts(t.table.rows[0])
    if first == _texts(prev.table.rows[0]):
        return True
    return any(is_data_cell(text) for text in first[1:])


def _width(t: ExtractedTable) -> int:
    grid = t.table.grid()
    return len(grid[0]) if grid else 0


def _texts(row: Sequence[Any]) -> list[str]:
    return [c.text for c in row]


# ------------------------------------------------------------------ loading and caching

_CACHE_SIZE = 64
_cache: OrderedDict[tuple, DocumentResult] = OrderedDict()
_cache_lock = threading.Lock()


def _cached(key: tuple) -> DocumentResult | None:
    """The exact entry, or a parse of a superset of the pages (every page when None)."""
    if key in _cache:
        _cache.move_to_end(key)
        return _cache[key]
    digest, wanted, *rest = key
    for (d, pages, *r), result in _cache.items():
        covers = pages is None or (wanted is not None and set(wanted) <= set(pages))
        if d == digest and r == rest and result.document is not None and covers:
            return result
    return None


def _sha256(path: str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def load_document(
    path: str,
    pages: Sequence[int] | None = None,
    *,
    tables: bool = True,
    limits: ExtractionLimits = ExtractionLimits(),
) -> DocumentResult:
    """Parse `pages` (1-based; None = all) of the PDF at `path` within `limits`."""
    problem = pdf_problem(path, limits.max_bytes)
    if problem:
        return DocumentResult(problem=problem, failure=Failure.BAD_REFERENCE)
    wanted = tuple(sorted(set(pages))) if pages else None
    sources = limits.sources if tables else ()
    key = (_sha256(path), wanted, sources, limits.min_support, limits.max_pages)
    with _cache_lock:
        hit = _cached(key)
        if hit is not None:
            return hit
    result = _extract(path, wanted, sources, limits)
    if result.failure is not Failure.VERIFIER_TIMEOUT and result.failure is not Failure.WORKER_DIED:
        with _cache_lock:
            _cache[key] = result
            while len(_cache) > _CACHE_SIZE:
                _cache.popitem(last=False)
    return result


def _extract(
    path: str, pages: tuple[int, ...] | None, sources: tuple[str, ...], limits: ExtractionLimits
) -> DocumentResult:
    outcome = call_with_limits(
        extract_pdf,
        path,
        pages,
        sources,
        limits.max_pages,
        timeout_s=limits.timeout_s,
        memory_bytes=limits.memory_bytes,
        preload=("pdfplumber", "camelot"),
    )
    if outcome.timed_out:
        return DocumentResult(
            problem=f"parsing the PDF took longer than {limits.timeout_s:g} s and was stopped",
            failure=Failure.VERIFIER_TIMEOUT,
        )
    if outcome.died:
        return DocumentResult(
            problem="the PDF parser died (memory limit or crash) on this file",
            failure=Failure.WORKER_DIED,
        )
    if outcome.error is not None:
        return DocumentResult(
            problem=f"unreadable PDF: {outcome.error}"[:500], failure=Failure.BAD_REFERENCE
        )
    raw = outcome.value
    chosen: list[ExtractedTable] = []
    for number, page in raw["pages"].items():
        chosen += choose_tables(page["tables"], int(number), limits.min_support)
    document = Document(
        n_pages=raw["n_pages"],
        text={int(n): p["text"] for n, p in raw["pages"].items()},
        words={int(n): [tuple(w) for w in p["words"]] for n, p in raw["pages"].items()},
        tables=merge_continued(chosen),
        problems=raw["problems"],
    )
    return DocumentResult(document=document)


def problem_verdict(name: str, version: str, result: DocumentResult) -> Verdict:
    """The verdict for a PDF that could not be read: never a silent 0 or 1."""
    failure = result.failure or Failure.BAD_REFERENCE
    evidence = {"pdf_problem": result.problem}
    if failure is Failure.VERIFIER_TIMEOUT:
        return Verdict.timed_out(name, version, failure, result.problem, evidence=evidence)
    return Verdict.errored(name, version, failure, result.problem, evidence=evidence)


def read_pdf_table(
    path: str, page: int | None, index: int, limits: ExtractionLimits
) -> ExtractedTable | DocumentResult:
    """The `index`-th table on `page` (None: in the document), or why it cannot be had.

    The next page is read too, so a table that continues there comes back whole.
    """
    result = load_document(path, [page, page + 1] if page else None, limits=limits)
    if result.document is None:
        return result
    if page and page not in result.document.text:
        problem = f"page {page} does not exist: the PDF has {result.document.n_pages} pages"
        return DocumentResult(problem=problem, failure=Failure.BAD_REFERENCE)
    found = find_table(result.document, page, index)
    if found is None:
        where = f"page {page} of {path}" if page else path
        scan = page in result.document.pages_without_text if page else not result.document.words
        why = " (the page has no text layer: a scan?)" if scan else ""
        return DocumentResult(
            problem=f"no table {index} on {where}{why}", failure=Failure.BAD_REFERENCE
        )
    return found


def find_table(document: Document, page: int | None, index: int) -> ExtractedTable | None:
    """The `index`-th chosen table (top to bottom) on `page`, or in the document when None."""
    tables = [t for t in document.tables if page is None or page in t.pages]
    return tables[index] if -len(tables) <= index < len(tables) else None


def pdf_spec(reference: Any) -> tuple[str, int | None, int] | None:
    """``{"pdf": path, "page": n, "table": i}`` as (path, page, index), else None."""
    if not isinstance(reference, dict) or not isinstance(reference.get("pdf"), str):
        return None
    page, index = reference.get("page"), reference.get("table", 0)
    if page is not None and (not isinstance(page, int) or isinstance(page, bool)):
        return None
    if not isinstance(index, int) or isinstance(index, bool):
        return None
    return reference["pdf"], page, index
