"""Table similarity: cell precision/recall/F1, GriTS-style content, TEDS-style structure,
and the ICDAR 2013 adjacency-relation measure.

Cells are compared after `normalise_cell`: a figure becomes its absolute value (so
``(1,234)``, ``-1234`` and ``−1,234.0`` agree), other text is case-folded with whitespace
collapsed.

- **Cell P/R/F1.** Each data cell is the triple (row label, column header, value), where the
  row label is the row's first cell and the header the column's first cell; precision
  ``P = |pred ∩ gold| / |pred|``, recall ``R = |pred ∩ gold| / |gold|`` (multisets),
  ``F1 = 2PR / (P + R)``. Reordered rows still match; a wrong cell costs one triple.
- **GriTS-style content score** (Smock, Pesala, Abraham 2023, "GriTS: Grid table similarity
  metric for table structure recognition"): ``GriTS = 2 Σ f(A_ij, B_kl) / (|A| + |B|)`` over
  the cells of the best alignment of rows and of columns, where ``f`` is 1 for equal cells, 0
  for different figures and a string similarity for text. We use the paper's factored
  approximation: rows are aligned by dynamic programming (weighted LCS) on a row similarity,
  columns likewise, and the matched cells are the products of both alignments. Inserted or
  missing rows and columns cost only their own cells.
- **TEDS-style structure score** (Zhong, ShafieiBavani, Jimeno Yepes 2020, "Image-based table
  recognition: data, model, and evaluation"): ``TEDS = 1 - EditDist(T_a, T_b) / max(|T_a|,
  |T_b|)`` over the trees table → rows → cells, where a cell node carries its (rowspan,
  colspan). The edit distance here is restricted to row-preserving edits (rows align as a
  sequence, cells within aligned rows as a sequence), an upper bound on the unrestricted
  tree edit distance; content is ignored (TEDS-Struct).
- **Adjacency relations** (Göbel, Hassan, Oro, Orsi 2013, "ICDAR 2013 Table Competition"):
  every cell is related to its nearest non-empty neighbour to the right and below; a table
  is the multiset of ``(text_a, text_b, direction)`` with whitespace removed, scored by P/R/F1.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rewardsmith.verifiers.finance.figures import parse_figure
from rewardsmith.verifiers.finance.tables import Table

__all__ = [
    "PRF",
    "adjacency_relations",
    "cell_prf",
    "cell_triples",
    "grits_content",
    "normalise_cell",
    "prf",
    "table_relations",
    "teds_structure",
]

MAX_ALIGN = 400
"""Rows (or columns) beyond this are not aligned (the DP is quadratic); scored as missing."""


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


def normalise_cell(text: str) -> str:
    figure = parse_figure(text)
    if figure is not None:
        return f"{figure.absolute:.10g}{figure.unit if figure.unit in ('%', 'bp') else ''}"
    text = unicodedata.normalize("NFKC", text).casefold()
    return re.sub(r"\s+", " ", text).strip()


def cell_triples(grid: list[list[str]]) -> Counter[tuple[str, str, str]]:
    """(row label, column header, value) of every non-empty data cell, normalised."""
    if len(grid) < 2 or len(grid[0]) < 2:  # no header or no row labels: a bag of cells
        return Counter(("", "", normalise_cell(c)) for row in grid for c in row if c.strip())
    header = [normalise_cell(c) for c in grid[0]]
    out: Counter[tuple[str, str, str]] = Counter()
    for row in grid[1:]:
        label = normalise_cell(row[0])
        for c in range(1, len(row)):
            if row[c].strip():
                out[(label, header[c] if c < len(header) else "", normalise_cell(row[c]))] += 1
    return out


def cell_prf(pred: Table, gold: Table) -> PRF:
    """Cell-level precision, recall and F1 on (row label, column header, value) triples."""
    p, g = cell_triples(pred.grid()), cell_triples(gold.grid())
    return prf(sum((p & g).values()), sum(p.values()), sum(g.values()))


def _align(n: int, m: int, sim: Callable[[int, int], float]) -> list[tuple[int, int]]:
    """Weighted LCS: the monotone pairing of 0..n-1 with 0..m-1 maximising Σ sim."""
    n, m = min(n, MAX_ALIGN), min(m, MAX_ALIGN)
    best = [[0.0] * (m + 1) for _ in range(n + 1)]
    for i in range(1, n + 1):
        bi, prev = best[i], best[i - 1]
        for j in range(1, m + 1):
            bi[j] = max(prev[j], bi[j - 1], prev[j - 1] + sim(i - 1, j - 1))
    pairs, i, j = [], n, m
    while i and j:
        if best[i][j] == best[i - 1][j]:
            i -= 1
        elif best[i][j] == best[i][j - 1]:
            j -= 1
        else:
            pairs.append((i - 1, j - 1))
            i, j = i - 1, j - 1
    return pairs[::-1]


def _bag_similarity(a: Sequence[Counter[str]], b: Sequence[Counter[str]]) -> Callable:
    sizes_a = [sum(x.values()) for x in a]
    sizes_b = [sum(x.values()) for x in b]

    def sim(i: int, j: int) -> float:
        total = sizes_a[i] + sizes_b[j]
        return 2 * sum((a[i] & b[j]).values()) / total if total else 0.0

    return sim


def grits_content(pred: Table, gold: Table) -> float:
    """GriTS-style content similarity in [0, 1] (factored 2D alignment; exact cell match)."""
    a = [[normalise_cell(c) for c in row] for row in pred.grid()]
    b = [[normalise_cell(c) for c in row] for row in gold.grid()]
    size = sum(map(len, a)) + sum(map(len, b))
    if size == 0:
        return 1.0
    rows = _align(len(a), len(b), _bag_similarity([Counter(r) for r in a], [Counter(r) for r in b]))
    cols_a = [Counter(r[j] for r in a) for j in range(len(a[0]) if a else 0)]
    cols_b = [Counter(r[j] for r in b) for j in range(len(b[0]) if b else 0)]
    cols = _align(len(cols_a), len(cols_b), _bag_similarity(cols_a, cols_b))
    matched = sum(_similarity(a[i][j], b[k][m]) for i, k in rows for j, m in cols)
    return 2 * matched / size


def _similarity(x: str, y: str) -> float:
    """f(x, y): 1 for equal cells; 0 for two different figures (a near-miss number is wrong);
    for text, difflib's ratio ``2·M / (|x| + |y|)`` (M: matched characters), close to the
    LCS similarity of GriTS-Con."""
    if x == y:
        return 1.0
    if not x or not y or _is_number(x) or _is_number(y):
        return 0.0
    return difflib.SequenceMatcher(None, x[:200], y[:200], autojunk=False).ratio()


def _is_number(normalised: str) -> bool:
    return bool(re.fullmatch(r"-?[\d.e+]+(%|bp)?", normalised))


def teds_structure(pred: Table, gold: Table) -> float:
    """TEDS-style structure similarity in [0, 1] (row-preserving edits; spans compared)."""
    a = [tuple((c.rowspan, c.colspan) for c in row) for row in pred.rows[:MAX_ALIGN]]
    b = [tuple((c.rowspan, c.colspan) for c in row) for row in gold.rows[:MAX_ALIGN]]
    nodes_a = 1 + len(a) + sum(map(len, a))
    nodes_b = 1 + len(b) + sum(map(len, b))
    cache: dict[tuple, int] = {}

    def row_cost(x: tuple, y: tuple) -> int:
        key = (x, y)
        if key not in cache:
            cache[key] = _edit_distance(x, y)
        return cache[key]

    n, m = len(a), len(b)
    dist = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(1, n + 1):
        dist[i][0] = dist[i - 1][0] + 1 + len(a[i - 1])
    for j in range(1, m + 1):
        dist[0][j] = dist[0][j - 1] + 1 + len(b[j - 1])
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            dist[i][j] = min(
                dist[i - 1][j] + 1 + len(a[i - 1]),
                dist[i][j - 1] + 1 + len(b[j - 1]),
                dist[i - 1][j - 1] + row_cost(a[i - 1], b[j - 1]),
            )
    return max(0.0, 1.0 - dist[n][m] / max(nodes_a, nodes_b))


def _edit_distance(x: Sequence, y: Sequence) -> int:
    prev = list(range(len(y) + 1))
    for i, xi in enumerate(x, 1):
        cur = [i]
        for j, yj in enumerate(y, 1):
            cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (xi != yj)))
        prev = cur
    return prev[-1]


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
    texts = [cell.text for row in table.rows for cell in row]
    placed: dict[tuple[int, int], int] = {}
    index = 0
    for r, row in enumerate(table.rows):
        c = 0
        for cell in row:
            while (r, c) in placed:
                c += 1
            for dr in range(cell.rowspan):
                for dc in range(cell.colspan):
                    placed[(r + dr, c + dc)] = index
            c += cell.colspan
            index += 1
    height = max((r for r, _ in placed), default=-1) + 1
    width = max((c for _, c in placed), default=-1) + 1
    ids = [[placed.get((r, c), -1) for c in range(width)] for r in range(height)]
    return adjacency_relations(ids, texts)
