"""TEDS: tree-edit-distance-based similarity (Zhong, ShafieiBavani, Jimeno Yepes 2020,
"Image-based table recognition: data, model, and evaluation", ECCV 2020).

A table is the tree of its HTML: ``table`` → ``thead`` and ``tbody`` → ``tr`` → ``td``
(a ``td`` carries its ``colspan``, ``rowspan`` and text). Then

    TEDS(T_a, T_b) = 1 - EditDist(T_a, T_b) / max(|T_a|, |T_b|)

where ``|T|`` is the number of nodes of ``T`` and EditDist the tree edit distance with
insertion and deletion costing 1 and substitution (renaming) costing 1 when the tags, the
colspans or the rowspans differ; for two ``td`` that agree on those, the normalised
Levenshtein distance of their contents (``lev(a, b) / max(|a|, |b|)``, characters as
tokens); 0 otherwise. **TEDS-Struct** is the same with every content left empty, so only
the structure counts. The distance is computed exactly by APTED (Pawlik and Augsten 2016,
the ``apted`` package), as in the authors' code. Two details of that code differ from the
paper and are *not* followed here: it counts a tree's nodes without the ``table`` root
(the paper: "the number of nodes"), and it scores a table without content as 0.

``thead`` holds the first `head` rows (table_match passes the header rows
`headers.detect_header` finds in each table); with ``head=0`` there is no ``thead``.

APTED runs in pure Python, in cubic time at worst: trees of more than `MAX_NODES` nodes
are not compared exactly, and `row_aligned` (a lower bound of TEDS and of TEDS-Struct)
is what a caller can fall back on.

    >>> from rewardsmith.verifiers.finance.tables import Table
    >>> a = Table.from_grid([["Item", "2024"], ["Revenue", "1,234"]])
    >>> teds(a, a), teds_struct(a, Table.from_grid([["x", "y"], ["z", "w"]]))
    (1.0, 1.0)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from apted import APTED, Config

from rewardsmith.verifiers.finance.tables import Table

__all__ = [
    "MAX_NODES",
    "TedsTree",
    "TreeTooLarge",
    "levenshtein",
    "row_aligned",
    "teds",
    "teds_struct",
    "tree_of",
]

MAX_NODES = 400
"""Larger trees are not compared exactly: APTED in pure Python took 0.3 s for a 45 x 3
table (182 nodes) and 5.9 s for 100 x 6 (710 nodes) on the build machine."""
MAX_CONTENT = 500
"""Characters of a cell compared by Levenshtein (a longer cell is cut)."""


class TreeTooLarge(ValueError):
    """A table's tree has more than MAX_NODES nodes."""


@dataclass
class TedsTree:
    tag: str
    colspan: int = 1
    rowspan: int = 1
    content: str = ""
    children: list[TedsTree] = field(default_factory=list)

    def size(self) -> int:
        return 1 + sum(child.size() for child in self.children)


def tree_of(table: Table, head: int = 0, content: bool = True) -> TedsTree:
    """The HTML tree of `table`: its first `head` rows in ``thead``, the rest in ``tbody``."""
    rows = [
        TedsTree(
            "tr",
            children=[
                TedsTree("td", c.colspan, c.rowspan, c.text[:MAX_CONTENT] if content else "")
                for c in row
            ],
        )
        for row in table.rows
    ]
    parts = []
    if head > 0:
        parts.append(TedsTree("thead", children=rows[:head]))
    parts.append(TedsTree("tbody", children=rows[head:]))
    return TedsTree("table", children=parts)


def levenshtein(a: Sequence[Any], b: Sequence[Any]) -> int:
    """Edit distance with unit insertions, deletions and substitutions."""
    if len(a) < len(b):
        a, b = b, a
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        current = [i]
        for j, y in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != y)))
        previous = current
    return previous[-1]


class _Costs(Config):
    """APTED's configuration: unit insert and delete; the rename cost of the paper."""

    def __init__(self) -> None:
        self._renames: dict[tuple[str, str], float] = {}

    def delete(self, node: TedsTree) -> float:
        return 1.0

    def insert(self, node: TedsTree) -> float:
        return 1.0

    def children(self, node: TedsTree) -> list[TedsTree]:
        return node.children

    def rename(self, a: TedsTree, b: TedsTree) -> float:
        if a.tag != b.tag or a.colspan != b.colspan or a.rowspan != b.rowspan:
            return 1.0
        if a.tag != "td" or not (a.content or b.content):
            return 0.0
        key = (a.content, b.content)
        if key not in self._renames:
            longest = max(len(a.content), len(b.content))
            self._renames[key] = levenshtein(a.content, b.content) / longest
        return self._renames[key]


def _similarity(a: TedsTree, b: TedsTree) -> float:
    size_a, size_b = a.size(), b.size()
    if max(size_a, size_b) > MAX_NODES:
        raise TreeTooLarge(f"a table tree has {max(size_a, size_b)} nodes; limit {MAX_NODES}")
    distance = APTED(a, b, _Costs()).compute_edit_distance()
    return max(0.0, 1.0 - float(distance) / max(size_a, size_b))


def teds(pred: Table, true: Table, head: tuple[int, int] = (0, 0)) -> float:
    """TEDS with cell content; `head` is the number of header rows of each table.
    Raises `TreeTooLarge` past `MAX_NODES`."""
    return _similarity(tree_of(pred, head[0]), tree_of(true, head[1]))


def teds_struct(pred: Table, true: Table, head: tuple[int, int] = (0, 0)) -> float:
    """TEDS-Struct: TEDS with every cell's content left empty."""
    return _similarity(tree_of(pred, head[0], False), tree_of(true, head[1], False))


def row_aligned(pred: Table, true: Table, content: bool = False) -> float:
    """A lower bound of TEDS (or of TEDS-Struct, without content), for any size of table.

    Only row-preserving edits are allowed: rows are aligned as a sequence (a row inserted
    or deleted costs 1 + its cells), the cells of aligned rows as a sequence, each pair
    costing what TEDS's rename costs (1 for other spans, else the normalised Levenshtein
    distance of the contents). Such an edit script is one of those the tree edit distance
    minimises over, so its cost bounds the distance from above and the similarity
    ``1 - cost / max(|T_a|, |T_b|)`` (trees without ``thead``) bounds TEDS from below: a
    table it scores low may be closer (a transposed one, which other edits reach).
    """
    a = [_row(r, content) for r in pred.rows]
    b = [_row(r, content) for r in true.rows]
    nodes_a = 2 + len(a) + sum(map(len, a))  # table, tbody, rows, cells
    nodes_b = 2 + len(b) + sum(map(len, b))
    costs = _Costs()
    memo: dict[tuple[int, int], float] = {}

    def row_cost(i: int, j: int) -> float:
        if (i, j) not in memo:
            memo[(i, j)] = _sequence_distance(a[i], b[j], costs.rename)
        return memo[(i, j)]

    n, m = len(a), len(b)
    dist = [[0.0] * (m + 1) for _ in range(n + 1)]
    for i in range(1, n + 1):
        dist[i][0] = dist[i - 1][0] + 1 + len(a[i - 1])
    for j in range(1, m + 1):
        dist[0][j] = dist[0][j - 1] + 1 + len(b[j - 1])
    for i in range(1, n + 1):
        for j in range(1, m + 1):
            dist[i][j] = min(
                dist[i - 1][j] + 1 + len(a[i - 1]),
                dist[i][j - 1] + 1 + len(b[j - 1]),
                dist[i - 1][j - 1] + row_cost(i - 1, j - 1),
            )
    return max(0.0, 1.0 - dist[n][m] / max(nodes_a, nodes_b))


def _row(row: Sequence[Any], content: bool) -> list[TedsTree]:
    return [
        TedsTree("td", c.colspan, c.rowspan, c.text[:MAX_CONTENT] if content else "") for c in row
    ]


def _sequence_distance(
    a: list[TedsTree], b: list[TedsTree], rename: Callable[[TedsTree, TedsTree], float]
) -> float:
    previous = [float(j) for j in range(len(b) + 1)]
    for i, x in enumerate(a, 1):
        current = [float(i)]
        for j, y in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + rename(x, y)))
        previous = current
    return previous[-1]
