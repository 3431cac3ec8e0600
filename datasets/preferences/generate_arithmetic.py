"""Generate ``arithmetic.jsonl``: correct vs subtly wrong answers to arithmetic questions.

Every row is checked here, in Python, before it is written: the chosen answer's result
equals the question's true value (computed with integer arithmetic), and the rejected
answer's does not. Deterministic for a given seed; rerun with

    python datasets/preferences/generate_arithmetic.py > datasets/preferences/arithmetic.jsonl
"""

from __future__ import annotations

import json
import operator
import random
import re
import sys

OPS = {"+": operator.add, "-": operator.sub, "*": operator.mul}
ANSWER = re.compile(r"^(-?\d+) ([+*-]) (-?\d+) = (-?\d+)\. The answer is (-?\d+)\.$")
PER_SUBSET = 400
TEST_FRACTION = 0.2


def answer(a: int, op: str, b: int, result: int) -> str:
    return f"{a} {op} {b} = {result}. The answer is {result}."


def question(rng: random.Random, subset: str) -> tuple[int, str, int]:
    if subset == "sign":  # a subtraction with a negative result
        a = rng.randint(10, 89)
        return a, "-", rng.randint(a + 1, 99)
    op = rng.choice(["+", "-", "*"])
    if op == "*":
        return rng.randint(2, 9), op, rng.randint(11, 99)
    a = rng.randint(11, 99)
    return (a, op, rng.randint(10, a - 1)) if op == "-" else (a, op, rng.randint(10, 99))


def wrong_answer(rng: random.Random, subset: str, a: int, op: str, b: int) -> str:
    true = OPS[op](a, b)
    if subset == "off_by_small":  # the right problem, a result off by 1 to 3
        return answer(a, op, b, true + rng.choice([-3, -2, -1, 1, 2, 3]))
    if subset == "magnitude":  # a dropped or extra digit
        return answer(a, op, b, true * 10 if rng.random() < 0.5 else true // 10)
    if subset == "sign":  # the minus sign lost
        return answer(a, op, b, -true)
    # wrong_operand: a self-consistent answer to a neighbouring problem
    a2 = a + rng.choice([-2, -1, 1, 2])
    return answer(a2, op, b, OPS[op](a2, b))


def check(prompt_numbers: tuple[int, str, int], text: str) -> bool:
    """True when `text` states the right result for the question (both places agree)."""
    match = ANSWER.match(text)
    if match is None:
        raise ValueError(f"answer not in the expected form: {text!r}")
    a, op, b = prompt_numbers
    stated, final = int(match.group(4)), int(match.group(5))
    return stated == final == OPS[op](a, b)


def rows(seed: int = 0) -> list[dict[str, str]]:
    rng = random.Random(seed)
    out = []
    for subset in ("off_by_small", "magnitude", "sign", "wrong_operand"):
        for i in range(PER_SUBSET):
            a, op, b = question(rng, subset)
            chosen = answer(a, op, b, OPS[op](a, b))
            rejected = wrong_answer(rng, subset, a, op, b)
            assert check((a, op, b), chosen) and not check((a, op, b), rejected)
            shown = {"*": "times", "+": "plus", "-": "minus"}[op]
            out.append(
                {
                    "id": f"{subset}-{i:04d}",
                    "prompt": f"What is {a} {shown} {b}?",
                    "chosen": chosen,
                    "rejected": rejected,
                    "subset": subset,
                    "reference": str(OPS[op](a, b)),
                }
            )
    return shuffled_and_split(out, rng)


def shuffled_and_split(out: list[dict[str, str]], rng: random.Random) -> list[dict[str, str]]:
    """The rows in a random order, the first fifth marked ``test``, the rest ``train``."""
    rng.shuffle(out)
    n_test = int(len(out) * TEST_FRACTION)
    for j, row in enumerate(out):
        row["split"] = "test" if j < n_test else "train"
    return out


if __name__ == "__main__":
    for row in rows(int(sys.argv[1]) if len(sys.argv) > 1 else 0):
        print(json.dumps(row))
