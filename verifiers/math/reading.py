"""The final answer of a completion as a careful grader reads it.

1. Render it (`rewardsmith.verifiers.math.rendered`): hidden text set apart, code dropped,
   macros expanded, digits read as printed; a text that cannot be rendered simply is
   refused (``problem="refused"``).
2. Take out what only looks like an answer (`rewardsmith.verifiers.math.quotes`): the
   echoed instruction's ``\\boxed{}``, quoted boxes, and boxes the model took back (a
   retraction between two boxes: ``\\boxed{12}. Wait, I made an error ... \\boxed{13}``
   answers 13).
3. Extract (`rewardsmith.verifiers.math.extract`; a retraction after the last box names
   the final answer there).
4. Boxes one per part of a tuple or list gold (``a = \\boxed{3}`` and ``b = \\boxed{5}``
   for ``(3, 5)``), in order and not joined by "or", are that tuple or list.
5. A choice gold accepts a letter alone on the last line (``**C**``, ``(C)``, the
   content of ``<answer>C</answer>``); a completion
   that disowns its answer ("this is likely incorrect", "I cannot determine ...", "if
   forced") gives none (``problem="negated"``).
6. A box among the hidden fragments that differs from the visible answer is a hedge.

    >>> read_answer(r"So a = \\boxed{3} and b = \\boxed{5}.", "(3, 5)").answer
    '(3, 5)'
    >>> read_answer(r"So \\boxed{13}. $\\phantom{\\boxed{12}}$", "12").problem
    'hedged'
"""

from __future__ import annotations

import itertools
import re

from rewardsmith.verifiers.math.boxes import box_starts, from_boxes, hedge_key, matching_braces
from rewardsmith.verifiers.math.extract import Extraction, extract_answer, has_several_items
from rewardsmith.verifiers.math.fast import choice_letter
from rewardsmith.verifiers.math.quotes import drop_echoed_instructions, unquote_boxes
from rewardsmith.verifiers.math.rendered import render
from rewardsmith.verifiers.math.tails import OFFERS, RETRACTS, TENTATIVE

__all__ = ["read_answer"]

_OR = re.compile(r"\bor\b|/", re.IGNORECASE)
_EMPTY = re.compile(r"\s*")
# A choice letter alone on the last line, bold or not ("**C**", "(B)", "<answer>B</answer>").
_LETTER_LINE = re.compile(r"(?:#{4})?\s*(\*\*)?\s*\(?([A-J])\)?\.?\s*(?(1)\*\*)\.?")
# The completion disowns the answer it gives ("Note: this is likely incorrect.").
_DISOWNED = re.compile(
    r"\b(?:this|that|it|my\s+answer|the\s+answer(?:\s+above)?)\s+(?:is|may\s+be|might\s+be|"
    r"could\s+be)\s+(?:likely\s+|probably\s+)?(?:incorrect|wrong)(?=\s*(?:[.!]|$))"
    r"|\bI\s+(?:cannot|can't|could\s+not|couldn't)\s+(?:determine|solve|find)\b|\bif\s+forced\b",
    re.IGNORECASE,
)
_TURN = re.compile(r"\b(?:but|thought|instead|not)\b", re.IGNORECASE)
_NAME_BEFORE = re.compile(r"([A-Za-z])\s*=\s*\$?\s*$")
_SENTENCES = re.compile(r"(?<=[.!?])\s+|\n+")
# A list of answers ending a line of prose ("The roots are $x = 2$ or $x = 3$."): values (a
# formula, or a token with a digit, each maybe named "x ="), joined by a bare "or" or "and"
# only. Anything else between two values ("or maybe", "Actually,") makes the second a hedge
# or a retraction, and the line no list.
_NAMED = r"(?:\b[A-Za-z](?:_\{?\w{1,3}\}?)?\s*=\s*)?"  # "x =", "x_1 ="
# Each value and join matches one way only (possessive): a hostile line cannot make the
# search backtrack through the ways of splitting its tokens.
_TOKEN = r"(?=[^\s$]{0,200}\d)[^\s$]{1,200}+"  # with a digit in it
_VALUE = rf"(\$[^$]{{1,300}}+\$|{_NAMED}{_TOKEN})"
_LISTED = re.compile(rf"{_VALUE}(?:[\s,]++(?:or|and)\s++{_VALUE})+[\s.]*$", re.IGNORECASE)
_LISTED_VALUE = re.compile(_VALUE)


def _boxes(text: str) -> list[tuple[int, int]]:
    """(start of ``\\boxed``, end after its ``}``) of each closed top-level box."""
    pairs, found = matching_braces(text), list[tuple[int, int]]()
    for brace in box_starts(text):
        end = pairs.get(brace)
        if end is not None and (not found or brace > found[-1][1]):
            found.append((text.rfind("\\", 0, brace), end + 1))
    return found


def _drop_retracted(text: str) -> str:
    """Unwrap every box that a later retraction takes back before another box."""
    spans = _boxes(text)
    for (start, end), (after, _) in reversed(list(itertools.pairwise(spans))):
        between = text[end:after]
        last = _SENTENCES.split(between.rstrip(" $"))[-1]  # where the new box is offered
        if RETRACTS.search(between) and not (OFFERS.search(last) or TENTATIVE.search(last)):
            brace = text.index("{", start)
            text = text[:start] + text[brace + 1 : end - 1] + text[end:]
    return text


def _tuple_items(gold: str) -> int:
    """How many parts a tuple gold ``(a, b)`` has (0 when it is not a tuple)."""
    bare = re.sub(r"\\(?:left|right)(?![A-Za-z])", "", gold).strip().strip("$").strip()
    if not _wrapped(bare) or not has_several_items(bare[1:-1]):
        return 0
    depth, count = 0, 1
    for char in bare[1:-1]:
        depth += char in "([{"
        depth -= char in ")]}"
        count += char == "," and depth == 0
    return count


def _wrapped(text: str) -> bool:
    """Whether one pair of parentheses encloses the whole text."""
    if text[:1] != "(" or text[-1:] != ")":
        return False
    depth = 0
    for at, char in enumerate(text):
        depth += char == "("
        depth -= char == ")"
        if depth == 0 and at < len(text) - 1:
            return False
    return True


def _parts(text: str, found: Extraction, gold: str) -> Extraction:
    """Boxes one per value of a list or set gold (a hedge still fails: the list then has
    values the gold does not), or one per part of a tuple gold, in order and not joined
    by "or": together they are the answer."""
    if found.problem != "hedged" or found.method in ("restated", "hidden"):
        return found
    if found.method != "boxed":  # "x = 2 or x = 3" for the two roots the gold lists
        union = bool(_UNION.search(gold))  # "$x < 1$ or $x > 3$" for a union of intervals
        values = _listed(text) if union or has_several_items(gold) else None
        if not values:
            return found
        return Extraction((r" \text{ or } " if union else ", ").join(values), "listed")
    if has_several_items(gold):
        return Extraction(", ".join(found.candidates), "boxed_list")
    spans = _boxes(text)
    contents = [text[text.index("{", s) + 1 : e - 1].strip() for s, e in spans]
    joined_by_or = any(_OR.search(text[e:s]) for (_, e), (s, _) in itertools.pairwise(spans))
    if _tuple_items(gold) != len(contents) or joined_by_or or _not_parts(text, spans):
        return found
    return Extraction(f"({', '.join(contents)})", "boxed_parts")


def _listed(text: str) -> list[str] | None:
    """The values of the list that ends the last line (`_LISTED`); none where more is
    joined to it than the window reads (a value offered before the list)."""
    line = text.rstrip().rsplit("\n", 1)[-1]
    window = line[-_LIST_CHARS:]
    found = _LISTED.search(window)
    if found is None or (found.start() == 0 and len(line) > len(window)):
        return None
    if _JOINED_BEFORE.search(window, 0, found.start()):  # "seven or 2 or 3"
        return None
    values = _LISTED_VALUE.findall(found.group())
    return [v.strip("$").strip().rstrip(".").strip() for v in values]


_UNION = re.compile(r"\\cup(?![A-Za-z])|∪")
_LIST_CHARS = 400
"""How much of the last line a list may fill: the search is quadratic in it."""
_JOINED_BEFORE = re.compile(r"\b(?:or|and)[\s,]*$", re.IGNORECASE)


def _not_parts(text: str, spans: list[tuple[int, int]]) -> bool:
    """Boxes that are not the parts of one answer in order: a turn between them ("First I
    thought \\boxed{3}, but it is \\boxed{5}"), or consecutive names out of order
    ("b = ..., a = ...")."""
    between = [text[e:s] for (_, e), (s, _) in itertools.pairwise(spans)]
    if any(RETRACTS.search(b) or OFFERS.search(b) or _TURN.search(b) for b in between):
        return True
    names = [_NAME_BEFORE.search(text[max(0, s - 40) : s]) for s, _ in spans]
    letters = [n.group(1) for n in names if n is not None]
    ordered = sorted(letters)  # a, b / x, y / m, n: names with an order of their own
    consecutive = all(ord(b) - ord(a) == 1 for a, b in itertools.pairwise(ordered))
    return len(letters) == len(spans) and consecutive and letters != ordered


def _against_hidden(found: Extraction, hidden: tuple[str, ...]) -> Extraction:
    """A hedge when a hidden box says something else than the visible answer."""
    if not hidden or found.answer is None:
        return found
    boxes = from_boxes("\n".join(hidden))
    others = [] if boxes is None else [c for c in (*boxes.candidates, boxes.answer) if c]
    key = hedge_key(found.answer)
    other = next((o for o in others if not _EMPTY.fullmatch(o) and hedge_key(o) != key), None)
    if other is None:
        return found
    return Extraction(found.answer, "hidden", "hedged", (found.answer, other))


def read_answer(text: str, gold: str, *, strict: bool = False) -> Extraction:
    """The final answer of `text` for a question whose gold answer is `gold`."""
    shown = render(text)
    if shown.refused is not None:
        return Extraction(None, "rendered", "refused", (shown.refused,))
    visible = _drop_retracted(unquote_boxes(drop_echoed_instructions(shown.visible)))
    found = _parts(visible, extract_answer(visible, strict=strict), gold)
    if found.answer is None and not strict and choice_letter(gold, alone=True):
        line = visible.strip().rsplit("\n", 1)[-1]
        letter = _LETTER_LINE.fullmatch(line.strip())
        found = Extraction(letter.group(2), "choice_line") if letter else found  # "**C**"
    if found.answer is not None and _DISOWNED.search(visible[-400:]):
        return Extraction(None, found.method, "negated")
    return _against_hidden(found, shown.hidden)
