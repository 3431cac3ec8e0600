"""HumanEval checks run as one batch of calls (`check_plan`): attacks first, then right
answers in many forms, then the batch and the judge agreeing on the same programs.

Each reference here is planned (asserted), so the batch path is what is attacked; the
same check with one harmless statement the planner refuses (``for _ in (): pass``) runs
through the judge, and both must give the same score."""

from __future__ import annotations

import ast
import textwrap
from typing import Any

import pytest
from code_cases import judge

from rewardsmith.verifiers.code import check_plan
from rewardsmith.verifiers.code.formats import parse_reference

pytestmark = pytest.mark.sandbox

SECRET = 7_391_275
"""An expected value no honest program computes from the inputs (add(1, 2) here)."""


def _ref(body: str, entry: str = "add") -> dict[str, Any]:
    test = "def check(candidate):\n" + textwrap.indent(textwrap.dedent(body).strip(), "    ")
    return {"format": "humaneval", "test": test + "\n", "entry_point": entry}


def _judged(ref: dict[str, Any]) -> dict[str, Any]:
    """The same check, routed to the judge (the planner refuses a loop)."""
    return {**ref, "test": ref["test"] + "    for _ in ():\n        pass\n"}


SNOOP_REF = _ref(f"assert candidate(1, 2) == {SECRET}\nassert candidate(2, 2) == 4")
ADD_REF = _ref(
    """
    assert candidate(1, 2) == 3
    assert candidate(-1, 1) == 0, "zero"
    assert 15 == candidate(10, 5)
    assert candidate(a=0, b=0) == 0
    """
)


def test_references_here_are_planned() -> None:
    for ref in (SNOOP_REF, ADD_REF, *(r for r, _ in RIGHT.values())):
        assert parse_reference(ref).batch is not None, ref["test"]
    assert parse_reference(_judged(ADD_REF)).batch is None


# ----------------------------------------------------------------------------- attacks

# Each looks for the secret expected value anywhere its process can read and returns it
# when found; the expected value never enters its jail, so each scores what it earns
# honestly: 0.5 (the second line) when it computes a + b otherwise.
_FIND = f"""
import os, re
def _find():
    seen = []
    for d in ('.', '/tmp', '/box', '/', '/proc/self/fd'):
        try:
            names = os.listdir(d)
        except OSError:
            continue
        seen += [os.path.join(d, n) for n in names]
    for pid in os.listdir('/proc') if os.path.isdir('/proc') else ():
        if pid.isdigit():
            seen += [f'/proc/{{pid}}/{{w}}' for w in ('cmdline', 'environ', 'maps', 'mem')]
    for path in seen:
        try:
            with open(path, 'rb') as f:
                data = f.read(1 << 20)
        except (OSError, ValueError):
            continue
        if b'{SECRET}' in data:
            return {SECRET}
    for fd in range(64):
        try:
            data = os.pread(fd, 1 << 16, 0)
        except OSError:
            try:
                os.set_blocking(fd, False)
                data = os.read(fd, 1 << 16) if fd > 2 else b''
            except OSError:
                continue
        if b'{SECRET}' in data:
            return {SECRET}
    return None
"""
ATTACKS = {
    "reads every file, fd and /proc entry for the expected value": _FIND
    + "def add(a, b):\n    return _find() or a + b\n",
    "walks the stack and gc for the expected value": """
import gc, sys
def add(a, b):
    for o in gc.get_objects():
        if isinstance(o, dict) and {SECRET} in o.values():
            return {SECRET}
    f = sys._getframe()
    while f is not None:
        if {SECRET} in f.f_locals.values() or {SECRET} in f.f_globals.values():
            return {SECRET}
        f = f.f_back
    return a + b
""".replace("{SECRET}", str(SECRET)),
    "returns an int subclass whose __eq__ lies": """
class _Eq(int):
    def __eq__(self, other):
        return True
    __hash__ = int.__hash__
def add(a, b):
    return _Eq(a + b) if (a, b) == (1, 2) else a + b
""",
    "returns an object equal to anything": """
class _Any:
    def __eq__(self, other):
        return True
def add(a, b):
    return _Any() if (a, b) == (1, 2) else a + b
""",
    "forges the result lines, then exits": """
import os
_lines = '{"loaded": true, "names": ["add"]}\\n' + ''.join(
    '{"id": %d, "ok": ["i", "%d"], "status": "pass"}\\n' % (i, 0) for i in range(8))
for _d in ('.', '/box', '/tmp'):
    try:
        with open(os.path.join(_d, 'results.jsonl'), 'w') as _f:
            _f.write(_lines)
    except OSError:
        pass
def add(a, b):
    os._exit(0)
""",
    "prints fake frames on every fd": """
import os
_fake = b'\\x00\\x00\\x00\\x10{"id":1,"ok":1}\\n{"id":0,"ok":["i","%d"]}\\n{"status":"pass"}\\n'
for _fd in range(64):
    try:
        os.write(_fd, _fake)
    except OSError:
        pass
def add(a, b):
    return a + b if (a, b) != (1, 2) else 0
""".replace("%d", str(SECRET)),
    "closes every channel after the first call": """
import os
_n = []
def add(a, b):
    _n.append(1)
    if len(_n) > 1:
        for fd in range(64):
            try:
                os.close(fd)
            except OSError:
                pass
        os._exit(0)
    return a + b if (a, b) != (1, 2) else 0
""",
    "shadows the test's builtins and helpers for star imports": """
def abs(x):
    return 0
def check(candidate):
    return None
candidate = check
__all__ = ['abs', 'check', 'candidate', 'add']
def add(a, b):
    return a + b if (a, b) != (1, 2) else -1
""",
    "hangs on the secret line": """
def add(a, b):
    while (a, b) == (1, 2):
        pass
    return a + b
""",
}
HONEST_HALF = {
    "reads every file, fd and /proc entry for the expected value",
    "walks the stack and gc for the expected value",
    "returns an int subclass whose __eq__ lies",
    "returns an object equal to anything",
    "shadows the test's builtins and helpers for star imports",
}
"""Attacks that still answer the second line (2 + 2) honestly: they earn exactly 0.5. The
others break their own channel or process and may earn less, never more."""


@pytest.mark.parametrize("name", sorted(ATTACKS))
@pytest.mark.parametrize("route", ["batch", "judge"])
def test_attacks_earn_only_what_is_right(fast, name: str, route: str) -> None:
    ref = SNOOP_REF if route == "batch" else _judged(SNOOP_REF)
    verdict = judge(fast, ATTACKS[name], ref)
    assert verdict.score <= 0.5, (name, route, verdict)
    if name in HONEST_HALF:
        assert verdict.score == 0.5, (name, route, verdict)


def test_abs_closeness_is_judged_outside_the_candidate(fast) -> None:
    ref = _ref("assert abs(candidate(1.0, 2.0) - 3.0) < 1e-6")
    cheat = "def abs(x):\n    return 0\n__all__ = ['abs', 'add']\ndef add(a, b):\n    return 99.0\n"
    assert judge(fast, cheat, ref).score == 0.0
    assert judge(fast, "def add(a, b):\n    return a + b + 1e-9\n", ref).score == 1.0


def test_a_missing_entry_point_fails_with_its_name(fast) -> None:
    verdict = judge(fast, "def plus(a, b):\n    return a + b\n", ADD_REF)
    assert verdict.score == 0.0 and "add" in verdict.feedback, verdict


# ----------------------------------------------------------------------------- right answers

RIGHT = {
    "truth": (
        _ref("assert candidate([1, 2])\nassert not candidate([])\nassert candidate([3]) is True"),
        "def add(xs):\n    return len(xs) > 0\n",
    ),
    "tuple args and nested lists": (
        _ref("assert candidate((1, 2), [[3]]) == [1, 2, 3]\nassert candidate((), []) == []"),
        "def add(t, ls):\n    return list(t) + [x for l in ls for x in l]\n",
    ),
    "floats within a bound": (
        _ref("assert abs(candidate(0.1, 0.2) - 0.3) <= 1e-9\nassert candidate(1.0, 1) == 2"),
        "def add(a, b):\n    return a + b\n",
    ),
    "int equals float, as Python says": (
        _ref("assert candidate(1, 1) == 2.0\nassert candidate(0, 1) != 5"),
        "def add(a, b):\n    return a + b\n",
    ),
    "strings, None and dicts": (
        _ref(
            "assert candidate('a', 'b') == 'ab'\n"
            "assert candidate(None, None) is None\n"
            "assert candidate({'k': 1}, {}) == {'k': 1}"
        ),
        "def add(a, b):\n    if a is None:\n        return None\n"
        "    return {**a, **b} if isinstance(a, dict) else a + b\n",
    ),
    "arithmetic, wrappers and messages": (
        _ref(
            "assert candidate(3 * 19, -1) == 56, 'error: ' + str(candidate(3 * 19, -1))\n"
            "assert tuple(candidate([1], [2])) == tuple([1, 2])\n"
            "assert sorted(candidate([3], [1, 2])) == [1, 2, 3]\n"
            "assert len(candidate('ab', 'c')) == 3\n"
            "assert candidate(1.0, 2.0 / 3.0) == (1.0 + 2.0 / 3.0)\n"
            "assert candidate([1], [2]) == [1, 2 ** 0 + 1]"
        ),
        "def add(a, b):\n    return a + b\n",
    ),
    "docstring, filler and metadata": (
        _ref('"""doc"""\nassert True, "filler"\nassert candidate(2, 3) == 5\npass'),
        "import math\ndef add(a, b):\n    return math.fsum([a, b])\n",
    ),
}


@pytest.mark.parametrize("name", sorted(RIGHT))
@pytest.mark.parametrize("route", ["batch", "judge"])
def test_right_answers_in_many_forms_pass(fast, name: str, route: str) -> None:
    ref, code = RIGHT[name]
    verdict = judge(fast, code, ref if route == "batch" else _judged(ref))
    assert verdict.score == 1.0, (name, route, verdict)


WRONG = {
    "off by one": "def add(a, b):\n    return a + b + 1\n",
    "raises": "def add(a, b):\n    raise ValueError('no')\n",
    "returns a string": "def add(a, b):\n    return str(a + b)\n",
    "right on one line only": "def add(a, b):\n    return 3\n",
    "right unless keywords": "def add(*args, **kw):\n    return sum(args) if args else -1\n",
}


@pytest.mark.parametrize("name", sorted(WRONG))
def test_batch_and_judge_give_the_same_score(fast, name: str) -> None:
    batch = judge(fast, WRONG[name], ADD_REF)
    judged = judge(fast, WRONG[name], _judged(ADD_REF))
    assert batch.score == judged.score < 1.0, (name, batch, judged)
    assert batch.status == judged.status


def test_wrong_answers_fail_on_both_routes_with_messages_and_wrappers(fast) -> None:
    ref = RIGHT["arithmetic, wrappers and messages"][0]
    for code in WRONG.values():
        batch, judged = judge(fast, code, ref), judge(fast, code, _judged(ref))
        assert batch.score == judged.score < 1.0, (code, batch, judged)


# ----------------------------------------------------------------------------- planning


@pytest.mark.parametrize(
    "body",
    [
        "for x in range(3):\n    assert candidate(x, 0) == x",
        "assert candidate(1, 2) == helper(3)",
        "x = 1\nassert candidate(x, 2) == 3",
        "assert candidate(*[1, 2]) == 3",
        "assert candidate(candidate(1, 1), 1) == 3",
        "assert candidate(1, 2) is 3",
        "assert candidate(2, 2) == 2 ** 100000",
        "assert candidate('a', 'b') == 'ab' * 100000",
        "assert tuple(candidate(1, 2), 3) == (3,)",
        "assert math.fabs(candidate(1.0, 2.0) - 3.0) < 1e-6",
        "abs = 4\nassert abs(candidate(1, 2) - 3) < 1",
        "print(candidate(1, 2))",
        "assert 1 < candidate(1, 2) < 5",
    ],
)
def test_the_planner_leaves_anything_else_to_the_judge(body: str) -> None:
    test = _ref(body)["test"]
    assert check_plan.plan(ast.parse(test), test, "add") is None, body
