"""Reading a financial statement as a statement: sections, totals, results and signs.

A statement is not a column of numbers with a sum at the bottom. `statement_checks` reads
the body rows of a table (`headers.detect_header` finds where the body starts) as:

- **headings**: a label with no figures ("Current assets:") opens a section;
- **totals** ("Total current assets", "Subtotal", "Totals"): the sum of the entries of
  their own section. Walking back from the total, an entry is taken until a boundary: the
  heading of the section (which the total closes when its name matches), a result row,
  or an earlier total that is not part of this one. An earlier total is part of it when
  its name, qualifiers aside ("current", "non-current", "other", ...), is within this
  total's name ("Total current liabilities" is part of "Total liabilities", which is part
  of "Total liabilities and stockholders' equity"; "Total assets" is part of neither),
  or when this total has no name of its own (a bare "Total"). A total replaces the entries
  it summed, so a total of totals adds each section once;
- **results** (gross profit, operating income, profit before tax, net income, profit for
  the year, net cash from ...): the previous result (or, for the first, the entries from
  the top) plus the entries since it, each with its sign;
- **less** rows ("Less: accumulated depreciation"): the row after them (the net figure)
  is the entry before them minus their magnitude;
- **items**: everything else.

Signs. A figure printed negative (parentheses, a minus) counts as printed. For a figure
printed positive, its label decides: an outflow (cost, expense, loss, tax, depreciation,
amortisation, impairment, "less") is subtracted, an inflow (revenue, sales, income, gain)
added; an entry with neither inherits its section's sense ("Operating expenses:") and,
past the first result, is a deduction (a US GAAP income statement prints its expenses
positive under gross profit). A total or result is checked against the sum with printed
signs and against the sum with these signs: either convention is a correct statement,
and no other rearrangement is tried, so a wrong figure is not explained away. A sum whose
costs are printed both ways follows neither, and only its printed signs count.

Each check names its rule and the rows it used (body row indices of the table).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field

from rewardsmith.verifiers.finance.figures import Figure, parse_figure
from rewardsmith.verifiers.finance.headers import HeaderLayout, detect_header

__all__ = ["Entry", "RowCheck", "Statement", "read_statement", "statement_checks"]

_TOTAL = re.compile(r"^\s*(sub-?\s*)?totals?\b|\btotals?\s*$", re.IGNORECASE)
_RESULT = re.compile(
    r"^\s*(gross\s+(profit|margin|loss)|operating\s+(income|profit|loss|result)|"
    r"(income|profit|loss|earnings|result)\s+(\(loss\)\s+)?(before|from\s+operations)|"
    r"net\s+(income|profit|loss|earnings|result)|(profit|loss|result)\s+for\s+the\s+"
    r"(year|period)|ebitda?\b)",
    re.IGNORECASE,
)
_LESS = re.compile(r"^\s*less\b[:\s]", re.IGNORECASE)
_OUTFLOW = re.compile(
    r"\b(costs?|expenses?|expenditures?|loss(es)?|tax(es)?|provision|depreciation|"
    r"amorti[sz]ation|impairment|write-?downs?|charges?|purchases?|repayments?|"
    r"dividends\s+paid|paid|payments?|outflows?|deficit)\b",
    re.IGNORECASE,
)
_INFLOW = re.compile(
    r"\b(revenues?|sales|turnover|income|gains?|profit|proceeds|receipts?|inflows?|"
    r"benefit|surplus)\b",
    re.IGNORECASE,
)
_EITHER = re.compile(r"\((income|expense|gain|loss|profit|costs?)\)", re.IGNORECASE)
"""A parenthesised alternative ("Other income (expense), net"): the printed sign decides."""
_QUALIFIERS = {"current", "non", "noncurrent", "other", "long", "short", "term", "net", "of"}
_NAME_STOP = {"total", "totals", "subtotal", "sub", "and", "the", "s"}
_NOTES = re.compile(r"^\s*notes?\b", re.IGNORECASE)
_NIL = re.compile(
    r"^\s*(?:|n\.?\s?/?\s?a\.?|n\.?m\.?|nil|none|nmf|not\s+applicable|[-–—*x]+)\s*$",
    re.IGNORECASE,
)
"""An entry cell that states nothing ("", "n/a", "nm", "nil", a dash): no term of a sum.
Any other text that is no figure ("250 see note", "two hundred fifty", "~250") is a term
the reader sees and the sum cannot add, so the next total or result fails."""


@dataclass(frozen=True)
class RowCheck:
    """One arithmetic fact a statement states: `rule` names it, `rows` are the rows used."""

    kind: str
    """``total``, ``result``, ``gross_profit`` or ``less``."""
    rule: str
    rows: tuple[int, ...]
    column: str
    expected: float
    stated: float
    ok: bool


@dataclass
class Entry:
    """A row as a term of the sums above it: its value in one column and its sense."""

    row: int
    label: str
    figure: Figure | None
    outflow: bool
    kind: str
    """``item``, ``total``, ``result`` or ``heading``."""

    @property
    def printed(self) -> float:
        return self.figure.value if self.figure else 0.0

    @property
    def signed(self) -> float:
        value = self.printed
        return -abs(value) if self.outflow and value > 0 else value


@dataclass
class Statement:
    """The body of a table as labelled rows, with the header it was found under."""

    header: HeaderLayout
    labels: list[str]
    rows: list[list[str]]
    first_row: int
    """Index of the first body row in the table."""
    columns: list[int] = field(default_factory=list)
    """Columns holding figures (not notes, not percentages)."""


def read_statement(grid: list[list[str]]) -> Statement:
    header = detect_header(grid)
    stub = max(header.stub_columns, 1)
    body = grid[header.body_start :]
    labels = [" ".join(c for c in row[:stub] if c.strip()).strip() for row in body]
    width = max((len(r) for r in grid), default=0)
    columns = [
        c
        for c in range(stub, width)
        if not _NOTES.match(header.column_keys[c] if c < len(header.column_keys) else "")
        and any(_figure(r, c) is not None for r in body)
        and not any((f := _figure(r, c)) is not None and f.unit in ("%", "bp") for r in body)
    ]
    return Statement(header, labels, body, header.body_start, columns)


def _figure(row: list[str], col: int) -> Figure | None:
    return parse_figure(row[col]) if col < len(row) and row[col].strip() else None


def _unread(row: list[str], col: int) -> bool:
    """A cell that holds text the reader sees as a term and that is no figure (`_NIL`)."""
    return col < len(row) and _figure(row, col) is None and not _NIL.match(row[col])


def _kind(label: str, figures: bool) -> str:
    if _LESS.match(label):
        return "less"
    if _RESULT.match(label):
        return "result"
    if _TOTAL.search(label):
        return "total"
    return "item" if figures else "heading"


def _name(label: str) -> set[str]:
    words = re.findall(r"[a-z]+", label.casefold())
    return {w for w in words if w not in _NAME_STOP}


def _part_of(inner: str, outer: str) -> bool:
    """Is the total labelled `inner` one of the terms of the total labelled `outer`?"""
    outer_name = _name(outer)
    return not outer_name or (_name(inner) - _QUALIFIERS) <= outer_name


def _closes(total: str, heading: str) -> bool:
    """Does the total close this heading's section ("Total current assets" closes
    "Current assets:", not "Assets:")? A bare "Total" closes the innermost."""
    return not _name(total) or _name(total) == _name(heading)


def statement_checks(grid: list[list[str]], abs_tol: float = 0.0) -> list[RowCheck]:
    """Every total, result and "less" check of the statement in `grid`, per column."""
    statement = read_statement(grid)
    checks: list[RowCheck] = []
    for col in statement.columns:
        checks += list(_column_checks(statement, col, abs_tol))
    return checks


def _column_checks(statement: Statement, col: int, abs_tol: float) -> Iterator[RowCheck]:
    key = statement.header.column_keys
    column = key[col] if col < len(key) and key[col] else f"column {col + 1}"
    stack: list[Entry] = []  # open headings and the entries not yet summed
    sections: list[bool] = []  # outflow sense of each open heading
    results_seen = 0
    pending_less: tuple[Entry, Entry] | None = None
    unread: list[tuple[int, str, str]] = []  # entries not read since the last total or result
    for i, (label, row) in enumerate(zip(statement.labels, statement.rows, strict=True)):
        figure = _figure(row, col)
        kind = _kind(label, any(_figure(row, c) or _unread(row, c) for c in statement.columns))
        where = statement.first_row + i
        if kind == "heading":
            stack.append(Entry(where, label, None, bool(_OUTFLOW.search(label)), "heading"))
            sections.append(_sense(label, [], 0))
            continue
        if figure is None or figure.unit in ("%", "bp"):
            if kind in ("total", "result") and row[col].strip():
                yield RowCheck(kind, f"{label}: {row[col]!r} is not a figure", (where,),
                               column, float("nan"), float("nan"), False)  # fmt: skip
            elif figure is None and _unread(row, col):
                unread.append((where, label, row[col]))
            continue
        if kind in ("total", "result") and unread:  # its sum would leave them out
            for at, name, cell in unread:
                yield RowCheck("unreadable_term", f"{name}: {cell!r} is not a figure, so "
                               f"{label} cannot add it", (at, where), column, float("nan"),
                               float("nan"), False)  # fmt: skip
            unread.clear()
        outflow = _sense(label, sections, results_seen)
        entry = Entry(where, label, figure, outflow, "item" if kind == "less" else kind)
        if pending_less is not None and kind == "item":  # the net figure after a "less"
            base, less = pending_less
            yield _less_check(base, less, entry, column, abs_tol)
            stack = [e for e in stack if e is not base and e is not less]
        pending_less = None  # before a total, a "less" row is one of its (subtracted) terms
        if kind == "less" and stack and stack[-1].kind != "heading":
            pending_less = (stack[-1], entry)
            entry.outflow = True
        elif kind == "total":
            check = _total_check(stack, sections, entry, column, abs_tol)
            if check is not None:
                yield check
        elif kind == "result":
            yield _result_check(stack, entry, column, abs_tol, results_seen)
            results_seen += 1
        stack.append(entry)


def _sense(label: str, sections: list[bool], results_seen: int) -> bool:
    """True when a positive figure under `label` is subtracted (see module doc)."""
    if _LESS.match(label):
        return True
    if _EITHER.search(label):
        return False  # "income (expense)": positive is income, the sign is printed
    if _OUTFLOW.search(label):
        return not re.search(r"\bbenefit\b", label, re.IGNORECASE)  # "income taxes" pay
    if _INFLOW.search(label):
        return False
    return (bool(sections) and sections[-1]) or results_seen > 0


def _slack(terms: list[Entry], total: Entry, abs_tol: float) -> float:
    figures = [t.figure for t in terms if t.figure] + [total.figure]
    ulp = max((10.0**-f.decimals for f in figures if f is not None), default=1.0)
    return max(abs_tol, 0.5 * ulp * len(figures) + 1e-9)


def _agrees(terms: list[Entry], total: Entry, abs_tol: float) -> tuple[bool, float]:
    """Does `total` equal the terms' sum with printed signs or with labelled signs? A sum
    whose costs are printed both ways (one in parentheses, one not) follows no convention:
    only its printed signs count, so a lost parenthesis is not explained away."""
    stated = total.printed
    costs = [t.printed for t in terms if t.outflow and t.kind != "result"]
    mixed = any(c > 0 for c in costs) and any(c < 0 for c in costs)
    options = [sum(t.printed for t in terms)]
    if not mixed:
        options.append(sum(t.signed for t in terms))
    if total.outflow and stated > 0:  # "Total operating expenses 300": a sum of costs
        options += [-o for o in options]
    best = min(options, key=lambda o: abs(o - stated))
    return abs(best - stated) <= _slack(terms, total, abs_tol), best


def _rule(total: Entry, terms: list[Entry], op: str = " + ") -> str:
    return f"{total.label} = " + op.join(t.label or f"row {t.row}" for t in terms)


def _total_check(
    stack: list[Entry], sections: list[bool], total: Entry, column: str, abs_tol: float
) -> RowCheck | None:
    terms: list[Entry] = []
    start = len(stack)
    while start > 0:
        entry = stack[start - 1]
        if entry.kind == "heading":
            if _closes(total.label, entry.label):
                start -= 1  # the total closes its section
                sections.pop()
            break
        if entry.kind == "result" or (
            entry.kind == "total" and not _part_of(entry.label, total.label)
        ):
            break
        terms.insert(0, entry)
        start -= 1
    del stack[start:]
    if not terms:  # a total restated on its own (equity below liabilities): nothing to add
        return None
    ok, expected = _agrees(terms, total, abs_tol)
    rows = (*[t.row for t in terms], total.row)
    return RowCheck("total", _rule(total, terms), rows, column, expected, total.printed, ok)


def _result_check(
    stack: list[Entry], result: Entry, column: str, abs_tol: float, results_seen: int
) -> RowCheck:
    terms: list[Entry] = []
    for entry in reversed(stack):
        if entry.kind == "heading":
            continue
        terms.insert(0, entry)
        if entry.kind == "result":
            break
    del stack[:]
    kind = "gross_profit" if re.match(r"\s*gross", result.label, re.IGNORECASE) else "result"
    base = [t for t in terms if t.kind == "result"]
    for t in base:
        t.outflow = False  # the previous result carries its own sign
    ok, expected = _agrees(terms, result, abs_tol) if terms else (False, 0.0)
    rows = (*[t.row for t in terms], result.row)
    return RowCheck(kind, _rule(result, terms, " ± "), rows, column, expected, result.printed, ok)


def _less_check(base: Entry, less: Entry, net: Entry, column: str, abs_tol: float) -> RowCheck:
    expected = base.printed - abs(less.printed)
    ok = abs(expected - net.printed) <= _slack([base, less], net, abs_tol)
    rule = f"{net.label} = {base.label} - {less.label}"
    return RowCheck("less", rule, (base.row, less.row, net.row), column, expected, net.printed, ok)
