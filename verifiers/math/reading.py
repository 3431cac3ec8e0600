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
   that disowns its answer ("this is likely incorrect", "Scratch that.", "I cannot
   determine ...", "if forced") after its last statement of a value, or states it in a
   clause that denies or supposes it ("It is false that the answer is 5"), gives none
   (``problem="negated"``).
6. A box among the hidden fragments that differs from the visible answer is a hedge.

    >>> read_answer(r"So a = \\boxed{3} and b = \\boxed{5}.", "(3, 5)").answer
    '(3, 5)'
    >>> read_answer(r"So \\boxed{13}. $\\phantom{\\boxed{12}}$", "12").problem
    'hedged'
"""

from __future__ import annotations

import itertools
import re
from dataclasses import replace

from rewardsmith.verifiers.math.boxes import box_starts, from_boxes, hedge_key, matching_braces
from rewardsmith.verifiers.math.extract import (
    Extraction,
    extract_answer,
    has_several_items,
    said_after,
)
from rewardsmith.verifiers.math.fast import choice_letter
from rewardsmith.verifiers.math.quotes import drop_echoed_instructions, unquote_boxes
from rewardsmith.verifiers.math.rendered import render
from rewardsmith.verifiers.math.stance import framed_as_untrue, negated, offered
from rewardsmith.verifiers.math.tails import OFFERS, RETRACTS, TENTATIVE
from rewardsmith.verifiers.math.words import as_words

__all__ = ["read_answer"]

_OR = re.compile(r"\bor\b|/", re.IGNORECASE)
_EMPTY = re.compile(r"\s*")
# A choice stated in words on the last line, for a choice gold: "The correct option is B.",
# "Option (B) is correct.", "(D) is the answer.", "I choose B.", "Hence option (A).". The
# verb must state it ("Option B is incorrect", "is not B" state nothing), and a second
# letter in the same sentence is a hedge ("B or C").
_CHOICE_STATED = re.compile(
    r"\b(?i:correct|right|best|final)\s+(?i:option|choice|answer)\s+(?i:is)\s*:?\s*\(?([A-J])\)?(?![\w'])"
    r"|\b(?i:option|choice)\s*\(?([A-J])\)?\s+(?i:is\s+(?:the\s+)?(?:correct|right|best))\b"
    r"|(?:^|[\s,:])\(?([A-J])\)?\s+(?i:is\s+the\s+(?:correct\s+|right\s+|best\s+)?(?:answer|option|choice))\b"
    r"|\bI\s+(?i:choose|pick|select)\s+(?i:option\s+)?\(?([A-J])\)?(?![\w'])"
    r"|\b(?i:hence|so|therefore|thus)\s*,?\s+(?i:option)\s+\(?([A-J])\)?(?![\w'])",
)
# Another letter in the sentence: a choice ("or C", "(C)"), not the article ("A careful").
_OTHER_LETTER = re.compile(r"(?<![\w'])\(?([A-J])\)?(?![\w'])(?!\s+[a-z])")
# A choice letter alone on the last line, bold or not ("**C**", "(B)", "<answer>B</answer>").
_LETTER_LINE = re.compile(r"(?:#{4})?\s*(\*\*)?\s*\(?([A-J])\)?\.?\s*(?(1)\*\*)\.?")
# The completion disowns the answer it gives ("Note: this is likely incorrect.", "This
# claim is false.", "Scratch that.", "(just kidding)", "Or maybe not."), at or after its
# last statement of a value: a disowning before a corrected answer ("\boxed{5}. That's
# wrong. The answer is 6.") was about the value it corrected.
_DISOWNED = re.compile(
    r"\b(?:this|that|it|my\s+answer|the\s+answer(?:\s+above)?|this\s+claim|the\s+claim|the\s+above|"
    r"all\s+of\s+this|everything\s+above)\s*(?:is|was|'s|’s|may\s+be|might\s+be|could\s+be)\s+"
    r"(?:likely\s+|probably\s+|definitely\s+|certainly\s+|totally\s+|all\s+)?"
    r"(?:incorrect|wrong|false|untrue|not\s+(?:right|correct|true)|a\s+(?:guess|joke|lie))"
    r"(?=\s*(?:[.!)]|$))"
    r"|\bI\s+(?:cannot|can't|could\s+not|couldn't)\s+(?:determine|solve|find)\b|\bif\s+forced\b"
    r"|\b(?:scratch\s+that|just\s+kidding|(?:i'm|i\s+am)\s+(?:just\s+)?(?:kidding|joking)|jk|"
    r"(?:ignore|disregard)\s+(?:the\s+above|that|this|everything(?:\s+above)?|my\s+answer|all\s+of\s+"
    r"(?:that|this|the\s+above)))\b[\s.!)$*_}]*$"  # "**Just kidding.**", "Ignore the above.$"
    r"|[—–]\s*(?:false|wrong|incorrect)\b[\s.!$*_}]*$"
    r"|^[\s*_]*(?:or\s+)?(?:maybe|perhaps|possibly)\s+not\b[\s.!)$*_}]*$",
    re.IGNORECASE,
)
# Doubt about the answer, said after it ("\boxed{5}, but I am not sure.", "I could be
# wrong.", "\boxed{5}, probably.", "The answer is $5$ or something else."): in the present
# ("I was not sure at first" is about the work before) and about the answer ("I'm not sure
# why the problem gives y" is not).
_DOUBTED = re.compile(
    r"(?<!\bwas\s)(?<!\bwere\s)\bnot\s+(?:(?:entirely|completely|totally|quite|fully|that|"
    r"very|so|100\s*%|a\s+hundred\s+percent)\s+)?(?:sure|certain|confident|positive)\b"
    r"(?!\s+(?:why|how|what|where|who)\b)"
    r"|\b(?:unsure|uncertain)\b"
    r"|\bI\s+(?:could|might|may)\s+(?:well\s+)?(?:be\s+(?:wrong|mistaken|off)|have\s+(?:made\s+)?"
    r"(?:a\s+mistake|an\s+error|erred|miscalculated))\b"
    r"|\bif\s+I(?:'m|’m|\s+am)\s+(?:right|correct|not\s+mistaken)\b"
    r"|\bunless\s+I(?:'ve|’ve|\s+have)?\s+(?:made|make)\s+(?:a|an)\s+(?:mistake|error)\b"
    r"|\bdon'?t\s+quote\s+me\b|\bgrain\s+of\s+salt\b"
    r"|(?<!\bwhether\s)\bor\s+(?:(?:maybe|perhaps|possibly)\s+)?(?:not|something(?:\s+else)?|"
    r"anything\s+else|some\s+other\s+\w+|so|thereabouts)\b|\bgive\s+or\s+take\b|"
    r"\bmore\s+or\s+less\b"  # "\boxed{5} or so": about 5
    r"|\b(?:maybe|perhaps|possibly)\s+not\b"
    r"|(?:[,(—–]|^)\s*(?:probably|possibly|maybe|perhaps|I\s+(?:think|guess|believe|suppose))\s*[.!)]*\s*$"
    r"|\b(?:might|may|could)\s*(?:not|n't)\s+be\s+(?:right|correct|accurate|true)\b"
    r"|\b(?:might|may|could)\s+(?:well\s+)?be\s+(?:wrong|incorrect|off|mistaken)\b"
    r"|\b(?:low|little|limited|not\s+much)\s+confidence\b|\bconfidence\s*[:=]?\s*(?:low|medium|moderate)\b"
    r"|\bI\s+(?:could|can)\s*(?:not|n't)\s+(?:verify|check|confirm)\b"
    r"|\(\s*(?:a\s+|my\s+|just\s+a\s+|(?:my\s+)?best\s+)?guess\s*\)|\bjust\s+a\s+guess\b|\bmy\s+(?:best\s+)?guess\b",
    re.IGNORECASE,
)
# Where a value sits in a sentence: a doubt before it is about the work, not the answer.
_VALUE_AFTER = re.compile(r"\d|\\boxed|\$\s*[^$\s.,;!?]")  # not "$." closing a formula
# A sentence that states a value: a disowning counts from the last one on.
_STATES_VALUE = re.compile(r"\d|\\boxed|\$\s*[^$\s]")  # not "$ $", where a crossed box was
# Where a final statement starts: an answer phrase or a box (the clause before it may deny,
# doubt or suppose what it states: `stance.framed_as_untrue`).
_STATEMENT = re.compile(
    r"\b(?:final\s+)?answer\b|\bsolution\b|\bresult\b|\boption\b|\bchoice\b|\\boxed\b", re.I
)
_TURN = re.compile(r"\b(?:but|thought|instead|not)\b", re.IGNORECASE)
_NAME_BEFORE = re.compile(r"([A-Za-z])\s*=\s*\$?\s*$")
_SENTENCES = re.compile(r"(?<=[.!?])\s+|\n+")
# A list of answers ending a line of prose ("The roots are $x = 2$ or $x = 3$."): values (a
# formula, or a token with a digit, each maybe named "x ="), joined by a bare "or" or "and"
# only. Anything else between two values ("or maybe", "Actually,") makes the second a hedge
# or a retraction, and the line no list.
# "x =", "x_1 =", and for a union of rays "x <", "x \ge"
_NAMED = r"(?:\b[A-Za-z](?:_\{?\w{1,3}\}?)?\s*(?:[=<>≤≥]=?|\\[lg]eq?(?![A-Za-z]))\s*)?"
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
    if found.method in ("restated", "hidden"):
        return found
    if found.method != "boxed":
        return _prose_list(text, found, gold)
    if found.problem != "hedged":
        return found
    if has_several_items(gold):
        return Extraction(", ".join(found.candidates), "boxed_list")
    spans = _boxes(text)
    contents = [text[text.index("{", s) + 1 : e - 1].strip() for s, e in spans]
    joined_by_or = any(_OR.search(text[e:s]) for (_, e), (s, _) in itertools.pairwise(spans))
    if _tuple_items(gold) != len(contents) or joined_by_or or _not_parts(text, spans):
        return found
    return Extraction(f"({', '.join(contents)})", "boxed_parts")


def _prose_list(text: str, found: Extraction, gold: str) -> Extraction:
    """The values of a list gold stated in prose: "x = 2 or x = 3" (read as a hedge) and
    "$x = 1$ and $x = 2$ and $x = 3$" (read as its last formula) for the roots the gold
    lists; "$x < 1$ or $x > 3$" for a union of intervals."""
    union = bool(_UNION.search(gold))
    several = union or has_several_items(gold)
    # "x \ge 5" qualifies a lone value (read as negated), and is a ray of a union
    read_off = found.problem in ((None, "negated") if several else (None,))
    if found.problem != "hedged" and not (read_off and found.method in _LAST_VALUE_READERS):
        return found
    values = _listed(text)
    if not values:
        return found
    if not several:  # one value asked, one name given several
        names = {v.split("=")[0].strip() for v in values}
        offered = len(names) == 1 and "=" in values[0] and len(set(values)) > 1
        return Extraction(None, "listed", "hedged", tuple(values)) if offered else found
    return Extraction((r" \text{ or } " if union else ", ").join(values), "listed")


# The rules that read the last value of a line: where the gold is a list, the line's
# list is the answer.
_LAST_VALUE_READERS = frozenset({"final_math", "last_number"})


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
    return replace(found, method="hidden", problem="hedged", candidates=(found.answer, other))


# A yes-or-no answer said plainly: a sentence that opens with the word ("Yes.", "No, it
# cannot.", "So yes, ..."), first or last in the completion.
_VERDICT_WORDS = frozenset({"yes", "no", "true", "false"})
_OPENS_WITH_VERDICT = re.compile(
    r"\s*(?:(?:so|therefore|thus|hence|in\s+conclusion|in\s+short)\b\s*,?\s*)?"
    r"(?:\*\*)?(yes|no|true|false)(?:\*\*)?\s*(?:[.,!;:]|$)",
    re.IGNORECASE,
)
# The word said as an answer anywhere ("No, wait: yes." says both).
_VERDICT_SAID = re.compile(r"\b(yes|no|true|false)\b(?:\*\*)?\s*(?:[.,!;:]|$)", re.I | re.M)


# The rules that read a number or formula off the end of the text: for a yes-or-no gold,
# a number there is part of the reasons, never the answer.
_READ_OFF_THE_END = frozenset({"none", "last_number", "final_math"})


def _yes_or_no(text: str, gold: str) -> Extraction | None:
    """For a gold that is yes, no, true or false: the word a sentence opens with, first or
    last in the text; a hedge when the text says the word of both sides."""
    if as_words(gold) not in _VERDICT_WORDS:
        return None
    sentences = [s for s in _SENTENCES.split(text.strip()[-5_000:]) if s.strip()]
    if not sentences:
        return None
    said = {m.group(1).lower() for m in _VERDICT_SAID.finditer(text[-5_000:])}
    opened = [_OPENS_WITH_VERDICT.match(s) for s in (sentences[0], sentences[-1])]
    answers = {m.group(1).lower() for m in opened if m is not None}
    last_line = as_words(text.strip().rsplit("\n", 1)[-1])  # "\text{no}" on a line
    answers |= {last_line} if last_line in _VERDICT_WORDS else set()
    if not answers:
        return None
    if len(said) > 1 or len(answers) > 1:
        return Extraction(None, "yes_no", "hedged", tuple(sorted(said | answers)))
    return Extraction(answers.pop(), "yes_no")


# A text answer closing the last sentence after "is" ("The function is odd."), stated
# plainly: none of the words that deny, offer or doubt it.
_IS_WORDS = re.compile(
    r"\b(?:is|are|was|were)\s+(?:an?\s+|the\s+)?([A-Za-z][A-Za-z'-]*(?:\s+[A-Za-z'-]+){0,3})"
    r"\s*[.!]?\s*$",
    re.IGNORECASE,
)
_NOT_PLAIN = re.compile(
    r"\b(?:not|no|or|nor|neither|either|maybe|probably|perhaps|possibly|likely)\b|n't\b", re.I
)


def _stated_words(text: str, gold: str) -> Extraction | None:
    """For a gold that is words (not yes or no), where nothing else was read as the
    answer: a last line that is a few words, or the words after "is" that end the last
    sentence."""
    if as_words(gold) in (None, *_VERDICT_WORDS):
        return None
    sentence = _SENTENCES.split(text.strip()[-2_000:])[-1]
    if _NOT_PLAIN.search(sentence):
        return None
    stated = _IS_WORDS.search(sentence)
    if stated is not None and as_words(stated.group(1)) is not None:
        return Extraction(stated.group(1), "stated_words")
    line = text.strip().rsplit("\n", 1)[-1].strip()
    alone = as_words(line)  # "<answer>\text{odd}</answer>", a last line "odd"
    if alone is None or len(alone.split()) > 3 or line.endswith(("!", "?")):
        return None
    return Extraction(line, "stated_words")


def read_answer(text: str, gold: str, *, strict: bool = False) -> Extraction:
    """The final answer of `text` for a question whose gold answer is `gold`."""
    shown = render(text)
    if shown.refused is not None:
        return Extraction(None, "rendered", "refused", (shown.refused,))
    visible = _drop_retracted(unquote_boxes(drop_echoed_instructions(shown.visible)))
    extracted = extract_answer(visible, strict=strict)
    found = _parts(visible, extracted, gold)
    after = shown.after_answer  # "<answer>5</answer> or 6": read as after a box
    after = unquote_boxes(drop_echoed_instructions(after)) if after.strip() else after
    if after.strip() and not strict:
        found = said_after(after, found)
        visible = f"{visible}\n{after}"  # a doubt or a disowning there counts
    declared = (*shown.other_answers, *_boxed_in(after))  # compared once the answer is read
    if not strict and choice_letter(gold, alone=True):
        line = visible.strip().rsplit("\n", 1)[-1]
        if found.answer is None:
            letter = _LETTER_LINE.fullmatch(line.strip())
            found = Extraction(letter.group(2), "choice_line") if letter else found  # "**C**"
        if found.answer is None or found.method in _READ_OFF_THE_END:
            found = _choice_stated(line) or found  # "23 is prime. The correct option is B."
    if found.method in _READ_OFF_THE_END and found.problem is None and not strict:
        found = _yes_or_no(visible, gold) or found  # "Yes. Since 3 is odd, ..."
    if found.method == "none" and found.problem is None and not strict:
        found = _stated_words(visible, gold) or found  # "The function is odd."
    if found.answer is not None and _disowned(visible[-400:], boxed=found.method == "boxed"):
        return Extraction(None, found.method, "negated")
    if found.answer is not None and extracted.denied and not found.denied:
        found = replace(found, denied=extracted.denied)  # "5, not 6" read as a list, a choice
    return _against_hidden(_declared_twice(found, declared), shown.hidden)


def _boxed_in(text: str) -> tuple[str, ...]:
    """The values boxed in `text` (the text after a declared answer)."""
    boxes = from_boxes(text) if "\\boxed" in text or "\\fbox" in text else None
    return () if boxes is None else (*boxes.candidates, boxes.answer or "")


def _declared_twice(found: Extraction, others: tuple[str, ...]) -> Extraction:
    """A hedge when another declared answer (an earlier ``<answer>`` tag, a box after the
    tag) says something else than the answer read."""
    if found.answer is None or found.problem is not None or not others:
        return found
    key = hedge_key(found.answer)
    different = tuple(o for o in others if o.strip() and hedge_key(o) != key)
    if not different:
        return found
    return replace(found, problem="hedged", candidates=(*different, found.answer))


def _disowned(tail: str, *, boxed: bool = False) -> bool:
    """Whether the text, from its last sentence that states a value on, disowns that value
    or frames its statement as untrue ("It is false that the answer is 5."); with
    ``boxed`` (the answer is the last box), also whether the box's own sentence denies,
    doubts or leaves it open, as a value read off the end would be ("The answer is not
    $\\boxed{5}$.", "Maybe $\\boxed{5}$, maybe not.", "$\\boxed{5}$, or perhaps something
    else."; `stance.negated`, `stance.offered`)."""
    sentences = [x for x in _SENTENCES.split(tail) if x.strip()]
    states = [i for i, x in enumerate(sentences) if _STATES_VALUE.search(x)]
    states = states or [i for i, x in enumerate(sentences) if _STATEMENT.search(x)]  # "yes"
    last = max(states, default=0)
    stating = sentences[last] if sentences else ""
    starts = [m.start() for m in _STATEMENT.finditer(stating)]
    framed = bool(starts) and framed_as_untrue(stating[: starts[-1]])
    return (
        framed
        or any(_DISOWNED.search(x) for x in sentences[last:])
        or _doubted(sentences[last:])
        or (boxed and _box_unasserted(tail))
    )


def _doubted(sentences: list[str]) -> bool:
    """Whether the sentences from the last statement of a value on doubt it after the
    value (`_DOUBTED`): in the stating sentence, a doubt no value follows."""
    for at, sentence in enumerate(sentences):
        for doubt in _DOUBTED.finditer(sentence):
            if at > 0 or not _VALUE_AFTER.search(sentence, doubt.end()):
                return True
    return False


def _box_unasserted(tail: str) -> bool:
    """Whether the sentence of the last box denies it, asks about or supposes it, or
    leaves it open; the clause counts from the value before the box on ("Not 6 but
    $\\boxed{5}$." states 5)."""
    boxes = _boxes(tail)
    if not boxes:
        return False
    start, end = boxes[-1]
    opens = max((m.end() for m in _SENTENCES.finditer(tail, 0, start)), default=0)
    closes = _SENTENCES.search(tail, end)
    line = tail[opens : closes.start() if closes else len(tail)]
    start, end = start - opens, end - opens
    since = max((m.end() for m in re.finditer(r"\d", line[:start])), default=0)
    return negated(line, since, start, end, governing=True) or offered(
        line, since, start, end, governing=True
    )


def _choice_stated(line: str) -> Extraction | None:
    """The choice the last sentence of `line` states in words, if one and only one."""
    sentence = [x for x in _SENTENCES.split(line.strip()) if x.strip()][-1:] or [""]
    stated = list(_CHOICE_STATED.finditer(sentence[0]))
    if not stated:
        return None
    letter = next(g for g in stated[-1].groups() if g is not None)
    letters = {m.group(1) for m in _OTHER_LETTER.finditer(sentence[0])}
    if letters - {letter, "I"} or _OR.search(sentence[0]):
        return Extraction(letter, "choice_line", "hedged", (letter, *sorted(letters - {letter})))
    return Extraction(letter, "choice_line")
