"""Environments are shared by a test module: their Scorers start once."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from rewardsmith.environments import CodeRepair, MathWithPython, RetryArithmetic

DATA = Path(__file__).resolve().parents[2] / "datasets" / "environments"


def tasks(name: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (DATA / name).read_text().splitlines() if line]


@pytest.fixture(scope="module")
def math_env() -> Iterator[MathWithPython]:
    env = MathWithPython()
    yield env
    env.close()


@pytest.fixture(scope="module")
def repair_env() -> Iterator[CodeRepair]:
    env = CodeRepair()
    yield env
    env.close()


@pytest.fixture(scope="module")
def retry_env() -> Iterator[RetryArithmetic]:
    env = RetryArithmetic()
    yield env
    env.close()
