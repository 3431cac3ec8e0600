"""HumanEval for the code-runner benchmark and external check: tasks, recorded cases, mutants.

`recorded_cases` runs each task's canonical solution under its own `check` (in the
sandbox) and records every call the test makes and what the canonical solution returned:
the same inputs-plus-ground-truth form the evalplus harness takes, so both runners check
the same calls.
"""

from __future__ import annotations

import ast
import gzip
import json
from pathlib import Path
from typing import Any

from rewardsmith.verifiers.code.harness import program_source
from rewardsmith.verifiers.code.values import decode
from rewardsmith.verifiers.sandbox import Limits, run_python

HUMANEVAL = Path(__file__).resolve().parents[2] / "shared" / "data" / "code" / "HumanEval.jsonl.gz"

_RECORDER = """
import json
ns = {"__name__": "solution"}
exec(open("solution.py").read(), ns)
real, calls = ns[ENTRY], []
def recording(*args):
    try:
        before = encode(list(args))  # before the call: some solutions mutate their input
    except EncodeError:
        before = None
    out = real(*args)
    try:
        calls.append(None if before is None else [before, encode(out)])
    except EncodeError:
        calls.append(None)
    return out
tns = dict(ns)
exec(open("test.py").read(), tns)
tns["check"](recording)
open("cases.json", "w").write(json.dumps(calls))
"""


def tasks(path: Path = HUMANEVAL) -> list[dict[str, Any]]:
    with gzip.open(path, "rt") as f:
        return [json.loads(line) for line in f]


def humaneval_reference(task: dict[str, Any]) -> dict[str, Any]:
    return {
        "format": "humaneval",
        "test": task["test"],
        "entry_point": task["entry_point"],
        "prompt": task["prompt"],
    }


def recorded_cases(task: dict[str, Any]) -> list[list[Any]] | None:
    """[args, expected] per call of the canonical solution, each in `values.encode` form
    (JSON-safe, tuples kept); None if a call is not plain data."""
    values = program_source("agent", "str").split("def agent_main")[0]
    script = values + f"\nENTRY = {task['entry_point']!r}\n" + _RECORDER
    result = run_python(
        script,
        files={
            "solution.py": (task["prompt"] + task["canonical_solution"]).encode(),
            "test.py": task["test"].encode(),
        },
        collect=("cases.json",),
        limits=Limits(wall_s=60, cpu_s=60, memory_bytes=1 << 30),
    )
    if "cases.json" not in result.files:
        raise RuntimeError(f"{task['task_id']}: recording failed: {result.stderr[-500:]!r}")
    calls = json.loads(result.files["cases.json"])
    if any(c is None for c in calls):
        return None
    return calls


def decoded_cases(cases: list[list[Any]]) -> list[tuple[list[Any], Any]]:
    return [(decode(a), decode(o)) for a, o in cases]


def calls_reference(task: dict[str, Any], cases: list[list[Any]]) -> dict[str, Any]:
    return {
        "format": "calls",
        "fn": task["entry_point"],
        "abs_tol": 1e-6,
        "cases": [{"args": a, "expected": o} for a, o in decoded_cases(cases)],
    }


# ----------------------------------------------------------------------------- mutants


def _entry_function(tree: ast.Module, name: str) -> ast.FunctionDef | None:
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return node
    return None


def mutants(task: dict[str, Any]) -> dict[str, str | None]:
    """Mechanically broken programs: return a constant, drop the last statement of the
    function, add one to the first numeric literal in it. None where a mutant does not
    apply (no numeric literal, a one-statement body)."""
    source = task["prompt"] + task["canonical_solution"]
    out: dict[str, str | None] = {}
    for kind in ("constant", "drop_last", "off_by_one"):
        tree = ast.parse(source)
        fn = _entry_function(tree, task["entry_point"])
        out[kind] = ast.unparse(tree) if fn is not None and _mutate(fn, kind) else None
    return out


def _mutate(fn: ast.FunctionDef, kind: str) -> bool:
    body = [
        s for s in fn.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))
    ]
    if kind == "constant":
        fn.body = [ast.Return(ast.Constant(0))]
        return True
    if kind == "drop_last":
        if len(body) < 2:
            return False
        fn.body.remove(body[-1])
        return True
    for node in ast.walk(ast.Module(body=body, type_ignores=[])):
        if isinstance(node, ast.Constant) and type(node.value) in (int, float):
            node.value = node.value + 1
            return True
    return False
