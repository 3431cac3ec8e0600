"""Issue 30: a custom stdio checker that evaluates the candidate's output hands it the
verdict (an object whose `__eq__` is always true; code that writes the verdict file and
exits). Such checkers are refused when the reference loads, in every eval-like form;
checkers that read the output as data (`ast.literal_eval`, `json.loads`) still run."""

from __future__ import annotations

import pytest

from rewardsmith.verifiers.code import CodeTests
from rewardsmith.verifiers.code.checker_policy import CheckerRefused, refuse_dynamic
from rewardsmith.verifiers.code.formats import ReferenceError_, parse_reference
from rewardsmith.verifiers.types import Failure, Sample

REFUSED = [
    "def check(i, o, e):\n    return eval(o) == eval(e)\n",
    "def check(i, o, e):\n    exec('r = ' + o, g := {})\n    return g['r'] == int(e)\n",
    "def check(i, o, e):\n    return compile(o, 'o', 'eval') is not None\n",
    "def check(i, o, e):\n    return __import__('builtins').eval(o) == int(e)\n",
    "import builtins\ndef check(i, o, e):\n    return builtins.eval(o) == int(e)\n",
    "import builtins\ndef check(i, o, e):\n    return getattr(builtins, 'eval')(o) == int(e)\n",
    "import builtins as b\ndef check(i, o, e):\n    return getattr(b, 'ev' + 'al')(o) == 1\n",
    "def check(i, o, e):\n    return getattr(__builtins__, 'eval')(o) == int(e)\n",
    "def check(i, o, e):\n    return vars()['__builtins__']\n",
    "def check(i, o, e):\n    return globals()['__builtins__']['eval'](o) == 1\n",
    "def check(i, o, e):\n    return ().__class__.__base__.__subclasses__() and o == e\n",
    "def check(i, o, e):\n    return check.__globals__ and o == e\n",
    "import pickle\ndef check(i, o, e):\n    return pickle.loads(o.encode('latin1')) == 1\n",
    "from importlib import import_module\ndef check(i, o, e):\n    return o == e\n",
    "import os\ndef check(i, o, e):\n    return os.system(o) == 0\n",
    "import subprocess\ndef check(i, o, e):\n    return subprocess.run(o, shell=True)\n",
    "import sys\ndef check(i, o, e):\n    return sys.modules['builtins'].eval(o) == 1\n",
    "import marshal, types\ndef check(i, o, e):\n    return o == e\n",
    "import yaml\ndef check(i, o, e):\n    return yaml.load(o, Loader=yaml.Loader) == 1\n",
    "def check(i, o, e):\n    f = getattr\n    return f(o, 'x', o) == e\n",
    "def check(i, o, e):\n    return setattr(check, o, 1)\n",
    "import runpy\ndef check(i, o, e):\n    return o == e\n",
    "def check(i, o, e):\n    return breakpoint() or o == e\n",
    "def check(i, o, e):\n    return __loader__.load_module('builtins').eval(o) == 1\n",
    "def check(i, o, e):\n    return __spec__ and o == e\n",
    # red team C-X1: libraries that evaluate text (a deny-list missed them)
    "import sympy\ndef check(i, o, e):\n    return sympy.sympify(o.strip()) == sympy.sympify(e)\n",
    "from sympy.parsing.sympy_parser import parse_expr\ndef check(i, o, e):\n"
    "    return parse_expr(o) == parse_expr(e)\n",
    "import pandas as pd\ndef check(i, o, e):\n    return pd.eval(o) == int(e)\n",
    "import numexpr\ndef check(i, o, e):\n    return numexpr.evaluate(o) == int(e)\n",
    "import timeit\ndef check(i, o, e):\n    return timeit.timeit(o, number=1) >= 0\n",
    "import cProfile\ndef check(i, o, e):\n    return cProfile.run(o) is None\n",
    "import doctest\ndef check(i, o, e):\n    return o == e\n",
    "import numpy as np\ndef check(i, o, e):\n    return np.load(o, allow_pickle=True) == 1\n",
    "import operator\ndef check(i, o, e):\n    return operator.methodcaller(o)(e)\n",
    "def check(i, o, e):\n    exit(0)\n",
]

ALLOWED = [
    "import ast\ndef check(i, o, e):\n"
    "    return ast.literal_eval(o.strip()) == ast.literal_eval(e)\n",
    "import json\ndef check(i, o, e):\n    return json.loads(o) == json.loads(e)\n",
    "def check(i, o, e):\n    return abs(float(o) - float(e)) < 1e-6\n",
    "import math\ndef check(i, o, e):\n    return math.isclose(float(o), float(e))\n",
    "def check(i, o, e):\n    return sorted(o.split()) == sorted(e.split())\n",
    "def check(i, o, e):\n    return getattr(o, 'strip')() == e.strip()\n",
    "from fractions import Fraction\ndef check(i, o, e):\n    return Fraction(o) == Fraction(e)\n",
    "import re, collections\ndef check(i, o, e):\n"
    "    return collections.Counter(re.findall(r'\\w+', o)) == collections.Counter(e.split())\n",
]


@pytest.mark.parametrize("checker", REFUSED)
def test_an_evaluating_checker_is_refused_at_load(checker: str) -> None:
    with pytest.raises(CheckerRefused):
        refuse_dynamic(checker)
    ref = {"format": "stdio", "checker": "custom", "checker_code": checker, "cases": CASES}
    with pytest.raises(ReferenceError_, match="must not evaluate it"):
        parse_reference(ref)


@pytest.mark.parametrize("checker", ALLOWED)
def test_a_checker_that_reads_output_as_data_is_allowed(checker: str) -> None:
    refuse_dynamic(checker)
    assert parse_reference(
        {"format": "stdio", "checker": "custom", "checker_code": checker, "cases": CASES}
    )


CASES = [{"input": "2\n", "output": "4\n"}, {"input": "3\n", "output": "9\n"}]
ATTACKS = [  # what an evaluating checker once passed; printed by the candidate
    "type('E', (), {'__eq__': lambda s, o: True})()",
    "__import__('os').write(1, b'') or open('verdicts.json', 'w').write('[true, true]')"
    " or __import__('os')._exit(0)",
    "[True, True]",
    "4 if True else 0",
]


@pytest.mark.sandbox
def test_the_verifier_refuses_an_evaluating_checker_and_a_literal_one_holds() -> None:
    verifier = CodeTests(wall_s=2.0, checker_wall_s=5.0)
    evil = {"format": "stdio", "checker": "custom", "checker_code": REFUSED[0], "cases": CASES}
    right = "n = int(input())\nprint(n * n)\n"
    refused = verifier(Sample(id="e", completion=right, reference=evil))
    assert refused.failure is Failure.BAD_REFERENCE and "must not evaluate" in refused.feedback
    safe = {"format": "stdio", "checker": "custom", "checker_code": ALLOWED[0], "cases": CASES}
    assert verifier(Sample(id="r", completion=right, reference=safe)).score == 1.0
    for attack in ATTACKS:
        program = f"print({attack!r})\n"
        verdict = verifier(Sample(id="a", completion=program, reference=safe))
        assert verdict.score == 0.0, (attack, verdict)
