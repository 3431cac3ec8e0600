"""Consistency: arithmetic a financial table must satisfy, with no reference needed.

Checks, each run wherever its rows or columns are found:

- **totals**: a row labelled "total…"/"subtotal…" equals, column by column, the sum of the
  rows since the previous total row, or of all non-total rows above it (a grand total);
- **balance sheet**: total assets = total liabilities + total equity (or = "total
  liabilities and equity");
- **growth**: a column headed "% change"/"growth" equals ``(new - old) / |old| × 100`` of the
  two figure columns before it (the newer year first when headers are years);
- **growth claims in prose**: "revenue fell 18.5% from 150,239 to 122,445" is recomputed.

A figure passes within half a unit in the last place written, times the number of terms
(rounded statements rarely add exactly), or `abs_tol` when that is larger. The table comes
from the model's completion, or from a PDF with ``reference={"pdf": ..., "page": ...,
"table": ...}``. The score is the share of checks that hold; a table with nothing to check
is skipped (not applicable), never passed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import ClassVar

from rewardsmith.verifiers.finance.figures import Figure, is_data_cell, parse_figure
from rewardsmith.verifiers.finance.reference import (
    ExtractedTable,
    ExtractionLimits,
    pdf_spec,
    problem_verdict,
    read_pdf_table,
)
from rewardsmith.verifiers.finance.tables import Table, TableFormatError, read_table
from rewardsmith.verifiers.protocol import Cost
from rewardsmith.verifiers.types import Failure, Sample, Verdict

__all__ = ["Check", "Consistency", "check_table", "prose_checks"]

_TOTAL = re.compile(r"^\s*(sub-?\s*)?totals?\b|\btotals?\s*$", re.IGNORECASE)
_GROWTH = re.compile(r"%|change|growth|yoy|var", re.IGNORECASE)


@dataclass(frozen=True)
class Check:
    kind: str
    where: str
    expected: float
    stated: float
    ok: bool


def _slack(figures: list[Figure], abs_tol: float) -> float:
    ulp = max((10.0**-f.decimals for f in figures), default=1.0)
    return max(abs_tol, 0.5 * ulp * len(figures) + 1e-9)


def _body(grid: list[list[str]]) -> list[tuple[int, list[str]]]:
    """Rows holding figures; rows of bare years count only once data has begun (before
    that they are the header)."""
    body, started = [], False
    for i, row in enumerate(grid):
        started = started or any(is_data_cell(c) for c in row[1:])
        if started and any(c.strip() and parse_figure(c) is not None for c in row[1:]):
            body.append((i, row))
    return body


def _total_checks(grid: list[list[str]], abs_tol: float) -> list[Check]:
    checks: list[Check] = []
    body = _body(grid)
    last_total = -1
    for pos, (_, row) in enumerate(body):
        if not _TOTAL.search(row[0]):
            continue
        since = [r for _, r in body[last_total + 1 : pos]]
        if not since:  # a total restated on its own (equity below liabilities): no sum
            last_total = pos
            continue
        plain = [r for _, r in body[:pos] if not _TOTAL.search(r[0])]
        for col in range(1, len(row)):
            stated = parse_figure(row[col]) if row[col].strip() else None
            if stated is None:
                continue
            options = [_column(since, col), _column(plain, col)]
            options = [o for o in options if o]
            if not options or stated.unit in ("%", "bp"):  # percentages do not add up
                continue
            sums = [sum(f.value for f in o) for o in options]
            ok = any(
                abs(s - stated.value) <= _slack(o, abs_tol)
                for s, o in zip(sums, options, strict=True)
            )
            best = min(sums, key=lambda s: abs(s - stated.value))
            checks.append(Check("total", f"{row[0]} / column {col + 1}", best, stated.value, ok))
        last_total = pos
    return checks


def _column(rows: list[list[str]], col: int) -> list[Figure]:
    out = []
    for r in rows:
        f = parse_figure(r[col]) if col < len(r) and r[col].strip() else None
        if f is not None:
            out.append(f)
    return out


def _balance_checks(grid: list[list[str]], abs_tol: float) -> list[Check]:
    labels = {re.sub(r"[^a-z ]", "", r[0].lower()).strip(): r for r in grid if r}
    assets = labels.get("total assets")
    liabilities = labels.get("total liabilities")
    equity = next(
        (
            r
            for k, r in labels.items()
            if k.startswith("total") and "equity" in k and "liabilities" not in k
        ),
        None,
    )
    both = next((r for k, r in labels.items() if "liabilities and" in k and "equity" in k), None)
    checks: list[Check] = []
    if assets is None:
        return checks
    for col in range(1, len(assets)):
        a = _cell(assets, col)
        if a is None:
            continue
        parts = [_cell(both, col)] if both else [_cell(liabilities, col), _cell(equity, col)]
        if (liabilities is None and both is None) or any(p is None for p in parts):
            continue
        total = sum(p.value for p in parts if p is not None)
        ok = abs(total - a.value) <= _slack([a, *[p for p in parts if p]], abs_tol)
        checks.append(
            Check("balance", f"assets = liabilities + equity, column {col + 1}", total, a.value, ok)
        )
    return checks


def _cell(row: list[str] | None, col: int) -> Figure | None:
    if row is None or col >= len(row) or not row[col].strip():
        return None
    return parse_figure(row[col])


def _growth_checks(grid: list[list[str]], abs_tol: float) -> list[Check]:
    header = grid[0]
    checks = []
    for col in range(3, len(header) + 1):
        if col >= len(header) or not _GROWTH.search(header[col]) or col < 2:
            continue
        a_col, b_col = col - 2, col - 1
        years = [re.search(r"(19|20)\d\d", header[c]) for c in (a_col, b_col)]
        new, old = (a_col, b_col)
        if all(years) and int(years[0].group()) < int(years[1].group()):  # type: ignore[union-attr]
            new, old = b_col, a_col
        for row in grid[1:]:
            n, o, stated = _cell(row, new), _cell(row, old), _cell(row, col)
            if n is None or o is None or stated is None or o.value == 0:
                continue
            expected = (n.value - o.value) / abs(o.value) * 100
            ok = abs(expected - stated.value) <= max(abs_tol, 0.5 * 10.0**-stated.decimals + 1e-9)
            checks.append(Check("growth", f"{row[0]} / {header[col]}", expected, stated.value, ok))
    return checks


_CLAIM = re.compile(
    r"\b(?P<verb>rose|grew|increased|climbed|fell|declined|decreased|dropped)\s+(?:by\s+)?"
    r"(?P<pct>\d{1,4}(?:\.\d{1,4})?)\s?%\s+from\s+(?P<old>\S{1,40}(?:\s(?:thousand|million|billion))?)"
    r"\s+to\s+(?P<new>\S{1,40}(?:\s(?:thousand|million|billion))?)",
    re.IGNORECASE,
)
_DOWN = {"fell", "declined", "decreased", "dropped"}
MAX_PROSE_CHARS = 100_000


def prose_checks(text: str) -> list[Check]:
    """Growth claims in prose: "revenue fell 18.5% from 150,239 to 122,445" is recomputed as
    ``(new - old) / |old| × 100`` and must match within half a unit of the stated decimals.
    When both figures are negative (costs in parentheses) the claim is about magnitudes."""
    checks = []
    for match in _CLAIM.finditer(text[:MAX_PROSE_CHARS]):
        old = parse_figure(match["old"].rstrip(".,;:"))
        new = parse_figure(match["new"].rstrip(".,;:"))
        stated = parse_figure(match["pct"] + "%")
        if old is None or new is None or stated is None or old.absolute == 0:
            continue
        sign = -1.0 if match["verb"].lower() in _DOWN else 1.0
        a, b = old.absolute, new.absolute
        if a < 0 and b < 0:  # "costs rose from (43,084) to (44,943)" speaks of magnitudes
            a, b = -a, -b
        expected = (b - a) / abs(a) * 100
        ok = abs(expected - sign * stated.value) <= 0.5 * 10.0**-stated.decimals + 1e-9
        where = match.group(0)[:80]
        checks.append(Check("growth_claim", where, expected, sign * stated.value, ok))
    return checks


def check_table(table: Table, abs_tol: float = 0.0) -> list[Check]:
    """Every arithmetic check that applies to `table`."""
    grid = table.grid()
    if not grid or len(grid[0]) < 2:
        return []
    return (
        _total_checks(grid, abs_tol)
        + _balance_checks(grid, abs_tol)
        + _growth_checks(grid, abs_tol)
    )


@dataclass(frozen=True)
class Consistency:
    """Score the share of a table's arithmetic checks (totals, balance, growth) that hold."""

    name: ClassVar[str] = "consistency"
    version: ClassVar[str] = "2"
    cost: ClassVar[Cost] = Cost.CHEAP
    takes_structured_reference: ClassVar[bool] = True  # JSON-text references are decoded

    abs_tol: float = 0.0
    """Extra absolute slack on every check (beyond rounding of the figures written)."""
    limits: ExtractionLimits = field(default_factory=ExtractionLimits)
    """Limits for reading the table out of a PDF."""

    def __call__(self, sample: Sample) -> Verdict:
        from_model = pdf_spec(sample.reference) is None
        prose = prose_checks(sample.completion_text) if from_model else []
        table = self._table(sample)
        if isinstance(table, Verdict) and not (prose and table.failure is Failure.FORMAT):
            return table
        checks = (check_table(table, self.abs_tol) if isinstance(table, Table) else []) + prose
        if not checks:
            return Verdict.skipped(
                self.name, self.version, "no totals, balance or growth columns found to check"
            )
        failed = [c for c in checks if not c.ok]
        evidence = {
            "checks": len(checks),
            "failed": [vars(c) for c in failed][:20],
            "kinds": sorted({c.kind for c in checks}),
        }
        feedback = "; ".join(
            f"{c.where}: {c.stated:g} stated, {c.expected:g} computed" for c in failed[:3]
        )
        return Verdict.graded(
            self.name,
            self.version,
            1 - len(failed) / len(checks),
            evidence=evidence,
            feedback=feedback,
        )

    def _table(self, sample: Sample) -> Table | Verdict:
        spec = pdf_spec(sample.reference)
        if spec is None:
            try:
                return read_table(sample.completion_text)
            except TableFormatError as exc:
                return Verdict.failed(self.name, self.version, Failure.FORMAT, feedback=str(exc))
        path, page, index = spec
        found = read_pdf_table(path, page, index, self.limits)
        if not isinstance(found, ExtractedTable):
            return problem_verdict(self.name, self.version, found)
        return found.table
