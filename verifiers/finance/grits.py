"""GriTS: grid table similarity (Smock, Pesala, Abraham 2023, "GriTS: Grid table similarity
metric for table structure recognition", ICDAR 2023).

A table is a matrix of grid cells; a cell spanning several grid cells puts its value in
each. For two matrices, A predicted and B true, and a similarity ``f`` of two entries,

    GriTS_f(A, B) = 2 Σ_ij f(Ã_ij, B̃_ij) / (|A| + |B|)
    precision     =   Σ_ij f(Ã_ij, B̃_ij) / |A|
    recall        =   Σ_ij f(Ã_ij, B̃_ij) / |B|

where ``|A|`` counts A's grid cells and Ã, B̃ are the *two-dimensional most similar
substructures*: the choice of as many rows of each (order kept) and as many columns of
each that maximises the sum. Finding them exactly is NP-hard; the paper (and its authors'
code) use a factored approximation, which is what is computed here: every pair of rows is
scored by the best monotone alignment of their entries (dynamic programming, reward
``f``, normalised as ``2·score / (len_a + len_b)``), rows are aligned by dynamic programming
on those scores, columns likewise, and the matched rows × matched columns are summed.
GriTS is an F-score: ``2PR / (P + R)`` equals the formula above.

The three measures differ in the entry and ``f``:

- **GriTS_Con**: the entry is the cell's text; ``f`` is the normalised longest common
  subsequence, ``2·|LCS(a, b)| / (|a| + |b|)`` (1 for two empty texts);
- **GriTS_Top**: the entry is the cell's span relative to the grid cell,
  ``(c0 - j, r0 - i, c1 - j, r1 - i)`` (``c1``, ``r1`` one past the last column and row it
  covers); ``f`` is the IoU of the two boxes;
- **GriTS_Loc**: the entry is the cell's bounding box on the page; ``f`` is their IoU.

GriTS_Con gives partial credit to a near-miss string, so ``122,446`` against ``122,445``
scores 6/7: a reward for figures should not use it alone (`metrics.grid_similarity` is the
figure-aware variant).

    >>> from rewardsmith.verifiers.finance.tables import Table
    >>> a = Table.from_grid([["x", "1"], ["y", "2"]])
    >>> grits_con(a, a).f1
    1.0
    >>> round(grits_con(Table.from_grid([["x", "1"]]), a).recall, 3)
    0.5
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from rewardsmith.verifiers.finance.tables import Table

__all__ = [
    "MAX_GRID",
    "GriTS",
    "factored_mss",
    "grits_con",
    "grits_loc",
    "grits_top",
    "iou",
    "lcs_length",
    "lcs_similarity",
    "relative_spans",
]

MAX_GRID = 200
"""Rows (and columns) beyond this are not aligned: their cells count as unmatched."""
MAX_TEXT = 500
"""Characters of a cell compared by the LCS (a longer cell is cut)."""
T = TypeVar("T", bound=Hashable)


@dataclass(frozen=True, slots=True)
class GriTS:
    precision: float
    recall: float
    f1: float
    matched: float
    """Σ f over the matched grid cells."""


def _prf(matched: float, predicted: int, true: int) -> GriTS:
    if predicted == 0 and true == 0:
        return GriTS(1.0, 1.0, 1.0, 0.0)
    p = matched / predicted if predicted else 0.0
    r = matched / true if true else 0.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return GriTS(p, r, f, matched)


def lcs_length(a: str, b: str) -> int:
    """Length of the longest common subsequence, bit-parallel (Allison and Dix 1986;
    Hyyrö 2004): one big-integer step per character of `b`."""
    if not a or not b:
        return 0
    masks: dict[str, int] = {}
    for i, ch in enumerate(a):
        masks[ch] = masks.get(ch, 0) | (1 << i)
    full = (1 << len(a)) - 1
    row = full
    for ch in b:
        u = row & masks.get(ch, 0)
        row = ((row + u) | (row - u)) & full
    return len(a) - row.bit_count()


def lcs_similarity(a: str, b: str) -> float:
    """``2·|LCS(a, b)| / (|a| + |b|)``; 1 when both are empty."""
    a, b = a[:MAX_TEXT], b[:MAX_TEXT]
    if not a and not b:
        return 1.0
    return 2 * lcs_length(a, b) / (len(a) + len(b))


def iou(a: Sequence[float], b: Sequence[float]) -> float:
    """Intersection over union of two boxes ``(x0, y0, x1, y1)`` (0 when both are empty)."""
    w = min(a[2], b[2]) - max(a[0], b[0])
    h = min(a[3], b[3]) - max(a[1], b[1])
    inter = w * h if w > 0 and h > 0 else 0.0
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def _align(
    n: int, m: int, reward: Callable[[int, int], float]
) -> tuple[float, list[tuple[int, int]]]:
    """Best monotone pairing of 0..n-1 with 0..m-1 (each used at most once): its total
    reward and the pairs (dynamic programming; ties prefer the diagonal, as the authors')."""
    score = [[0.0] * (m + 1) for _ in range(n + 1)]
    for i in range(1, n + 1):
        here, above = score[i], score[i - 1]
        for j in range(1, m + 1):
            here[j] = max(above[j - 1] + reward(i - 1, j - 1), above[j], here[j - 1])
    pairs, i, j = [], n, m
    while i and j:
        if score[i][j] == score[i - 1][j - 1] + reward(i - 1, j - 1):
            pairs.append((i - 1, j - 1))
            i, j = i - 1, j - 1
        elif score[i][j] == score[i - 1][j]:
            i -= 1
        else:
            j -= 1
    return score[n][m], pairs[::-1]


def factored_mss(pred: list[list[T]], true: list[list[T]], f: Callable[[T, T], float]) -> GriTS:
    """GriTS of two grids of entries under similarity `f`, by the factored 2D-MSS."""
    pred = [row[:MAX_GRID] for row in pred[:MAX_GRID]]
    true = [row[:MAX_GRID] for row in true[:MAX_GRID]]
    size_p = sum(map(len, pred))
    size_t = sum(map(len, true))
    cache: dict[tuple[T, T], float] = {}

    def sim(x: T, y: T) -> float:
        if (x, y) not in cache:
            cache[(x, y)] = f(x, y)
        return cache[(x, y)]

    def line_score(a: list[T], b: list[T]) -> float:
        if not a and not b:
            return 0.0
        total, _ = _align(len(a), len(b), lambda i, j: sim(a[i], b[j]))
        return 2 * total / (len(a) + len(b))

    rows = _matches(pred, true, line_score)
    cols = _matches(_transpose(pred), _transpose(true), line_score)
    matched = sum(sim(pred[i][j], true[k][m]) for i, k in rows for j, m in cols)
    return _prf(matched, size_p, size_t)


def _matches(
    a: list[list[T]], b: list[list[T]], line_score: Callable[[list[T], list[T]], float]
) -> list[tuple[int, int]]:
    memo: dict[tuple[int, int], float] = {}

    def reward(i: int, k: int) -> float:
        if (i, k) not in memo:
            memo[(i, k)] = line_score(a[i], b[k])
        return memo[(i, k)]

    return _align(len(a), len(b), reward)[1]


def _transpose(grid: list[list[T]]) -> list[list[T]]:
    width = max(map(len, grid), default=0)
    return [[row[c] for row in grid if c < len(row)] for c in range(width)]


def relative_spans(table: Table) -> list[list[tuple[int, int, int, int]]]:
    """Each grid cell's entry for GriTS_Top: its cell's span relative to it."""
    placed, cells = table.placements(), table.cells
    height = max((r for r, _ in placed), default=-1) + 1
    width = max((c for _, c in placed), default=-1) + 1
    grid = []
    for i in range(height):
        line = []
        for j in range(width):
            if (i, j) not in placed:  # an uncovered slot: an empty box
                line.append((0, 0, 0, 0))
                continue
            index, r0, c0 = placed[(i, j)]
            cell = cells[index]
            line.append((c0 - j, r0 - i, c0 + cell.colspan - j, r0 + cell.rowspan - i))
        grid.append(line)
    return grid


def grits_con(pred: Table, true: Table) -> GriTS:
    """GriTS_Con: cell text, ``f`` = normalised LCS (whitespace runs count as one space)."""
    a = [[" ".join(c.split()) for c in row] for row in pred.grid()]
    b = [[" ".join(c.split()) for c in row] for row in true.grid()]
    return factored_mss(a, b, lcs_similarity)


def grits_top(pred: Table, true: Table) -> GriTS:
    """GriTS_Top: each grid cell's relative span, ``f`` = IoU."""
    return factored_mss(relative_spans(pred), relative_spans(true), iou)


def grits_loc(
    pred: list[list[tuple[float, float, float, float]]],
    true: list[list[tuple[float, float, float, float]]],
) -> GriTS:
    """GriTS_Loc: grids of each grid cell's cell bounding box on the page, ``f`` = IoU."""
    return factored_mss(pred, true, iou)
