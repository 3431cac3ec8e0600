"""Lets the tests here import their shared cases (`code_cases`) under importlib mode."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from code_cases import FAST

from rewardsmith.verifiers.code import CodeTests


@pytest.fixture(scope="session")
def fast() -> CodeTests:
    return FAST
