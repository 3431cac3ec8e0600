"""Write `tasks.jsonl`: every single-digit addition "a+b=" with its integer answer.

Run from the repository root: ``python datasets/arithmetic/make_tasks.py`` (deterministic).
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent


def make_tasks(max_operand: int = 9) -> list[dict[str, object]]:
    """One row per ordered pair (a, b) with 0 <= a, b <= max_operand."""
    return [
        {"id": f"add-{a}-{b}", "prompt": f"{a}+{b}=", "reference": str(a + b), "task": "arithmetic"}
        for a in range(max_operand + 1)
        for b in range(max_operand + 1)
    ]


def main() -> None:
    rows = make_tasks()
    text = "".join(json.dumps(row) + "\n" for row in rows)
    (HERE / "tasks.jsonl").write_text(text)
    print(f"wrote {len(rows)} tasks to {HERE / 'tasks.jsonl'}")


if __name__ == "__main__":
    main()
