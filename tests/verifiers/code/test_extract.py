"""Finding the program in a completion (red team 04:26, C-F1..C-F3): a usage or test block
after the solution, a helper in its own block first, tilde fences and the usual tags must
not turn a right answer into a 0; a block that is not the program never becomes it."""

from __future__ import annotations

import pytest
from code_cases import ADD_CALLS, FAST

from rewardsmith.verifiers.code.extract import extract_code
from rewardsmith.verifiers.code.stdio import CHECKERS
from rewardsmith.verifiers.types import Sample

ADD = "def add(a, b):\n    return a + b\n"
HELPER = "def _plus(a, b):\n    return a + b\n"
USES_HELPER = "def add(a, b):\n    return _plus(a, b)\n"


def fence(body: str, tag: str = "python", mark: str = "```") -> str:
    return f"{mark}{tag}\n{body}{mark}\n"


USAGE = "print(add(1, 2))  # 3\n"
ASSERTS = "assert add(1, 2) == 3\n"
READS = "x = int(input())\nprint(add(x, 1))\n"
CONSTANTS = "import math\nTOL = 1e-9\n"
DRAFT = "def add(a, b):\n    return a - b\n"
SHELL = "$ python main.py\n"
C_MAIN = "int main(void) { return 0; }\n"

RIGHT = [  # (completion, what the program must contain, what it must not)
    ("Solution:\n" + fence(ADD) + "Example usage:\n" + fence(USAGE), ADD, "print"),
    (fence(ADD) + "Tests:\n" + fence(ASSERTS), ADD, "assert"),
    (fence(ADD) + fence(READS), ADD, "input"),
    ("First:\n" + fence(HELPER) + "Then:\n" + fence(USES_HELPER), USES_HELPER, "print"),
    (fence(CONSTANTS) + fence(ADD), "TOL = 1e-9", "print"),
    ("Draft:\n" + fence(DRAFT) + "Fixed:\n" + fence(ADD), ADD, "a - b"),
    ("Usage first:\n" + fence(USAGE) + fence(ADD), ADD, "print"),
    ("Solution:\n" + fence(ADD, mark="~~~"), ADD, "Solution"),
    ("Solution:\n" + fence(ADD, "py3"), ADD, "Solution"),
    ("Solution:\n" + fence(ADD, "ipython"), ADD, "Solution"),
    ("Solution:\n" + fence(ADD, "Python3.11"), ADD, "Solution"),
    ("Solution:\n" + fence(ADD, "python", "````"), ADD, "Solution"),
    ("Solution:\n" + fence(ADD, "{.python}"), ADD, "Solution"),
    (fence(SHELL, "bash") + fence(ADD), ADD, "$ python"),
]


@pytest.mark.parametrize(("text", "has", "lacks"), RIGHT)
def test_the_program_is_found(text: str, has: str, lacks: str) -> None:
    program = extract_code(text, "python", ["add"])
    assert has in program and lacks not in program, program


def test_without_known_names_the_last_block_is_the_program() -> None:
    text = fence(ADD) + fence(USAGE)
    assert extract_code(text, "python") == USAGE  # a stdio program


@pytest.mark.parametrize(
    ("tag", "language"),
    [
        ("cpp", "c"),
        ("c++", "c"),
        ("h", "c"),
        ("c", "cpp"),
        ("golang", "go"),
        ("nodejs", "javascript"),
    ],
)
def test_kin_tags_are_the_program(tag: str, language: str) -> None:
    text = "Code:\n" + fence(C_MAIN, tag) + "Done."
    assert extract_code(text, language) == C_MAIN


def test_a_closer_tag_wins_over_a_kin_one() -> None:
    text = fence("c code\n", "c") + fence("c++ code\n", "cpp")
    assert extract_code(text, "c") == "c code\n" and extract_code(text, "cpp") == "c++ code\n"


@pytest.mark.parametrize(
    ("got", "ok"), [("30", True), ("3_0", False), ("١٢", False), ("3e1", True)]
)
def test_the_float_checker_reads_numbers_as_a_c_judge_does(got: str, ok: bool) -> None:
    checker = CHECKERS["float"]
    assert checker is not None
    want = "12" if got == "١٢" else "30"
    assert checker(got, want, 1e-6) is ok


@pytest.mark.sandbox
@pytest.mark.parametrize("text", [t for t, _, _ in RIGHT])
def test_right_answers_in_every_layout_earn_full_reward(text: str) -> None:
    verdict = FAST(Sample(id="x", completion=text, reference=ADD_CALLS))
    assert verdict.score == 1.0, verdict.feedback


SUM = "a, b = map(int, input().split())\nprint(a + b)\n"
C_SUM = (
    "#include <stdio.h>\n"
    'int main(void) { int a, b; scanf("%d %d", &a, &b); printf("%d\\n", a + b); }\n'
)
HARNESS = "import subprocess\nprint(subprocess.run(['python', 'sol.py'], input=b'1 2'))\n"
STDIO_RIGHT = [  # red team C-F6: what follows the program must not replace it
    (fence(SUM, "") + "Example input:\n" + fence("1 2\n", "") + "Output:\n" + fence("3\n", "")),
    (fence(SUM) + "Run it:\n" + fence("# $ echo '1 2' | python sol.py\n# 3\n")),
    (fence(SUM) + "To test it:\n" + fence(HARNESS)),
    (fence(SUM) + "Output:\n" + fence("3\n")),
    (fence(SUM) + fence("$ python sol.py < in.txt\n", "")),
    (fence(SUM) + fence("YES\n")),
]


@pytest.mark.parametrize("text", STDIO_RIGHT)
def test_a_stdio_program_is_not_replaced_by_what_follows(text: str) -> None:
    assert extract_code(text, "python") == SUM


@pytest.mark.parametrize(
    "after",
    ["Input:\n" + fence("1 2\n", "") + "Output:\n" + fence("3\n", ""), fence("// prints 3\n", "c")],
)
def test_a_c_program_is_not_replaced_by_what_follows(after: str) -> None:
    assert extract_code(fence(C_SUM, "c") + after, "c") == C_SUM


@pytest.mark.sandbox
@pytest.mark.parametrize("text", STDIO_RIGHT)
def test_right_stdio_answers_in_every_layout_earn_full_reward(text: str) -> None:
    ref = {
        "format": "stdio",
        "cases": [{"input": "1 2\n", "output": "3\n"}, {"input": "0 5\n", "output": "5\n"}],
    }
    verdict = FAST(Sample(id="s", completion=text, reference=ref))
    assert verdict.score == 1.0, verdict.feedback
