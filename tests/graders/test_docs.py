"""The reward-design guide's code runs as written (docs/rewards.md)."""

from __future__ import annotations

import doctest
import importlib
import re
from pathlib import Path

import pytest

from rewardsmith.graders import Grader, verify, weighted

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "rewards.md"
BLOCK = re.compile(r"```python\n(.*?)```", re.DOTALL)


def test_guide_examples_run_in_order():
    # As tests/test_docs.py runs every page, but in this process: one namespace, in order.
    namespace: dict[str, object] = {}
    blocks = BLOCK.findall(GUIDE.read_text())
    assert len(blocks) >= 6
    for code in blocks:
        exec(compile(code, str(GUIDE), "exec"), namespace)
    # The guide's own asserts ran (ordering of rewards, YAML == Python, routing by task).
    assert isinstance(namespace["grader"], Grader) and len(namespace["rewards"]) == 3
    assert isinstance(namespace["mixed"], Grader) and len(namespace["routed"]) == 4


def test_a_verifier_leaf_takes_its_component_name():
    grader = Grader(weighted({"correct": verify("exact_match")}))
    assert list(grader.verifiers) == ["correct"]
    assert list(Grader(verify("exact_match")).verifiers) == ["exact_match"]


@pytest.mark.parametrize(
    "module",
    ["cache", "executor", "grader", "nodes", "reward", "schedule", "spec", "transforms"],
)
def test_docstring_examples_run(module):
    mod = importlib.import_module(f"rewardsmith.graders.{module}")
    result = doctest.testmod(mod)
    assert result.attempted > 0 and result.failed == 0
