"""The ground truth the table benchmark reads (`benchmarks/table_sources.py`): a wrong
reading of it would make every figure of `benchmarks/tables.py` wrong."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.table_sources import _split_at_pages, cache_dir, tagged_regions
from rewardsmith.datasets.finance import generate

BUNDLED = Path(__file__).resolve().parents[3] / "datasets" / "finance"


@pytest.mark.parametrize("company", ["acme", "globex"])
def test_a_table_over_a_page_break_is_one_region_per_page(company: str) -> None:
    s = json.loads((BUNDLED / "truth.json").read_text())[company]
    rows = generate.region_rows(s)
    parts = _split_at_pages(str(BUNDLED / f"{company}.pdf"), rows, first_page=3)
    assert len(parts) == 2
    assert all(part[0] == rows[0] for part in parts)  # the header, repeated
    assert [row for part in parts for row in part[1:]] == rows[1:]  # every row once, in order


def _cached(name: str) -> Path:
    path = cache_dir() / "pdfplumber" / name
    if not path.exists():
        pytest.skip(f"{path} not cached (copy it from jsvine/pdfplumber tests/pdfs)")
    return path


def test_a_tagged_table_reads_as_its_tags_say() -> None:
    (region,) = tagged_regions(_cached("word365_structure.pdf"))
    assert region.table().grid() == [
        ["En-tête 1", "En-tête 2", "En-tête 3"],
        ["Ligne 1", "Alouette", "Farfadet"],
        ["Linge 2", "Belette", "Bibitte"],
    ]


def test_cells_tagged_out_of_order_are_read_in_printed_order() -> None:
    regions = tagged_regions(_cached("WARN-Report-for-7-1-2015-to-03-25-2016.pdf"))
    header = regions[0].table().grid()[3]
    assert header[:3] == ["Notice Date", "Effective", "Received"]
    assert {r.page for r in regions} == set(range(1, 17))
