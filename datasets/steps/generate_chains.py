"""Generate ``arithmetic_chains.jsonl``: step-labelled arithmetic chains for process reward
models, each prompt twice, once right and once with one wrong step at a known position.

A prompt is a start value and three to five operations ("Start with 47. Add 8, then
multiply by 3, then subtract 25. What is the result?"); a chain is one step per operation,
"47 + 8 = 55". In the wrong chain, step ``k`` (uniform over the steps) has one error of
one kind, and every later step computes correctly from the wrong value. Labels say whether
each step is still right (PRM800K's reading): 1 before step ``k``, 0 from ``k`` on.

Error kinds, each visible without redoing the sum (the limit of the backbones this set is
for; see the README): ``misquote`` (the step starts from a number that is not the previous
result, or not the prompt's start), ``wrong_operand`` (the step uses an operand other than
the prompt's), ``magnitude`` (the step's result has a digit too many or too few).

Every chain is re-checked here before it is written, with Python integer arithmetic.
Deterministic for a seed; rerun with

    python datasets/steps/generate_chains.py > datasets/steps/arithmetic_chains.jsonl

More training chains, from prompts none of the bundled set's test prompts share (a larger
training set than the repository should carry; write it where you train):

    python datasets/steps/generate_chains.py --train-prompts 6000 > build/prm/train.jsonl
"""

from __future__ import annotations

import json
import operator
import random
import re
import sys

OPS = {"+": operator.add, "-": operator.sub, "*": operator.mul}
WORDS = {"+": "add {}", "-": "subtract {}", "*": "multiply by {}"}
STEP = re.compile(r"^(-?\d+) ([+*-]) (-?\d+) = (-?\d+)$")
KINDS = ("misquote", "wrong_operand", "magnitude")
PROMPTS = 800
TEST_FRACTION = 0.2


def plan(rng: random.Random) -> tuple[int, list[tuple[str, int]]]:
    """A start value and the operations, kept between 2 and 999 all the way."""
    value = rng.randint(2, 60)
    start, operations = value, []
    for _ in range(rng.randint(3, 5)):
        choices = ["+"] + (["-"] if value > 12 else []) + (["*"] if value < 150 else [])
        op = rng.choice(choices)
        operand = (
            rng.randint(2, 5)
            if op == "*"
            else rng.randint(2, min(40, value - 2) if op == "-" else 40)
        )
        operations.append((op, operand))
        value = OPS[op](value, operand)
    return start, operations


def prompt_text(start: int, operations: list[tuple[str, int]]) -> str:
    said = [WORDS[op].format(n) for op, n in operations]
    said[0] = said[0][0].upper() + said[0][1:]
    return f"Start with {start}. {', then '.join(said)}. What is the result?"


def _nearby(rng: random.Random, value: int) -> int:
    """A different number a careless reader might write instead of `value`."""
    text = str(value)
    if len(text) > 1 and text[0] != text[1] and rng.random() < 0.5:
        return int(text[1] + text[0] + text[2:])  # first two digits swapped
    return value + rng.choice([-3, -2, -1, 1, 2, 3]) * (10 if value >= 100 else 1)


def _wrong_magnitude(rng: random.Random, value: int) -> int:
    return value * 10 if value < 100 or rng.random() < 0.5 else value // 10


def chain(
    start: int, operations: list[tuple[str, int]], error: tuple[int, str] | None, rng: random.Random
) -> list[str]:
    """The steps, with the error (position, kind) applied and carried forward."""
    steps, value = [], start
    for k, (op, operand) in enumerate(operations):
        left, right = value, operand
        if error is not None and error[0] == k:
            if error[1] == "misquote":
                left = _nearby(rng, value)
            elif error[1] == "wrong_operand":
                right = operand + rng.choice([-1, 1]) if op == "*" else _nearby(rng, operand)
        result = OPS[op](left, right)
        if error == (k, "magnitude"):
            result = _wrong_magnitude(rng, result)
        steps.append(f"{left} {op} {right} = {result}")
        value = result
    return steps


def labels_for(start: int, operations: list[tuple[str, int]], steps: list[str]) -> list[float]:
    """1 while every step so far is right (its inputs are the true previous value and the
    prompt's operand, and its result is right), 0 from the first wrong step on."""
    labels, value, ok = [], start, True
    for (op, operand), step in zip(operations, steps, strict=True):
        match = STEP.match(step)
        if match is None:
            raise ValueError(f"step not in the expected form: {step!r}")
        left, shown_op, right, result = match.groups()
        ok = ok and (int(left), shown_op, int(right)) == (value, op, operand)
        ok = ok and int(result) == OPS[op](value, operand)
        labels.append(1.0 if ok else 0.0)
        value = OPS[op](value, operand)
    return labels


def rows(seed: int = 0) -> list[dict[str, object]]:
    rng = random.Random(seed)
    out: list[dict[str, object]] = []
    n_test = int(PROMPTS * TEST_FRACTION)
    for i in range(PROMPTS):
        start, operations = plan(rng)
        prompt = prompt_text(start, operations)
        k, kind = rng.randrange(len(operations)), rng.choice(KINDS)
        split = "test" if i < n_test else "train"
        for error in (None, (k, kind)):
            steps = chain(start, operations, error, rng)
            labels = labels_for(start, operations, steps)
            expected = (
                [1.0] * len(steps) if error is None else [float(j < k) for j in range(len(steps))]
            )
            assert labels == expected, (prompt, steps, labels)
            out.append(
                {
                    "id": f"chain-{i:04d}-{'right' if error is None else 'wrong'}",
                    "prompt": prompt,
                    "steps": steps,
                    "labels": labels,
                    "error_step": None if error is None else k,
                    "subset": "right" if error is None else kind,
                    "split": split,
                }
            )
    return out


def training_rows(prompts: int, seed: int = 1) -> list[dict[str, object]]:
    """Rows of `prompts` prompts drawn from seeds `seed`, `seed` + 1, ..., all marked train,
    none with a prompt of the bundled set's test split (seed 0)."""
    test = {row["prompt"] for row in rows(0) if row["split"] == "test"}
    out: list[dict[str, object]] = []
    while len(out) < 2 * prompts:
        for row in rows(seed):
            if row["prompt"] not in test and len(out) < 2 * prompts:
                out.append({**row, "id": f"s{seed}-{row['id']}", "split": "train"})
        seed += 1
    return out


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--train-prompts":
        chains = training_rows(int(sys.argv[2]))
    else:
        chains = rows(int(sys.argv[1]) if len(sys.argv) > 1 else 0)
    for row in chains:
        print(json.dumps(row))
