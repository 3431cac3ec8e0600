"""The examples in the environments' docstrings run and say what they show."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = [
    "rewardsmith.environments.protocol",
    "rewardsmith.environments.tools",
    "rewardsmith.environments.arithmetic",
    "rewardsmith.environments.math_tool",
    "rewardsmith.environments.code_repair",
    "rewardsmith.environments.repair_policies",
    "rewardsmith.environments.episode_relations",
    "rewardsmith.environments.policies",
    "rewardsmith.trainer.turns",
]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name: str) -> None:
    module = importlib.import_module(name)
    failed, attempted = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert attempted > 0 and failed == 0


def test_the_public_names_import() -> None:
    import rewardsmith.environments as environments

    for name in environments.__all__:
        assert getattr(environments, name) is not None
