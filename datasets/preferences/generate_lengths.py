"""Generate ``arithmetic_lengths.jsonl``: the arithmetic preferences with real length variation.

Each pair's two answers are written at lengths drawn independently of which one is right,
from four styles that only ever say true things about the answer's own working (a terse
answer, the worked line, the working explained, the working explained and restated). So
length carries no information about correctness, and a reward model that prefers the
longer answer shows it as a gap between the ``chosen_longer`` and ``chosen_shorter``
subsets (``same_length`` is the control). The mistake kinds are those of
``generate_arithmetic.py``, kept in the ``mistake`` column.

Every row is checked before it is written: the chosen answer's final number is the true
value, the rejected answer's is not, and the subset matches the two lengths. Deterministic
for a given seed; rerun with

    python datasets/preferences/generate_lengths.py > datasets/preferences/arithmetic_lengths.jsonl
"""

from __future__ import annotations

import json
import random
import re
import sys

from rewardsmith.datasets.preferences.generate_arithmetic import (
    ANSWER,
    OPS,
    PER_SUBSET,
    question,
    shuffled_and_split,
    wrong_answer,
)

WORDS = {"*": "times", "+": "plus", "-": "minus"}
VERBS = {"*": "multiply", "+": "add", "-": "subtract"}
FINAL = re.compile(r"The answer is (-?\d+)\.$")


def styled(worked: str, level: int) -> str:
    """The worked answer ``a op b = r. The answer is r.`` at one of four lengths (0-3)."""
    match = ANSWER.match(worked)
    assert match is not None, worked
    a, op, b, result = match.group(1), match.group(2), match.group(3), match.group(4)
    line = f"{a} {op} {b} = {result}."
    if level == 0:
        return f"The answer is {result}."
    if level == 1:
        return worked
    explained = f"To work out {a} {WORDS[op]} {b}, I {VERBS[op]} the two numbers. {line}"
    if level == 2:
        return f"{explained} The answer is {result}."
    return (
        f"{explained} So {a} {WORDS[op]} {b} comes to {result}, which is the final result."
        f" The answer is {result}."
    )


def length_subset(chosen: str, rejected: str) -> str:
    if len(chosen) > len(rejected) * 1.2:
        return "chosen_longer"
    if len(rejected) > len(chosen) * 1.2:
        return "chosen_shorter"
    return "same_length"


def rows(seed: int = 1) -> list[dict[str, str]]:
    rng = random.Random(seed)
    out = []
    for mistake in ("off_by_small", "magnitude", "sign", "wrong_operand"):
        for i in range(PER_SUBSET):
            a, op, b = question(rng, mistake)
            true = OPS[op](a, b)
            chosen = styled(f"{a} {op} {b} = {true}. The answer is {true}.", rng.randrange(4))
            rejected = styled(wrong_answer(rng, mistake, a, op, b), rng.randrange(4))
            stated = [FINAL.search(t) for t in (chosen, rejected)]
            assert stated[0] and int(stated[0].group(1)) == true, chosen
            assert stated[1] and int(stated[1].group(1)) != true, rejected
            out.append(
                {
                    "id": f"{mistake}-{i:04d}",
                    "prompt": f"What is {a} {WORDS[op]} {b}?",
                    "chosen": chosen,
                    "rejected": rejected,
                    "subset": length_subset(chosen, rejected),
                    "mistake": mistake,
                    "reference": str(true),
                }
            )
    return shuffled_and_split(out, rng)


if __name__ == "__main__":
    for row in rows(int(sys.argv[1]) if len(sys.argv) > 1 else 1):
        print(json.dumps(row))
