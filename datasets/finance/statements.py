"""Financial statements laid out as annual reports lay them out, with exact arithmetic.

`statement(layout, seed)` draws the figures of one statement from a seed and computes every
subtotal, total and result from them, so each is right by construction; `Layout` says how
it is printed (US GAAP or IFRS order, costs positive or in parentheses, title and units
rows, one or two header levels); `rows` gives the table as a model or a PDF prints it;
`draw_pdf` prints it to a PDF, over two pages when asked (the second part under a
"(continued)" caption, the header repeated). `plant_error` changes one figure and says
which rows a consistency check must then name.

Layouts (`LAYOUTS`):

- ``us_income``: revenue, cost of revenue, gross profit, operating expenses with a total,
  operating income, other items, income before taxes, provision, net income; costs
  printed positive (US GAAP style);
- ``ifrs_income``: revenue, cost of sales, gross profit, distribution and administrative
  expenses, other income, operating profit, finance income and costs, profit before tax,
  income tax expense, profit for the year; costs in parentheses;
- ``us_balance``: current assets first, property with "Less: accumulated depreciation",
  current then long-term liabilities, stockholders' equity with "Less: treasury stock",
  totals of totals;
- ``ifrs_balance``: non-current assets first, equity before liabilities, "Total equity and
  liabilities".

    >>> s = statement("us_income", seed=1)
    >>> s.rows(Layout())[0]
    ['', '2024', '2023']
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Literal

__all__ = ["LAYOUTS", "Layout", "Line", "Statement", "draw_pdf", "plant_error", "statement"]

LAYOUTS = ("us_income", "ifrs_income", "us_balance", "ifrs_balance")
YEARS = ("2024", "2023")


@dataclass(frozen=True)
class Line:
    label: str
    values: tuple[int, ...] = ()
    """One per year, with the sign of the quantity (a cost is negative); empty for a heading."""
    kind: Literal["heading", "item", "total", "result", "less"] = "item"


@dataclass(frozen=True)
class Layout:
    """How a statement is printed."""

    costs: Literal["parentheses", "positive"] = "parentheses"
    """Costs as ``(412,300)`` (IFRS style) or as ``412,300`` under a label that says so."""
    title: bool = False
    """A title row ("Contoso plc - Consolidated ...") inside the table."""
    units: bool = False
    """A units row ("$ in thousands") inside the table."""
    two_level: bool = False
    """A spanning "Year ended December 31" over the years."""
    stub_header: str = ""
    """The stub column's header text ("" or "Item")."""


@dataclass(frozen=True)
class Statement:
    company: str
    name: str
    """"Consolidated Income Statement", ...; with the company it makes the title."""
    units: str
    lines: tuple[Line, ...]
    years: tuple[str, ...] = YEARS
    positive_costs: bool = field(default=False)
    """True for layouts whose convention prints costs positive (US GAAP)."""

    @property
    def title(self) -> str:
        return f"{self.company} - {self.name}"

    def header_rows(self, layout: Layout) -> list[list[str]]:
        rows = []
        width = 1 + len(self.years)
        if layout.title:
            rows.append([self.title] + [""] * (width - 1))
        if layout.units:
            rows.append([f"({self.units})"] + [""] * (width - 1))
        if layout.two_level:
            span = "Year ended December 31" if "Income" in self.name else "As at December 31"
            rows.append(["", span] + [""] * (width - 2))
        rows.append([layout.stub_header, *self.years])
        return rows

    def body_rows(self, layout: Layout) -> list[list[str]]:
        out = []
        for line in self.lines:
            if line.kind == "heading":
                out.append([line.label] + [""] * len(self.years))
                continue
            shown = [self._shown(v, line, layout) for v in line.values]
            out.append([line.label, *shown])
        return out

    def rows(self, layout: Layout) -> list[list[str]]:
        return self.header_rows(layout) + self.body_rows(layout)

    def _shown(self, value: int, line: Line, layout: Layout) -> str:
        if value < 0 and layout.costs == "positive" and line.kind != "result":
            return money(-value)  # the label says it is a cost
        return money(value)


def money(value: int) -> str:
    """Statement style: thousands separators, negatives in parentheses, zero as a dash."""
    if value == 0:
        return "-"
    return f"({-value:,})" if value < 0 else f"{value:,}"


def _pair(rng: random.Random, low: int, high: int) -> tuple[int, int]:
    return rng.randrange(low, high), rng.randrange(low, high)


def _add(*lines: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(sum(v) for v in zip(*lines, strict=True))


def _neg(values: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(-v for v in values)


def _us_income(rng: random.Random) -> list[Line]:
    revenue = _pair(rng, 300_000, 900_000)
    cost = _neg(_pair(rng, 100_000, 280_000))
    gross = _add(revenue, cost)
    opex = [_neg(_pair(rng, 20_000, 60_000)) for _ in range(3)]
    total_opex = _add(*opex)
    operating = _add(gross, total_opex)
    interest, other = _neg(_pair(rng, 1_000, 9_000)), _pair(rng, 100, 4_000)
    before_tax = _add(operating, interest, other)
    tax = _neg(tuple(v // 5 for v in before_tax))
    return [
        Line("Revenue", revenue),
        Line("Cost of revenue", cost),
        Line("Gross profit", gross, "result"),
        Line("Operating expenses:", kind="heading"),
        Line("Research and development", opex[0]),
        Line("Sales and marketing", opex[1]),
        Line("General and administrative", opex[2]),
        Line("Total operating expenses", total_opex, "total"),
        Line("Operating income", operating, "result"),
        Line("Interest expense", interest),
        Line("Other income, net", other),
        Line("Income before income taxes", before_tax, "result"),
        Line("Provision for income taxes", tax),
        Line("Net income", _add(before_tax, tax), "result"),
    ]


def _ifrs_income(rng: random.Random) -> list[Line]:
    revenue = _pair(rng, 300_000, 900_000)
    cost = _neg(_pair(rng, 100_000, 280_000))
    gross = _add(revenue, cost)
    distribution, admin = _neg(_pair(rng, 20_000, 60_000)), _neg(_pair(rng, 20_000, 60_000))
    other = _pair(rng, 100, 4_000)
    operating = _add(gross, distribution, admin, other)
    finance_income, finance_costs = _pair(rng, 100, 3_000), _neg(_pair(rng, 1_000, 9_000))
    before_tax = _add(operating, finance_income, finance_costs)
    tax = _neg(tuple(v // 4 for v in before_tax))
    return [
        Line("Revenue", revenue),
        Line("Cost of sales", cost),
        Line("Gross profit", gross, "result"),
        Line("Distribution costs", distribution),
        Line("Administrative expenses", admin),
        Line("Other income", other),
        Line("Operating profit", operating, "result"),
        Line("Finance income", finance_income),
        Line("Finance costs", finance_costs),
        Line("Profit before tax", before_tax, "result"),
        Line("Income tax expense", tax),
        Line("Profit for the year", _add(before_tax, tax), "result"),
    ]


def _assets(rng: random.Random) -> dict[str, tuple[int, ...]]:
    return {
        "Cash and cash equivalents": _pair(rng, 10_000, 90_000),
        "Trade receivables": _pair(rng, 10_000, 60_000),
        "Inventories": _pair(rng, 5_000, 40_000),
        "gross": _pair(rng, 200_000, 400_000),
        "depreciation": _neg(_pair(rng, 50_000, 150_000)),
        "Goodwill": _pair(rng, 10_000, 80_000),
        "Trade payables": _pair(rng, 10_000, 50_000),
        "Accrued liabilities": _pair(rng, 5_000, 20_000),
        "Long-term debt": _pair(rng, 50_000, 120_000),
        "Common stock": _pair(rng, 10_000, 30_000),
        "treasury": _neg(_pair(rng, 1_000, 5_000)),
    }


def _us_balance(rng: random.Random) -> list[Line]:
    a = _assets(rng)
    current = [a["Cash and cash equivalents"], a["Trade receivables"], a["Inventories"]]
    total_current = _add(*current)
    ppe = _add(a["gross"], a["depreciation"])
    total_assets = _add(total_current, ppe, a["Goodwill"])
    current_liabilities = _add(a["Trade payables"], a["Accrued liabilities"])
    liabilities = _add(current_liabilities, a["Long-term debt"])
    equity_total = _add(total_assets, _neg(liabilities))
    retained = _add(equity_total, _neg(a["Common stock"]), _neg(a["treasury"]))
    return [
        Line("Assets", kind="heading"),
        Line("Current assets:", kind="heading"),
        Line("Cash and cash equivalents", a["Cash and cash equivalents"]),
        Line("Trade receivables", a["Trade receivables"]),
        Line("Inventories", a["Inventories"]),
        Line("Total current assets", total_current, "total"),
        Line("Property, plant and equipment", a["gross"]),
        Line("Less: accumulated depreciation", a["depreciation"], "less"),
        Line("Property, plant and equipment, net", ppe),
        Line("Goodwill", a["Goodwill"]),
        Line("Total assets", total_assets, "total"),
        Line("Liabilities and stockholders' equity", kind="heading"),
        Line("Current liabilities:", kind="heading"),
        Line("Trade payables", a["Trade payables"]),
        Line("Accrued liabilities", a["Accrued liabilities"]),
        Line("Total current liabilities", current_liabilities, "total"),
        Line("Long-term debt", a["Long-term debt"]),
        Line("Total liabilities", liabilities, "total"),
        Line("Stockholders' equity:", kind="heading"),
        Line("Common stock", a["Common stock"]),
        Line("Retained earnings", retained),
        Line("Less: treasury stock", a["treasury"], "less"),
        Line("Total stockholders' equity", equity_total, "total"),
        Line(
            "Total liabilities and stockholders' equity", _add(liabilities, equity_total), "total"
        ),
    ]


def _ifrs_balance(rng: random.Random) -> list[Line]:
    a = _assets(rng)
    ppe = _add(a["gross"], a["depreciation"])
    non_current = _add(ppe, a["Goodwill"])
    current = _add(a["Inventories"], a["Trade receivables"], a["Cash and cash equivalents"])
    total_assets = _add(non_current, current)
    current_liabilities = _add(a["Trade payables"], a["Accrued liabilities"])
    liabilities = _add(a["Long-term debt"], current_liabilities)
    equity = _add(total_assets, _neg(liabilities))
    retained = _add(equity, _neg(a["Common stock"]))
    return [
        Line("Non-current assets", kind="heading"),
        Line("Property, plant and equipment", ppe),
        Line("Goodwill", a["Goodwill"]),
        Line("Total non-current assets", non_current, "total"),
        Line("Current assets", kind="heading"),
        Line("Inventories", a["Inventories"]),
        Line("Trade receivables", a["Trade receivables"]),
        Line("Cash and cash equivalents", a["Cash and cash equivalents"]),
        Line("Total current assets", current, "total"),
        Line("Total assets", total_assets, "total"),
        Line("Equity", kind="heading"),
        Line("Share capital", a["Common stock"]),
        Line("Retained earnings", retained),
        Line("Total equity", equity, "total"),
        Line("Non-current liabilities", kind="heading"),
        Line("Borrowings", a["Long-term debt"]),
        Line("Total non-current liabilities", a["Long-term debt"], "total"),
        Line("Current liabilities", kind="heading"),
        Line("Trade payables", a["Trade payables"]),
        Line("Accrued liabilities", a["Accrued liabilities"]),
        Line("Total current liabilities", current_liabilities, "total"),
        Line("Total liabilities", liabilities, "total"),
        Line("Total equity and liabilities", _add(equity, liabilities), "total"),
    ]


_BUILDERS = {
    "us_income": (_us_income, "Consolidated Statements of Operations", True),
    "ifrs_income": (_ifrs_income, "Consolidated Income Statement", False),
    "us_balance": (_us_balance, "Consolidated Balance Sheets", True),
    "ifrs_balance": (_ifrs_balance, "Consolidated Statement of Financial Position", False),
}
COMPANIES = ("Contoso plc", "Fabrikam Inc.", "Northwind Group", "Tailspin Ltd")


def statement(layout: str, seed: int) -> Statement:
    """A statement of the given layout with figures drawn from `seed`."""
    build, name, positive = _BUILDERS[layout]
    rng = random.Random(f"{layout}-{seed}")
    company = COMPANIES[seed % len(COMPANIES)]
    units = "$ in thousands" if positive else "in thousands of euros"
    return Statement(company, name, units, tuple(build(rng)), YEARS, positive)


def default_layout(s: Statement, **changes: object) -> Layout:
    """The layout the statement's convention prints it in (costs positive for US GAAP)."""
    base = Layout(costs="positive" if s.positive_costs else "parentheses")
    return replace(base, **changes)  # type: ignore[arg-type]


def plant_error(s: Statement, line: str, year: int = 0, delta: int = 9) -> Statement:
    """`s` with one figure of the line labelled `line` off by `delta` (nothing else changed:
    the totals that use it no longer add up)."""
    lines = []
    for x in s.lines:
        if x.label == line:
            values = list(x.values)
            values[year] += delta if values[year] >= 0 else -delta
            x = replace(x, values=tuple(values))
        lines.append(x)
    return replace(s, lines=tuple(lines))


def draw_pdf(
    s: Statement,
    layout: Layout,
    path: str,
    split_after: int | None = None,
    ruled: bool = False,
    repeat_header: bool = True,
    second_caption: str | None = None,
) -> None:
    """Print `s` to a PDF at `path`: caption and units line above the table; when
    `split_after` is given, body rows after that many continue on page 2 under
    `second_caption` (default "<caption> (continued)"), the header repeated or not."""
    from fpdf import FPDF

    pdf = FPDF(format="A4")
    pdf.set_auto_page_break(False)
    pdf.set_creation_date(_FIXED_DATE)
    header = [layout.stub_header, *s.years]
    body = s.body_rows(layout)
    parts = [body] if split_after is None else [body[:split_after], body[split_after:]]
    for n, part in enumerate(parts):
        pdf.add_page()
        pdf.set_font("Helvetica", "B", 12)
        caption = s.title if not n else second_caption or f"{s.title} (continued)"
        pdf.cell(0, 8, caption, new_x="LMARGIN", new_y="NEXT")
        pdf.set_font("Helvetica", "", 9)
        pdf.cell(0, 6, f"({s.units})", new_x="LMARGIN", new_y="NEXT")
        pdf.ln(4)
        _draw_rows(pdf, [header, *part] if n == 0 or repeat_header else part, ruled)
    pdf.output(path)


def _draw_rows(pdf: object, rows: list[list[str]], ruled: bool) -> None:
    widths = [90, 40, 40]
    for i, row in enumerate(rows):
        bold = i == 0 or (row[1:] == [""] * (len(row) - 1))
        pdf.set_font("Helvetica", "B" if bold else "", 9)  # type: ignore[attr-defined]
        for j, (text, width) in enumerate(zip(row, widths, strict=True)):
            pdf.cell(width, 6, text, border=1 if ruled else 0, align="L" if j == 0 else "R")  # type: ignore[attr-defined]
        pdf.ln(6)  # type: ignore[attr-defined]


_FIXED_DATE = datetime(2025, 1, 1, tzinfo=UTC)
