"""Table metrics against their published definitions, on pairs computed by hand.

GriTS (Smock, Pesala, Abraham 2023): GriTS_f = 2 Σ f(Ã, B̃) / (|A| + |B|) over the most
similar substructures, P = Σ/|A| (A predicted), R = Σ/|B|. TEDS (Zhong et al. 2020):
1 - TED / max(|T_a|, |T_b|) on table → [thead] → tbody → tr → td, |T| counting every node.
Each expected value below is worked out in its comment; the library must agree.
"""

from __future__ import annotations

import itertools
import random
from pathlib import Path

import pytest

from rewardsmith.verifiers.finance.grits import (
    factored_mss,
    grits_con,
    grits_loc,
    grits_top,
    lcs_length,
    lcs_similarity,
)
from rewardsmith.verifiers.finance.icdar import load_structure, relations_of
from rewardsmith.verifiers.finance.metrics import (
    cell_prf,
    grid_similarity,
    normalise_cell,
    prf,
    table_relations,
)
from rewardsmith.verifiers.finance.tables import Cell, Table
from rewardsmith.verifiers.finance.teds import row_aligned, teds, teds_struct

T = Table.from_grid
H = Table(((Cell("H", colspan=2),), (Cell("x"), Cell("y"))))  # a spanning header

GRITS_CON = [
    # (pred, true, precision, recall, f1, why)
    (T([["a", "b"], ["c", "d"]]), T([["a", "b"], ["c", "d"]]), 1.0, 1.0, 1.0, "identical"),
    # a missing row: Σf = 4 over the shared 2x2; P = 4/4, R = 4/6, F = 2·4/(4+6)
    (T([["a", "b"], ["c", "d"]]), T([["a", "b"], ["c", "d"], ["e", "f"]]), 1.0, 4 / 6, 0.8, ""),
    # LCS(abcd, abed) = abd: f = 2·3/(4+4) = 0.75 for the one cell
    (T([["abcd"]]), T([["abed"]]), 0.75, 0.75, 0.75, "near text"),
    # 1x2 against 2x1: the largest common substructure is 1x1 ("a"): Σf = 1, P = R = 1/2
    (T([["a", "b"]]), T([["a"], ["b"]]), 0.5, 0.5, 0.5, "transposed"),
    # columns swapped: order is kept, so only one column matches: Σf = 2 of 4 cells
    (T([["a", "b"], ["c", "d"]]), T([["b", "a"], ["d", "c"]]), 0.5, 0.5, 0.5, "swapped"),
    # a spanning cell repeats its text in both grid cells: Σf = 4 of 4
    (H, T([["H", "H"], ["x", "y"]]), 1.0, 1.0, 1.0, "span as repeated text"),
    # a figure off by one digit: LCS(122,446, 122,445) = 6 of 7 characters: f = 12/14
    (T([["122,446"]]), T([["122,445"]]), 6 / 7, 6 / 7, 6 / 7, "near number"),
]


@pytest.mark.parametrize(("pred", "true", "p", "r", "f", "why"), GRITS_CON)
def test_grits_con_by_hand(
    pred: Table, true: Table, p: float, r: float, f: float, why: str
) -> None:
    result = grits_con(pred, true)
    assert (result.precision, result.recall, result.f1) == pytest.approx((p, r, f)), why
    assert result.f1 == pytest.approx(2 * result.matched / (_size(pred) + _size(true)))


def _size(table: Table) -> int:
    grid = table.grid()
    return len(grid) * len(grid[0]) if grid else 0


def test_grits_top_by_hand() -> None:
    # H's grid: (0,0) -> (0,0,2,1), (0,1) -> (-1,0,1,1), row 1 -> (0,0,1,1) twice.
    # Against all 1x1 cells (0,0,1,1): IoU 1/2, 1/2, 1, 1: Σ = 3, GriTS = 2·3/8.
    result = grits_top(H, T([["H", "H"], ["x", "y"]]))
    assert (result.precision, result.recall, result.f1) == pytest.approx((0.75, 0.75, 0.75))
    assert grits_top(H, H).f1 == 1.0


def test_grits_loc_by_hand() -> None:
    # The second cell's box moved 2 pt: IoU = (8·10)/(10·10) = 0.8; Σ = 1.8 of 2 cells.
    pred = [[(0.0, 0.0, 10.0, 10.0), (10.0, 0.0, 20.0, 10.0)]]
    true = [[(0.0, 0.0, 10.0, 10.0), (12.0, 0.0, 20.0, 10.0)]]
    assert grits_loc(pred, true).f1 == pytest.approx(0.9)


def _exact_mss(pred: list[list[str]], true: list[list[str]]) -> float:
    """The definition itself: the best Σf over all equal-size row and column subsets."""
    best = 0.0
    for k in range(1, min(len(pred), len(true)) + 1):
        for rows_p in itertools.combinations(range(len(pred)), k):
            for rows_t in itertools.combinations(range(len(true)), k):
                for m in range(1, min(len(pred[0]), len(true[0])) + 1):
                    for cols_p in itertools.combinations(range(len(pred[0])), m):
                        for cols_t in itertools.combinations(range(len(true[0])), m):
                            total = sum(
                                lcs_similarity(pred[i][j], true[a][b])
                                for i, a in zip(rows_p, rows_t, strict=True)
                                for j, b in zip(cols_p, cols_t, strict=True)
                            )
                            best = max(best, total)
    return best


def test_factored_alignment_never_exceeds_the_exact_substructure() -> None:
    rng = random.Random(5)
    equal = 0
    for _ in range(40):
        pred = [[rng.choice("abc") for _ in range(rng.randint(1, 3))] for _ in range(3)]
        pred = [row + ["a"] * (3 - len(row)) for row in pred]
        true = [[rng.choice("abcd") for _ in range(3)] for _ in range(rng.randint(1, 3))]
        factored = factored_mss(pred, true, lcs_similarity).matched
        exact = _exact_mss(pred, true)
        assert factored <= exact + 1e-9  # it is one feasible substructure
        equal += abs(factored - exact) < 1e-9
    assert equal >= 20  # and usually the best one (29 of these 40 random grids, measured)


def test_lcs_is_exact() -> None:
    def by_table(a: str, b: str) -> int:
        d = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
        for i in range(1, len(a) + 1):
            for j in range(1, len(b) + 1):
                same = d[i - 1][j - 1] + 1 if a[i - 1] == b[j - 1] else 0
                d[i][j] = max(same, d[i - 1][j], d[i][j - 1])
        return d[-1][-1]

    rng = random.Random(3)
    for _ in range(500):
        a = "".join(rng.choice("ab,1") for _ in range(rng.randint(0, 15)))
        b = "".join(rng.choice("ab,12") for _ in range(rng.randint(0, 15)))
        assert lcs_length(a, b) == by_table(a, b), (a, b)
    assert lcs_similarity("", "") == 1.0


TEDS = [
    # (pred, true, head, teds, teds_struct, why); trees: table, tbody, tr..., td...
    (T([["a", "b"]]), T([["a", "b"]]), (0, 0), 1.0, 1.0, "identical"),
    # 5 nodes each; rename td b -> td c costs lev(b, c)/1 = 1: 1 - 1/5
    (T([["a", "b"]]), T([["a", "c"]]), (0, 0), 0.8, 1.0, "one wrong cell"),
    # 4 nodes; rename costs lev(ab, ac)/2 = 0.5: 1 - 0.5/4
    (T([["ab"]]), T([["ac"]]), (0, 0), 0.875, 1.0, "half a cell wrong"),
    # 6 and 4 nodes; delete one tr and its td: 1 - 2/6
    (T([["a"], ["b"]]), T([["a"]]), (0, 0), 2 / 3, 2 / 3, "an extra row"),
    # a colspan-2 td against two tds: rename (spans differ) 1 + insert 1: 1 - 2/5
    (Table(((Cell("a", colspan=2),),)), T([["a", "a"]]), (0, 0), 0.6, 0.6, "span"),
    # 1x3 (6 nodes) against 3x1 (8 nodes): delete the tr, insert one tr over each td: 4
    (T([["a", "b", "c"]]), T([["a"], ["b"], ["c"]]), (0, 0), 0.5, 0.5, "transposed"),
    # header in thead on one side only (7 and 6 nodes): delete thead and tbody, insert a
    # tbody over both rows: 3 edits, 1 - 3/7
    (T([["h"], ["x"]]), T([["h"], ["x"]]), (1, 0), 4 / 7, 4 / 7, "thead on one side"),
]


@pytest.mark.parametrize(("pred", "true", "head", "full", "struct", "why"), TEDS)
def test_teds_by_hand(
    pred: Table, true: Table, head: tuple[int, int], full: float, struct: float, why: str
) -> None:
    assert teds(pred, true, head) == pytest.approx(full), why
    assert teds_struct(pred, true, head) == pytest.approx(struct), why


def test_row_aligned_score_bounds_teds_from_below() -> None:
    rng = random.Random(11)

    def table(letters: str) -> Table:
        rows = rng.randint(1, 4)
        return T([[rng.choice(letters) for _ in range(rng.randint(1, 3))] for _ in range(rows)])

    for _ in range(60):
        a, b = table("xy"), table("xyz")
        assert row_aligned(a, b) <= teds_struct(a, b) + 1e-9
        assert row_aligned(a, b, content=True) <= teds(a, b) + 1e-9
    # The transposed pair above: rows kept, 2 cells deleted and 2 rows inserted: 1 - 6/8.
    assert row_aligned(T([["a", "b", "c"]]), T([["a"], ["b"], ["c"]])) == pytest.approx(0.25)


GOLD = T(
    [
        ["Item", "2024", "2023"],
        ["Revenue", "122,445", "150,239"],
        ["Costs", "(44,943)", "(43,084)"],
        ["Total", "77,502", "107,155"],
    ]
)


def _edit(edit) -> Table:  # type: ignore[no-untyped-def]
    grid = GOLD.grid()
    edit(grid)
    return T(grid)


def test_notation_differences_do_not_count() -> None:
    model = T(
        [
            ["item", "2024", "2023"],
            ["Revenue", "$122445", "150239"],
            ["Costs", "-44,943", "−43084"],
            ["Total", "77502.0", "107,155"],
        ]
    )
    assert cell_prf(model, GOLD).f1 == 1.0
    assert grid_similarity(model, GOLD).f1 == 1.0


def test_one_wrong_cell_costs_one_triple() -> None:
    wrong = _edit(lambda g: g[2].__setitem__(1, "(44,934)"))  # transposed digits
    result = cell_prf(wrong, GOLD)
    assert (result.matched, result.predicted, result.gold) == (5, 6, 6)
    assert teds_struct(wrong, GOLD) == 1.0  # structure is unchanged


def test_a_near_miss_figure_earns_nothing_in_the_grid_score() -> None:
    near = _edit(lambda g: g[1].__setitem__(1, "122,446"))
    assert grid_similarity(near, GOLD).matched == pytest.approx(11)  # 12 cells, 1 lost
    assert grits_con(near, GOLD).matched > 11.8  # the reference metric pays most of it


def test_lost_sign_is_a_wrong_cell() -> None:
    assert cell_prf(_edit(lambda g: g[2].__setitem__(1, "44,943")), GOLD).f1 < 1.0


def test_inserted_row_costs_only_its_cells() -> None:
    inserted = _edit(lambda g: g.insert(2, ["Other", "1", "2"]))
    result = cell_prf(inserted, GOLD)
    assert result.recall == 1.0 and result.precision == 6 / 8
    assert grid_similarity(inserted, GOLD).f1 == pytest.approx(2 * 12 / (15 + 12))


def test_reordered_rows_keep_cell_f1_but_not_grid_order() -> None:
    grid = GOLD.grid()
    shuffled = T([grid[0], grid[3], grid[1], grid[2]])
    assert cell_prf(shuffled, GOLD).f1 == 1.0
    assert grid_similarity(shuffled, GOLD).f1 < 1.0


def test_empty_tables_and_prf_edges() -> None:
    assert prf(0, 0, 0).f1 == 1.0
    assert prf(0, 3, 0).f1 == 0.0
    assert grid_similarity(Table(()), Table(())).f1 == 1.0


def test_normalise_cell() -> None:
    assert normalise_cell("(1,234)") == normalise_cell("-1234") == "-1234"
    assert normalise_cell("12.5 %") == "12.5%"
    assert normalise_cell("  Total   Revenue ") == "total revenue"


def test_adjacency_relations_skip_empty_cells_and_spans() -> None:
    table = Table(((Cell("A", colspan=2), Cell("B")), (Cell("x"), Cell(""), Cell("y"))))
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
    for region in regions:  # a region's own Table (with spans) has exactly its relations
        assert table_relations(region.table()) == region.relations()
    assert sum(relations_of(regions).values()) > 300


@pytest.mark.parametrize("name", ["eu-004", "eu-014", "eu-027"])
def test_every_icdar_table_matches_itself(shared_data: Path, name: str) -> None:
    for region in load_structure(shared_data / f"pdf/icdar2013-eu/{name}-str.xml"):
        table = region.table()
        assert grits_con(table, table).f1 == 1.0 and grits_top(table, table).f1 == 1.0
        assert row_aligned(table, table) == 1.0
