"""The sandbox and code tests again, as an unprivileged user, through the rootless mode.

Run as root where an unprivileged user exists (``.ci/run`` creates ``rewardsmith-ci``;
``REWARDSMITH_TEST_USER`` names another, or a bare uid), this reruns what differs between
the modes as that user (see `as_user`), so CI checks both modes in one ``make test``: all of
``tests/verifiers/sandbox`` (the jail claims, limits, seccomp, warm servers) and the code
tests whose programs meet the jail itself (`MODE_DEPENDENT`: the hack, abuse and escape
corpora, compiled languages and their toolchains inside the jail's mounts). The other code
tests (`SAME_IN_BOTH_MODES`) check the judging above the jail (which names a test sees,
value encodings, checkers, feedback, extraction, HumanEval's verdicts): the same code in
both modes, run once in root's run. Within the exploit table, the same split holds per class
(`JUDGE_ONLY_CLASSES`). Elsewhere it skips and says why.
"""

from __future__ import annotations

import os
import pwd
import re
import subprocess
import sys
from pathlib import Path

import pytest
from sandbox_support import RERUN_USER

from rewardsmith.verifiers.code.exploits import CLASSES

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[3]
USER = RERUN_USER
CODE_TESTS = "tests/verifiers/code"
# Code tests whose outcome depends on the jail: they run in both modes.
MODE_DEPENDENT = (
    "test_abuse.py",
    "test_check_batch.py",
    "test_exploits_code.py",
    "test_go.py",
    "test_hacks.py",
    "test_languages_anywhere.py",
    "test_redteam_code.py",
    "test_redteam_code_fourth.py",
    "test_redteam_code_third.py",
    "test_stdio.py",
)
# Code tests of the judging above the jail: root's run covers them (the same code).
SAME_IN_BOTH_MODES = (
    "test_bindings.py",
    "test_checker_policy.py",
    "test_extract.py",
    "test_hidden_feedback.py",
    "test_humaneval.py",
    "test_judge_errors.py",
    "test_redteam_code_eighth.py",  # decoding and reading in the scoring process
    "test_values.py",
    "test_verifier.py",
)

EXPLOIT_TABLE = (
    f"{CODE_TESTS}/test_exploits_code.py::test_function_exploits_earn_no_more_than_their_twins"
)
FORMATS_WITH_TEST_CODE = ("asserts", "humaneval", "pytest")
"""The exploit table's function formats other than `calls`: each runs the candidate under a
harness of its own (test code, HumanEval's check, pytest)."""
JUDGE_ONLY_CLASSES = (
    "always_equal",
    "builtin_shadowing",
    "constant_body",
    "exception_escape",
    "feedback_lookup",
    "forged_output",
    "helper_rebinding",
    "printed_output",
)
"""Exploit classes whose programs act only on the judge's Python (exceptions raised through
it, objects that forge equality, shadowed names, constants, printed text, rebound helpers,
looked-up expected values): whether a format's harness catches them is the same code in
both modes, so root's run plays them in every format and the rerun in `calls` only (each
class still meets the rootless jail once). The other classes (`early_exit`,
`judge_overload`, `tampering`: exits and signals, floods and limits, files and daemons) act
on the process and the jail, and the rerun plays them in every format, as it runs every
format's harness. In the rerun these pairs cost ~90 s of CPU of its ~230 (at load 12)."""
JAIL_CLASSES = ("early_exit", "judge_overload", "tampering")


def judge_only_pairs() -> list[str]:
    """The exploit-table tests the rerun leaves to root's run (`JUDGE_ONLY_CLASSES`)."""
    return [f"{EXPLOIT_TABLE}[{f}-{c}]" for f in FORMATS_WITH_TEST_CODE for c in JUDGE_ONLY_CLASSES]


REDTEAM = f"{CODE_TESTS}/test_redteam_code.py"
TEXT_ONLY_RELATIONS = {
    0: "code/fence_in_list_item",
    1: "code/fence_info_string",
    2: "code/backticks_in_a_line",
    3: "code/byte_order_mark",
    7: "code/java_class_named",
}
"""The preserving relations of `test_redteam_code` that only rewrite the answer's text
(its fences, a byte-order mark, the Java class's name): what they test is extraction and
`java_as_main` above the jail, whose run of the rewritten program is the plain right run the
rerun makes in `test_stdio`. The others (an exit at the end, stdin read by path or by
size) act on the process and its jail and stay in the rerun. Keys: the rows' indices."""


def judge_only_tests() -> list[str]:
    """Other tests of MODE_DEPENDENT files that the rerun leaves to root's run: the judging
    above the jail, as in `SAME_IN_BOTH_MODES` (~14 s of the rerun's ~210, at load 9).
    Java's class naming (`java_as_main`, four forms of one right program), the text-only
    relations, and the real HumanEval tasks played with two `JUDGE_ONLY_CLASSES`."""
    java_main = [f"{REDTEAM}::test_a_java_program_need_not_call_its_class_main[program{k}]"
                 for k in range(4)]  # fmt: skip
    relations = [
        f"{REDTEAM}::test_each_new_preserving_relation_keeps_a_right_answer_right"
        f"[{seed}-{name}-reference{k}-"  # a prefix (pytest deselects by prefix): the
        # rows' ids end with the program's text
        for seed in range(3)
        for k, name in TEXT_ONLY_RELATIONS.items()
    ]
    humaneval = [
        f"{CODE_TESTS}/test_exploits_code.py::test_real_humaneval_tasks[{cls}-{task}]"
        for cls in ("constant_body", "builtin_shadowing")
        for task in ("HumanEval/0", "HumanEval/32")
    ]
    assert {"constant_body", "builtin_shadowing"} <= set(JUDGE_ONLY_CLASSES)
    return java_main + relations + humaneval


def test_every_exploit_class_is_placed_for_the_rerun() -> None:
    """A new class must be put in one list (in doubt: JAIL_CLASSES)."""
    assert set(JUDGE_ONLY_CLASSES) | set(JAIL_CLASSES) == set(CLASSES)
    assert not set(JUDGE_ONLY_CLASSES) & set(JAIL_CLASSES)


def test_every_code_test_file_is_placed_for_the_rerun() -> None:
    """A new code test file must be put in one list (in doubt: MODE_DEPENDENT)."""
    files = {p.name for p in (REPO / CODE_TESTS).glob("test_*.py")}
    assert files == set(MODE_DEPENDENT) | set(SAME_IN_BOTH_MODES)
    assert not set(MODE_DEPENDENT) & set(SAME_IN_BOTH_MODES)


def _user_or_skip() -> str:
    if os.geteuid() != 0:
        pytest.skip("not root: this is the unprivileged run itself (or no way to make one)")
    if not USER.isdigit():
        try:
            pwd.getpwnam(USER)
        except KeyError:
            pytest.skip(f"no unprivileged user {USER!r} (.ci/run creates it)")
    return USER


@pytest.mark.timeout(960)  # the run below has 900 s of its own (pyproject's default is 600)
def test_sandbox_and_code_tests_pass_as_an_unprivileged_user() -> None:
    user = _user_or_skip()
    command = [
        sys.executable,
        str(Path(__file__).with_name("as_user.py")),
        user,
        "--",
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-x",
        "-p",
        "no:cacheprovider",
        "--durations=15",  # printed below with the tail: where the rerun's time goes
        "tests/verifiers/sandbox",
        *(f"{CODE_TESTS}/{name}" for name in MODE_DEPENDENT),
        *(f"--deselect={test}" for test in judge_only_pairs() + judge_only_tests()),
    ]
    # No mode is forced: not root, the sandbox must choose rootless by itself.
    env = {k: v for k, v in os.environ.items() if k != "REWARDSMITH_SANDBOX_MODE"}
    done = subprocess.run(
        command, cwd=REPO, env=env, capture_output=True, text=True, timeout=900, check=False
    )
    tail = (done.stdout + done.stderr)[-6000:]
    print(tail)
    assert done.returncode == 0, tail
    passed = re.search(r"(\d+) passed", done.stdout)
    assert passed and int(passed[1]) > 200, tail  # the suites ran, not just skipped
    # every test left to root's run still exists (a renamed class, format, row or test
    # fails here)
    assert f"{len(judge_only_pairs()) + len(judge_only_tests())} deselected" in done.stdout, tail
