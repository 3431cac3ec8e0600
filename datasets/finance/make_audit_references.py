"""Write audit_references.jsonl: right answers to the finance tasks that need no PDF, for
`rewardsmith audit --bundled` (``audit.yaml``).

The tables given inline (``reference.table``) answered as Markdown tables, and the figure
questions answered as a marked figure with its scale. The tasks that read a PDF (tables
from a page, grounding, consistency, cross-document, charts) are left out: their right
answers are the PDF's own and their exploit tables run in ``tests/verifiers/finance/``.

    .venv/bin/python datasets/finance/make_audit_references.py
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from rewardsmith.verifiers.finance.exploits import markdown

HERE = Path(__file__).resolve().parent


def right_answer(task: dict[str, Any]) -> str | None:
    reference = task["reference"]
    if task["task"] == "table_match" and isinstance(reference.get("table"), list):
        return markdown(reference["table"])
    if task["task"] == "numeric_answer":
        return f"<answer>{reference['answer']} {reference['scale']}</answer>"
    return None


def main() -> None:
    rows = []
    for line in (HERE / "tasks.jsonl").read_text().splitlines():
        task = json.loads(line)
        answer = right_answer(task)
        if answer is not None:
            rows.append({**task, "completion": answer})
    text = "".join(json.dumps(row) + "\n" for row in rows)
    (HERE / "audit_references.jsonl").write_text(text)


if __name__ == "__main__":
    main()
