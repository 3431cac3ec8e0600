"""The tool-call parser: every malformed call becomes an error the model reads, never a raise."""

from __future__ import annotations

import json

import pytest

from rewardsmith.environments.tools import MAX_CALLS_PER_TURN, Tool, parse_tool_calls


def lookup(key: str, limit: int = 3, exact: bool = False) -> str:
    """Look something up.

    Args:
        key: what to look up
        limit: how many results
        exact: match exactly
    """
    return f"{key}:{limit}:{exact}"


TOOLS = [Tool(lookup)]


def call(name: object = "lookup", **arguments: object) -> str:
    return "<tool_call>" + json.dumps({"name": name, "arguments": arguments}) + "</tool_call>"


def test_schema_comes_from_the_typed_function() -> None:
    params = TOOLS[0].schema["function"]["parameters"]
    assert params["required"] == ["key"]
    assert params["properties"]["limit"]["type"] == "integer"
    assert TOOLS[0].schema["function"]["description"] == "Look something up."


def test_a_good_call_parses() -> None:
    (parsed,) = parse_tool_calls(call(key="x", limit=2), TOOLS)
    assert (parsed.name, dict(parsed.arguments), parsed.error) == (
        "lookup",
        {"key": "x", "limit": 2},
        "",
    )


def test_arguments_as_a_json_string_parse() -> None:
    text = '<tool_call>{"name": "lookup", "arguments": "{\\"key\\": \\"y\\"}"}</tool_call>'
    assert parse_tool_calls(text, TOOLS)[0].arguments == {"key": "y"}


MALFORMED = [
    ("<tool_call>{not json}</tool_call>", "not valid JSON"),
    ("<tool_call></tool_call>", "not valid JSON"),
    ("<tool_call>[1, 2]</tool_call>", '{"name": ...'),
    ('<tool_call>{"arguments": {}}</tool_call>', '{"name": ...'),
    ('<tool_call>{"name": 7}</tool_call>', '{"name": ...'),
    (call("nope", key="x"), "unknown tool 'nope'"),
    (call("", key="x"), "unknown tool ''"),
    (call("LOOKUP", key="x"), "unknown tool"),
    (call(), "missing argument 'key'"),
    (call(key=3), "argument 'key' must be string"),
    (call(key="x", limit="3"), "argument 'limit' must be integer"),
    (call(key="x", limit=True), "argument 'limit' must be integer"),
    (call(key="x", limit=2.5), "argument 'limit' must be integer"),
    (call(key="x", exact="yes"), "argument 'exact' must be boolean"),
    (call(key="x", other=1), "unknown argument 'other'"),
    ('<tool_call>{"name": "lookup", "arguments": [1]}</tool_call>', "must be a JSON object"),
    (
        '<tool_call>{"name": "lookup", "arguments": "{bad"}</tool_call>',
        "arguments are not valid JSON",
    ),
    ("<tool_call>" + "[" * 100_000 + "</tool_call>", "not valid JSON"),
    ('<tool_call>{"name": "lookup", "arguments": {"key": "x"}', ""),  # unclosed: still read
]


@pytest.mark.parametrize(("text", "error"), MALFORMED)
def test_malformed_calls_are_errors_not_raises(text: str, error: str) -> None:
    (parsed,) = parse_tool_calls(text, TOOLS)
    assert error in parsed.error
    if error:
        assert parsed.arguments == {}


def test_calls_past_the_limit_are_refused() -> None:
    parsed = parse_tool_calls(call(key="x") * (MAX_CALLS_PER_TURN + 3), TOOLS)
    assert len(parsed) == MAX_CALLS_PER_TURN + 1
    assert "at most" in parsed[-1].error


def test_tools_pickle_by_function() -> None:
    import pickle

    from rewardsmith.environments.math_tool import MathWithPython

    tool = MathWithPython.tools[0]
    assert pickle.loads(pickle.dumps(tool)).schema == tool.schema
