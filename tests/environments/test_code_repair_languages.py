"""`code_repair` in C, C++, Rust, Go, Java and JavaScript: every attempt is built with the
task's trusted harness and tested by `run_attempt` in the sandbox; the feedback comes from
the visible cases, the reward from the hidden ones, and no hostile policy earns anything.

Builds cost seconds in C++, Rust and Java on a small machine: their table tests are
marked ``slow``; `run_attempt` remembers builds and attempts per process, so the exploit
table, the expert and the lazy policy of one language share them.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import os
import string
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest

from rewardsmith.environments import CodeRepair
from rewardsmith.environments.code_repair import CODE_REPAIR_TASKS
from rewardsmith.environments.episode_exploits import play
from rewardsmith.environments.repair_policies import expert_actions, hook, lazy_actions
from rewardsmith.verifiers.code import language as code_language
from rewardsmith.verifiers.diagnostics.attempts import RepairTask
from tests.environments.conftest import DATA, tasks

pytestmark = pytest.mark.sandbox

COMPILED = [t for t in tasks("code_repair.jsonl") if "language" in t]
BY_ID = {t["id"]: t for t in COMPILED}
LANGUAGES = sorted({t["language"] for t in COMPILED})
SLOW = {"cpp", "rust", "java"}
"""Languages whose builds cost seconds here: their table tests are marked slow."""


def _of(language: str) -> list[dict[str, Any]]:
    return [t for t in COMPILED if t["language"] == language]


def _needs(language: str) -> None:
    if not code_language(language).available:
        pytest.skip(f"no {code_language(language).tool} here: install it to test {language}")


def _each_language() -> list[Any]:
    return [
        pytest.param(lang, marks=[pytest.mark.slow] if lang in SLOW else []) for lang in LANGUAGES
    ]


def _generator() -> Any:
    path = DATA / "repair_programs.py"
    spec = importlib.util.spec_from_file_location("repair_programs", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# ---------------------------------------------------------------------- the tasks


def test_every_language_has_bundled_tasks_and_the_file_is_generated() -> None:
    assert LANGUAGES == ["c", "cpp", "go", "java", "javascript", "rust"]
    assert all(len(_of(lang)) >= 2 for lang in LANGUAGES)
    generator = _generator()
    made = [generator.compiled_task(spec, model) for spec, model in generator.TASKS]
    assert made == COMPILED  # the file is what the script writes
    for task in COMPILED:
        assert task["solution"] not in json.dumps(task["reference"])
        assert len(task["visible"]["cases"]) >= 2 and len(task["reference"]["cases"]) >= 3


def test_no_hidden_output_can_be_printed_from_what_the_feedback_shows() -> None:
    """A hidden output equal to a visible one (or to all of them printed together) would
    pay a program that prints what it was shown: found by the audit, a data rule now."""
    guessable = _generator().guessable
    for task in COMPILED:
        assert not guessable(task["visible"]["cases"], task["reference"]["cases"]), task["id"]


@pytest.mark.parametrize("language", _each_language())
def test_the_expert_earns_everything_and_the_given_program_nothing(
    repair_env: CodeRepair, language: str
) -> None:
    _needs(language)
    built = set()
    for task in _of(language):
        state, prompt = repair_env.reset(task)
        given = state.attempts[0]
        assert not state.done and "hidden tests:" in prompt, prompt
        assert "all visible tests pass" not in given["observation"], task["id"]
        # node reads the file only when it runs: a syntax error is in a run's log
        built.add("tests" in given["meta"] and "SyntaxError" not in given["observation"])
        assert play(repair_env, task, expert_actions(task)) == 1.0, task["id"]
        assert play(repair_env, task, lazy_actions(task) * 4) == 0.0, task["id"]
    assert built == {True, False}  # one task does not compile, one does and fails its tests


# ---------------------------------------------------------------------- exploits


@pytest.mark.parametrize("language", _each_language())
def test_every_exploit_class_earns_no_more_than_its_limit(
    repair_env: CodeRepair, language: str
) -> None:
    _needs(language)
    worst: dict[str, float] = defaultdict(float)
    for exploit in repair_env.exploits(_of(language)):
        earned = play(repair_env, exploit.task, exploit.actions)
        worst[exploit.name] = max(worst[exploit.name], earned)
        assert earned <= exploit.limit, (exploit.name, exploit.task["id"], earned)
    expected = {"given_unchanged", "delete_code", "answer_split_across_turns", "early_exit",
                "print_visible_outputs", "fake_pass_lines", "exit_in_function"}  # fmt: skip
    assert expected <= set(worst), sorted(worst)


@pytest.mark.parametrize("language", ["c", "cpp", "rust", "go", "javascript"])
def test_the_lookup_hook_is_real_it_passes_every_visible_case(
    repair_env: CodeRepair, language: str
) -> None:
    """The lookup exploit earns nothing because the reward is hidden, not because its
    hook is broken: it passes all the feedback shows."""
    _needs(language)
    task = _of(language)[0]
    table = {c["input"]: c["output"] for c in task["visible"]["cases"]}
    program = hook(language, task["solution"], table)
    assert program is not None
    state, _ = repair_env.reset(task)
    seen = repair_env.step(state, program)
    assert "all visible tests pass" in (seen.observation or ""), seen.observation
    assert "hidden tests: 0/" in (seen.observation or "")
    assert repair_env.truncate(seen.state, "policy_stopped").reward.value == 0.0


# ---------------------------------------------------------------------- hostile programs

_C_HOOK = "#include <stdio.h>\n#include <stdlib.h>\n#include <unistd.h>\n"
_ECHO_C = _C_HOOK + (
    "__attribute__((constructor)) static void echo(void) {\n"
    "    char buf[4096]; long n;\n"
    "    while ((n = read(0, buf, sizeof buf)) > 0) if (write(2, buf, n) < 0) break;\n"
    "    _exit(1);\n}\n"
)
_ECHO_JS = "process.stderr.write(require('fs').readFileSync(0, 'utf8'));\nprocess.exit(1);\n"


@pytest.mark.parametrize("language", ["c", "javascript"])
def test_hidden_inputs_and_expected_values_never_reach_an_observation(
    repair_env: CodeRepair, language: str
) -> None:
    """A program that copies its stdin to stderr and fails: the visible inputs come back
    (their feedback is the point), the hidden ones never do."""
    _needs(language)
    echo = _ECHO_C if language == "c" else _ECHO_JS
    for task in _of(language):
        hidden = task["reference"]["cases"]
        secrets = [s.strip() for c in hidden for s in (c["input"], c["output"])]
        secrets = [s for s in secrets if len(s) > 3]  # "22" is in any log
        state, prompt = repair_env.reset(task)
        seen = repair_env.step(state, echo + task["solution"])
        observation = seen.observation or ""
        assert task["visible"]["cases"][0]["input"].strip() in observation, observation
        for text in (prompt, observation):
            leaked = [s for s in secrets if s in text]
            assert not leaked, (task["id"], leaked, text)


TASK_FILES = [str(CODE_REPAIR_TASKS), "../code_repair.jsonl", "code_repair.jsonl"]
_READ_FILES = _C_HOOK + (
    "__attribute__((constructor)) static void peek(void) {\n"
    f"    const char *paths[] = {{{', '.join(json.dumps(p) for p in TASK_FILES)}, "
    '"/proc/1/environ", "main.c"};\n'
    "    for (unsigned i = 0; i < sizeof paths / sizeof *paths; i++) {\n"
    '        FILE *f = fopen(paths[i], "r");\n'
    '        fprintf(stderr, "%s %s\\n", f ? "READ" : "CLOSED", paths[i]);\n'
    "        if (f) { char line[256]; if (fgets(line, sizeof line, f)) fputs(line, stderr); }\n"
    "    }\n    _exit(3);\n}\n"
)
HOSTILE = {
    "hang": (_C_HOOK + "__attribute__((constructor)) static void h(void) { for (;;) {} }\n",
             "time limit"),
    "huge_output": (_C_HOOK + "__attribute__((constructor)) static void h(void) {\n"
                    "    for (;;) fputs(\"yyyyyyyyyyyyyyyyyyyyyyyyyyyyyyy\\n\", stdout);\n}\n",
                    "visible test 1: "),
    "fork_bomb": (_C_HOOK + "__attribute__((constructor)) static void h(void) {\n"
                  "    for (;;) fork();\n}\n", "visible test 1: "),
    "memory": (_C_HOOK + "__attribute__((constructor)) static void h(void) {\n"
               "    for (;;) { char *p = malloc(1 << 24); if (p) for (int i = 0; i < 1 << 24;"
               " i += 4096) p[i] = 1; }\n}\n", "visible test 1: "),
    "abort": (_C_HOOK + "__attribute__((constructor)) static void h(void) { abort(); }\n",
              "SIGABRT"),
    "reads_task_files": (_READ_FILES, "exited with code 3"),
    "no_compile": ("int digit_sum(long n) { return n +; }\n", "build failed"),
}  # fmt: skip


SLOW_HOSTILE = {"hang", "fork_bomb"}
"""Every case runs to its limit (RLIMIT_CPU, which does not stop the cases after it as a
wall-time hang does): at the task's 5 s, 30 s an attempt; at SHORT_CASES', 6 s."""
SHORT_CASES = 1.0
"""Seconds of wall and CPU time per case for the SLOW_HOSTILE programs here: the same
kill at a fifth of the size (no case of theirs can pass at any limit). The real limit is
pinned by `test_a_case_has_the_documented_limit`."""


@pytest.fixture
def short_cases(monkeypatch: pytest.MonkeyPatch) -> list[RepairTask]:
    """Repair tasks parsed while it is active run each case under SHORT_CASES; the list
    records them, so a test can show the patch took effect."""
    parse = RepairTask.parse
    parsed: list[RepairTask] = []

    def shortened(cls: type[RepairTask], reference: Any) -> RepairTask:
        task = parse(reference)
        limits = task.run_limits.replace(wall_s=SHORT_CASES, cpu_s=SHORT_CASES)
        parsed.append(dataclasses.replace(task, run_limits=limits))
        return parsed[-1]

    monkeypatch.setattr(RepairTask, "parse", classmethod(shortened))
    return parsed


def test_a_case_has_the_documented_limit() -> None:
    """What a real case gets (docs/gaming.md: "a hanging program costs one case's 5 s
    limit per run"); SHORT_CASES is only for the SLOW_HOSTILE programs above."""
    limits = RepairTask.parse(BY_ID["c-digit-sum"]["reference"]).run_limits
    assert (limits.wall_s, limits.cpu_s) == (5.0, 5.0) and SHORT_CASES < 5.0
    page = (Path(__file__).resolve().parents[2] / "docs" / "gaming.md").read_text("utf-8")
    assert "A hanging program costs one case's 5 s limit per run" in page


@pytest.mark.parametrize(
    "kind",
    [
        pytest.param(k, marks=[pytest.mark.slow] if k in SLOW_HOSTILE else [])
        for k in sorted(HOSTILE)
    ],
)
def test_a_hostile_program_gets_an_observation_saying_what_happened(
    repair_env: CodeRepair, kind: str, request: pytest.FixtureRequest
) -> None:
    _needs("c")
    task = BY_ID["c-digit-sum"]
    program, said = HOSTILE[kind]
    if kind != "no_compile":
        program += task["solution"]
    state, _ = repair_env.reset(task)  # the given program, under the task's own limits
    shortened = request.getfixturevalue("short_cases") if kind in SLOW_HOSTILE else []
    seen = repair_env.step(state, program)
    assert len(shortened) == (2 if kind in SLOW_HOSTILE else 0)  # its hidden and visible runs
    assert not seen.done and seen.observation and said in seen.observation, seen.observation
    assert repair_env.truncate(seen.state, "policy_stopped").reward.value == 0.0
    if kind == "reads_task_files":
        for path in TASK_FILES:
            assert f"CLOSED {path}" in seen.observation, seen.observation
        assert '"cases"' not in seen.observation


_NO_SANDBOX = """
import json, sys
from rewardsmith.environments import CodeRepair
task = json.loads(sys.argv[1])
state, prompt = CodeRepair().reset(task)
print(json.dumps([state.done, state.end, prompt]))
"""


def test_a_sandbox_that_cannot_start_ends_the_episode_as_environment_error() -> None:
    env = {**os.environ, "REWARDSMITH_SANDBOX_MODE": "no-such-mode"}
    task = json.dumps(BY_ID["c-digit-sum"])
    done = subprocess.run(
        [sys.executable, "-c", _NO_SANDBOX, task],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    ended, end, prompt = json.loads(done.stdout.strip().splitlines()[-1])
    assert ended and end.startswith("environment_error") and "no-such-mode" in end
    assert "no-such-mode" not in prompt and "Test results" not in prompt


# ---------------------------------------------------------------------- the command


def test_a_dump_of_harness_episodes_scores_to_their_reward_with_the_cli(tmp_path: Path) -> None:
    """`env run`'s rows (a scripted policy here), scored by `rewardsmith score` with the
    spec `env spec code_repair` prints: the same final rewards."""
    from rewardsmith.trainer.tiny import build_tokenizer
    from tests.environments.test_cli import score_with_cli, scripted_rows

    _needs("c")
    _needs("javascript")
    js, c = BY_ID["js-camel"], BY_ID["c-digit-sum"]
    wrong = "```javascript\nfunction toCamel(s) { return s; }\nmodule.exports = { toCamel };\n```"
    scripts = {"`toCamel`": [wrong, expert_actions(js)[0]], "`digit_sum`": lazy_actions(c)}
    tokenizer = build_tokenizer(string.printable)
    rows = scripted_rows(
        "code_repair", [js, c], scripts, tokenizer, turn_tokens=600, max_new_tokens=6000
    )
    assert [r["final_reward"] for r in rows] == [1.0, 0.0], [r["reason"] for r in rows]
    assert rows[0]["turn_rewards"] == [None, 1.0] and rows[0]["task"] == "code_harness"
    scored = score_with_cli(rows, "code_repair", tmp_path)
    assert [s["rewardsmith"]["value"] for s in scored] == pytest.approx([1.0, 0.0])


def test_audit_env_plays_the_classes_of_the_bundled_tasks() -> None:
    """`--limit 2` takes the first two bundled tasks (Python: cheap); the table tests
    above play every language."""
    from typer.testing import CliRunner

    from rewardsmith.cli.main import app

    audited = CliRunner().invoke(app, ["audit", "--env", "code_repair", "--limit", "2"])
    assert audited.exit_code == 0, audited.output
    for name in ("given_unchanged", "lookup_visible", "read_task_files", "fake_pass_lines"):
        assert name in audited.output, audited.output
