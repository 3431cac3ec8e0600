"""`--map` column mappings: parsing, nested paths, constants, defaults, and clear errors."""

from __future__ import annotations

import json

import pytest

from rewardsmith.datasets.columns import ColumnMap, ColumnProblem
from rewardsmith.datasets.mapping import MappingProblem, to_sample

ROW = {
    "input": "2+2?",
    "output": "4",
    "gts": "4",
    "reward_model": {"ground_truth": "4", "style": "rule"},
    "responses": ["first", "second"],
    "extra_info": json.dumps({"split": "test", "meta": {"level": 3}}),  # nested, as JSON text
    "a.b": "dotted column",
    "ability": None,
}


@pytest.mark.parametrize(
    ("entry", "field", "value"),
    [
        ("completion=output", "completion", "4"),
        ("reference=reward_model.ground_truth", "reference", "4"),
        ("completion=responses.1", "completion", "second"),
        ("completion=responses.-1", "completion", "second"),
        ("task=extra_info.split", "task", "test"),  # descends into JSON text
        ("task=extra_info.meta.level", "task", 3),
        ("task=a.b", "task", "dotted column"),  # a column whose name holds a dot
        ("task:=gsm8k", "task", "gsm8k"),
        ("task:=", "task", ""),
        ("reference:=a=b", "reference", "a=b"),
    ],
)
def test_each_source_form_resolves(entry: str, field: str, value: object) -> None:
    found, _ = ColumnMap.parse([entry]).resolve(ROW)
    assert found == {field: value}


def test_a_repeated_field_takes_the_first_present_source() -> None:
    columns = ColumnMap.parse(["task=ability", "task=data_source", "task:=math"])
    assert columns.resolve(ROW)[0] == {"task": "math"}  # ability is null, data_source absent
    assert columns.resolve({**ROW, "ability": "algebra"})[0] == {"task": "algebra"}
    assert columns.to_dict() == {"task": ["ability", "data_source", ":=math"]}


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ("completion", "FIELD=COLUMN"),
        ("=output", "FIELD=COLUMN"),
        ("answer=output", "'answer' is not a sample field"),
        ("meta=output", "'meta' is not a sample field"),
        ("completion=", "not a column path"),
        ("completion=a..b", "not a column path"),
        ("completion=.a", "not a column path"),
    ],
)
def test_bad_entries_say_how_to_write_them(entry: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        ColumnMap.parse([entry])


@pytest.mark.parametrize(
    "entry",
    ["completion=missing", "completion=responses.7", "completion=responses.x", "task=gts.deeper"],
)
def test_a_mapped_column_missing_from_a_row_names_it(entry: str) -> None:
    with pytest.raises(ColumnProblem) as info:
        ColumnMap.parse([entry]).resolve(ROW)
    assert info.value.column == entry.split("=", 1)[1]
    assert "it has: a.b, ability, extra_info, gts, input" in info.value.problem


def test_a_column_that_should_have_been_a_constant_says_so() -> None:
    with pytest.raises(MappingProblem, match=r"for a constant write --map task:=gsm8k"):
        to_sample(ROW, "f:1", columns=ColumnMap.parse(["completion=output", "task=gsm8k"]))


def test_mapping_the_completion_reads_the_rest_by_name() -> None:
    row = {"question": "2+2?", "prompt": "p", "output": "4", "gts": "4", "step": 3}
    columns = ColumnMap.parse(["completion=output", "reference=gts"])
    sample = to_sample(row, "f:1", columns=columns)
    assert (sample.prompt, sample.completion, sample.reference) == ("p", "4", "4")
    assert sample.meta == {"question": "2+2?", "step": 3}  # mapped columns are not repeated


def test_a_mapped_field_replaces_what_the_shape_gave() -> None:
    verl = {
        "data_source": "openai/gsm8k",
        "prompt": "q",
        "response": "72",
        "reward_model": {"ground_truth": "72"},
        "extra_info": {"index": 1, "level": "hard"},
    }
    sample = to_sample(verl, "f:1", columns=ColumnMap.parse(["task=extra_info.level"]))
    assert (sample.task, sample.reference, sample.completion) == ("hard", "72", "72")
    assert sample.id == "1"  # the shape still reads its columns (the id from extra_info)


@pytest.mark.parametrize(
    "text",
    ["{not json", "[" * 100_000 + "]" * 100_000, '{"a": ' * 50_000 + "1" + "}" * 50_000],
)
def test_json_text_that_does_not_decode_is_a_missing_column(text: str) -> None:
    with pytest.raises(ColumnProblem):
        ColumnMap.parse(["completion=extra.a"]).resolve({"extra": text})
