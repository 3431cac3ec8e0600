"""Every language from where users run: the scoring process started through a symbolic link
to the venv, from a working directory outside both the checkout and the venv.

Compiled programs used to be looked up against the scoring process's working directory,
and pytest's imports against the venv's linked path that the jail did not show; both
gave sandbox errors (score None) instead of verdicts.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_stdio import SUM

from rewardsmith.verifiers.code import language

pytestmark = [pytest.mark.sandbox, pytest.mark.slow]

CASES = [{"input": "1 2\n", "output": "3\n"}, {"input": "40 2\n", "output": "42\n"}]
# test_stdio's right programs, and Go's.
RIGHT = {
    **SUM,
    "go": 'package main\nimport "fmt"\nfunc main() { var a, b int64; fmt.Scan(&a, &b); '
    "fmt.Println(a + b) }\n",
}
# Each made to multiply (1 2 -> 2, 40 2 -> 80: wrong on both cases).
WRONG = {
    lang: code.replace("a + b", "a * b")
    .replace("a+b", "a*b")
    .replace("v[0]+v[1]", "v[0]*v[1]")
    .replace("x+y", "x*y")
    .replace("d[0]+d[1]", "d[0]*d[1]")
    for lang, code in RIGHT.items()
}
PYTEST_REF = {
    "format": "pytest",
    "expected_tests": 2,
    "files": {
        "test_add.py": "import pytest\nfrom solution import add\n\n"
        "def test_small():\n    assert add(1, 2) == 3\n\n"
        "def test_zero():\n    assert add(0, 0) == 0\n"
    },
}

SCORER = """
import json, sys
from concurrent.futures import ThreadPoolExecutor
from rewardsmith.verifiers.code import CodeTests
from rewardsmith.verifiers.types import Sample
jobs = json.loads(sys.stdin.read())
verifier = CodeTests(wall_s=10.0, compile_wall_s=120.0)
def score(job):
    name, ref, code = job
    v = verifier(Sample(id=name, completion=code, reference=ref))
    return name, [v.status.value, v.score, v.feedback[:300], v.evidence.get("sandbox_mode")]
with ThreadPoolExecutor(2) as pool:
    out = dict(pool.map(score, jobs))
print(json.dumps({"prefix": sys.prefix, "verdicts": out}))
"""


def test_every_language_from_another_directory_through_a_linked_venv(tmp_path: Path) -> None:
    langs = [lang for lang in RIGHT if language(lang).available]
    missing = sorted(set(RIGHT) - set(langs))
    link, elsewhere = tmp_path / "venv-link", tmp_path / "my-project"
    link.symlink_to(sys.prefix)
    elsewhere.mkdir()
    jobs = []
    for lang in langs:
        ref = {"format": "stdio", "language": lang, "cases": CASES}
        jobs += [[f"{lang}/right", ref, RIGHT[lang]], [f"{lang}/wrong", ref, WRONG[lang]]]
    jobs += [
        ["pytest/right", PYTEST_REF, "def add(a, b):\n    return a + b\n"],
        ["pytest/wrong", PYTEST_REF, "def add(a, b):\n    return a - b\n"],
    ]
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    done = subprocess.run(
        [str(link / "bin" / "python"), "-c", SCORER],
        input=json.dumps(jobs),
        cwd=elsewhere,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report["prefix"] == str(link)  # the scorer really ran through the link
    for name, (status, score, feedback, mode) in report["verdicts"].items():
        if name.endswith("/right"):
            assert (status, score) == ("pass", 1.0), (name, feedback)
        else:
            assert status in ("fail", "partial") and score is not None and score < 1, (
                name,
                feedback,
            )
        assert mode is not None, name
    if missing:
        pytest.skip(f"no toolchain here for {', '.join(missing)} (the others passed)")


RELATIVE_SCORER = """
import json
from rewardsmith.verifiers.code import CodeTests
from rewardsmith.verifiers.sandbox import run
from rewardsmith.verifiers.types import Sample
ref = {"format": "stdio", "language": "python", "cases": %r}
v = CodeTests(wall_s=10.0)(Sample(id="s", completion=%r, reference=ref))
r = run(["python3", "-c", "print(6 * 7)"])
print(json.dumps([v.status.value, v.score, v.feedback[:300], r.stdout.decode(), r.stderr.decode()]))
"""


def test_python_through_an_interpreter_path_with_dot_dots(tmp_path: Path) -> None:
    # `../../.venv/bin/python -m rewardsmith ...` makes sys.executable a path through the
    # working directory's folders, which the jail does not show.
    cwd = tmp_path / "a" / "b"
    cwd.mkdir(parents=True)
    interpreter = os.path.relpath(sys.executable, cwd)
    assert ".." in interpreter
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    done = subprocess.run(
        [interpreter, "-c", RELATIVE_SCORER % (CASES, RIGHT["python"])],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    status, score, feedback, stdout, stderr = json.loads(done.stdout.strip().splitlines()[-1])
    assert (status, score) == ("pass", 1.0), feedback
    assert stdout == "42\n", stderr
