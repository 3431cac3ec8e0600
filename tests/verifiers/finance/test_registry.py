"""The finance verifiers are registered by name, satisfy the protocol, and pickle."""

from __future__ import annotations

import pickle

import pytest

from rewardsmith.verifiers import finance
from rewardsmith.verifiers.protocol import Verifier
from rewardsmith.verifiers.registry import create

NAMES = [
    "chart_claims",
    "consistency",
    "cross_document",
    "grounding",
    "numeric_answer",
    "table_match",
]


@pytest.mark.parametrize("name", NAMES)
def test_created_by_name_and_pickles(name: str) -> None:
    verifier = create(name)
    assert isinstance(verifier, Verifier) and verifier.name == name
    assert pickle.loads(pickle.dumps(verifier)) == verifier


def test_public_surface_is_pinned() -> None:
    assert finance.__all__ == [
        "ChartClaims",
        "Consistency",
        "CrossDocument",
        "ExtractionLimits",
        "Grounding",
        "NumericAnswer",
        "TableMatch",
        "TolerancePolicy",
    ]
