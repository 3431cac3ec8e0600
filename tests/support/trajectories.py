"""A multi-turn tool-calling episode in the chat-messages shape transformers' chat
templates take, for the dump and report tests."""

from __future__ import annotations

from typing import Any

__all__ = ["get_current_temperature", "weather_episode"]


def get_current_temperature(location: str, unit: str) -> float:
    """
    Get the current temperature at a location.

    Args:
        location: The location, as "City, Country"
        unit: "celsius" or "fahrenheit"
    """
    return 22.0


def weather_episode(
    location: str = "Paris, France",
    result: str = "22.0",
    answer: str = "It is 22 °C in Paris.",
) -> list[dict[str, Any]]:
    """System, user, then the completion: a tool call (arguments as an object, content
    null), its result, a second call (arguments as JSON text, no id) that fails, the
    answer."""
    first_call = {
        "type": "function",
        "id": "call_1",
        "function": {
            "name": "get_current_temperature",
            "arguments": {"location": location, "unit": "celsius"},
        },
    }
    second_call = {
        "type": "function",
        "function": {"name": "get_current_temperature", "arguments": '{"location": "x"}'},
    }
    return [
        {"role": "system", "content": "You are a weather bot."},
        {"role": "user", "content": "How warm is it in Paris?"},
        {"role": "assistant", "content": None, "tool_calls": [first_call]},
        {"role": "tool", "name": "get_current_temperature", "tool_call_id": "call_1",
         "content": result},
        {"role": "assistant", "tool_calls": [second_call]},
        {"role": "tool", "name": "get_current_temperature", "content": "error: unknown place"},
        {"role": "assistant", "content": answer},
    ]  # fmt: skip
