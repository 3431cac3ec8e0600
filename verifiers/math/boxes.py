"""Boxed answers: ``\\boxed{...}`` and ``\\fbox{...}``, with nested braces matched.

A completion that boxes two or more *different* answers is hedging, and so is one that
boxes an answer and then states another after it (``\\boxed{15}. The answer is 12.``,
``\\boxed{15} or $12$``); `from_boxes` reports them as ``problem="hedged"`` with the
candidates, which the verifier compares (answers equal in value are one answer). Boxes
inside a box are candidates too: ``\\boxed{3\\boxed{4}}`` is the two answers ``3{4}`` and
``4``, not the product 12; ``\\boxed{\\boxed{5}}`` is the one answer 5. Empty boxes
(``\\boxed{}``, ``\\boxed{\\text{}}``) are no answer. Linear scans only.

    >>> from_boxes(r"\\boxed{3} or \\boxed{4}").problem
    'hedged'
    >>> from_boxes(r"\\boxed{\\boxed{5}}").answer
    '5'
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "Boxes", "box_starts", "from_boxes", "hedge_key", "matching_braces", "without_outer_braces"
]  # fmt: skip

_BOX = re.compile(r"\\(?:boxed|fbox)\s*\{")
_BRACE_EVENTS = re.compile(r"\\.|[{}]", re.DOTALL)
_MAX_BOXES = 64
_MAX_REDUNDANT = 3
_HEDGE_SPACES = re.compile(r"\s+|\\[,;!: ]|\\(?:left|right|displaystyle)(?![A-Za-z])")
# "Answer:" or "The final answer is" written inside a box: a label, not the answer.
_LABEL = r"\s*(?:the\s+)?(?:final\s+)?answer\s*(?:is\b)?\s*[:：]\s*"
_ANSWER_LABEL = re.compile(
    rf"\\(?:text|textbf|mathrm|mbox)\s*\{{{_LABEL}\}}\s*|{_LABEL}(?=[^\s}}])", re.IGNORECASE
)
_EMPTY = re.compile(r"(?:\s|\\[,;!: ]|\\(?:text|mathrm|mbox)\{\s*\}|[{}~.])*")


@dataclass(frozen=True, slots=True)
class Boxes:
    """What the boxes of a completion say."""

    answer: str | None
    problem: str | None = None
    """"hedged", "unbalanced" (a box never closes), "empty_box" or None."""
    candidates: tuple[str, ...] = ()
    last_end: int = -1
    """Where the last box closes (the text after it may restate or contradict it)."""


def box_starts(text: str) -> list[int]:
    """Where each box's opening brace is, at most the last 64."""
    return [m.end() - 1 for m in _BOX.finditer(text)][-_MAX_BOXES:]


def matching_braces(text: str) -> dict[int, int]:
    """Map the index of each ``{`` to the index of its ``}``; escaped braces are skipped.

    One pass over the braces only (``re`` finds them), so it is linear in the text.
    """
    pairs: dict[int, int] = {}
    stack: list[int] = []
    for match in _BRACE_EVENTS.finditer(text):
        token = match.group()
        if token == "{":
            stack.append(match.start())
        elif token == "}" and stack:
            pairs[stack.pop()] = match.start()
    return pairs


def hedge_key(answer: str) -> str:
    """Spellings of one answer that differ only in spacing or redundant braces."""
    key = _HEDGE_SPACES.sub("", answer).replace("dfrac", "frac").rstrip(".")
    pairs = matching_braces(key) if key.startswith("{") else {}
    depth = 0
    while pairs.get(depth) == len(key) - 1 - depth:
        depth += 1
    return key[depth : len(key) - depth]


def without_outer_braces(text: str) -> str:
    """The text without brace groups that enclose all of it (``{(1, 2)}``, ``{{B}}``):
    TeX draws nothing for them. A group of several items (``{1, 2}``) is a set and stays;
    past `_MAX_REDUNDANT` groups the braces stay too (deep nesting is the cost rules' to
    judge, not a spelling)."""
    text = text.strip()
    if not text.startswith("{"):
        return text
    pairs = matching_braces(text)
    start, end = 0, len(text) - 1
    for _ in range(_MAX_REDUNDANT):
        if text[start] != "{" or pairs.get(start) != end:
            break
        inner = text[start + 1 : end]
        if _top_level_separator(inner):
            break
        start, end = (
            start + 1 + len(inner) - len(inner.lstrip()),
            end - 1 - (len(inner) - len(inner.rstrip())),
        )
        if start > end:
            return ""
    return text[start : end + 1]


def _top_level_separator(text: str) -> bool:
    depth = 0
    for char in text:
        depth += char in "([{"
        depth -= char in ")]}"
        if char in ",;" and depth == 0:
            return True
    return False


def _box_answer(content: str) -> str:
    """A box's content as its answer: no label ("\\text{Answer: } 5" is 5), no brace
    group around all of it."""
    label = _ANSWER_LABEL.match(content)
    return without_outer_braces(content[label.end() :] if label else content)


def _contents(text: str) -> tuple[list[str], bool, int]:
    """Every box's content (inner boxes unwrapped in the outer one's, and on their own),
    whether a box never closes, and where the last one ends."""
    starts = box_starts(text)
    pairs = matching_braces(text) if starts else {}
    found: list[str] = []
    unbalanced, last_end = False, -1
    for start in starts:
        end = pairs.get(start)
        if end is None:
            unbalanced = True
            continue
        found.append(_box_answer(_BOX.sub("{", text[start + 1 : end]).strip()))
        last_end = max(last_end, end + 1)
    return found, unbalanced, last_end


def from_boxes(text: str) -> Boxes | None:
    """The boxed answer of `text`; None when it has no box."""
    found, unbalanced, last_end = _contents(text)
    if not found:
        return Boxes(None, "unbalanced") if unbalanced else None
    boxes = [box for box in found if not _EMPTY.fullmatch(box)]
    if not boxes:
        return Boxes(None, "empty_box", last_end=last_end)
    distinct: dict[str, str] = {}
    for box in boxes:
        distinct.setdefault(hedge_key(box), box)
    if len(distinct) > 1:
        return Boxes(boxes[-1], "hedged", tuple(distinct.values()), last_end)
    return Boxes(boxes[-1], last_end=last_end)
