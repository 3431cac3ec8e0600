"""Generate the `finance_document` environment's reports and tasks from known numbers.

Run from the repository root:  .venv/bin/python datasets/environments/finance_reports.py

Writes ``finance/<company>.pdf`` (32+ pages each: highlights prose, a ruled income
statement "in thousands of dollars" with a % change column, a borderless balance sheet, a
regional table running over two pages, 25 note pages each with prose and a ruled table,
and a vector chart page appended from ``datasets/finance/charts``) and
``finance_document.jsonl``: questions with exact gold figures, the page that prints them,
single- and cross-document. Every figure is computed from the seeded numbers below, so the
truth is exact and the output byte-for-byte reproducible.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

from fpdf import FPDF
from pypdf import PdfReader, PdfWriter

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "datasets" / "finance"))
from generate import (  # noqa: E402
    balance_rows,
    draw_table,
    growth,
    income_rows,
    region_rows,
    title_page,
)
from generate import statements as base_statements  # noqa: E402

COMPANIES = {"northwind": ("Northwind Traders", 23), "initech": ("Initech Inc", 29)}
CHART = ROOT / "datasets" / "finance" / "charts" / "grouped_bars.pdf"
NOTE_TOPICS = ["Leases", "Inventories", "Intangible assets", "Provisions", "Pensions"]
NOTES = 25
NOTES_FIRST_PAGE = 6  # cover 1, income 2, balance 3, regions 4-5


def note_values(rng: random.Random, n: int) -> dict[str, list[int]]:
    topic = NOTE_TOPICS[n % len(NOTE_TOPICS)]
    return {f"{topic} line {chr(64 + k)}": [rng.randrange(200, 9_000), rng.randrange(200, 9_000)]
            for k in range(1, 4)}  # fmt: skip


def company(seed: int) -> dict:
    s = base_statements(seed)
    rng = random.Random(seed * 101)
    s["notes"] = [note_values(rng, n) for n in range(1, NOTES + 1)]
    return s


def _body(pdf: FPDF, text: str) -> None:
    pdf.set_font("Helvetica", "", 10)
    pdf.multi_cell(0, 5, text)
    pdf.ln(3)


def report(name: str, s: dict) -> FPDF:
    pdf = title_page(name)
    inc = s["income"]
    _body(pdf, f"Highlights. Revenue for 2024 was ${inc['2024']['Revenue']:,} thousand "
               f"({growth(inc['2024']['Revenue'], inc['2023']['Revenue'])} on 2023). "
               "The statements follow; the notes explain each line.")  # fmt: skip
    for title, rows, widths, ruled in (
        ("Income statement", income_rows(s), [70, 35, 35, 30], True),
        ("Balance sheet", balance_rows(s), [70, 35, 35], False),
        ("Revenue by region", region_rows(s), [70, 35, 35], True),
    ):
        pdf.add_page()
        _body(pdf, f"{title} (in thousands of dollars)")
        draw_table(pdf, rows, widths, ruled=ruled)
    for n, values in enumerate(s["notes"], start=1):
        pdf.add_page()
        _body(pdf, f"Note {n}. {next(iter(values)).split(' line')[0]}. This note gives the "
                   "movements in the year; amounts in thousands of dollars.")  # fmt: skip
        rows = [["Item", "2024", "2023"]] + [
            [k, f"{a:,}", f"{b:,}"] for k, (a, b) in values.items()
        ]
        draw_table(pdf, rows, [80, 35, 35], ruled=True)
    return pdf


def write_pdf(name: str, s: dict, out: Path) -> int:
    """The report with the chart page appended; its page count."""
    body = report(COMPANIES[name][0], s)
    writer = PdfWriter()
    writer.append(PdfReader(__import__("io").BytesIO(bytes(body.output()))))
    writer.append(PdfReader(str(CHART)))
    writer.add_metadata({"/Producer": "rewardsmith", "/CreationDate": "D:20250101000000Z"})
    with out.open("wb") as handle:
        writer.write(handle)
    return len(writer.pages)


def task(id_: str, question: str, docs: list[str], answer: str, pdf: str, page: int,
         claim: str, scale: str = "thousand") -> dict:  # fmt: skip
    """One task; `solution` is the expert's play: the page to read and the cited claim."""
    return {
        "id": id_,
        "prompt": question,
        "docs": docs,
        "reference": {"answer": answer, "scale": scale, "pdf": pdf},
        "solution": {"doc": pdf, "page": page, "claim": claim},
    }


def tasks(truth: dict[str, dict], chart_page: int) -> list[dict]:
    out = []
    for name, s in truth.items():
        label = COMPANIES[name][0]
        inc, bal = s["income"], s["balance"]
        rev = inc["2024"]["Revenue"]
        out.append(task(f"{name}-revenue", f"What was {label}'s 2024 revenue, in thousands?",
                        [name], f"{rev:,}", name, 2, f"Revenue was {rev:,} (p. 2)."))  # fmt: skip
        op = inc["2023"]["Total operating result"]
        out.append(task(f"{name}-op-2023", f"What was {label}'s 2023 total operating result?",
                        [name], f"{op:,}", name, 2,
                        f"Total operating result was {op:,} (p. 2)."))  # fmt: skip
        for item in ("Total assets", "Borrowings", "Total equity"):
            v = bal["2024"][item]
            out.append(task(f"{name}-{item.lower().replace(' ', '-')}",
                            f"What were {label}'s {item.lower()} at the end of 2024?",
                            [name], f"{v:,}", name, 3, f"{item} were {v:,} (p. 3)."))  # fmt: skip
        for n in (4, 13, 22):
            item, (a, _) = next(iter(s["notes"][n - 1].items()))
            page = NOTES_FIRST_PAGE + n - 1
            out.append(task(f"{name}-note-{n}", f"In note {n} of {label}'s report, what is the "
                            f"2024 amount of '{item}'?", [name], f"{a:,}", name, page,
                            f"{item} was {a:,} (p. {page})."))  # fmt: skip
    names = list(truth)
    a, b = (truth[n] for n in names)
    for line, page in (("Revenue", 2), ("Total operating result", 2)):
        va, vb = a["income"]["2024"][line], b["income"]["2024"][line]
        win = names[0] if va >= vb else names[1]
        v = max(va, vb)
        out.append(task(f"cross-{line.lower().replace(' ', '-')}",
                        f"Which of {COMPANIES[names[0]][0]} and {COMPANIES[names[1]][0]} had the "
                        f"higher 2024 {line.lower()}? Give that figure, in thousands.",
                        names, f"{v:,}", win, page, f"{line} was {v:,} (p. {page})."))  # fmt: skip
    for name, s in truth.items():  # the regional table runs over two pages: find the row's
        for region in ("Region B2", "Region G5"):
            v = s["regions"][region][0]
            out.append(task(f"{name}-{region.lower().replace(' ', '-')}",
                            f"What was {COMPANIES[name][0]}'s 2024 revenue in {region}?",
                            [name], f"{v:,}", name, 0,
                            f"{region} revenue was {v:,} (p. PAGE)."))  # fmt: skip
    return out


def locate(t: dict, folder: Path) -> dict:
    """Fill in the page of a task whose row may fall on either page of a split table."""
    if t["solution"]["page"]:
        return t
    reader = PdfReader(str(folder / f"{t['solution']['doc']}.pdf"))
    label = t["prompt"].rsplit(" in ", 1)[1].rstrip("?")
    page = next(n for n, p in enumerate(reader.pages, 1) if label in (p.extract_text() or ""))
    t["solution"] = {**t["solution"], "page": page,
                     "claim": t["solution"]["claim"].replace("PAGE", str(page))}  # fmt: skip
    return t


def main(out: Path = HERE) -> None:
    (out / "finance").mkdir(exist_ok=True)
    truth = {name: company(seed) for name, (_, seed) in COMPANIES.items()}
    pages = {name: write_pdf(name, s, out / "finance" / f"{name}.pdf") for name, s in truth.items()}
    rows = [locate(t, out / "finance") for t in tasks(truth, pages["northwind"])]
    text = "".join(json.dumps(r, sort_keys=True) + "\n" for r in rows)
    (out / "finance_document.jsonl").write_text(text, encoding="utf-8")
    print(f"{len(rows)} tasks; pages {pages}")


if __name__ == "__main__":
    main()
