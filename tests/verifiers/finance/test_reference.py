"""Reference extraction on real PDFs: exact tables from the bundled set, ICDAR 2013 and the
NICS report; and every kind of bad PDF ending in a named problem within bounded time."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from rewardsmith.verifiers.finance.consistency import check_table
from rewardsmith.verifiers.finance.icdar import load_structure, relations_of
from rewardsmith.verifiers.finance.metrics import prf, table_relations
from rewardsmith.verifiers.finance.reference import (
    ExtractionLimits,
    find_table,
    load_document,
)
from rewardsmith.verifiers.types import Failure

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("company", ["acme", "globex"])
def test_bundled_report_tables_come_back_exactly(bundled: Path, tasks: dict, company: str) -> None:
    result = load_document(str(bundled / f"{company}.pdf"))
    assert result.document is not None, result.problem
    doc = result.document
    assert doc.n_pages == 4 and not doc.pages_without_text
    income, balance, regions = doc.tables
    assert income.table.grid() == tasks[f"{company}-income-table"]["reference"]["table"]
    assert income.support >= 2  # a ruled table: every extractor finds it
    assert balance.table.grid()[-9][0] == "Item" and balance.pages == (2,)  # borderless
    # The regional table spans pages 3 and 4; the repeated header is dropped.
    assert regions.pages == (3, 4)
    assert regions.table.grid() == tasks[f"{company}-regions-table"]["reference"]["table"]


def test_extraction_is_cached_by_content(bundled: Path, tmp_path: Path) -> None:
    first = load_document(str(bundled / "acme.pdf"))
    copy = tmp_path / "renamed.pdf"
    copy.write_bytes((bundled / "acme.pdf").read_bytes())
    again = load_document(str(copy))
    assert again is first  # same bytes, same settings: no second parse


def test_find_table_by_page_and_index(bundled: Path) -> None:
    doc = load_document(str(bundled / "acme.pdf")).document
    assert doc is not None
    assert find_table(doc, 4, 0) is not None and find_table(doc, 4, 0).pages == (3, 4)  # type: ignore[union-attr]
    assert find_table(doc, 1, 5) is None


@pytest.mark.parametrize(
    ("kind", "failure", "message"),
    [
        ("empty", Failure.BAD_REFERENCE, "empty (0 bytes)"),
        ("not_pdf", Failure.BAD_REFERENCE, "not a PDF"),
        ("encrypted", Failure.BAD_REFERENCE, "encrypted"),
        ("truncated", Failure.BAD_REFERENCE, "unreadable PDF"),
        ("long", Failure.BAD_REFERENCE, "500 pages"),
    ],
)
def test_bad_pdfs_end_in_a_named_problem(
    hostile: dict[str, Path], kind: str, failure: Failure, message: str
) -> None:
    start = time.monotonic()
    result = load_document(str(hostile[kind]))
    assert result.document is None
    assert result.failure is failure and message in result.problem
    assert time.monotonic() - start < 120  # bounded by the worker's limit


def test_missing_file_is_named(tmp_path: Path) -> None:
    result = load_document(str(tmp_path / "nope.pdf"))
    assert result.failure is Failure.BAD_REFERENCE and "cannot open" in result.problem


def test_a_named_page_of_a_500_page_file_is_read(hostile: dict[str, Path]) -> None:
    result = load_document(str(hostile["long"]), [250], tables=False)
    assert result.document is not None and result.document.n_pages == 500
    assert "250,007" in result.document.text[250]
    beyond = load_document(str(hostile["long"]), [501], tables=False)
    assert beyond.failure is Failure.BAD_REFERENCE and "does not exist" in beyond.problem


def test_scanned_page_has_no_text_layer(hostile: dict[str, Path]) -> None:
    result = load_document(str(hostile["scanned"]))
    assert result.document is not None
    assert result.document.pages_without_text == [1] and result.document.tables == []


def test_parse_past_its_deadline_is_a_timeout(bundled: Path, tmp_path: Path) -> None:
    path = tmp_path / "fresh.pdf"  # different bytes from the cached file: a real parse
    path.write_bytes((bundled / "globex.pdf").read_bytes() + b"\n%")
    start = time.monotonic()
    result = load_document(str(path), limits=ExtractionLimits(timeout_s=0.05))
    assert result.failure is Failure.VERIFIER_TIMEOUT and "longer than 0.05 s" in result.problem
    assert time.monotonic() - start < 60


def test_icdar_document_relations_beat_a_floor(shared_data: Path) -> None:
    folder = shared_data / "pdf/icdar2013-eu"
    gold = relations_of(load_structure(folder / "eu-001-str.xml"))
    result = load_document(str(folder / "eu-001.pdf"))
    assert result.document is not None
    predicted = sum((table_relations(t.table) for t in result.document.tables), start=gold - gold)
    score = prf(sum((predicted & gold).values()), sum(predicted.values()), sum(gold.values()))
    assert score.f1 > 0.85, score


def test_nics_report_columns_sum_to_its_totals_row(shared_data: Path) -> None:
    pdf = shared_data / "pdf/pdfplumber/nics-background-checks-2015-11.pdf"
    result = load_document(str(pdf), [1])  # the page the consistency test reads: cached
    assert result.document is not None
    checks = [c for t in result.document.tables for c in check_table(t.table)]
    totals = [c for c in checks if c.kind == "total" and c.where.startswith("Totals")]
    assert len(totals) >= 20 and all(c.ok for c in totals), [c for c in totals if not c.ok]
    assert totals[0].stated == 804_006


def test_owner_password_only_pdf_opens_with_the_empty_password(
    hostile: dict[str, Path], tasks: dict
) -> None:
    result = load_document(str(hostile["owner_only"]))
    assert result.document is not None, result.problem
    income = result.document.tables[0].table.grid()
    assert income == tasks["acme-income-table"]["reference"]["table"]


def test_a_bomb_costs_its_time_once(bomb: Path) -> None:
    from rewardsmith.verifiers.finance import reference
    from rewardsmith.verifiers.finance.doc_cache import FailureCache

    limits = ExtractionLimits(timeout_s=2.0)
    first = load_document(str(bomb), limits=limits)
    assert first.failure is Failure.VERIFIER_TIMEOUT and not first.remembered
    # The next samples citing it get the same verdict without a parse (`remembered` is
    # only set when no worker was asked), with these limits or tighter ones.
    for same_or_tighter in (limits, ExtractionLimits(timeout_s=1.0, memory_bytes=1 << 30)):
        again = load_document(str(bomb), limits=same_or_tighter)
        assert again.failure is Failure.VERIFIER_TIMEOUT and again.remembered
        assert "remembered" in again.problem
    # Another process (a pool worker) finds the record on disk.
    other = FailureCache(reference._failures.directory)
    found = other.find(reference._failures._memory[0][0], limits.remember_failures_s)
    assert found is not None and found.failure == "verifier_timeout"
    assert other.find(reference._failures._memory[0][0], ttl_s=0) is None  # 0: never


def test_a_remembered_failure_answers_only_requests_that_ask_as_much(tmp_path: Path) -> None:
    from rewardsmith.verifiers.finance.doc_cache import FailureCache, FailureRecord, RequestKey

    failed = RequestKey("d" * 64, (3,), ("stream",), 2, 50, 10.0, 1 << 30)
    cache = FailureCache(tmp_path)
    cache.add(failed, FailureRecord("verifier_timeout", "too slow", time.time()))
    same = failed
    more = RequestKey("d" * 64, (3, 4), ("stream", "ruled"), 2, 50, 5.0, 1 << 29)
    fewer_pages = RequestKey("d" * 64, (4,), ("stream",), 2, 50, 10.0, 1 << 30)
    looser = RequestKey("d" * 64, (3,), ("stream",), 2, 50, 60.0, 1 << 30)
    other_file = RequestKey("e" * 64, (3,), ("stream",), 2, 50, 10.0, 1 << 30)
    for key, remembered in ((same, True), (more, True), (fewer_pages, False),
                            (looser, False), (other_file, False)):  # fmt: skip
        assert (cache.find(key, ttl_s=3600) is not None) is remembered, key
    assert FailureCache(tmp_path).find(more, ttl_s=3600) is not None  # from disk
    assert cache.find(same, ttl_s=0) is None
