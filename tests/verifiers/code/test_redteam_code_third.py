"""Red team rtcode3: Unicode whitespace in stdio checkers, dict keys of another type, and
numpy scalars a right program returns (a false negative). Attack completions run only in
the sandbox, through the verifier."""

from __future__ import annotations

import importlib.util

import pytest

from rewardsmith.verifiers.code import CodeTests
from rewardsmith.verifiers.code.relations import relations
from rewardsmith.verifiers.code.stdio import CHECKERS
from rewardsmith.verifiers.code.values import exact_equal
from rewardsmith.verifiers.types import Sample

HAS_NUMPY = importlib.util.find_spec("numpy") is not None


@pytest.mark.parametrize(
    ("checker", "got", "want"),
    [
        ("tokens", "3\xa04\n", "3 4\n"),  # no-break space between tokens
        ("tokens", "3\x1f4\n", "3 4\n"),  # unit separator (str.split takes it)
        ("tokens", "3\u30004\n", "3 4\n"),  # ideographic space
        ("tokens", "3 4\u3000\n", "3 4\n"),  # trailing, glued to the last token
        ("float", "3\xa04\n", "3 4\n"),
        ("float", "2.5\u2003\n", "2.5\n"),
        ("lines", "3 4\u3000\n", "3 4\n"),  # rstrip took the ideographic space
        ("lines", "3 4\x85\n", "3 4\n"),  # next-line control
        ("lines", "3 4\xa0\n", "3 4\n"),
    ],
)
def test_unicode_whitespace_is_not_a_separator(checker: str, got: str, want: str) -> None:
    check = CHECKERS[checker]
    assert check is not None
    assert not check(got, want, 1e-6)


@pytest.mark.parametrize(
    ("checker", "got", "want"),
    [
        ("tokens", "3\t4\r\n\v\f", "3 4\n"),  # every ASCII space still separates
        ("float", " 2.5000001\r\n", "2.5\n"),
        ("lines", "3 4 \t\r\n\n", "3 4\n"),  # CRLF and trailing ASCII spaces
    ],
)
def test_ascii_whitespace_still_separates(checker: str, got: str, want: str) -> None:
    check = CHECKERS[checker]
    assert check is not None
    assert check(got, want, 1e-6)


@pytest.mark.parametrize(
    ("got", "want", "equal"),
    [
        ({True: "a", False: "b"}, {1: "a", 0: "b"}, False),
        ({1.0: "a"}, {1: "a"}, False),
        ({(1, True): 0}, {(1, 1): 0}, False),
        ({frozenset({True}): 0}, {frozenset({1}): 0}, False),
        ({(1, True)}, {(1, 1)}, False),
        ({1: "a", 0: "b"}, {0: "b", 1: "a"}, True),
        ({(1, "x"), frozenset({2})}, {frozenset({2}), (1, "x")}, True),
    ],
)
def test_keys_and_members_keep_their_types(got: object, want: object, equal: bool) -> None:
    assert exact_equal(got, want) is equal


def _run(fast: CodeTests, code: str, reference: dict[str, object]) -> float | None:
    return fast(Sample(id="rt3", completion=code, reference=reference)).score


@pytest.mark.sandbox
def test_bool_keys_do_not_pass_for_int_keys(fast: CodeTests) -> None:
    ref = {"format": "calls", "fn": "f", "cases": [{"input": "()", "output": "{1: 'a', 0: 'b'}"}]}
    assert _run(fast, "def f():\n    return {True: 'a', False: 'b'}\n", ref) == 0.0
    assert _run(fast, "def f():\n    return {1: 'a', 0: 'b'}\n", ref) == 1.0


@pytest.mark.sandbox
def test_stdio_unicode_space_does_not_pass(fast: CodeTests) -> None:
    for checker in ("tokens", "float", "lines"):
        ref = {"format": "stdio", "checker": checker, "cases": [{"input": "", "output": "3 4\n"}]}
        assert _run(fast, "print('3 4\\u3000')\n", ref) == 0.0
        assert _run(fast, "print('3 4')\n", ref) == 1.0


NUMPY_CASES = [
    (
        {
            "format": "humaneval",
            "entry_point": "mean",
            "test": "def check(candidate):\n"
            "    assert abs(candidate([1.0, 2.0, 3.0]) - 2.0) < 1e-6\n"
            "    x = [2.0, 4.0]\n    assert candidate(x) == 3.0\n",
        },
        "import numpy as np\ndef mean(xs):\n    return np.mean(xs)\n",
    ),
    (
        {"format": "calls", "fn": "count", "cases": [{"args": [[1, 2]], "expected": 2}]},
        "import numpy as np\ndef count(xs):\n    return np.int64(len(xs))\n",
    ),
    (
        {"format": "calls", "fn": "pos", "cases": [{"args": [3], "expected": True}]},
        "import numpy as np\ndef pos(x):\n    return np.bool_(x > 0)\n",
    ),
]


@pytest.mark.sandbox
@pytest.mark.skipif(not HAS_NUMPY, reason="numpy is not installed")
@pytest.mark.parametrize(("reference", "code"), NUMPY_CASES)
def test_numpy_scalars_cross_as_builtins(
    fast: CodeTests, reference: dict[str, object], code: str
) -> None:
    assert _run(fast, code, reference) == 1.0


@pytest.mark.sandbox
def test_a_class_posing_as_numpy_gains_nothing(fast: CodeTests) -> None:
    code = (
        "class Eq:\n    def __eq__(self, o):\n        return True\n"
        "class generic:\n    def item(self):\n        return Eq()\n"
        "generic.__module__ = 'numpy'\n"
        "class Fake(generic):\n    pass\n"
        "def count(xs):\n    return Fake()\n"
    )
    ref = {"format": "calls", "fn": "count", "cases": [{"args": [[1, 2]], "expected": 2}]}
    assert _run(fast, code, ref) == 0.0


def test_relations_name_the_new_classes() -> None:
    rel = {r.name: r for r in relations(None)}
    stdio = Sample(id="s", completion="print(1, 2)\n", reference={"format": "stdio", "cases": []})
    dressed = rel["code/unicode_trailing_space"](stdio, 0)
    assert dressed is not None and "u3000" in dressed.completion
    fn = Sample(
        id="f",
        completion="def add(a, b):\n    return a + b\n",
        reference={"format": "calls", "fn": "add", "cases": []},
    )
    wrapped = rel["code/numpy_scalar_returns"](fn, 0)
    assert wrapped is not None and "numpy" in wrapped.completion
