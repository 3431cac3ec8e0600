"""Load the (expected, gold, prediction) table in cases.yaml; shared by tests and benchmark."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

CASES_PATH = Path(__file__).with_name("cases.yaml")


@dataclass(frozen=True)
class Case:
    rule: str
    expected: bool
    gold: str
    pred: str

    @property
    def id(self) -> str:
        return f"{self.rule}-{'T' if self.expected else 'F'}-{self.gold[:24]}"


def load_cases(path: Path = CASES_PATH) -> list[Case]:
    """Every case; a row is ``[expected, gold, pred]`` or ``{expected, gold, pred}``."""
    cases: list[Case] = []
    for group in yaml.safe_load(path.read_text(encoding="utf-8")):
        for row in group["cases"]:
            if isinstance(row, dict):
                row = [row["expected"], row["gold"], row["pred"]]
            expected, gold, pred = row
            if not isinstance(expected, bool):
                raise ValueError(f"{group['rule']}: expected must be true or false: {row!r}")
            cases.append(Case(group["rule"], expected, str(gold), str(pred)))
    return cases
