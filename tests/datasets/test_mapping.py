"""Row shapes of TRL, veRL, OpenRLHF and chat logs map onto Sample."""

from __future__ import annotations

import pytest

from rewardsmith.datasets.mapping import MappingProblem, detect_mapping, to_sample

CASES = [
    (
        "trl",
        {"prompt": "2+2?", "completion": "4", "solution": "4", "difficulty": "easy"},
        {"completion_text": "4", "reference": "4", "meta": {"difficulty": "easy"}},
    ),
    (
        "native",  # TRL's conversational rows are also native rows
        {
            "prompt": [{"role": "user", "content": "hi"}],
            "completion": [{"role": "assistant", "content": "hello"}],
        },
        {"completion_text": "hello", "reference": None},
    ),
    (
        "verl",
        {
            "data_source": "openai/gsm8k",
            "prompt": [{"role": "user", "content": "q"}],
            "ability": "math",
            "reward_model": {"style": "rule", "ground_truth": "72"},
            "extra_info": {"split": "train", "index": 3},
            "responses": ["... #### 72"],
        },
        {"completion_text": "... #### 72", "reference": "72", "task": "openai/gsm8k", "id": "3"},
    ),
    (
        "openrlhf",
        {"query": "Q: 2+2? A: 4", "prompts": "Q: 2+2? A:", "labels": "4"},
        {"completion_text": " 4", "reference": "4"},
    ),
    (
        "chat",
        {
            "messages": [
                {"role": "system", "content": "be brief"},
                {"role": "user", "content": "capital of France?"},
                {"role": "assistant", "content": "Paris"},
            ],
            "answer": "Paris",
        },
        {"completion_text": "Paris", "reference": "Paris"},
    ),
    ("native", {"id": "n1", "completion": "x", "task": "t"}, {"task": "t", "id": "n1"}),
]


@pytest.mark.parametrize(("shape", "record", "expected"), CASES)
def test_each_shape_is_detected_and_mapped(shape: str, record: dict, expected: dict) -> None:
    assert detect_mapping(record) == shape
    sample = to_sample(record, default_id="f:1")
    for key, value in expected.items():
        assert getattr(sample, key) == value, key


@pytest.mark.parametrize(
    ("record", "field"),
    [
        ({"data_source": "x", "reward_model": {"ground_truth": "1"}}, "response"),
        ({"data_source": "x", "response": "r", "reward_model": "1"}, "reward_model"),
        ({"prompts": "p", "labels": "l"}, "query"),
        ({"messages": [{"role": "user", "content": "q"}]}, "messages"),
        ({"messages": "hello"}, "messages"),
    ],
)
def test_shape_problems_name_the_field(record: dict, field: str) -> None:
    with pytest.raises(MappingProblem) as info:
        to_sample(record, default_id="f:1")
    assert info.value.field == field


def test_explicit_mapping_overrides_detection() -> None:
    sample = to_sample({"prompt": "p", "completion": "c", "reference": "r"}, "f:1", mapping="trl")
    assert sample.reference == "r"
    with pytest.raises(MappingProblem, match="unknown shape"):
        to_sample({"completion": "c"}, "f:1", mapping="nonsense")
