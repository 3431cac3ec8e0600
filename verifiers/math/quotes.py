"""Boxes that are not answers: quoted boxes and the echoed instruction's empty box.

A box the model quotes or asks about is not its answer: ``You asked: is it
\\boxed{12}? No, it is 13.`` answers 13. A box is quoted when

* it sits inside quotation marks on its line (``"..."``, ``“...”``), or
* its sentence is a question (a ``?`` follows it before the sentence ends), or
* its sentence reports what someone else said or asked (``you asked``, ``you wrote``,
  ``asked whether``, ``the question says``, ...) or names a wrong answer (``a common
  mistake is``, ``one might think``, ``the incorrect answer``).

Such a box is replaced by a mark that holds no value, so the other rules read the rest
("A common mistake is \\boxed{13}." states no answer at all).
An instruction the model echoes (``put your final answer within \\boxed{}``) is no box at
all: its empty box is taken out, so the answer the model states is read.

    >>> unquote_boxes(r"You asked: is it \\boxed{12}? No, it is 13.")
    'You asked: is it [a quoted value]? No, it is 13.'
    >>> drop_echoed_instructions(r"Put your final answer within \\boxed{}. It is 7.")
    ' It is 7.'
"""

from __future__ import annotations

import re

from rewardsmith.verifiers.math.boxes import matching_braces

__all__ = ["drop_echoed_instructions", "unquote_boxes"]

_BOX = re.compile(r"\\(?:boxed|fbox)\s*\{")
# What a quoted box becomes: no value any rule could read as the answer.
_QUOTED = "[a quoted value]"
_WINDOW = 2_000
_MAX_BOXES = 64
_ECHO = re.compile(
    r"\b(?:within|in|inside|into|using|with|as)\s+(?:an?\s+|the\s+)?\$*\\(?:boxed|fbox)\s*"
    r"\{\s*(?:\}|(?:your\s+)?(?:final\s+)?answer\s*\}|\\?\.\.\.\s*\}|\\(?:l|c)?dots\s*\})\$*",
    re.IGNORECASE,
)
_SENTENCE_END = re.compile(r"[.!?]\)?(?:\s|$)|\n")
# Someone else's words, anywhere in the box's clause ("You asked whether it is X").
_REPORTED = re.compile(
    r"\byou\s+(?:asked|wrote|said|suggested|claimed|proposed|guessed)\b"
    r"|\b(?:asked|asks|asking|wondering)\s+(?:whether|if)\b|\bwhether\s+(?:the\s+answer|it)\s+is\b"
    r"|\bthe\s+(?:question|problem|prompt)\s+(?:says|states|reads|claims|asks)\s*:",
    re.IGNORECASE,
)
# A wrong answer named right before the box ("A common mistake is to answer X").
_NAMED_WRONG = re.compile(
    r"(?:\b(?:one|you|someone|students?|many)\s+(?:might|may|could|would)\s+(?:think|guess|say"
    r"|answer)|\bcommon\s+(?:mistake|error)|\b(?:incorrect|wrong)\s+answer)[^.!?;]{0,40}$",
    re.IGNORECASE,
)
# Where the clause a box sits in starts: a sentence end, or a "but" that turns from a
# reported answer to the model's own ("One might think X, but it is \\boxed{13}").
_CLAUSE_END = re.compile(r"[.!?](?:\s|$)|;|\bbut\b|\bhowever\b", re.IGNORECASE)
_QUESTION = re.compile(r"[^.!\n]{0,200}?\?")


def drop_echoed_instructions(text: str) -> str:
    """The text without the sentences that echo "put your final answer within \\boxed{}"
    (their "final answer" is no answer phrase either). One pass; sentence ends are looked
    for within a bounded window."""
    out, at = [], 0
    for match in _ECHO.finditer(text):
        if match.start() < at:
            continue
        back = max(at, match.start() - _WINDOW)
        starts = [m.end() for m in _SENTENCE_END.finditer(text, back, match.start())]
        end = _SENTENCE_END.search(text[: match.end() + _WINDOW], match.end())
        out += [text[at : starts[-1] if starts else back], " "]
        at = end.end() if end else min(len(text), match.end() + _WINDOW)
    return "".join(out) + text[at:]


def _quoted(text: str, start: int, end: int) -> bool:
    line_start = text.rfind("\n", max(0, start - _WINDOW), start) + 1 or max(0, start - _WINDOW)
    line = text[line_start:start]
    if line.count('"') % 2 == 1 or line.rfind("“") > line.rfind("”"):
        return True
    sentence = _CLAUSE_END.split(line)[-1]
    before = sentence.rstrip(" $")
    return bool(
        _REPORTED.search(sentence) or _NAMED_WRONG.search(before) or _QUESTION.match(text, end)
    )


def unquote_boxes(text: str) -> str:
    """The text with quoted boxes replaced (see the module docstring); the last 64 boxes
    are looked at, in one pass."""
    starts = list(_BOX.finditer(text))[-_MAX_BOXES:]
    if not starts:
        return text
    pairs = matching_braces(text)
    out, at = [], 0
    for match in starts:
        end = pairs.get(match.end() - 1)
        if match.start() < at or end is None or not _quoted(text, match.start(), end + 1):
            continue
        out += [text[at : match.start()], _QUOTED]
        at = end + 1
    return "".join(out) + text[at:]
