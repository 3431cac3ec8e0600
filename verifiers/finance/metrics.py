"""Table similarity for rewards: cell precision/recall/F1 and a figure-aware grid score,
and the ICDAR 2013 adjacency-relation measure. The reference metrics of the literature are
in `grits` (GriTS_Con, _Top, _Loc) and `teds` (TEDS, TEDS-Struct).

Cells are compared after `normalise_cell`: a figure becomes its value with sign (so
``(1,234)``, ``-1234`` and ``−1,234.0`` agree, and ``1,234`` does not), other text is
case-folded with whitespace collapsed.

- **Cell P/R/F1.** Each body cell is the triple (row label, column key, value): the row
  label is the text of the row's stub columns, the column key what `headers.detect_header`
  makes of the header rows (title and units rows aside, spanning headers spread, years
  unified); precision ``P = |pred ∩ gold| / |pred|``, recall ``R = |pred ∩ gold| / |gold|``
  (multisets), ``F1 = 2PR / (P + R)``. Reordered rows still match; a wrong cell costs one
  triple; a table with the right header and wrong cells earns only its right cells.
- **Grid similarity** (`grid_similarity`, ours, not a reference metric): GriTS's factored
  alignment of rows and columns (`grits.factored_mss`) with a similarity that suits
  figures: 1 for equal cells, 0 when either is a figure and they differ (a near-miss
  number is wrong), the normalised LCS for two texts. GriTS_Con itself would give
  ``122,446`` 6/7 of a match for ``122,445``.
- **Adjacency relations** (Göbel, Hassan, Oro, Orsi 2013, "ICDAR 2013 Table Competition"):
  every cell is related to its nearest non-empty neighbour to the right and below; a table
  is the multiset of ``(text_a, text_b, direction)`` with whitespace removed, scored by P/R/F1.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from rewardsmith.verifiers.finance.figures import parse_figure, scale_from_header
from rewardsmith.verifiers.finance.grits import GriTS, factored_mss, lcs_similarity
from rewardsmith.verifiers.finance.headers import detect_header
from rewardsmith.verifiers.finance.tables import Table

__all__ = [
    "PRF",
    "adjacency_relations",
    "cell_prf",
    "cell_triples",
    "grid_similarity",
    "normalise_cell",
    "prf",
    "table_relations",
]


@dataclass(frozen=True, slots=True)
class PRF:
    precision: float
    recall: float
    f1: float
    matched: int
    predicted: int
    gold: int


def prf(matched: int, predicted: int, gold: int) -> PRF:
    """P = matched/predicted, R = matched/gold, F1 their harmonic mean (0 when undefined;
    two empty sides agree perfectly)."""
    if predicted == 0 and gold == 0:
        return PRF(1.0, 1.0, 1.0, 0, 0, 0)
    p = matched / predicted if predicted else 0.0
    r = matched / gold if gold else 0.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return PRF(p, r, f, matched, predicted, gold)


def normalise_cell(text: str, scale: float = 1.0) -> str:
    """A cell as compared: a figure as its quantity (a bare amount times the table's
    `scale`; a percentage never rescaled), text folded."""
    figure = parse_figure(text)
    if figure is not None:
        if figure.unit in ("%", "bp"):
            return f"{figure.absolute:.10g}{figure.unit}"
        return f"{figure.absolute * (scale if figure.scale == 1.0 else 1.0):.10g}"
    text = unicodedata.normalize("NFKC", text).casefold()
    return re.sub(r"\s+", " ", text).strip()


def cell_triples(grid: list[list[str]], scale: float = 1.0) -> Counter[tuple[str, str, str]]:
    """(row label, column key, value) of every non-empty body cell, normalised; bare amounts
    in units of `scale` (1e3 for a table in thousands)."""
    if len(grid) < 2 or len(grid[0]) < 2:  # no header or no row labels: a bag of cells
        return Counter(("", "", normalise_cell(c)) for row in grid for c in row if c.strip())
    header = detect_header(grid)
    stub = max(header.stub_columns, 1)
    keys = [normalise_cell(k) for k in header.column_keys]
    out: Counter[tuple[str, str, str]] = Counter()
    for row in grid[header.body_start :]:
        label = normalise_cell(" ".join(c for c in row[:stub] if c.strip()))
        for c in range(stub, len(row)):
            if row[c].strip():
                key = keys[c] if c < len(keys) else ""
                out[(label, key, normalise_cell(row[c], scale))] += 1
    return out


def declared_scale(grid: list[list[str]]) -> float | None:
    """The scale the rows above a table's body declare ("$ in millions", "(in thousands)"
    in the corner cell), or None when they declare none."""
    # One cell a line: a cell that is the scale alone ("Millions") declares it too.
    text = "\n".join(c for row in grid[: detect_header(grid).body_start] for c in row)
    scale = scale_from_header(text) if text.strip() else 1.0
    return None if scale == 1.0 else scale


def table_scales(
    pred: list[list[str]],
    gold: list[list[str]],
    gold_scale: float | None = None,
    pred_scale: float | None = None,
) -> tuple[float, float]:
    """The scales to read each table's bare amounts in. Where both tables declare one, each
    is read in its own: a copy of a table in thousands headed "$ in millions" states every
    amount 1,000 times too large. Where either declares none, the digits are compared as
    written (a table copied without its units row, or a reference whose caption was left
    outside it, says nothing against the other's)."""
    p, g = declared_scale(pred) or pred_scale, declared_scale(gold) or gold_scale
    return (p, g) if p is not None and g is not None else (1.0, 1.0)


def cell_prf(
    pred: Table, gold: Table, gold_scale: float | None = None, pred_scale: float | None = None
) -> PRF:
    """Cell-level precision, recall and F1 on (row label, column header, value) triples
    (`gold_scale`: the scale the reference states outside its grid, "in thousands")."""
    p, g = triples_of(pred.grid(), gold.grid(), gold_scale, pred_scale)
    return prf(sum((p & g).values()), sum(p.values()), sum(g.values()))


def triples_of(
    pred: list[list[str]],
    gold: list[list[str]],
    gold_scale: float | None = None,
    pred_scale: float | None = None,
) -> tuple[Counter[tuple[str, str, str]], Counter[tuple[str, str, str]]]:
    """`cell_triples` of both tables, each in the scale `table_scales` gives it."""
    scale_p, scale_g = table_scales(pred, gold, gold_scale, pred_scale)
    return cell_triples(pred, scale_p), cell_triples(gold, scale_g)


def grid_similarity(pred: Table, gold: Table) -> GriTS:
    """The figure-aware grid score (see module doc): precision, recall and F1."""
    a = [[normalise_cell(c) for c in row] for row in pred.grid()]
    b = [[normalise_cell(c) for c in row] for row in gold.grid()]
    return factored_mss(a, b, _figure_similarity)


def _figure_similarity(x: str, y: str) -> float:
    if x == y:
        return 1.0
    if _is_number(x) or _is_number(y):
        return 0.0
    return lcs_similarity(x, y)


def _is_number(normalised: str) -> bool:
    return bool(re.fullmatch(r"-?[\d.e+]+(%|bp)?", normalised))


def adjacency_relations(ids: list[list[int]], texts: Sequence[str]) -> Counter[tuple]:
    """ICDAR 2013 adjacency relations of a grid of cell ids (-1 = no cell).

    Each cell relates to the nearest non-empty cell to its right in every row it spans, and
    to the nearest non-empty cell below in every column it spans.
    """
    key = [re.sub(r"\s+", "", unicodedata.normalize("NFKC", t)) for t in texts]
    out: set[tuple] = set()
    for grid, direction in ((ids, "right"), (_transpose(ids), "down")):
        for line in grid:
            previous = -1
            for cell in line:
                if cell < 0 or not key[cell] or cell == previous:
                    continue
                if previous >= 0:
                    out.add((previous, cell, direction))
                previous = cell
    return Counter((key[a], key[b], d) for a, b, d in out)


def _transpose(ids: list[list[int]]) -> list[list[int]]:
    width = max(map(len, ids), default=0)
    return [[row[c] if c < len(row) else -1 for row in ids] for c in range(width)]


def table_relations(table: Table) -> Counter[tuple]:
    """Adjacency relations of a `Table` (each `Cell` is one id across the slots it spans)."""
    placed = table.placements()
    height = max((r for r, _ in placed), default=-1) + 1
    width = max((c for _, c in placed), default=-1) + 1
    ids = [[placed[(r, c)][0] if (r, c) in placed else -1 for c in range(width)]
           for r in range(height)]  # fmt: skip
    return adjacency_relations(ids, [cell.text for cell in table.cells])
