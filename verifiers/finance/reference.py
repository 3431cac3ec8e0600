"""Reference extraction: the tables, words and text of a PDF, read within limits and cached.

`load_document` parses the pages asked for in a killable worker (`call_with_limits`, a time
and a memory limit), so an encrypted, truncated, image-only, 500-page or bomb PDF ends in a
`DocumentResult` that names the problem instead of a hang. In the worker, `pdf.extract_pdf`
lays out each page once and runs the table extractors on that layout; here their
candidates are chosen by agreement (`choose`) and tables that run over a page break are
joined (`continued`).

Results are cached by file content and settings, and so are failures (`doc_cache`): a file
that timed out or blew the memory limit answers the next request that asks as much at
once, with the same verdict.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from rewardsmith.verifiers.finance.choose import ExtractedTable, choose_tables
from rewardsmith.verifiers.finance.continued import merge_continued
from rewardsmith.verifiers.finance.doc_cache import (
    FailureCache,
    FailureRecord,
    RequestKey,
    ResultCache,
    sha256_of,
)
from rewardsmith.verifiers.finance.pdf import EXTRACTORS, extract_pdf, pdf_problem
from rewardsmith.verifiers.killable import call_with_limits
from rewardsmith.verifiers.types import Failure, Verdict

__all__ = [
    "DEFAULT_SOURCES",
    "Document",
    "DocumentResult",
    "ExtractedTable",
    "ExtractionLimits",
    "document_from_raw",
    "find_table",
    "load_document",
    "pdf_spec",
    "problem_verdict",
    "read_pdf_table",
]

DEFAULT_SOURCES = EXTRACTORS


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
    """Table extractors whose candidates are compared (`pdf.EXTRACTORS`)."""
    min_support: int = 2
    """A table is kept only when this many extractors found it."""
    remember_failures_s: float = 3600.0
    """How long a timeout or memory failure of a file is remembered (0: never)."""

    def __post_init__(self) -> None:
        unknown = set(self.sources) - set(EXTRACTORS)
        if unknown:
            raise ValueError(f"unknown sources {sorted(unknown)}: choose from {EXTRACTORS}")
        if not 1 <= self.min_support <= max(1, len(self.sources)):
            raise ValueError("min_support must be between 1 and the number of sources")


@dataclass(frozen=True)
class Document:
    n_pages: int
    text: dict[int, str]
    words: dict[int, list[tuple[str, float, float, float, float]]]
    tables: list[ExtractedTable]
    problems: list[str] = field(default_factory=list)
    lines: dict[int, list[tuple[str, float, float, float, float]]] = field(default_factory=dict)
    images: dict[int, list[tuple[float, float, float, float]]] = field(default_factory=dict)

    @property
    def pages_without_text(self) -> list[int]:
        return [p for p, w in self.words.items() if not w]


@dataclass(frozen=True)
class DocumentResult:
    """A `Document`, or why there is none: ``problem`` text and the `Failure` it maps to."""

    document: Document | None = None
    problem: str = ""
    failure: Failure | None = None
    remembered: bool = False
    """The failure was remembered from an earlier parse of the same file (not re-parsed)."""


_results = ResultCache()
_failures = FailureCache()


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
    key = RequestKey(
        sha256_of(path),
        tuple(sorted(set(pages))) if pages else None,
        limits.sources if tables else (),
        limits.min_support,
        limits.max_pages,
        limits.timeout_s,
        limits.memory_bytes,
    )
    hit = _results.get(key)
    if hit is not None:
        return hit
    failed = _failures.find(key, limits.remember_failures_s)
    if failed is not None:
        ago = time.time() - failed.at
        problem = f"{failed.problem} (remembered from a parse {ago:.0f} s ago; not parsed again)"
        return DocumentResult(problem=problem, failure=Failure(failed.failure), remembered=True)
    result = _extract(path, key.pages, key.sources, limits)
    if result.failure in (Failure.VERIFIER_TIMEOUT, Failure.WORKER_DIED):
        record = FailureRecord(result.failure.value, result.problem, time.time())
        _failures.add(key, record)
    else:
        _results.put(key, result)
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
        preload=("playa", "camelot"),
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
    return DocumentResult(document=document_from_raw(outcome.value, limits.min_support))


def document_from_raw(raw: dict[str, Any], min_support: int = 2) -> Document:
    """The `Document` made from `extract_pdf`'s output: tables chosen and joined."""
    pages = {int(n): p for n, p in raw["pages"].items()}
    chosen: list[ExtractedTable] = []
    for number, page in pages.items():
        chosen += choose_tables(page["tables"], number, min_support, page.get("marks", ()))
    lines = {n: [tuple(line) for line in p["lines"]] for n, p in pages.items()}
    return Document(
        n_pages=raw["n_pages"],
        text={n: p["text"] for n, p in pages.items()},
        words={n: [tuple(w) for w in p["words"]] for n, p in pages.items()},
        tables=merge_continued(chosen, lines),
        problems=raw["problems"],
        lines=lines,
        images={n: [tuple(b) for b in p["images"]] for n, p in pages.items()},
    )


def problem_verdict(name: str, version: str, result: DocumentResult) -> Verdict:
    """The verdict for a PDF that could not be read: never a silent 0 or 1."""
    failure = result.failure or Failure.BAD_REFERENCE
    evidence = {"pdf_problem": result.problem, "remembered": result.remembered}
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
