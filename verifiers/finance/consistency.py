"""Consistency: arithmetic a financial statement must satisfy, with no reference needed.

Checks, each run wherever its rows or columns are found, each named with the rows it used:

- **statement arithmetic** (`statement.statement_checks`): every total sums the entries of
  its own section (totals of totals add each section once), every result row (gross
  profit, operating income, profit before tax, net income) is the result before it plus
  the entries since, with signs as statements print them (parentheses, or costs printed
  positive under labels that say so), and the figure after a "Less:" row is the one
  before it minus the deduction;
- **balance sheet**: total assets = total liabilities + total equity (or = "total
  liabilities and equity");
- **growth**: a column headed "% change"/"growth" equals ``(new - old) / |old| × 100`` of the
  two figure columns before it (the newer year first when headers are years); a growth
  cell written as text ("n/a") fails when the change has a meaning (the sign does not
  change), as a total written as text does;
- **growth claims in prose**: "revenue fell 18.5% from 150,239 to 122,445" is recomputed.

A figure passes within half a unit in the last place written, times the number of terms
(rounded statements rarely add exactly), or `abs_tol` when that is larger. A total row
whose cell holds something other than a figure fails its check. The table is always the
model's: no table, no reward (an empty answer, a refusal or prose fails as ``format``; a
sentence read as one CSV line is prose). A PDF reference, ``{"pdf": ..., "page": ...,
"table": ...}``, names the table the answer restates: the answer must carry at least as
many checks as that table does, and a row whose label is no row of it fails as invented.
Every check must hold: the score is the worst check's (1 or 0), so rows or sentences that
hold cannot dilute one that does not. A table with fewer than `min_checks` checks is
skipped when `min_checks` is 0 and there is no PDF reference (not applicable), and fails
otherwise (a table with its totals left out must not escape the check). Only checks that
could fail are counted (`_informative`): a total of one entry holds whatever it is. A table
of zeros fails: every total holds.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import ClassVar

from rewardsmith.verifiers.exploits import Exploit
from rewardsmith.verifiers.finance.figures import Figure, parse_figure
from rewardsmith.verifiers.finance.headers import detect_header
from rewardsmith.verifiers.finance.metrics import declared_scale
from rewardsmith.verifiers.finance.quantities import fiscal_year, model_text, stated_scale
from rewardsmith.verifiers.finance.reference import (
    ExtractedTable,
    ExtractionLimits,
    load_document,
    pdf_spec,
    problem_verdict,
    read_pdf_table,
)
from rewardsmith.verifiers.finance.statement import statement_checks
from rewardsmith.verifiers.finance.tables import Table, TableFormatError, read_table
from rewardsmith.verifiers.protocol import Cost
from rewardsmith.verifiers.types import Failure, Sample, Verdict

__all__ = ["Check", "Consistency", "check_table", "prose_checks"]

_GROWTH = re.compile(
    r"%|change|growth|yoy|\bvar|[Δ∆]|delta|\bvs\.?\b|versus|\bdiff|increase|decrease",
    re.IGNORECASE,
)
_YEAR_IN = re.compile(r"(?<!\d)(?:19|20)\d\d(?!\d)")


@dataclass(frozen=True)
class Check:
    kind: str
    where: str
    """The rule checked, with the row labels it used."""
    expected: float
    stated: float
    ok: bool
    rows: tuple[int, ...] = ()
    """Rows of the table the check used (0-based, header rows counted)."""
    column: str = ""


def _slack(figures: list[Figure], abs_tol: float) -> float:
    ulp = max((10.0**-f.decimals for f in figures), default=1.0)
    return max(abs_tol, 0.5 * ulp * len(figures) + 1e-9)


def _statement_checks(grid: list[list[str]], abs_tol: float) -> list[Check]:
    return [
        Check(c.kind, f"{c.rule} ({c.column})", c.expected, c.stated, c.ok, c.rows, c.column)
        for c in statement_checks(grid, abs_tol)
    ]


def _balance_checks(grid: list[list[str]], abs_tol: float) -> list[Check]:
    index = {_plain(r[0]): i for i, r in enumerate(grid) if r}
    assets = index.get("total assets")
    liabilities = index.get("total liabilities")
    equities = [i for k, i in index.items() if k.startswith("total") and "equity" in k]
    equity = next((i for i in equities if "liab" not in _plain(grid[i][0])), None)
    both = next(
        (
            i
            for k, i in index.items()
            if k.startswith("total") and re.search(r"(liabilities|equity) and", k)
        ),
        None,
    )
    if assets is None or (both is None and (liabilities is None or equity is None)):
        return []
    parts = [both] if both is not None else [liabilities, equity]
    rows = (assets, *[p for p in parts if p is not None])
    rule = "Total assets = " + " + ".join(grid[p][0] for p in parts if p is not None)
    checks: list[Check] = []
    for col in range(1, len(grid[assets])):
        a = _cell(grid[assets], col)
        terms = [_cell(grid[p], col) for p in parts if p is not None]
        if a is None or any(t is None for t in terms) or a.unit in ("%", "bp"):
            continue
        total = sum(t.value for t in terms if t is not None)
        ok = abs(total - a.value) <= _slack([a, *[t for t in terms if t]], abs_tol)
        checks.append(Check("balance", f"{rule} (column {col + 1})", total, a.value, ok, rows))
    return checks


_EQUITY = re.compile(
    r"\b(?:(?:share|stock)holders?'?s?|members?'?s?|owners?'?s?)\s+(?:equity|funds)\b"
    r"|\bnet\s+assets\b|\bshareholders?\s+funds\b",
)


def _plain(label: str) -> str:
    """A label as the balance check reads it: notes and references dropped ("Total assets
    (note 4)"), "Assets, total" as "total assets", and shareholders' funds, stockholders'
    equity and the like as "equity"."""
    text = re.sub(r"\([^)]*\)|\bnotes?\s*\d+[a-z]?\b|\[\d+\]", " ", label.lower())
    text = re.sub(r"^\s*(.*?)\s*,\s*total\s*$", r"total \1", text)
    text = _EQUITY.sub("equity", text.replace("’", "'"))
    return " ".join(re.sub(r"[^a-z ]", " ", text).split())


def _year(key: str) -> int | None:
    """The year a column header names ("2024", "FY2024", "FY24", "Year ended Dec 31, 2024")."""
    found = fiscal_year(key)
    if found is not None:
        return found
    match = _YEAR_IN.search(key)
    return int(match.group()) if match else None


def _cell(row: list[str] | None, col: int) -> Figure | None:
    if row is None or col >= len(row) or not row[col].strip():
        return None
    return parse_figure(row[col])


def _growth_checks(grid: list[list[str]], abs_tol: float) -> list[Check]:
    header = detect_header(grid)
    keys = list(header.column_keys)
    checks = []
    for col in range(3, len(keys)):
        if not _GROWTH.search(keys[col]):
            continue
        a_col, b_col = col - 2, col - 1
        years = [_year(keys[c]) for c in (a_col, b_col)]
        new, old = (a_col, b_col)
        if years[0] and years[1] and years[0] < years[1]:
            new, old = b_col, a_col
        for r in range(header.body_start, len(grid)):
            row = grid[r]
            n, o, stated = _cell(row, new), _cell(row, old), _cell(row, col)
            if n is None or o is None or o.value == 0:
                continue
            expected = (n.value - o.value) / abs(o.value) * 100
            where = f"{row[0]} / {keys[col]} = ({keys[new]} - {keys[old]}) / |{keys[old]}|"
            if stated is None:
                # "n/a" or a blank where the change has a meaning (no change of sign) dodges
                # the check; "n.m." or a blank across a change of sign is how statements
                # print it.
                if n.value * o.value > 0:
                    cell = row[col] if col < len(row) else ""
                    where = f"{row[0]} / {keys[col]}: {cell!r} is not a figure"
                    nan = float("nan")
                    checks.append(Check("growth", where, expected, nan, False, (r,), keys[col]))
                continue
            ok = abs(expected - stated.value) <= max(abs_tol, 0.5 * 10.0**-stated.decimals + 1e-9)
            checks.append(Check("growth", where, expected, stated.value, ok, (r,), keys[col]))
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
        _statement_checks(grid, abs_tol)
        + _balance_checks(grid, abs_tol)
        + _growth_checks(grid, abs_tol)
    )


@dataclass(frozen=True)
class Consistency:
    """Pass the answer's table when every arithmetic check (totals, results, balance,
    growth) holds; any failed check scores 0."""

    name: ClassVar[str] = "consistency"
    version: ClassVar[str] = "5"
    cost: ClassVar[Cost] = Cost.CHEAP
    takes_structured_reference: ClassVar[bool] = True  # JSON-text references are decoded

    abs_tol: float = 0.0
    """Extra absolute slack on every check (beyond rounding of the figures written)."""
    min_checks: int = 0
    """Fewer checks than this fail the table (0: a table with nothing to check is skipped).
    Set it when the task asks for a statement with totals, so leaving them out is no escape."""
    limits: ExtractionLimits = field(default_factory=ExtractionLimits)
    """Limits for reading the table out of a PDF."""

    def __post_init__(self) -> None:
        if self.min_checks < 0 or self.abs_tol < 0:
            raise ValueError("min_checks and abs_tol must be >= 0")

    def __call__(self, sample: Sample) -> Verdict:
        source = self._source(sample)  # a broken reference is ours, whatever the answer
        if isinstance(source, Verdict):
            return source
        text = model_text(sample.completion_text)
        try:
            table = read_table(text)
        except TableFormatError as exc:  # no table, no reward: prose is not a table
            return Verdict.failed(
                self.name, self.version, Failure.FORMAT,
                feedback=f"consistency checks the answer's table, and found none: {exc}",
            )  # fmt: skip
        if not _is_table(table):
            return Verdict.failed(
                self.name, self.version, Failure.FORMAT,
                feedback="consistency checks the answer's table: one line is not a table",
            )  # fmt: skip
        checks = check_table(table, self.abs_tol)
        if checks and _all_zero(table):
            return Verdict.failed(
                self.name, self.version, Failure.FORMAT,
                feedback="consistency: every figure in the table is zero, which checks nothing",
            )  # fmt: skip
        needed = self.min_checks
        if source is not None:
            needed = max(needed, 1, _informative(check_table(source, self.abs_tol)))
            scales = _scales(table, text, self._source_scale(sample))
            checks += _invented_rows(table, source) + _source_figures(table, source, scales)
        held = all(c.ok for c in checks)  # a failed check fails however few there are
        informative = _informative(checks)
        if held and informative < max(needed, 1):
            why = (
                f"{informative} totals, results, balance or growth checks that could fail"
                " found in the table"
            )
            if needed == 0:
                return Verdict.skipped(self.name, self.version, f"nothing to check: {why}")
            return Verdict.failed(
                self.name, self.version, feedback=f"{why}; at least {needed} needed"
            )
        checks += prose_checks(text)
        failed = [c for c in checks if not c.ok]
        evidence = {
            "checks": len(checks),
            "failed": [_as_dict(c) for c in failed][:20],
            "checked": [_as_dict(c) for c in checks][:50],
            "kinds": sorted({c.kind for c in checks}),
        }
        feedback = "; ".join(
            f"{c.where}: {c.stated:g} stated, {c.expected:g} computed" for c in failed[:3]
        )
        # Every check must hold: the score is the worst check's, so rows or sentences
        # that hold cannot dilute one that does not.
        return Verdict.graded(
            self.name, self.version, 0.0 if failed else 1.0, evidence=evidence,
            feedback=feedback,
        )  # fmt: skip

    def exploits(self, sample: Sample) -> Iterator[Exploit]:
        """Gamed variants of a right statement (`finance.exploits.consistency_exploits`)."""
        from rewardsmith.verifiers.finance.claim_exploits import consistency_word_exploits
        from rewardsmith.verifiers.finance.exploits import consistency_exploits

        yield from consistency_exploits(sample, self)
        yield from consistency_word_exploits(sample)

    def _source_scale(self, sample: Sample) -> float | None:
        """The scale the source's page declares ("(in thousands of dollars)")."""
        spec = pdf_spec(sample.reference)
        if spec is None:
            return None
        found = load_document(spec[0], [spec[1]], tables=False, limits=self.limits)
        text = found.document.text.get(spec[1], "") if found.document else ""
        scale = stated_scale(text)
        return scale if scale != 1.0 else None

    def _source(self, sample: Sample) -> Table | Verdict | None:
        """The PDF table the answer restates, when the reference names one."""
        spec = pdf_spec(sample.reference)
        if spec is None:
            return None
        path, page, index = spec
        found = read_pdf_table(path, page, index, self.limits)
        if not isinstance(found, ExtractedTable):
            return problem_verdict(self.name, self.version, found)
        return found.table


def _scales(table: Table, text: str, source_scale: float | None) -> tuple[float, float]:
    """The scales to compare the answer's figures with the source's in: each its own where
    both declare one (an answer "($m)" with 12.035 restates 12,035 in thousands), else the
    digits as written."""
    grid = table.grid()
    mine = declared_scale(grid)
    if mine is None:
        prose = "\n".join(x for x in text.splitlines() if "|" not in x and "<" not in x)
        mine = stated_scale(prose) if prose.strip() else 1.0
        mine = None if mine == 1.0 else mine
    return (mine, source_scale) if mine and source_scale else (1.0, 1.0)


def _keyed_figures(table: Table, scale: float = 1.0) -> dict[tuple[str, str], float]:
    """(row label, column key) -> the figure's value, for every figure of the body."""
    grid = table.grid()
    header = detect_header(grid)
    keys = header.column_keys
    out = {}
    for row in grid[header.body_start :]:
        for c in range(1, min(len(row), len(keys))):
            figure = _cell(row, c)
            if row and figure is not None:
                bare = figure.scale == 1.0 and figure.unit not in ("%", "bp")
                out[(_label(row[0]), _label(keys[c]))] = figure.absolute * (scale if bare else 1)
    return out


def _source_figures(
    table: Table, source: Table, scales: tuple[float, float] = (1.0, 1.0)
) -> list[Check]:
    """A failed check for each figure of `table` that differs from the source's figure in
    the same row and column: labels right and figures invented are not the statement."""
    mine, theirs = _keyed_figures(table, scales[0]), _keyed_figures(source, scales[1])
    return [
        Check("source_figure", f"{row} / {col}: the source prints {theirs[(row, col)]:g}",
              theirs[(row, col)], value, False)
        for (row, col), value in mine.items()
        if (row, col) in theirs and not math.isclose(value, theirs[(row, col)], rel_tol=1e-6)
    ]  # fmt: skip


def _informative(checks: list[Check]) -> int:
    """The checks that could fail on some figures, each counted once: a total of one entry
    (or a result with nothing since the one before) is that entry whatever it is, and a
    column copied repeats its checks (the same rows, the same figures)."""
    kept = {
        (c.kind, c.rows, c.expected, c.stated)
        for c in checks
        if c.kind not in ("invented_row", "source_figure")
        and not (c.kind in ("total", "result") and len(set(c.rows)) <= 2)
    }
    return len(kept)


def _all_zero(table: Table) -> bool:
    """Whether every figure under the header is zero (a dash is a zero): such a table has
    totals that hold whatever the statement says."""
    grid = table.grid()
    figures = [parse_figure(cell) for row in grid[1:] for cell in row[1:]]
    values = [f.value for f in figures if f is not None]
    return bool(values) and all(v == 0 for v in values)


def _is_table(table: Table) -> bool:
    """Two rows of two cells at least: a sentence read as one CSV line is prose."""
    grid = table.grid()
    return len(grid) >= 2 and sum(len([c for c in r if c.strip()]) >= 2 for r in grid) >= 2


def _label(text: str) -> str:
    return " ".join(text.casefold().split())


def _invented_rows(table: Table, source: Table) -> list[Check]:
    """A failed check for each body row of `table` whose label is no row of `source`:
    rows invented to pad a statement (each self-consistent) are not the statement."""
    grid, known = table.grid(), {_label(r[0]) for r in source.grid() if r}
    body = grid[detect_header(grid).body_start :]
    return [
        Check("invented_row", f"{row[0]!r} is no row of the source table", 0.0, 0.0, False, (i,))
        for i, row in enumerate(body)
        if row
        and row[0].strip()
        and _label(row[0]) not in known
        and any(_cell(row, c) is not None for c in range(1, len(row)))  # headings aside
    ]


def _as_dict(check: Check) -> dict[str, object]:
    out = vars(check).copy()
    out["rows"] = list(check.rows)
    for key in ("expected", "stated"):
        if math.isnan(out[key]):
            out[key] = None  # JSON has no NaN: "not a figure"
    return out
