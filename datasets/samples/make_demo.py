"""Write demo.jsonl: a small mixed dump for `make demo` (deterministic; run to regenerate)."""

from __future__ import annotations

import json
from pathlib import Path

CAPITALS = [
    ("France", "Paris"), ("Japan", "Tokyo"), ("Kenya", "Nairobi"), ("Peru", "Lima"),
    ("Canada", "Ottawa"), ("Egypt", "Cairo"), ("Norway", "Oslo"), ("Chile", "Santiago"),
]  # fmt: skip


def rows() -> list[dict]:
    out: list[dict] = []
    for i, (country, capital) in enumerate(CAPITALS):
        prompt = f"What is the capital of {country}? Answer inside <answer></answer>."
        good = f"<answer>{capital}</answer>"
        wrong = f"<answer>{CAPITALS[(i + 1) % len(CAPITALS)][1]}</answer>"
        untagged = f"The capital is {capital}."
        for kind, completion in (("good", good), ("wrong", wrong), ("untagged", untagged)):
            out.append({
                "id": f"capital-{country.lower()}-{kind}",
                "prompt": prompt,
                "completion": completion,
                "reference": f"<answer>{capital}</answer>",
                "task": "capitals",
            })  # fmt: skip
    return out


if __name__ == "__main__":
    target = Path(__file__).with_name("demo.jsonl")
    target.write_text("".join(json.dumps(r) + "\n" for r in rows()), encoding="utf-8")
    print(f"wrote {target}")
