"""The examples in the math modules' docstrings run (they are the modules' documentation)."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "boxes", "budget", "cost", "endings", "exploits", "extract", "fast", "normalize",
    "parser", "spelling", "structure", "tails", "tokens", "unevaluated", "units", "verifier",
    "words",
]  # fmt: skip


@pytest.mark.parametrize("name", MODULES)
def test_module_examples_run(name: str) -> None:
    module = importlib.import_module(f"rewardsmith.verifiers.math.{name}")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.failed == 0
