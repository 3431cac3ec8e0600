"""Write audit_references.jsonl: right answers to every bundled finance task, for
`rewardsmith audit --bundled` (``audit.yaml``), so that every finance verifier's exploit
generators run on them, the PDF-backed tasks included.

Tables (inline or from a page) are answered as Markdown tables, figure questions as a
marked figure with its scale and currency, grounding as two cited sentences, consistency
as the balance sheet written out, the cross-document question by the gold label and
amount, and the chart tasks by their gold sentences (from ``truth.json`` and the tasks'
``gold``).

    .venv/bin/python datasets/finance/make_audit_references.py
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rewardsmith.verifiers.finance.exploits import markdown

HERE = Path(__file__).resolve().parent


def right_answer(task: dict[str, Any], tasks: dict[str, Any], truth: dict[str, Any]) -> str:
    reference, company = task["reference"], task["id"].split("-")[0]
    if task["task"] == "table_match":
        rows = reference.get("table") or tasks[f"{company}-income-table"]["reference"]["table"]
        return markdown(rows)
    if task["task"] == "numeric_answer":
        return f"<answer>${reference['answer']} {reference['scale']}</answer>"
    if task["task"] == "grounding":
        s = truth[company]
        revenue, assets = s["income"]["2024"]["Revenue"], s["balance"]["2024"]["Total assets"]
        return f"Revenue was ${revenue:,} thousand (p. 1). Total assets were {assets:,} (p. 2)."
    if task["task"] == "consistency":
        balance = truth[company]["balance"]
        years = sorted(balance, reverse=True)
        rows = [["Item", *years]]
        rows += [[label, *(f"{balance[y][label]:,}" for y in years)] for label in balance[years[0]]]
        return markdown(rows)
    if task["task"] == "cross_document":
        gold = task["gold"]
        return f"<answer>{gold['label']}, higher by {gold['amount'] / 1000:,.0f} thousand</answer>"
    return str(task["gold"])  # chart_claims: the gold sentences


def main() -> None:
    tasks = {}
    for line in (HERE / "tasks.jsonl").read_text().splitlines():
        task = json.loads(line)
        tasks[task["id"]] = task
    truth = json.loads((HERE / "truth.json").read_text())
    rows = [{**task, "completion": right_answer(task, tasks, truth)} for task in tasks.values()]
    text = "".join(json.dumps(row) + "\n" for row in rows)
    (HERE / "audit_references.jsonl").write_text(text)


if __name__ == "__main__":
    main()
