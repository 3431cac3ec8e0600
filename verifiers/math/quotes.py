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
    (their "final answer" is no answer phrase either)."""
    for match in reversed(list(_ECHO.finditer(text))):
        starts = [m.end() for m in _SENTENCE_END.finditer(text, 0, match.start())]
        end = _SENTENCE_END.search(text, match.end())
        text = text[: starts[-1] if starts else 0] + " " + text[end.end() if end else len(text) :]
    return text


def _quoted(text: str, start: int, end: int) -> bool:
    line_start = text.rfind("\n", 0, start) + 1
    line = text[line_start:start]
    if line.count('"') % 2 == 1 or line.rfind("“") > line.rfind("”"):
        return True
    sentence = _CLAUSE_END.split(line)[-1]
    before = sentence.rstrip(" $")
    return bool(
        _REPORTED.search(sentence) or _NAMED_WRONG.search(before) or _QUESTION.match(text, end)
    )


def unquote_boxes(text: str) -> str:
    """The text with quoted boxes unwrapped (see the module docstring)."""
    starts = list(_BOX.finditer(text))
    if not starts:
        return text
    pairs = matching_braces(text)
    for match in reversed(starts):
        end = pairs.get(match.end() - 1)
        if end is not None and _quoted(text, match.start(), end + 1):
            text = text[: match.start()] + _QUOTED + text[end + 1 :]
    return text
