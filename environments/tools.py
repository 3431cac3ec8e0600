"""Tools in the transformers chat-template convention, and a parser for the model's calls.

A tool is a typed Python function with a Google-style docstring; its JSON schema comes
from `transformers.utils.get_json_schema`, which is what `apply_chat_template(tools=...)`
takes, so a chat model sees the tools in its own template. A model calls a tool the way
Hermes/Qwen-style templates teach it:

    <tool_call>
    {"name": "python", "arguments": {"code": "print(6 * 7)"}}
    </tool_call>

Everything in an action is hostile. `parse_tool_calls` never raises: a call whose JSON
does not parse, whose name is unknown or whose arguments do not fit the schema comes back
as a `ToolCall` with `error` set, which the environment answers as an observation.

    >>> def add(a: int, b: int) -> int:
    ...     '''Add two integers.
    ...
    ...     Args:
    ...         a: the first
    ...         b: the second
    ...     '''
    ...     return a + b
    >>> tool = Tool(add)
    >>> [c.error or c.arguments for c in parse_tool_calls(
    ...     '<tool_call>{"name": "add", "arguments": {"a": 1, "b": "x"}}</tool_call>', [tool])]
    ["tool 'add': argument 'b' must be integer, got str"]
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["MAX_CALLS_PER_TURN", "Tool", "ToolCall", "has_tool_call", "parse_tool_calls"]

MAX_CALLS_PER_TURN = 4
"""Calls past this many in one action are answered with an error, not run."""

_CALL = re.compile(r"<tool_call>(.*?)(?:</tool_call>|\Z)", re.DOTALL)
_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "array": (list,),
    "object": (dict,),
}


class Tool:
    """A typed function offered to the model; `schema` is its transformers JSON schema."""

    def __init__(self, function: Callable[..., Any], name: str | None = None) -> None:
        self.function = function
        self.name: str = name if name is not None else function.__name__

    @functools.cached_property
    def schema(self) -> dict[str, Any]:
        # Built on first use: transformers (and with it torch) is imported only by what
        # renders or checks tool calls, not by every process that imports an environment
        # module (the reward server, its workers).
        from transformers.utils import get_json_schema

        schema: dict[str, Any] = get_json_schema(self.function)
        schema["function"]["name"] = self.name
        return schema

    @property
    def parameters(self) -> Mapping[str, Any]:
        return self.schema["function"].get("parameters", {})

    def check(self, arguments: Any) -> str:
        """Why these arguments do not fit the schema ('' when they do)."""
        if not isinstance(arguments, dict):
            return f"tool {self.name!r}: arguments must be a JSON object"
        properties = self.parameters.get("properties", {})
        unknown = sorted(set(arguments) - set(properties))
        if unknown:
            return f"tool {self.name!r}: unknown argument {unknown[0]!r}"
        missing = [n for n in self.parameters.get("required", []) if n not in arguments]
        if missing:
            return f"tool {self.name!r}: missing argument {missing[0]!r}"
        for key, value in arguments.items():
            wanted = properties[key].get("type")
            if isinstance(wanted, str) and not _fits(value, wanted):
                return (
                    f"tool {self.name!r}: argument {key!r} must be {wanted}, "
                    f"got {type(value).__name__}"
                )
        return ""

    def __reduce__(self) -> tuple[Any, ...]:
        return (Tool, (self.function, self.name))


def _fits(value: Any, json_type: str) -> bool:
    if isinstance(value, bool) and json_type in ("integer", "number"):
        return False  # JSON true is not a number, although Python's bool is an int
    return isinstance(value, _JSON_TYPES.get(json_type, (object,)))


@dataclass(frozen=True)
class ToolCall:
    """One parsed call. `error` set: it will not run, and the error is the observation."""

    name: str
    arguments: Mapping[str, Any] = field(default_factory=dict)
    error: str = ""

    def as_message(self) -> dict[str, Any]:
        """The transformers assistant-message form of this call."""
        return {"type": "function", "function": {"name": self.name, "arguments": self.arguments}}


def has_tool_call(action: str) -> bool:
    return "<tool_call>" in action


def parse_tool_calls(action: str, tools: Sequence[Tool]) -> list[ToolCall]:
    """Every ``<tool_call>`` block of `action`, checked against `tools`; never raises."""
    by_name = {t.name: t for t in tools}
    calls = []
    for index, match in enumerate(_CALL.finditer(action)):
        if index >= MAX_CALLS_PER_TURN:
            calls.append(ToolCall("", error=f"at most {MAX_CALLS_PER_TURN} tool calls per turn"))
            break
        calls.append(_parse_one(match.group(1).strip(), by_name))
    return calls


def _parse_one(body: str, tools: Mapping[str, Tool]) -> ToolCall:
    try:
        data = json.loads(body)
    except (ValueError, RecursionError) as exc:
        return ToolCall("", error=f"tool call is not valid JSON ({type(exc).__name__}: {exc})")
    if not isinstance(data, dict) or not isinstance(data.get("name"), str):
        return ToolCall("", error='a tool call is {"name": ..., "arguments": {...}}')
    name = data["name"][:100]
    tool = tools.get(name)
    if tool is None:
        known = ", ".join(sorted(tools)) or "none"
        return ToolCall(name, error=f"unknown tool {name!r}; the tools are: {known}")
    arguments = data.get("arguments", {})
    if isinstance(arguments, str):  # some templates send arguments as a JSON string
        try:
            arguments = json.loads(arguments)
        except (ValueError, RecursionError):
            return ToolCall(name, error=f"tool {name!r}: arguments are not valid JSON")
    problem = tool.check(arguments)
    return ToolCall(name, arguments if not problem else {}, problem)
