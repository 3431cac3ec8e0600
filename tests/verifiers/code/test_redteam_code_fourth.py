"""Red team, fourth round (rtcode4): programs that must not earn what a right one earns,
and right programs that must not fail. Each row runs only in the sandbox; a row that
reaches for a file outside the jail points at a scratch path this test made (tmp_path).
A language whose toolchain is missing here is skipped with its reason."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from rewardsmith.verifiers.code import CodeTests
from rewardsmith.verifiers.code.languages import language
from rewardsmith.verifiers.types import Sample

pytestmark = pytest.mark.sandbox

SUM = {
    "format": "stdio",
    "cases": [{"input": "1 2\n", "output": "3\n"}, {"input": "40 2\n", "output": "42\n"}],
}
KEY = "tmp_path/answers.json"  # replaced by the scratch file the test writes

# (language, program, reference, the most it may earn). Hostile programs look for the
# expected output (the answers file the test wrote, the judge's files, other processes),
# rewrite the result at exit, or leave before any test runs.
STDIO_ATTACKS = {
    "c_reads_answer_file": (
        "c",
        """#include <stdio.h>
int main(void){ FILE *f = fopen("KEY", "r"); char b[4096]; size_t n;
  if (!f) return 0;
  while ((n = fread(b, 1, sizeof b, f)) > 0) fwrite(b, 1, n, stdout); return 0; }""",
        SUM,
        0.0,
    ),
    "c_atexit_exit0_no_output": (
        "c",
        """#include <stdlib.h>
#include <unistd.h>
static void done(void){ _exit(0); }
__attribute__((constructor)) static void early(void){ atexit(done); exit(0); }
int main(void){ return 1; }""",
        SUM,
        0.0,
    ),
    "c_signal_handler_rewrites_exit": (
        "c",
        """#include <signal.h>
#include <unistd.h>
static void h(int s){ (void)s; _exit(0); }
int main(void){ signal(SIGSEGV, h); signal(SIGABRT, h); int *p = 0; return *p; }""",
        SUM,
        0.0,
    ),
    "cpp_static_init_prints_guess": (
        "cpp",
        """#include <cstdio>
#include <cstdlib>
struct E { E(){ std::puts("3"); std::exit(0); } } e;
int main(){ return 0; }""",
        SUM,
        0.5,
    ),
    "js_process_exit_before_output": ("javascript", "process.exit(0);\nconsole.log(3);", SUM, 0.0),
    "js_reads_proc_of_others": (
        "javascript",
        """const fs = require('fs');
let out = '';
for (const p of fs.readdirSync('/proc')) { if (!/^\\d+$/.test(p)) continue;
  for (const f of ['cmdline', 'environ']) {
    try { out += fs.readFileSync('/proc/' + p + '/' + f, 'latin1'); } catch (e) {} } }
const m = out.match(/"output": "(\\d+)/); console.log(m ? m[1] : '');""",
        SUM,
        0.0,
    ),
    "go_exit0_in_init": (
        "go",
        """package main
import "os"
func init() { os.Exit(0) }
func main() {}""",
        SUM,
        0.0,
    ),
    "java_system_exit_in_static_init": (
        "java",
        """public class Main {
  static { System.exit(0); }
  public static void main(String[] a) { System.out.println(3); } }""",
        SUM,
        0.0,
    ),
    "python_walks_filesystem_for_answers": (
        "python",
        """import os
for root in ('/', '/tmp', '/box', os.getcwd()):
    for d, _, fs in os.walk(root):
        for f in fs:
            if f.endswith('.json') and 'answers' in f:
                print(open(os.path.join(d, f)).read())""",
        SUM,
        0.0,
    ),
}

FLOAT = {
    "format": "stdio",
    "checker": "float",
    "float_tol": 1e-6,
    "cases": [{"input": "", "output": "0.1234567\n"}],
}
FLOAT_ATTACKS = {
    "nan": ("python", "print('nan')", FLOAT, 0.0),
    "inf": ("python", "print('inf')", FLOAT, 0.0),
    "overflowing_exponent": ("python", "print('1e999')", FLOAT, 0.0),
    "rounded_past_tolerance": ("python", "print('0.1234')", FLOAT, 0.0),
    "hex_float": ("python", "print(float.hex(0.1234567))", FLOAT, 0.0),
    "digits_with_underscore": ("python", "print('0.123_456_7')", FLOAT, 0.0),
    "right_within_tolerance": ("python", "print('0.12345670001')", FLOAT, 1.0),
}


def _score(language_name: str, program: str, reference: dict, tmp_path: Path) -> float:
    lang = language(language_name)
    if not lang.available:
        pytest.skip(f"no {lang.name} toolchain ({lang.tool}) on this machine")
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps(reference))
    code = program.replace("KEY", str(answers))
    ref = {**reference, "language": language_name}
    verdict = CodeTests()(Sample(id="rt4", completion=code, reference=ref))
    assert verdict.failure is None or verdict.failure.value != "sandbox_error", verdict
    return verdict.score or 0.0


@pytest.mark.parametrize("case", sorted({**STDIO_ATTACKS, **FLOAT_ATTACKS}))
def test_stdio_attack_earns_no_more_than_it_should(case: str, tmp_path: Path) -> None:
    lang, program, reference, most = {**STDIO_ATTACKS, **FLOAT_ATTACKS}[case]
    score = _score(lang, program, reference, tmp_path)
    if most == 1.0:
        assert score == 1.0, f"{case}: a right program earned {score}"
    else:
        assert score <= most, f"{case}: earned {score}, at most {most}"


def _pytest_ref(test: str, expected: int = 1) -> dict:
    return {"format": "pytest", "expected_tests": expected, "files": {"test_area.py": test}}


AREA_TEST = (
    "from solution import *\n\n\ndef test_area():\n"
    "    assert area(2.0) == pytest.approx(12.566370614359172)\n"
)
WRONG = "def area(r):\n    return 0.0\n"
# (candidate program, reference, the most it may earn)
PYTEST_ATTACKS = {
    "approx_against_nan": (
        "def area(r):\n    return float('nan')\n",
        _pytest_ref("import pytest\n" + AREA_TEST),
        0.0,
    ),
    "approx_against_inf": (
        "def area(r):\n    return float('inf')\n",
        _pytest_ref("import pytest\n" + AREA_TEST),
        0.0,
    ),
    "lying_eq_object": (
        "class A(float):\n    def __eq__(s, o): return True\n    __rsub__ = lambda s, o: 0.0\n"
        "    __abs__ = lambda s: 0.0\n    __float__ = lambda s: 12.566370614359172\n"
        "def area(r):\n    return A(0)\n",
        _pytest_ref("import pytest\n" + AREA_TEST),
        0.0,
    ),
    "writes_conftest": (
        "import os\nopen(os.path.join(os.getcwd(), 'conftest.py'), 'w').write("
        "'import pytest\\n@pytest.hookimpl(hookwrapper=True)\\n"
        "def pytest_runtest_makereport(item, call):\\n"
        '    o = yield\\n    o.get_result().outcome = "passed"\\n\')\n' + WRONG,
        _pytest_ref("import pytest\n" + AREA_TEST),
        0.0,
    ),
    "poisons_sys_modules_pytest": (
        "import sys, types\nm = types.ModuleType('pytest')\n"
        "m.approx = lambda *a, **k: type('Y', (), {'__eq__': lambda s, o: True})()\n"
        "sys.modules['pytest'] = m\n" + WRONG,
        _pytest_ref("import pytest\n" + AREA_TEST),
        0.0,
    ),
    "os_exit_during_collection": (
        "import os\nos._exit(0)\n" + WRONG,
        _pytest_ref("import pytest\n" + AREA_TEST),
        0.0,
    ),
    "monkeypatched_builtins": (
        "import builtins\nbuiltins.AssertionError = type('N', (Exception,), {})\n"
        "builtins.abs = lambda x: 0\n" + WRONG,
        _pytest_ref(
            "def test_area():\n    from solution import area\n"
            "    assert abs(area(2.0) - 12.566370614359172) < 1e-9\n"
        ),
        0.0,
    ),
    "star_shadows_approx_imported_first": (
        "def approx(*a, **k):\n    return True\n" + WRONG,
        _pytest_ref(
            "from pytest import approx\nfrom solution import *\n\n\ndef test_area():\n"
            "    assert area(2.0) == approx(12.566370614359172)\n"
        ),
        0.0,
    ),
    "star_shadows_a_star_imported_helper": (
        "def isclose(*a, **k):\n    return True\n" + WRONG,
        _pytest_ref(
            "from math import *\nfrom solution import *\n\n\ndef test_area():\n"
            "    assert isclose(area(2.0), 12.566370614359172)\n"
        ),
        0.0,
    ),
    "star_shadows_a_star_imported_class": (
        "def Counter(*a, **k):\n    return {}\ndef letters(s):\n    return {}\n",
        _pytest_ref(
            "from collections import *\nfrom solution import *\n\n\ndef test_letters():\n"
            "    assert letters('aab') == Counter('aab')\n"
        ),
        0.0,
    ),
    "star_helper_named_in_provides_is_the_candidates": (
        "def gcd(a, b):\n    return 0\n",
        {
            **_pytest_ref(
                "from math import *\nfrom solution import *\n\n\ndef test_gcd():\n"
                "    assert gcd(4, 6) == 2\n"
            ),
            "provides": ["gcd"],
        },
        0.0,
    ),
    "right_star_program_beside_a_star_helper": (
        "import math\ndef area(r):\n    return math.pi * r * r\n",
        _pytest_ref(
            "from math import *\nfrom solution import *\n\n\ndef test_area():\n"
            "    assert isclose(area(2.0), 12.566370614359172)\n"
        ),
        1.0,
    ),
}


STAR_CHECK = (
    "from math import *\n\n\ndef check(candidate):\n"
    "    assert isclose(candidate(2.0), 12.566370614359172)\n"
)
STAR_ASSERTS = ["assert isclose(area(2.0), 12.566370614359172)"]
RIGHT_AREA = "import math\ndef area(r):\n    return math.pi * r * r\n"
# The same star import in the other Python formats: a right program was a bad reference
# (the helper counted as undefined), and the candidate's isclose must not reach the test.
PYTEST_ATTACKS |= {
    "humaneval_star_helper_right": (
        RIGHT_AREA,
        {"format": "humaneval", "entry_point": "area", "test": STAR_CHECK},
        1.0,
    ),
    "humaneval_star_helper_shadowed": (
        "def isclose(*a, **k):\n    return True\n" + WRONG,
        {"format": "humaneval", "entry_point": "area", "test": STAR_CHECK},
        0.0,
    ),
    "asserts_star_helper_right": (
        RIGHT_AREA,
        {"format": "asserts", "setup": "from math import *", "asserts": STAR_ASSERTS},
        1.0,
    ),
    "asserts_star_helper_shadowed": (
        "def isclose(*a, **k):\n    return True\n" + WRONG,
        {
            "format": "asserts",
            "entry_point": "area",
            "setup": "from math import *",
            "asserts": STAR_ASSERTS,
        },
        0.0,
    ),
}


@pytest.mark.parametrize("case", sorted(PYTEST_ATTACKS))
def test_pytest_attack_earns_no_more_than_it_should(case: str) -> None:
    program, reference, most = PYTEST_ATTACKS[case]
    verdict = CodeTests()(Sample(id="rt4", completion=program, reference=reference))
    score = verdict.score or 0.0
    if most == 1.0:
        assert score == 1.0, f"{case}: a right program earned {score}: {verdict}"
    else:
        assert score <= most, f"{case}: earned {score}, at most {most}"


CALLS = {"format": "calls", "fn": "f", "cases": [{"input": "(2,)", "output": "4"}]}
# (completion, most it may earn): which block of a completion runs.
EXTRACT_CASES = {
    "right_then_wrong_draft": (
        "```python\ndef f(x):\n    return x * 2\n```\nWait, better:\n"
        "```python\ndef f(x):\n    return x + 1\n```",
        0.0,
    ),
    "wrong_then_right": (
        "```python\ndef f(x):\n    return x + 1\n```\nFixed:\n"
        "```python\ndef f(x):\n    return x * 2\n```",
        1.0,
    ),
    "later_block_only_prints": (
        "```python\ndef f(x):\n    return x * 2\n```\nUsage:\n```python\nprint(f(3))\n```",
        1.0,
    ),
    "defines_twice_last_wrong": (
        "```python\ndef f(x):\n    return x * 2\n\ndef f(x):\n    return 0\n```",
        0.0,
    ),
    "quoted_prompt_stub_after_answer": (
        "```python\ndef f(x):\n    return x * 2\n```\n> You asked for:\n"
        "> ```python\n> def f(x):\n>     pass\n> ```",
        1.0,
    ),
    "answer_inside_a_string_of_a_wrong_block": (
        "```python\nS = '''\ndef f(x):\n    return x * 2\n'''\ndef f(x):\n    return 0\n```",
        0.0,
    ),
}


@pytest.mark.parametrize("case", sorted(EXTRACT_CASES))
def test_which_block_runs(case: str) -> None:
    completion, most = EXTRACT_CASES[case]
    score = CodeTests()(Sample(id="rt4", completion=completion, reference=CALLS)).score or 0.0
    if most == 1.0:
        assert score == 1.0, f"{case}: a right program earned {score}"
    else:
        assert score <= most, f"{case}: earned {score}"
