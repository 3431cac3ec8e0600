"""What a warm worker imports: only what its jobs need.

A pool worker used to re-import the caller's main module in full; for ``rewardsmith serve``
that was the whole CLI (torch, transformers, every environment): 182 MiB per worker. Now a
worker skips the main module when nothing defined there can reach it, and the CLI imports
no learned-model stack. Both directions are tested: a verifier defined in a main script
still reaches its worker.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import types
from pathlib import Path

import pytest

from rewardsmith.verifiers.warm.process import SKIP_MAIN_FLAG, defines_nothing_to_send
from tests.support.import_probe import HEAVY

REPO = Path(__file__).resolve().parents[2]

HEADER = """
import json
from rewardsmith.graders import Executor, Job
from rewardsmith.verifiers.registry import create
from rewardsmith.verifiers.types import Sample
from tests.support.import_probe import ImportProbe
"""
RUN = """
if __name__ == "__main__":
    tests = {"format": "asserts", "asserts": ["assert sq(3) == 9"]}
    jobs = [
        Job(create("math"), Sample(id="m", task="math", completion=r"\\boxed{4}", reference="4")),
        Job(create("code_tests"), Sample(id="c", task="code",
            completion="def sq(x):\\n    return x * x", reference=tests)),
        *EXTRA,
        Job(ImportProbe(), Sample(id="p", completion="x")),
    ]
    with Executor("pool", workers=1, cache=False) as executor:
        verdicts = executor.run(jobs)
    print(json.dumps([[v.name, v.status.value, v.evidence.get("heavy"),
                       v.evidence.get("main_imported")] for v in verdicts]))
"""
NOTHING_DEFINED = HEADER + "EXTRA = []\n" + RUN
DEFINES_A_VERIFIER = (
    HEADER
    + """
from typing import ClassVar
from rewardsmith.verifiers.types import Verdict


class Local:
    name: ClassVar[str] = "local"
    version: ClassVar[str] = "1"

    def __call__(self, sample):
        return Verdict.passed(self.name, self.version)


EXTRA = [Job(Local(), Sample(id="l", completion="x"))]
"""
    + RUN
)


def _run_script(tmp_path: Path, text: str) -> list[list[object]]:
    script = tmp_path / "main_script.py"
    script.write_text(text)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, str(script)], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.mark.slow
def test_a_math_and_code_worker_imports_no_other_stack(tmp_path):
    rows = _run_script(tmp_path, NOTHING_DEFINED)
    by_name = {row[0]: row for row in rows}
    assert by_name["math"][1] == "pass"
    probe = by_name["import_probe"]
    assert probe[2] == [], f"the worker imported {probe[2]}"
    assert probe[3] is False  # the main script defines nothing: not imported in the worker


@pytest.mark.slow
def test_a_verifier_defined_in_the_main_script_still_reaches_its_worker(tmp_path):
    rows = _run_script(tmp_path, DEFINES_A_VERIFIER)
    by_name = {row[0]: row for row in rows}
    assert by_name["local"][1] == "pass"
    assert by_name["import_probe"][3] is True  # imported, as multiprocessing's spawn does
    assert by_name["math"][1] == "pass"


def test_the_cli_imports_no_learned_model_stack():
    probe = (
        "import sys, json, rewardsmith.cli.main\n"
        "from tests.support.import_probe import heavy_loaded\n"
        "print(json.dumps(heavy_loaded()))"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr[-2000:]
    loaded = set(json.loads(done.stdout))
    assert not loaded & {"torch", "transformers", "numpy", "sympy", "trimesh"}, loaded
    assert "rewardsmith.cli" in loaded and "rewardsmith.cli" in HEAVY  # the probe sees it


def _module(**names: object) -> types.ModuleType:
    module = types.ModuleType("__main__")
    vars(module).update(names)
    return module


def _defined_in_main() -> None:
    pass


_defined_in_main.__module__ = "__main__"


class _MainClass:
    pass


_MainClass.__module__ = "__main__"


@pytest.mark.parametrize(
    ("names", "skip"),
    [
        ({}, True),
        ({"json": json, "app": object(), "run": subprocess.run}, True),  # a console script
        ({"x": 3, "text": "a", "table": {"a": 1}}, True),
        ({SKIP_MAIN_FLAG: True, "main": _defined_in_main}, True),  # says so itself
        ({"main": _defined_in_main}, False),
        ({"Verifier": _MainClass}, False),
        ({"instance": _MainClass()}, False),  # pickled by its class, defined there
        ({SKIP_MAIN_FLAG: "yes", "main": _defined_in_main}, False),  # only True counts
    ],
)
def test_which_main_modules_workers_skip(names, skip):
    assert defines_nothing_to_send(_module(**names)) is skip


def test_rewardsmiths_cli_says_its_workers_need_not_import_it():
    import rewardsmith.cli.main as cli

    assert defines_nothing_to_send(cli)
