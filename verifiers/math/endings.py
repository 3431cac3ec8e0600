"""Where a completion's final answer may be: after its reasoning, before a new turn, and,
for an answer guessed from the end of the text, only if the text was finished.

* **Reasoning** (``<think>...</think>``, ``<reasoning>``, ``<|begin_of_thought|>``): only
  the text after the last closing tag can hold the final answer; an answer stated only
  inside the reasoning is no answer, and reasoning that never closes (or is opened again
  after its last close) has none.
* **Turn ends** (``<|im_end|>``, ``<|eot_id|>``, ...): text after one is a new turn the
  model should not have written; it is cut off.
* **Truncation**: the fallback rules (the last inline formula, the last number, a
  concluding sentence) read the answer off the end of the text, which is only sound when
  the text ended there. A completion cut off mid-sentence ("We get $12$ and then we
  multi") has not stated an answer. `finished` accepts after such an answer only closing
  punctuation, a unit (``cm``, ``square units``, ``apples``, a unit glued to the number,
  ``percent``) or text that ends a sentence (``.``, ``!``, ``?``). Explicit statements (a
  box, "the answer is") commit to an answer and stand however the text goes on.
* **The declared answer** (R1-style templates): the content of the last
  ``<answer>..</answer>`` is the text the answer is read from; what follows the closing
  tag is read as the text after a box is (a retraction, an offer or a doubt there counts).

    >>> final_text("<think>It is 5.</think> So 6.")
    (' So 6.', 'closed')
    >>> finished(" square units."), finished(" and then we multi")
    (True, False)
"""

from __future__ import annotations

import re

from rewardsmith.verifiers.math.units import split_unit

__all__ = ["cut_at_turn_end", "declared_answer", "earlier_declared", "final_text", "finished"]

_TURN_END = re.compile(r"<\|(?:im_start|im_end|endoftext|eot_id|end_of_text)\|>")
_REASONING_END = re.compile(r"</think>|</reasoning>|<\|end_of_thought\|>|◁/think▷")
_REASONING_START = re.compile(r"<think>|<reasoning>|<\|begin_of_thought\|>|◁think▷")
_CLOSING = " \t\n*_\"'`’”)]}$"
_SENTENCE_END = tuple(".!?。")
_PERCENT = re.compile(r"\\?%|percent(?:age)?|pct", re.IGNORECASE)
_GLUED_UNIT = re.compile(r"[A-Za-z]{1,3}[²³]?|[€£¥₹]")
_ANSWER_TAG = re.compile(r"<answer>(.*?)(?:</answer>|\Z)", re.DOTALL | re.IGNORECASE)


def declared_answer(text: str) -> tuple[str, str] | None:
    """The content of the last non-empty ``<answer>..</answer>`` and the text after its
    closing tag, or None where there is none.

    >>> declared_answer("<answer>[73, 30]</answer> I am sure.")
    ('[73, 30]', ' I am sure.')
    """
    answers = [m for m in _ANSWER_TAG.finditer(text) if m.group(1).strip()]
    if not answers:
        return None
    return answers[-1].group(1).strip(), text[answers[-1].end() :]


def earlier_declared(text: str) -> tuple[str, ...]:
    """The contents of the non-empty ``<answer>`` tags before the last one, after the
    reasoning (a tag inside ``<think>`` is working): two declared answers that differ
    are a hedge, as two boxes are.

    >>> earlier_declared("<think><answer>4</answer></think><answer>6</answer><answer>5</answer>")
    ('6',)
    """
    after, _ = final_text(text)
    answers = [m.group(1).strip() for m in _ANSWER_TAG.finditer(after) if m.group(1).strip()]
    return tuple(answers[:-1])


def cut_at_turn_end(text: str) -> str:
    """`text` up to the first chat-template turn marker (if the marker is not first)."""
    turn_end = _TURN_END.search(text)
    return text[: turn_end.start()] if turn_end and turn_end.start() > 0 else text


def final_text(text: str) -> tuple[str, str | None]:
    """The part of `text` that may hold the final answer, and its reasoning: None (there
    is none), "closed" (the answer is after it) or "unclosed" (there is no answer)."""
    last_end = None
    for match in _REASONING_END.finditer(text):
        last_end = match
    if last_end is not None:
        after = text[last_end.end() :]
        # Reasoning opened again after the last close never closed: what follows is still
        # reasoning ("<think>...</think><think>\\boxed{12}" has no final answer).
        return ("", "unclosed") if _REASONING_START.search(after) else (after, "closed")
    return (text, None) if _REASONING_START.search(text) is None else ("", "unclosed")


def finished(tail: str) -> bool:
    """Whether `tail`, the text after an answer found at the end of a completion, lets
    that answer stand (see the module docstring)."""
    if len(tail) > 2_000:
        return False
    glued = _GLUED_UNIT.fullmatch(tail.rstrip(_CLOSING + ".,"))
    if glued and not tail[:1].isspace():  # "5cm", "1,000.99m²"
        return True
    stripped = tail.rstrip(_CLOSING)
    if not stripped.strip() or stripped.endswith(_SENTENCE_END):
        return True
    words = stripped.strip().lstrip(",;:").strip()
    if _PERCENT.fullmatch(words) or words in ("€", "£", "¥", "₹"):
        return True
    quantity = split_unit(f"1 {words}")
    return quantity.unit is not None and quantity.value == "1"
