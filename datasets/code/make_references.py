"""Write references.jsonl: right answers to small code and repair tasks, for the audit.

Run from the repository root (it builds the repair attempts in the sandbox, so it needs
root and cgroup v1, as the tests do):

    .venv/bin/python datasets/code/make_references.py

Deterministic: the same sources, and the logs the same compilers print for them.
"""

from __future__ import annotations

import json
from pathlib import Path
from textwrap import dedent
from typing import Any

from rewardsmith.verifiers.diagnostics.attempts import RepairTask, run_attempt

HERE = Path(__file__).resolve().parent

ADD = "def add(a, b):\n    return a + b\n"
CASES = "[((1, 2), 3), ((-1, 1), 0), ((10, 5), 15), ((0, 0), 0)]"
CHECK = dedent(
    f"""
    def check(candidate):
        assert candidate(1, 2) == 3
        assert all(map(lambda c: candidate(*c[0]) == c[1], {CASES}))
        assert next((c for c in {CASES} if candidate(*c[0]) != c[1]), None) is None
        assert abs(candidate(0.5, 0.25) - 0.75) < 1e-9
        assert sorted([candidate(2, 2), candidate(1, 0)]) == [1, 4]
    """
)
PYTEST_STAR = dedent(
    """
    from collections import Counter
    from pytest import approx
    from solution import *

    def test_float():
        assert add(0.1, 0.2) == approx(0.3)

    def test_counter():
        assert Counter(str(add(12, 21))) == Counter("33")
    """
)
SUM_CASES = [
    {"input": "1 2\n", "output": "3\n"},
    {"input": "0 0\n", "output": "0\n"},
    {"input": "40 2\n", "output": "42\n"},
]
C_SUM = (
    "#include <stdio.h>\n"
    'int main(void) { int a, b; scanf("%d %d", &a, &b); printf("%d\\n", a + b); }\n'
)


def code_rows() -> list[dict[str, Any]]:
    refs = {
        "add-humaneval": {"format": "humaneval", "test": CHECK, "entry_point": "add"},
        "add-asserts": {
            "format": "asserts",
            "asserts": ["assert add(1, 2) == 3", "assert add(-1, 1) == 0", "assert add(0, 0) == 0"],
        },
        "add-calls": {
            "format": "calls",
            "fn": "add",
            "cases": [{"input": "(1, 2)", "output": "3"}, {"input": "(0, 0)", "output": "0"}],
        },
        "add-pytest-star": {  # helpers imported before `import *` (issue 30)
            "format": "pytest",
            "expected_tests": 2,
            "files": {"test_add.py": PYTEST_STAR},
        },
        "add-calls-hidden": {  # the code-repair layout: visible tests apart, hidden paying
            "format": "calls",
            "fn": "add",
            "hide_expected": True,
            "cases": [{"input": "(10, 5)", "output": "15"}, {"input": "(-1, 1)", "output": "0"}],
            "visible": {
                "format": "calls",
                "fn": "add",
                "cases": [{"input": "(1, 2)", "output": "3"}, {"input": "(2, 2)", "output": "4"}],
            },
        },
    }
    rows = [{"id": k, "task": "code", "completion": ADD, "reference": v} for k, v in refs.items()]
    for lang, source in (
        ("python", "a, b = map(int, input().split())\nprint(a + b)\n"),
        ("c", C_SUM),
    ):
        ref = {"format": "stdio", "language": lang, "checker": "tokens", "cases": SUM_CASES}
        rows.append(
            {"id": f"sum-stdio-{lang}", "task": "code", "completion": source, "reference": ref}
        )
    return rows


REPAIR_CASES = [{"input": "3\n", "output": "6\n"}, {"input": "1\n", "output": "1\n"}]
REPAIRS = {
    "c": {
        "harness": {
            "main.c": dedent(
                r"""
                #include <assert.h>
                #include <stdio.h>
                int sum_to(int n);
                int main(void) {
                    int n;
                    if (scanf("%d", &n) != 1) return 2;
                    assert(sum_to(2) == 3);
                    printf("%d\n", sum_to(n));
                    return 0;
                }
                """
            )
        },
        "attempts": [
            "int sum_to(int n) {\n    int s = 0;\n"
            "    for (int i = 1; i <= n; i++) s += i\n    return s;\n}\n",
            "int sum_to(int n) {\n    int s = 0;\n"
            "    for (int i = 1; i <= n; i++) s += i;\n    return s;\n}\n",
        ],
    },
    "python": {
        "harness": {
            "main.py": "import sys\nfrom solution import sum_to\nn = int(sys.stdin.read())\n"
            "assert sum_to(2) == 3\nprint(sum_to(n))\n"
        },
        "attempts": [
            "def sum_to(n):\n    return sum(range(1, n + 1)\n",
            "def sum_to(n):\n    return sum(range(1, n + 1))\n",
        ],
    },
}


def repair_rows() -> list[dict[str, Any]]:
    rows = []
    for lang, spec in REPAIRS.items():
        reference = {"language": lang, "harness": spec["harness"], "cases": REPAIR_CASES}
        task = RepairTask.parse(reference)
        steps = [run_attempt(task, source).model_dump() for source in spec["attempts"]]
        assert steps[-1]["meta"]["tests"] == {"passed": 2, "total": 2}, steps[-1]
        rows.append(
            {"id": f"repair-{lang}", "task": "repair", "completion": steps, "reference": reference}
        )
    return rows


def main() -> None:
    with open(HERE / "references.jsonl", "w") as f:
        for row in code_rows() + repair_rows():
            f.write(json.dumps(row, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
