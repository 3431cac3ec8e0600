"""HTML for the report and diff pages: escaped by default, no script, turn-by-turn samples.

Everything put on a page goes through `escape` unless it is `Html` built here, so text a
model wrote (completions, tool calls, evidence, feedback, ids, task names) can only ever
be text. The page also forbids scripts, frames, forms and any load from elsewhere with a
Content-Security-Policy, so a mistake in escaping would still run nothing. Every block
that can hold such text has its direction isolated (``unicode-bidi: isolate``), so
right-to-left override characters in it cannot reorder the labels around it.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterable, Sequence
from typing import Any

from rewardsmith.verifiers.types import Message, Sample, Step

__all__ = ["Html", "conversation", "escape", "model_text", "page", "table"]

TEXT_LIMIT = 4000
"""Characters of one text block shown (the rest is counted, not shown)."""
TURN_LIMIT = 40
"""Turns of one conversation shown."""
_ROLES = frozenset({"system", "user", "assistant", "tool"})


class Html(str):
    """Markup built by this module: put on the page as it is."""


def escape(value: Any) -> Html:
    return value if isinstance(value, Html) else Html(html.escape(str(value), quote=True))


def join(parts: Iterable[Any]) -> Html:
    return Html("".join(escape(p) for p in parts))


def tag(name: str, *children: Any, cls: str | None = None) -> Html:
    """``<name class=cls>children</name>``; ``name`` and ``cls`` are ours, never data."""
    attribute = f' class="{cls}"' if cls else ""
    return Html(f"<{name}{attribute}>{join(children)}</{name}>")


def table(headers: Sequence[str], rows: Iterable[Sequence[Any]], numeric: int = 1) -> Html:
    """A table; every column from ``numeric`` on is right-aligned."""
    head = join(tag("th", h, cls="num" if i >= numeric else None) for i, h in enumerate(headers))
    body = join(
        tag("tr", *(tag("td", c, cls="num" if i >= numeric else None) for i, c in enumerate(row)))
        for row in rows
    )
    return tag("table", tag("thead", tag("tr", head)), tag("tbody", body))


def model_text(text: str, limit: int = TEXT_LIMIT) -> Html:
    """A block of text someone else wrote, cut at ``limit`` characters (and says so)."""
    shown = text[:limit]
    more = f"\n… {len(text) - limit} more characters" if len(text) > limit else ""
    return tag("pre", shown, Html(f"<i>{escape(more)}</i>") if more else "", cls="model")


def plain_json(value: Any, limit: int = TEXT_LIMIT) -> Html:
    try:
        text = json.dumps(value, indent=1, ensure_ascii=False, default=str)
    except (ValueError, RecursionError):
        text = repr(value)
    return model_text(text, limit)


def conversation(sample: Sample | None, record: dict[str, Any]) -> Html:
    """The prompt (folded) and the completion, turn by turn where they are messages or
    steps; the raw row where the sample could not be rebuilt."""
    if sample is None:
        return tag("div", tag("h5", "row as written"), plain_json(record), cls="turns")
    # Turns are numbered across the whole conversation, the prompt's first.
    first = len(sample.prompt) + 1 if isinstance(sample.prompt, list) else 1
    prompt = _turns(sample.prompt, "prompt", 1)
    completion = _turns(sample.completion, "completion", first)
    folded = Html(f"<details><summary>prompt</summary>{prompt}</details>")
    return tag(
        "div", folded if sample.prompt else "", tag("h5", "completion"), completion, cls="turns"
    )


def _turns(value: str | Sequence[Message] | Sequence[Step], what: str, first: int) -> Html:
    if isinstance(value, str):
        return model_text(value)
    items = list(value)
    shown = [
        _message(m, i) if isinstance(m, Message) else _step(m, i)
        for i, m in enumerate(items[:TURN_LIMIT], start=first)
    ]
    if len(items) > TURN_LIMIT:
        shown.append(tag("p", f"… {len(items) - TURN_LIMIT} more turns of the {what}"))
    return join(shown)


def _message(message: Message, number: int) -> Html:
    role = message.role if message.role in _ROLES else "other"
    who = f"{number}. {message.role}"
    if message.name:
        who += f" {message.name}"
    if message.tool_call_id:
        who += f" (answers {message.tool_call_id})"
    parts: list[Any] = [tag("div", who, cls="who")]
    if message.content:
        parts.append(model_text(message.content))
    for call in message.tool_calls or ():
        arguments = call.function.arguments
        label = f"calls {call.function.name}" + (f" (id {call.id})" if call.id else "")
        parts += [tag("div", label, cls="call"), plain_json(arguments, TEXT_LIMIT // 4)]
    return tag("div", *parts, cls=f"turn {role}")


def _step(step: Step, number: int) -> Html:
    parts: list[Any] = [tag("div", f"step {number}: action", cls="who"), model_text(step.action)]
    if step.observation is not None:
        parts += [tag("div", "observation", cls="who"), model_text(step.observation)]
    return tag("div", *parts, cls="turn step")


_STYLE = """
body { font-family: system-ui, sans-serif; max-width: 1200px; margin: 1.5em auto; color: #222; }
h1 { font-size: 1.5em; } h2 { margin-top: 1.6em; border-bottom: 1px solid #ddd; }
img { max-width: 100%; margin: 0.5em 0; display: block; }
table { border-collapse: collapse; margin: 0.5em 0; }
td, th { border: 1px solid #ccc; padding: 0.25em 0.6em; vertical-align: top; }
th { background: #f0f0f0; } .num { text-align: right; font-variant-numeric: tabular-nums; }
pre { background: #f6f6f6; padding: 0.4em; white-space: pre-wrap; word-break: break-all;
      margin: 0.2em 0; }
pre, td, th, summary, li, p, h3 { unicode-bidi: isolate; }
details { margin: 0.3em 0; } summary { cursor: pointer; }
.sample { border: 1px solid #ddd; border-radius: 4px; padding: 0.3em 0.6em; margin: 0.4em 0; }
.turn { border-left: 4px solid #bbb; padding-left: 0.5em; margin: 0.4em 0; }
.turn.assistant { border-color: #4477aa; } .turn.user { border-color: #228833; }
.turn.tool { border-color: #ccbb44; } .turn.system { border-color: #999; }
.who { font-size: 0.85em; color: #555; font-weight: 600; } .call { color: #4477aa; }
.bad { color: #a00; } .small { font-size: 0.85em; color: #555; }
"""

_CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'; form-action 'none'"


def page(title: str, body: Iterable[Any]) -> str:
    """A whole HTML document: the policy first, then the style, then the body."""
    return (
        '<!doctype html>\n<html><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{_CSP}">'
        f"<title>{escape(title)}</title><style>{_STYLE}</style></head>\n"
        f"<body><h1>{escape(title)}</h1>\n{join(body)}\n</body></html>\n"
    )
