"""Generate the bundled financial-report sample set from known numbers.

Run from the repository root:  .venv/bin/python datasets/finance/generate.py [--out DIR]

Writes, next to this script: one small PDF report per company (``acme.pdf``,
``globex.pdf``), the exact tables they print (``truth.json``), and tasks with gold answers
for every finance verifier (``tasks.jsonl``). Each report has a ruled income statement
"in thousands of dollars" with negatives in parentheses and a % change column (page 1), a
borderless balance sheet (page 2), and a ruled regional table that runs from page 3 onto
page 4 with its header repeated. Everything is computed from the numbers below, so the
truth is exact; the output is byte-for-byte reproducible (fixed creation date).
"""

from __future__ import annotations

import argparse
import json
import random
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from fpdf import FPDF

HERE = Path(__file__).resolve().parent
COMPANIES = {"acme": ("Acme Corp", 7), "globex": ("Globex Ltd", 11)}
REGIONS = [f"Region {c}{n}" for c in "ABCDEFG" for n in range(1, 7)]  # 42 rows: spans pages


def money(value: int) -> str:
    """Statement style: thousands separators, negatives in parentheses, zero as a dash."""
    if value == 0:
        return "-"
    return f"({-value:,})" if value < 0 else f"{value:,}"


def statements(seed: int) -> dict:
    rng = random.Random(seed)
    years = ["2024", "2023"]
    income = {}
    for y in years:
        revenue = rng.randrange(80_000, 160_000)
        cost = -rng.randrange(40_000, 70_000)
        opex = -rng.randrange(10_000, 25_000)
        other = rng.choice([0, -rng.randrange(100, 900), rng.randrange(100, 900)])
        income[y] = {
            "Revenue": revenue,
            "Cost of sales": cost,
            "Operating expenses": opex,
            "Other income (expense)": other,
        }
        income[y]["Total operating result"] = revenue + cost + opex + other
    balance = {}
    for y in years:
        cash, receivables, ppe = (rng.randrange(5_000, 30_000) for _ in range(3))
        payables, debt = rng.randrange(3_000, 15_000), rng.randrange(5_000, 20_000)
        assets = cash + receivables + ppe
        liabilities = payables + debt
        balance[y] = {
            "Cash": cash,
            "Receivables": receivables,
            "Property and equipment": ppe,
            "Total assets": assets,
            "Payables": payables,
            "Borrowings": debt,
            "Total liabilities": liabilities,
            "Total equity": assets - liabilities,
        }
    regions = {r: [rng.randrange(100, 5_000), rng.randrange(100, 5_000)] for r in REGIONS}
    return {"years": years, "income": income, "balance": balance, "regions": regions}


def growth(new: int, old: int) -> str:
    return f"{(new - old) / abs(old) * 100:.1f}%" if old else "n/a"


def income_rows(s: dict) -> list[list[str]]:
    rows = [["Item", "2024", "2023", "% change"]]
    for item in s["income"]["2024"]:
        new, old = s["income"]["2024"][item], s["income"]["2023"][item]
        rows.append([item, money(new), money(old), growth(new, old)])
    return rows


def balance_rows(s: dict) -> list[list[str]]:
    rows = [["Item", "2024", "2023"]]
    for item in s["balance"]["2024"]:
        rows.append([item, money(s["balance"]["2024"][item]), money(s["balance"]["2023"][item])])
    return rows


def region_rows(s: dict) -> list[list[str]]:
    rows = [["Region", "2024", "2023"]]
    rows += [[r, money(a), money(b)] for r, (a, b) in s["regions"].items()]
    total = [sum(v[0] for v in s["regions"].values()), sum(v[1] for v in s["regions"].values())]
    rows.append(["Total", money(total[0]), money(total[1])])
    return rows


def draw_table(
    pdf: FPDF, rows: list[list[str]], widths: list[int], ruled: bool, repeat_header: bool = True
) -> None:
    border: Literal[0, 1] = 1 if ruled else 0
    for i, row in enumerate(rows):
        if pdf.get_y() > pdf.h - 30 and repeat_header and i > 0:
            pdf.add_page()
            draw_row(pdf, rows[0], widths, border, bold=True)
        draw_row(pdf, row, widths, border, bold=i == 0)


def draw_row(
    pdf: FPDF, row: list[str], widths: list[int], border: Literal[0, 1], bold: bool
) -> None:
    pdf.set_font("Helvetica", "B" if bold else "", 9)
    for j, (text, width) in enumerate(zip(row, widths, strict=True)):
        pdf.cell(width, 6, text, border=border, align="L" if j == 0 else "R")
    pdf.ln(6)


def title_page(name: str) -> FPDF:
    """A new report, dated so that its bytes never change, open on its titled first page."""
    pdf = FPDF(format="A4")
    pdf.set_creation_date(datetime(2025, 1, 1, tzinfo=UTC))
    pdf.set_auto_page_break(False)
    pdf.add_page()
    pdf.set_font("Helvetica", "B", 14)
    pdf.cell(0, 10, f"{name} - Annual Report 2024", new_x="LMARGIN", new_y="NEXT")
    return pdf


def report(name: str, s: dict) -> FPDF:
    pdf = title_page(name)
    pdf.set_font("Helvetica", "", 10)
    rev = s["income"]["2024"]["Revenue"]
    pdf.multi_cell(
        0,
        5,
        f"Revenue for 2024 was ${rev:,} thousand "
        f"({growth(rev, s['income']['2023']['Revenue'])} on 2023).",
    )
    pdf.ln(3)
    pdf.cell(0, 6, "Income statement (in thousands of dollars)", new_x="LMARGIN", new_y="NEXT")
    draw_table(pdf, income_rows(s), [70, 35, 35, 30], ruled=True)
    pdf.add_page()
    pdf.set_font("Helvetica", "", 10)
    pdf.cell(0, 6, "Balance sheet (in thousands of dollars)", new_x="LMARGIN", new_y="NEXT")
    draw_table(pdf, balance_rows(s), [70, 35, 35], ruled=False)
    pdf.add_page()
    pdf.set_font("Helvetica", "", 10)
    pdf.cell(0, 6, "Revenue by region (in thousands of dollars)", new_x="LMARGIN", new_y="NEXT")
    draw_table(pdf, region_rows(s), [70, 35, 35], ruled=True)
    return pdf


def tasks(truth: dict) -> list[dict]:
    acme, globex = truth["acme"], truth["globex"]
    out = []
    for key, s in truth.items():
        pdf = f"datasets/finance/{key}.pdf"
        out += [
            {
                "id": f"{key}-income-table",
                "task": "table_match",
                "prompt": f"Extract the income statement on page 1 of {key}.pdf.",
                "reference": {"table": income_rows(s), "scale": "thousand"},
            },
            {
                "id": f"{key}-income-from-pdf",
                "task": "table_match",
                "prompt": "Extract the income statement on page 1.",
                "reference": {"pdf": pdf, "page": 1, "table": 0},
            },
            {
                "id": f"{key}-regions-table",
                "task": "table_match",
                "prompt": "Extract the revenue-by-region table (it runs over two pages).",
                "reference": {"table": region_rows(s), "scale": "thousand"},
            },
            {
                "id": f"{key}-revenue",
                "task": "numeric_answer",
                "prompt": "What was 2024 revenue?",
                "reference": {
                    "answer": money(s["income"]["2024"]["Revenue"]),
                    "scale": "thousand",
                    "currency": "USD",
                },
            },
            {
                "id": f"{key}-other",
                "task": "numeric_answer",
                "prompt": "What was 2023 other income (expense), in thousands?",
                "reference": {
                    "answer": money(s["income"]["2023"]["Other income (expense)"]),
                    "scale": "thousand",
                    "currency": "USD",
                },
            },
            {
                "id": f"{key}-grounding",
                "task": "grounding",
                "prompt": "Summarise 2024 revenue and total assets, citing pages.",
                "reference": {"pdf": pdf},
            },
            {
                "id": f"{key}-consistency",
                "task": "consistency",
                "prompt": "Write out the balance sheet on page 2 as a table, totals included.",
                "reference": {"pdf": pdf, "page": 2, "table": 0},
            },
        ]
    higher = (
        "Acme"
        if acme["income"]["2024"]["Revenue"] > globex["income"]["2024"]["Revenue"]
        else "Globex"
    )
    diff = abs(acme["income"]["2024"]["Revenue"] - globex["income"]["2024"]["Revenue"])
    out.append(
        {
            "id": "revenue-higher",
            "task": "cross_document",
            "prompt": "Which company had higher 2024 revenue, and by how much?",
            "reference": {
                "ask": "higher",
                "amount": True,
                "items": [
                    {
                        "label": "Acme",
                        "pdf": "datasets/finance/acme.pdf",
                        "page": 1,
                        "row": "Revenue",
                        "column": "2024",
                    },
                    {
                        "label": "Globex",
                        "pdf": "datasets/finance/globex.pdf",
                        "page": 1,
                        "row": "Revenue",
                        "column": "2024",
                    },
                ],
            },
            "gold": {"label": higher, "amount": diff * 1000},
        }
    )
    return out + chart_tasks()


CHART_CLAIMS = {
    "grouped_bars": "Revenue peaked in 2023. Revenue in 2021 was 151. Operating costs rose "
    "from 2019 to 2023. Revenue fell from 2021 to 2022.",
    "secondary_axis": "Revenue in 2020 was 132.5. Operating margin fell 23.4% year over year "
    "in 2022. The highest operating margin was in 2023.",
}


def chart_tasks() -> list[dict]:
    """Claims about the bundled charts (`charts/`); `gold` is a set of true claims."""
    return [
        {
            "id": f"chart-{name}",
            "task": "chart_claims",
            "prompt": f"Describe the chart in datasets/finance/charts/{name}.pdf.",
            "reference": {"pdf": f"datasets/finance/charts/{name}.pdf", "page": 1},
            "gold": claims,
        }
        for name, claims in CHART_CLAIMS.items()
    ]


def main(out: Path = HERE) -> None:
    truth = {key: statements(seed) for key, (_, seed) in COMPANIES.items()}
    for key, (name, _) in COMPANIES.items():
        report(name, truth[key]).output(str(out / f"{key}.pdf"))
    (out / "truth.json").write_text(json.dumps(truth, indent=1) + "\n")
    with open(out / "tasks.jsonl", "w") as handle:
        for task in tasks(truth):
            handle.write(json.dumps(task) + "\n")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="Generate the finance sample set.")
    parser.add_argument("--out", type=Path, default=HERE, help="folder to write (default: here)")
    main(parser.parse_args().out)
