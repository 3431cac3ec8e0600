"""The ICDAR 2013 table competition ground truth (``*-str.xml``) and its measure.

Each ``<table>`` has one ``<region>`` per page it covers; each ``<cell>`` names its
``start-row``/``start-col`` (and ``end-row``/``end-col`` when it spans) and its text. The
competition's structure measure compares the *adjacency relations* of cells (Göbel et al.
2013, "ICDAR 2013 Table Competition", ICDAR): see `metrics.adjacency_relations`. Here a
document is scored as the multiset union of its tables' relations, so no table-to-table
matching decides the score.

The files are trusted third-party data (read with the standard XML parser).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from rewardsmith.verifiers.finance.metrics import adjacency_relations
from rewardsmith.verifiers.finance.tables import Cell, Table

__all__ = ["GroundTruthRegion", "load_structure", "relations_of"]


@dataclass(frozen=True)
class GroundTruthRegion:
    """One table region on one page: cells as (start_row, end_row, start_col, end_col, text)."""

    table_id: int
    page: int
    cells: tuple[tuple[int, int, int, int, str], ...]

    def relations(self) -> Counter[tuple]:
        ids: dict[tuple[int, int], int] = {}
        for index, (r0, r1, c0, c1, _) in enumerate(self.cells):
            for r in range(r0, r1 + 1):
                for c in range(c0, c1 + 1):
                    ids[(r, c)] = index
        height = max((r for r, _ in ids), default=-1) + 1
        width = max((c for _, c in ids), default=-1) + 1
        grid = [[ids.get((r, c), -1) for c in range(width)] for r in range(height)]
        return adjacency_relations(grid, [cell[4] for cell in self.cells])

    def table(self) -> Table:
        """The region as a `Table` with spans; uncovered grid slots become empty cells."""
        starts = {
            (r0, c0): Cell(text, r1 - r0 + 1, c1 - c0 + 1) for r0, r1, c0, c1, text in self.cells
        }
        covered = {
            (r, c)
            for r0, r1, c0, c1, _ in self.cells
            for r in range(r0, r1 + 1)
            for c in range(c0, c1 + 1)
        }
        height = max((r for r, _ in covered), default=-1) + 1
        width = max((c for _, c in covered), default=-1) + 1
        rows = []
        for r in range(height):
            row = [
                starts.get((r, c), Cell(""))
                for c in range(width)
                if (r, c) in starts or (r, c) not in covered
            ]
            rows.append(tuple(row))
        return Table(tuple(rows))


def load_structure(path: str | Path) -> list[GroundTruthRegion]:
    """Every table region of an ICDAR 2013 ``*-str.xml`` file."""
    root = ET.parse(path).getroot()
    regions = []
    for table in root.iter("table"):
        for region in table.iter("region"):
            cells = []
            for cell in region.iter("cell"):
                r0, c0 = int(cell.get("start-row", 0)), int(cell.get("start-col", 0))
                r1, c1 = int(cell.get("end-row", r0)), int(cell.get("end-col", c0))
                text = " ".join((cell.findtext("content") or "").split())
                cells.append((r0, r1, c0, c1, text))
            regions.append(
                GroundTruthRegion(int(table.get("id", 0)), int(region.get("page", 1)), tuple(cells))
            )
    return regions


def relations_of(regions: list[GroundTruthRegion]) -> Counter[tuple]:
    total: Counter[tuple] = Counter()
    for region in regions:
        total += region.relations()
    return total
