"""Issue 30: a test sees the candidate only through the names the reference declares.

Each table holds the attack (a program that defines the tests' helpers: `approx`,
`Counter`, a module, a helper function or class, a constant) and the right program that
happens to define names like them too: the attack earns 0, the right program 1.0, in every
import order and format. Before the fix the pytest attack earned 1.0 and the right
program 0.5 (measured with the `star before` rows).
"""

from __future__ import annotations

from typing import Any

import pytest
from code_cases import FAST

from rewardsmith.verifiers.code.exploits import generator
from rewardsmith.verifiers.code.formats import ReferenceError_, parse_reference
from rewardsmith.verifiers.types import Failure, Sample, Verdict

pytestmark = pytest.mark.sandbox

# kind -> (the test's helper, an assertion using it, the attack's helper, a right program's
# own unrelated definition of the same name)
HELPERS: dict[str, tuple[str, str, str, str]] = {
    "approx (function)": (
        "from pytest import approx",
        "assert add(0.1, 0.2) == approx(0.3)",
        "def approx(*a, **k):\n    return 0\n",
        "def approx(x):\n    return -x\n",
    ),
    "Counter (class)": (
        "from collections import Counter",
        "assert Counter(str(add(12, 21))) == Counter('33')",
        "def Counter(*a, **k):\n    return 0\n",
        "class Counter:\n    pass\n",
    ),
    "math (module)": (
        "import math",
        "assert math.isclose(add(0.1, 0.2), 0.3)",
        "class _M(type):\n    def __getattr__(c, n):\n        return lambda *a, **k: True\n"
        "class math(metaclass=_M):\n    pass\n",
        "def math():\n    return 0\n",
    ),
    "module alias": (
        "import collections as co",
        "assert co.Counter(str(add(12, 21))) == co.Counter('33')",
        "class _M(type):\n    def __getattr__(c, n):\n        return lambda *a, **k: 0\n"
        "class co(metaclass=_M):\n    pass\n",
        "def co():\n    return 0\n",
    ),
    "helper function": (
        "def expected(a, b):\n    return a + b",
        "assert add(2, 3) == expected(2, 3)",
        "def expected(*a):\n    return 0\n",
        "def expected(*a):\n    return -1\n",
    ),
    "helper class": (
        "class Box:\n    def __init__(self, v):\n        self.v = v\n"
        "    def __eq__(self, other):\n        return isinstance(other, Box) and self.v == other.v",
        "assert Box(add(1, 2)) == Box(3)",
        "def Box(*a):\n    return 0\n",
        "class Box:\n    pass\n",
    ),
    "constant": (
        "from math import pi",
        "assert add(pi, 0) == pi",
        "def pi():\n    return 0\n",
        "def pi():\n    return 3\n",
    ),
}
HACK_ADD = "def add(*a, **k):\n    return 0\n"
RIGHT_ADD = "def add(a, b):\n    return a + b\n"
HACK = HACK_ADD + "".join(h[2] for h in HELPERS.values())
RIGHT = RIGHT_ADD + "".join(h[3] for h in HELPERS.values())

ORDERS = {  # how a pytest file takes the candidate: (before the helpers, after, call prefix)
    "star before helpers": ("from solution import *", "", ""),
    "star after helpers": ("", "from solution import *", ""),
    "import as": ("import solution as s", "", "s."),
    "by name": ("from solution import add", "", ""),
    "by name and star": ("from solution import add", "from solution import *", ""),
}


def _pytest_file(order: str) -> dict[str, Any]:
    before, after, prefix = ORDERS[order]
    lines = [before] if before else []
    tests = []
    for i, (helper, assertion, _, _) in enumerate(HELPERS.values()):
        lines.append(helper)
        tests.append(f"def test_{i}():\n    {assertion.replace('add(', prefix + 'add(')}\n")
    if after:
        lines.append(after)
    source = "\n".join(lines) + "\n\n" + "\n".join(tests)
    return {"format": "pytest", "expected_tests": len(HELPERS), "files": {"test_h.py": source}}


def _run(code: str, ref: dict[str, Any]) -> Verdict:
    return FAST(Sample(id="b", completion=code, reference=ref))


@pytest.mark.parametrize("order", sorted(ORDERS))
def test_pytest_helpers_keep_their_binding_in_every_import_order(order: str) -> None:
    ref = _pytest_file(order)
    right = _run(RIGHT, ref)
    assert right.score == 1.0, right.feedback
    hack = _run(HACK, ref)
    assert hack.score == 0.0, hack.feedback


def test_pytest_module_exposes_only_declared_names() -> None:
    test = (
        "import solution\ndef test_a():\n"
        "    assert solution.add(1, 2) == 3 and not hasattr(solution, 'helper')\n"
    )
    ref = {"format": "pytest", "expected_tests": 1, "files": {"test_m.py": test}}
    assert parse_reference(ref).candidate_names == ("add",)  # named by attribute
    assert _run(RIGHT_ADD + "def helper():\n    return 1\n", ref).score == 1.0


# ----------------------------------------------------------------------------- HumanEval


def _check(helper: str, assertion: str, inside: bool = False) -> str:
    body = assertion.replace("add(", "candidate(")
    if inside:
        return (
            f"def check(candidate):\n    {helper.replace(chr(10), chr(10) + '    ')}\n    {body}\n"
        )
    return f"{helper}\n\ndef check(candidate):\n    {body}\n"


@pytest.mark.parametrize("kind", sorted(HELPERS))
@pytest.mark.parametrize("inside", [False, True], ids=["test module", "inside check"])
def test_humaneval_helpers_the_test_binds_stay_its_own(kind: str, inside: bool) -> None:
    helper, assertion, _, _ = HELPERS[kind]
    ref = {"format": "humaneval", "test": _check(helper, assertion, inside), "entry_point": "add"}
    assert _run(RIGHT, ref).score == 1.0
    assert _run(HACK, ref).score == 0.0


POLY_PROMPT = (
    "def poly(xs, x):\n    return sum(c * x ** i for i, c in enumerate(xs))\n\ndef add(a, b):\n"
)
POLY_TEST = "def check(candidate):\n    assert poly([candidate(1, 2)], 0) == 3\n"


def test_humaneval_helper_from_the_prompt_is_the_prompts() -> None:
    ref = {"format": "humaneval", "test": POLY_TEST, "entry_point": "add", "prompt": POLY_PROMPT}
    assert _run(RIGHT_ADD, ref).score == 1.0
    assert _run("    return a + b\n", ref).score == 1.0  # a body completing the prompt
    assert _run(HACK_ADD + "def poly(*a):\n    return 0\n", ref).score == 0.0


MISSING_HELPERS = [
    POLY_TEST,
    "def check(candidate):\n    assert is_close(candidate(0.1, 0.2), 0.3)\n",
    "def check(candidate):\n    assert Counter([candidate(1, 2)]) == Counter([3])\n",
    "def check(candidate):\n    assert approx(candidate(1, 2)) == 3\n",
    "def check(candidate):\n    assert candidate(1, 2) == EXPECTED\n",
]


@pytest.mark.parametrize("test", MISSING_HELPERS)
def test_humaneval_without_prompt_a_missing_helper_is_a_bad_reference(test: str) -> None:
    ref = {"format": "humaneval", "test": test, "entry_point": "add"}
    with pytest.raises(ReferenceError_, match="never from the candidate"):
        parse_reference(ref)
    hack = _run(HACK + "def poly(*a):\n    return 3\ndef is_close(*a):\n    return True\n", ref)
    assert hack.failure is Failure.BAD_REFERENCE and not hack.score, hack
    assert parse_reference(
        {**ref, "provides": ["poly", "is_close", "Counter", "approx", "EXPECTED"]}
    )


def test_humaneval_helpers_listed_in_provides_are_the_candidates() -> None:
    ref = {"format": "humaneval", "test": POLY_TEST, "entry_point": "add", "provides": ["poly"]}
    right = RIGHT_ADD + POLY_PROMPT.split("\n\ndef add")[0] + "\n"
    assert _run(right, ref).score == 1.0


# ----------------------------------------------------------------------------- asserts

MBPP = [  # real MBPP-style tests with math.isclose and no `setup`, and right programs
    (
        "assert math.isclose(volume_sphere(10), 4188.790204786391, rel_tol=0.001)",
        "import math\ndef volume_sphere(r):\n    return 4 / 3 * math.pi * r ** 3\n",
    ),
    (
        "assert math.isclose(surfacearea_cylinder(10, 5), 942.45, rel_tol=0.001)",
        "def surfacearea_cylinder(r, h):\n    return 2 * 3.1415 * r * r + 2 * 3.1415 * r * h\n",
    ),
    (
        "assert math.isclose(lateralsurface_cone(5, 12), 204.20352248333654, rel_tol=0.001)",
        "import math\ndef lateralsurface_cone(r, h):\n    return math.pi * r * math.hypot(r, h)\n",
    ),
    (
        "assert math.isclose(area_tetrahedron(3), 15.588457268119894, rel_tol=0.001)",
        "from math import sqrt\ndef area_tetrahedron(s):\n    return sqrt(3) * s * s\n",
    ),
    (
        "assert math.isclose(angle_complex(0, 1j), 1.5707963267948966, rel_tol=0.001)",
        "import cmath\ndef angle_complex(a, b):\n    return cmath.phase(a + b)\n",
    ),
    (
        "assert math.isclose(circle_circumference(10), 62.830000000000005, rel_tol=0.001)",
        "import math as m\ndef circle_circumference(r):\n    return 2 * m.pi * r\n",
    ),
    (
        "assert math.isclose(find_root(4), 2.0) and statistics.mean([find_root(9)]) == 3",
        "def find_root(x):\n    return x ** 0.5\n",
    ),
]


@pytest.mark.parametrize(("assertion", "right"), MBPP, ids=[a.split("(")[2] for a, _ in MBPP])
def test_mbpp_math_isclose_without_setup_passes_a_right_program(assertion: str, right: str) -> None:
    ref = {"format": "asserts", "asserts": [assertion]}
    assert _run(right, ref).score == 1.0, _run(right, ref).feedback
    fn = right.split("def ")[1].split("(")[0]
    hack = f"{HELPERS['math (module)'][2]}class statistics(metaclass=_M):\n    pass\n"
    assert _run(hack + f"def {fn}(*a):\n    return 0\n", ref).score == 0.0


@pytest.mark.parametrize("kind", sorted(HELPERS))
@pytest.mark.parametrize("entry", [None, "add"])
def test_assert_helpers_from_setup_stay_its_own(kind: str, entry: str | None) -> None:
    helper, assertion, _, _ = HELPERS[kind]
    ref: dict[str, Any] = {"format": "asserts", "setup": helper, "asserts": [assertion]}
    if entry:
        ref["entry_point"] = entry
    assert _run(RIGHT, ref).score == 1.0
    assert _run(HACK, ref).score == 0.0


@pytest.mark.parametrize(
    "ref",
    [
        {"format": "asserts", "entry_point": "add", "asserts": ["assert add(1, 2) == three()"]},
        {"format": "asserts", "asserts": ["assert np.allclose(add(1, 2), 3)"]},
        {"format": "asserts", "entry_point": "add", "asserts": ["assert np.isclose(add(1, 2), 3)"]},
        {"format": "asserts", "asserts": ["assert Counter([add(1, 2)]) == Counter([3])"]},
        {
            "format": "asserts",
            "asserts": ["assert add(1, 2) == 3", "assert approx(add(1, 1)) == 2"],
        },
    ],
)
def test_asserts_with_a_helper_no_trusted_code_defines_are_a_bad_reference(
    ref: dict[str, Any],
) -> None:
    """A module the asserts read but do not import (`np`) is never the candidate's class."""
    with pytest.raises(ReferenceError_, match="never from the candidate"):
        parse_reference(ref)


def test_a_pytest_star_import_never_offers_a_module_the_file_forgot_to_import() -> None:
    test = "from solution import *\ndef test_a():\n    assert np.isclose(add(1, 2), 3)\n"
    ref = {"format": "pytest", "expected_tests": 1, "files": {"test_np.py": test}}
    assert parse_reference(ref).candidate_names == ("add",)
    hack = HACK_ADD + HELPERS["math (module)"][2] + "class np(metaclass=_M):\n    pass\n"
    assert _run(hack, ref).score == 0.0


# ----------------------------------------------------------------------------- exploits


@pytest.mark.parametrize("order", ["star before helpers", "by name and star"])
def test_helper_rebinding_exploits_earn_nothing(order: str) -> None:
    right = Sample(id="h", completion=RIGHT_ADD, reference=_pytest_file(order))
    made = list(generator("helper_rebinding")(right))
    assert len(made) >= 10
    for exploit in made[::2]:
        verdict = FAST(exploit.sample)
        assert verdict.score is not None and verdict.score <= exploit.max_fraction, (
            exploit.description,
            verdict.feedback,
        )
