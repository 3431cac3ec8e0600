"""Math verifier benchmark: rewardsmith's `math` verifier beside Math-Verify, same cases, one run.

    .venv/bin/python benchmarks/math_verify.py               # table of results
    .venv/bin/python benchmarks/math_verify.py --list        # also every case either gets wrong
    .venv/bin/python benchmarks/math_verify.py --math-verify-tests DIR   # Math-Verify's tables
    .venv/bin/python benchmarks/math_verify.py --table tests/verifiers/math/cases_read.yaml

Cases: the (expected, gold, prediction) table in tests/verifiers/math/cases.yaml (written
from realistic model outputs; see the rule groups there). For each tool:

* false-positive rate = wrong answers it passed / cases whose expected verdict is "wrong";
* false-negative rate = right answers it did not pass / cases expected "right" (a timeout
  or error counts here: it is not a pass);
* checks per second = cases / the sum of their wall-clock times (each case's median over
  ``--repeats`` sequential passes, the two tools interleaved so that load on the shared
  machine hits both alike); given for all cases and without the cases where either tool
  took over 1 s (its timeouts), so that a few timeouts do not decide the ratio.

Math-Verify is called the way its README shows: ``verify(parse(gold), parse(completion))``
with the gold wrapped in ``$...$``; for multiple-choice golds both sides are parsed with its
``StringExtractionConfig`` (letters A-J) added to the default configs, so it is not charged
for a mode it offers. Both tools are warmed up (imports, our worker start) before timing.
Our verifier does its sympy work in a separate worker process; on this 2-core machine the
scoring process waits on it, so the comparison stays one check at a time for both.
"""

from __future__ import annotations

import argparse
import ast
import os
import statistics
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

# This file is named after the package it benchmarks: drop its own folder from the path so
# that `import math_verify` finds the package, and add the repo root for `tests.*`.
_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _HERE]
sys.path.insert(0, str(_HERE.parent))

from math_verify import (  # noqa: E402
    ExprExtractionConfig,
    LatexExtractionConfig,
    StringExtractionConfig,
    parse,
    verify,
)

from rewardsmith.verifiers import Sample, Status  # noqa: E402
from rewardsmith.verifiers.math import MathAnswer  # noqa: E402
from rewardsmith.verifiers.math.fast import choice_letter  # noqa: E402
from tests.verifiers.math.case_table import Case, load_cases  # noqa: E402

Checker = Callable[[Case], bool]
_LETTERS = StringExtractionConfig(strings=tuple("ABCDEFGHIJ"))
_CHOICE_CONFIG = [_LETTERS, LatexExtractionConfig(), ExprExtractionConfig()]


def ours() -> Checker:
    verifier = MathAnswer()

    def check(case: Case) -> bool:
        sample = Sample(id="bench", completion=case.pred, reference=case.gold)
        return verifier(sample).status is Status.PASS

    return check


def math_verify_checker() -> Checker:
    def check(case: Case) -> bool:
        if choice_letter(case.gold, alone=True) is not None:
            gold = parse(case.gold, extraction_config=_CHOICE_CONFIG)
            return bool(verify(gold, parse(case.pred, extraction_config=_CHOICE_CONFIG)))
        return bool(verify(parse(f"${case.gold}$"), parse(case.pred)))

    return check


def math_verify_table(folder: Path) -> list[Case]:
    """The (gold, pred, expected) rows of Math-Verify's own regression tests, read from the
    ``tests/`` folder of its source distribution (``pip download math-verify==0.9.0
    --no-deps --no-binary :all:``); literal rows only, whatever options each test used."""
    cases: list[Case] = []
    for path in sorted(folder.glob("test_*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            for decorator in getattr(node, "decorator_list", []):
                cases += _parametrized_rows(decorator, path.stem)
    return cases


def _parametrized_rows(decorator: ast.expr, source: str) -> list[Case]:
    if not (isinstance(decorator, ast.Call) and len(decorator.args) >= 2):
        return []
    if getattr(decorator.func, "attr", "") != "parametrize":
        return []
    try:
        names, rows = ast.literal_eval(decorator.args[0]), ast.literal_eval(decorator.args[1])
    except ValueError:
        return []
    if isinstance(names, str):
        names = [n.strip() for n in names.split(",")]
    if list(names[:3]) != ["gold", "pred", "expected"]:
        return []
    return [Case(f"mv:{source}", bool(r[2]), str(r[0]), str(r[1])) for r in rows]


def one_pass(check: Checker, cases: list[Case]) -> tuple[list[bool], list[float]]:
    """Verdicts and the wall-clock seconds of each check."""
    verdicts, seconds = [], []
    for case in cases:
        start = time.perf_counter()
        verdicts.append(check(case))
        seconds.append(time.perf_counter() - start)
    return verdicts, seconds


def rates(cases: list[Case], verdicts: list[bool]) -> tuple[float, float, int, int]:
    negatives = [v for c, v in zip(cases, verdicts, strict=True) if not c.expected]
    positives = [v for c, v in zip(cases, verdicts, strict=True) if c.expected]
    false_pos, false_neg = sum(negatives), sum(not v for v in positives)
    return false_pos / len(negatives), false_neg / len(positives), false_pos, false_neg


def _load() -> str:
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=3, help="timed passes per tool")
    parser.add_argument("--list", action="store_true", help="print the cases each got wrong")
    parser.add_argument(
        "--math-verify-tests",
        type=Path,
        help="instead of our table, use the rows of Math-Verify's own tests/ folder (held out)",
    )
    parser.add_argument(
        "--table", type=Path, help="another (expected, gold, pred) table in cases.yaml's format"
    )
    args = parser.parse_args()
    if args.math_verify_tests:
        cases = math_verify_table(args.math_verify_tests)
    else:
        cases = load_cases(args.table) if args.table else load_cases()
    tools = {"rewardsmith math": ours(), "Math-Verify 0.9.0": math_verify_checker()}
    for check in tools.values():  # warm-up: imports, caches of constant tables, our worker
        one_pass(check, cases[:20])
    load_before = _load()
    per_case: dict[str, list[list[float]]] = {name: [] for name in tools}
    verdicts: dict[str, list[bool]] = {}
    for _ in range(args.repeats):
        for name, check in tools.items():
            verdicts[name], seconds = one_pass(check, cases)
            per_case[name].append(seconds)
    # Median over passes, per case; "slow" cases are those where any tool took over 1 s
    # (Math-Verify's 5 s timeouts, our 5 s limit): reported apart so they do not hide the rest.
    median = {
        name: [statistics.median(t) for t in zip(*runs, strict=True)]
        for name, runs in per_case.items()
    }
    slow = {i for times in median.values() for i, t in enumerate(times) if t > 1.0}
    negatives = sum(not c.expected for c in cases)
    print(f"{len(cases)} cases ({len(cases) - negatives} right, {negatives} wrong answers);")
    print(f"{len(slow)} of them took over 1 s in some tool")
    print(f"load average while timing (1, 5, 15 min): {load_before} -> {_load()}\n")
    print("| tool | false positives | false negatives | checks/s, all | checks/s, "
          "without the slow cases | median ms/check |")  # fmt: skip
    print("|---|---|---|---|---|---|")
    speed = {}
    for name in tools:
        fp_rate, fn_rate, fp, fn = rates(cases, verdicts[name])
        fast = [t for i, t in enumerate(median[name]) if i not in slow]
        speed[name] = (len(cases) / sum(median[name]), len(fast) / sum(fast))
        print(
            f"| {name} | {fp_rate:.1%} ({fp}) | {fn_rate:.1%} ({fn}) | {speed[name][0]:,.0f} "
            f"| {speed[name][1]:,.0f} | {statistics.median(median[name]) * 1e3:.2f} |"
        )
    ours_speed, theirs = speed["rewardsmith math"], speed["Math-Verify 0.9.0"]
    print(
        f"\nthroughput ratio (rewardsmith / Math-Verify): {ours_speed[0] / theirs[0]:.2f}x on all"
        f" cases, {ours_speed[1] / theirs[1]:.2f}x without the slow ones"
    )
    for name in tools:
        names = [cases[i].gold[:30] for i in sorted(slow) if median[name][i] > 1.0]
        print(f"{name}: {len(names)} checks over 1 s (golds: {names})")
    for name in tools:
        misses = Counter(
            (case.rule, "FP" if not case.expected else "FN")
            for case, verdict in zip(cases, verdicts[name], strict=True)
            if verdict != case.expected
        )
        listed = ", ".join(f"{rule} {kind} {n}" for (rule, kind), n in sorted(misses.items()))
        print(f"{name} misses by rule group: {listed or 'none'}")
    if args.list:
        for name in tools:
            print(f"\n## {name}: cases decided against the expected verdict")
            for case, verdict in zip(cases, verdicts[name], strict=True):
                if verdict != case.expected:
                    tail = case.pred[-90:].replace("\n", " ")
                    print(f"- [{case.rule}] expected {case.expected}: {case.gold!r} vs {tail!r}")


if __name__ == "__main__":
    main()
