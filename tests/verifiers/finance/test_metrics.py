"""Table metrics on hand-made cases whose answers are known, and on ICDAR 2013 ground truth."""

from __future__ import annotations

from pathlib import Path

import pytest

from rewardsmith.verifiers.finance.icdar import load_structure, relations_of
from rewardsmith.verifiers.finance.metrics import (
    cell_prf,
    grits_content,
    normalise_cell,
    prf,
    table_relations,
    teds_structure,
)
from rewardsmith.verifiers.finance.tables import Cell, Table

GOLD = Table.from_grid(
    [
        ["Item", "2024", "2023"],
        ["Revenue", "122,445", "150,239"],
        ["Costs", "(44,943)", "(43,084)"],
        ["Total", "77,502", "107,155"],
    ]
)


def _edit(grid_edit) -> Table:  # type: ignore[no-untyped-def]
    grid = GOLD.grid()
    grid_edit(grid)
    return Table.from_grid(grid)


def test_identical_tables_score_one_everywhere() -> None:
    assert cell_prf(GOLD, GOLD).f1 == 1.0
    assert grits_content(GOLD, GOLD) == 1.0
    assert teds_structure(GOLD, GOLD) == 1.0


def test_notation_differences_do_not_count() -> None:
    model = Table.from_grid(
        [
            ["item", "2024", "2023"],
            ["Revenue", "$122445", "150239"],
            ["Costs", "-44,943", "−43084"],
            ["Total", "77502.0", "107,155"],
        ]
    )
    assert cell_prf(model, GOLD).f1 == 1.0
    assert grits_content(model, GOLD) == 1.0


def test_one_wrong_cell_costs_one_triple() -> None:
    wrong = _edit(lambda g: g[2].__setitem__(1, "(44,934)"))  # transposed digits
    result = cell_prf(wrong, GOLD)
    assert (result.matched, result.predicted, result.gold) == (5, 6, 6)
    assert teds_structure(wrong, GOLD) == 1.0  # structure is unchanged


def test_lost_sign_is_a_wrong_cell() -> None:
    unsigned = _edit(lambda g: g[2].__setitem__(1, "44,943"))
    assert cell_prf(unsigned, GOLD).f1 < 1.0


def test_inserted_row_costs_only_its_cells() -> None:
    inserted = _edit(lambda g: g.insert(2, ["Other", "1", "2"]))
    result = cell_prf(inserted, GOLD)
    assert result.recall == 1.0 and result.precision == 6 / 8
    # GriTS aligns around the extra row: 2 * 12 matched / (15 + 12) cells.
    assert grits_content(inserted, GOLD) == pytest.approx(24 / 27)


def test_missing_column_is_partial_in_every_measure() -> None:
    narrow = Table.from_grid([row[:2] for row in GOLD.grid()])
    assert cell_prf(narrow, GOLD).recall == 0.5
    assert grits_content(narrow, GOLD) == pytest.approx(2 * 8 / (8 + 12))
    assert 0 < teds_structure(narrow, GOLD) < 1


def test_reordered_rows_keep_cell_f1_but_not_grits() -> None:
    grid = GOLD.grid()
    shuffled = Table.from_grid([grid[0], grid[3], grid[1], grid[2]])
    assert cell_prf(shuffled, GOLD).f1 == 1.0
    assert grits_content(shuffled, GOLD) < 1.0


def test_spans_change_structure_score() -> None:
    spanned = Table(((Cell("Item"), Cell("Years", colspan=2)), *GOLD.rows[1:]))
    assert teds_structure(spanned, GOLD) < 1.0
    assert teds_structure(spanned, spanned) == 1.0


def test_empty_tables_and_prf_edges() -> None:
    assert prf(0, 0, 0).f1 == 1.0
    assert prf(0, 3, 0).f1 == 0.0
    assert grits_content(Table(()), Table(())) == 1.0


def test_normalise_cell() -> None:
    assert normalise_cell("(1,234)") == normalise_cell("-1234") == "-1234"
    assert normalise_cell("12.5 %") == "12.5%"
    assert normalise_cell("  Total   Revenue ") == "total revenue"


def test_adjacency_relations_skip_empty_cells_and_spans() -> None:
    table = Table(
        (
            (Cell("A", colspan=2), Cell("B")),
            (Cell("x"), Cell(""), Cell("y")),
        )
    )
    assert table_relations(table) == {
        ("A", "B", "right"): 1,
        ("x", "y", "right"): 1,
        ("A", "x", "down"): 1,
        ("B", "y", "down"): 1,
    }


def test_icdar_ground_truth_loads_and_relates(shared_data: Path) -> None:
    regions = load_structure(shared_data / "pdf/icdar2013-eu/eu-001-str.xml")
    assert len({r.table_id for r in regions}) == 7
    assert sorted({r.page for r in regions}) == [1, 2, 3]
    # A region's own Table (with spans) has exactly the region's relations.
    for region in regions:
        assert table_relations(region.table()) == region.relations()
    assert sum(relations_of(regions).values()) > 300


@pytest.mark.parametrize("name", ["eu-004", "eu-014", "eu-027"])
def test_every_icdar_table_matches_itself(shared_data: Path, name: str) -> None:
    for region in load_structure(shared_data / f"pdf/icdar2013-eu/{name}-str.xml"):
        table = region.table()
        assert grits_content(table, table) == 1.0
        assert teds_structure(table, table) == 1.0


def test_grits_gives_partial_credit_for_near_text_not_near_numbers() -> None:
    typo = _edit(lambda g: g[1].__setitem__(0, "Revenues"))
    assert 11 / 12 < grits_content(typo, GOLD) < 1.0
    near_number = _edit(lambda g: g[1].__setitem__(1, "122,446"))
    assert grits_content(near_number, GOLD) == pytest.approx(11 / 12)
