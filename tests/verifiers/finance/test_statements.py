"""Statements written as annual reports write them (`datasets/finance/statements.py`):
every correct one passes consistency, every planted error is flagged with its row, a right
table scores 1 against any layout of the same statement, in text and out of a PDF."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from rewardsmith.datasets.finance.statements import (
    LAYOUTS,
    Layout,
    Statement,
    default_layout,
    draw_pdf,
    plant_error,
    statement,
)
from rewardsmith.verifiers.finance.consistency import Consistency, check_table
from rewardsmith.verifiers.finance.exploits import markdown
from rewardsmith.verifiers.finance.headers import detect_header
from rewardsmith.verifiers.finance.table_match import TableMatch
from rewardsmith.verifiers.finance.tables import Table
from rewardsmith.verifiers.types import Sample, Status

SEEDS = range(4)
VARIANTS = [
    {},
    {"title": True, "units": True},
    {"two_level": True, "stub_header": "Item"},
    {"title": True, "units": True, "two_level": True},
]


def _layouts(s: Statement) -> list[Layout]:
    convention = [default_layout(s, **v) for v in VARIANTS]  # type: ignore[arg-type]
    other = "parentheses" if s.positive_costs else "positive"
    return [*convention, Layout(costs=other)]  # type: ignore[arg-type]


CASES = [(name, seed) for name in LAYOUTS for seed in SEEDS]


@pytest.mark.parametrize(("name", "seed"), CASES)
def test_every_correct_statement_passes(name: str, seed: int) -> None:
    s = statement(name, seed)
    for layout in _layouts(s):
        verdict = Consistency(min_checks=1)(Sample(id="s", completion=markdown(s.rows(layout))))
        assert verdict.status is Status.PASS, (layout, verdict.evidence["failed"])
        assert verdict.evidence["checks"] >= 8  # 4 to 9 sums a year


@pytest.mark.parametrize(("name", "seed"), CASES)
def test_every_planted_error_is_flagged_with_its_row(name: str, seed: int) -> None:
    s = statement(name, seed)
    layout = default_layout(s, title=True, units=True)
    for line, year in itertools.product([x for x in s.lines if x.kind != "heading"], (0, 1)):
        grid = plant_error(s, line.label, year).rows(layout)
        row = next(i for i, r in enumerate(grid) if r[0] == line.label)
        failed = [c for c in check_table(Table.from_grid(grid)) if not c.ok]
        assert failed, f"{line.label} ({s.years[year]}) off by 9 was not flagged"
        assert all(row in c.rows for c in failed), (line.label, [c.where for c in failed])
        assert all(s.years[year] in c.column or c.kind == "balance" for c in failed)


def test_checks_name_their_rule_and_rows() -> None:
    s = statement("us_income", 0)
    grid = s.rows(default_layout(s))
    gross = next(c for c in check_table(Table.from_grid(grid)) if c.kind == "gross_profit")
    assert gross.where.startswith("Gross profit = Revenue ± Cost of revenue")
    assert [grid[r][0] for r in gross.rows] == ["Revenue", "Cost of revenue", "Gross profit"]
    balance = statement("us_balance", 0)
    grid = balance.rows(default_layout(balance))
    checks = check_table(Table.from_grid(grid))
    total = next(c for c in checks if c.where.startswith("Total assets ="))
    labels = [grid[r][0] for r in total.rows]
    assert labels == [
        "Total current assets",
        "Property, plant and equipment, net",
        "Goodwill",
        "Total assets",
    ]  # a total of totals: each section once, the "less" pair as its net figure
    less = next(c for c in checks if c.kind == "less")
    assert less.where.startswith(
        "Property, plant and equipment, net = Property, plant and equipment - Less:"
    )


def test_headers_are_found_in_every_layout() -> None:
    s = statement("ifrs_balance", 2)
    grid = s.rows(Layout(title=True, units=True, two_level=True))
    header = detect_header(grid)
    assert (header.title_rows, header.unit_rows, header.header_rows) == ((0,), (1,), (2, 3))
    assert header.column_keys[1:] == ("2024", "2023") and header.body_start == 4


@pytest.mark.parametrize(("name", "seed"), CASES[::2])
def test_a_right_table_scores_one_against_any_layout(name: str, seed: int) -> None:
    s = statement(name, seed)
    layouts = _layouts(s)[:-1]  # the same printing convention, other header dressing
    for model, gold in itertools.permutations(layouts, 2):
        completion = markdown(s.rows(model))
        verdict = TableMatch()(Sample(id="t", completion=completion, reference=s.rows(gold)))
        assert verdict.status is Status.PASS, (model, gold, verdict.feedback)


@pytest.mark.slow
@pytest.mark.parametrize("name", LAYOUTS)
def test_statement_pdfs_split_over_two_pages(name: str, tmp_path: Path) -> None:
    s = statement(name, 7)
    layout = default_layout(s)
    pdf = tmp_path / f"{name}.pdf"
    draw_pdf(s, layout, str(pdf), split_after=len(s.lines) // 2)
    reference = {"pdf": str(pdf), "page": 1, "table": 0}
    model = markdown(s.rows(default_layout(s, title=True, units=True, two_level=True)))
    verdict = TableMatch()(Sample(id="t", completion=model, reference=reference))
    assert verdict.status is Status.PASS, verdict.feedback  # both pages, merged
    check = Consistency(min_checks=1)(Sample(id="c", completion=model, reference=reference))
    assert check.status is Status.PASS, check.evidence


@pytest.mark.slow
@pytest.mark.parametrize(
    ("repeat_header", "second_caption", "joined"),
    [
        (False, None, True),  # "(continued)" caption, no header: joined
        (True, "Contoso plc - Consolidated Balance Sheets (cont'd)", True),
        (False, "Note 12 - Segment information", False),  # a caption of its own
    ],
)
def test_captions_decide_what_continues(
    tmp_path: Path, repeat_header: bool, second_caption: str | None, joined: bool
) -> None:
    from rewardsmith.verifiers.finance.reference import load_document

    s = statement("us_balance", 0)
    pdf = tmp_path / "split.pdf"
    draw_pdf(s, default_layout(s), str(pdf), 12, False, repeat_header, second_caption)
    document = load_document(str(pdf)).document
    assert document is not None
    assert [t.pages for t in document.tables] == ([(1, 2)] if joined else [(1,), (2,)])
