"""Find the final answer in a model's completion.

Only the text after the reasoning counts (`rewardsmith.verifiers.math.endings`: an answer
only inside ``<think>...</think>`` is none), up to any new chat turn. Rules, in order (the
first that finds something decides):

1. ``\\boxed{...}`` / ``\\fbox{...}`` (`rewardsmith.verifiers.math.boxes`). Two or more
   *different* boxed answers, or a box followed by a different stated answer ("The answer
   is 12", "or $12$"), are hedging, which must not pay: ``problem="hedged"``.
2. An answer phrase: the last "final answer", "the answer is", "Answer:" and what follows
   it on that line ("Answer: $3$ or $4$" is hedging too).
3. The last ``$...$``, ``$$...$$``, ``\\(...\\)`` or ``\\[...\\]`` on the last line.
4. The last number on the last line.

Rules 3 and 4 (and the concluding sentence below) read the answer off the end of the
text, so the text must have ended there: anything after the answer but punctuation, a unit
or a finished sentence means the completion was cut off (``problem="truncated"``). Two
answers joined by "or" on that line are hedging.

Refinements for ways real completions end: a "Final Answer: The final answer is $X$"
after the last box overrides the boxes (they were intermediate results); a prose answer
after a phrase that states one plain number answers that number; a concluding
"Therefore ..." sentence with one plain number after the last math of a paragraph-long
last line answers that number. A number inside a term ("3\\sqrt{2}", "\\log_2 8") is read
as the whole term; a value alone in parentheses after another ("1/4 (25%)") restates it;
a check that only computes and a check mark after the answer are no answer; a closing
sentence with no digits that spells one value after "is", "has", ... answers it ("She has
twelve apples."); a retraction in number words is read in digits.

`strict=True` keeps only rule 1 (and the reasoning and turn rules). Every step is a linear
scan, so a megabyte of hostile text costs milliseconds, not a hang; callers cap the size
before calling.

    >>> extract_answer(r"So $x = 3$, and therefore \\boxed{\\frac{1}{2}}.").answer
    '\\\\frac{1}{2}'
    >>> extract_answer(r"It is \\boxed{3} or maybe \\boxed{4}").problem
    'hedged'
    >>> extract_answer("The answer is 12.").answer
    '12'
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from rewardsmith.verifiers.math.boxes import box_starts, from_boxes, hedge_key, matching_braces
from rewardsmith.verifiers.math.endings import (
    cut_at_turn_end,
    declared_answer,
    final_text,
    finished,
)
from rewardsmith.verifiers.math.fast import as_number, choice_letter
from rewardsmith.verifiers.math.numerals import spelled_values, words_to_digits
from rewardsmith.verifiers.math.stance import (
    QUESTION_AFTER,
    denied_after,
    negated,
    not_a_result,
    offered,
    rejected_after,
    without_rejection,
)
from rewardsmith.verifiers.math.tails import (
    RETRACTING,
    checks_dropped,
    retracted,
    retractions_in_digits,
    stated_after,
)
from rewardsmith.verifiers.math.units import split_unit
from rewardsmith.verifiers.math.words import as_words

__all__ = [
    "Extraction", "extract_answer", "has_several_items", "matching_braces", "said_after",
    "stated_answer",
]  # fmt: skip

_PHRASE = re.compile(
    # not the name of an <answer> tag ("</answer>" is no answer phrase)
    r"(?<!\\)(?<![</])\b(?:final\s+answer|the\s+answer|answer|the\s+(?:solutions|roots)\s+are)\b(?!\s*>)"
    r"(?:\s+is)?\s*(?:[:：=]|[—–](?=\s))?[\s*:]*"  # "Final answer — 42"; "–42" is negative
    # GSM8K's answer line marks an answer as "Answer:" does: a different value after it is
    # a hedge ("#### 29\n\n30" paid 30, "Answer: 29\n\n30" nothing; envhole's search)
    r"|^[ \t]*#{4}[ \t]*",
    re.IGNORECASE | re.MULTILINE,
)
_FINAL_MATH = re.compile(r"\$\$(.+?)\$\$|\\\[(.+?)\\\]|\\\((.+?)\\\)|\$([^$]+)\$", re.DOTALL)
# A number not glued to a word before it ("AZYUK2A" has none); a unit may follow ("5cm").
# A scale or fraction word is part of its number: "3 thousand" is 3000 and "3 tenths" 0.3,
# never the gold 3.
_NUMBER = re.compile(
    r"(?<![A-Za-z\d.])(?:-?\d(?:[\d,]*\d)?(?:\.\d+)?(?:\s*/\s*\d+)?|-?\.\d+)"
    r"(?:\s+(?:hundred|thousand|million|billion|trillion|lakh|crore|dozen|mil|factorial|"
    r"(?:ten|hundred|thousand|million)ths?)s?\b)?"
)
_COMMAND = re.compile(r"\\(?:begin|end)\s*\{[A-Za-z*]+\}|\\[A-Za-z]+")
_WORD = re.compile(r"[A-Za-z]{3,}")
_ANY_WORD = re.compile(r"[^\W\d_]{3,}")
# Two-letter words of prose: a line with one is a sentence, not an expression.
_SMALL_WORDS = re.compile(
    r"\b(?:is|so|or|an|as|at|be|by|if|in|it|of|on|to|we|no|and|i\.\s?e)\b", re.IGNORECASE
)
# What makes a line more than a number: an operator, a bracket, a command, a separator.
_OPERATOR = re.compile(r"[-+*/^=()\[\]{}\\,<>×·÷|!_]")
# The characters of an expression, read backwards from the end of a line: math and
# one-letter names ("x^2 + 5"), never a word.
_EXPRESSION_RUN = re.compile(
    r"(?:(?<![A-Za-z])[A-Za-z](?![A-Za-z])|(?<!\*)\*(?!\*)|[{}]\\|[\d\s.,+\-/^()\[\]{}=×·÷<>])+"
)
# An expression cut at a word: it starts with an operator that needs an operand before it.
_BINARY_START = re.compile(r"\s*[+*/^×·÷]")
_OPERAND_BEFORE = re.compile(r"[A-Za-z\d]+\s*$")
_BOLD = re.compile(r"^(?:\*\*|__)(.*)(?:\*\*|__)$")
# An empty brace group (where rendering took hidden text out); ``\{\}`` is the empty set.
_EMPTY_GROUP = re.compile(r"(?<!\\)\{\s*(?<!\\)\}")
# GSM8K's answer line: "#### 72".
_GSM8K_MARK = re.compile(r"^\s*#{4}\s*")
# A qualification closing the line after a value: not the answer's sentence's value.
_QUALIFIED_END = re.compile(
    r"(?<=[\d$}%)\]])\s*[,;]\s*(?:(?:not\s+)?(?:counting|including)|excluding|without)\b"
    r"[^.!?\n]{0,200}[.!]?\s*$",
    re.IGNORECASE,
)
_EXPLANATION = re.compile(
    r"[,;]?\s+(?:because|since|as|which|so|for|when|where|if|given|from|by|using|"
    r"(?:not\s+)?(?:counting|including)|excluding|without)\s",  # "5, not counting 0"
    re.I,
)
# Math right after an answer phrase; "\$" inside "$...$" is a dollar sign, not its end.
_LEADING_MATH = re.compile(
    r"\$\$(.+?)\$\$|\$((?:\\.|[^$\\])+)\$|\\\((.+?)\\\)|\\\[(.+?)\\\]", re.DOTALL
)
# "Final Answer: The final answer is $X$" (Minerva's format) after the last box.
_FINAL_STATEMENT = re.compile(
    r"\bfinal\s+answer\b\s*[:：]?\s*the\s+final\s+answer\s+is\s*(?=\$)", re.IGNORECASE
)
# A sentence that draws the conclusion, after the last math of a paragraph-long last line.
_CONCLUSION = re.compile(
    r"(?:^|[.!?]\s+)(?:therefore|thus|hence|so|in total|finally)\b(?:[^.!?]|\.(?=\d))*",
    re.IGNORECASE,
)
# Words that doubt or deny what was said before them; closing prose holds none.
_DOUBTS = re.compile(
    r"\b(?:not|no|never|nor|guess\w*|unsure|uncertain|doubt\w*|wrong|incorrect|mistake\w*|"
    r"error\w*|sorry|unfortunately|but)\b|n't\b",
    re.IGNORECASE,
)
_CLOSING_PROSE_CHARS = 300
_RENDERS_EMPTY = " \t{}$"
_NUMBER_PERCENT = re.compile(_NUMBER.pattern + r"(?:\s*\\?%)?")
# Letters glued to a number, and those that leave it a number: ordinal and clock endings
# one-letter units a line of prose glues on ("5s", "12m", "3h"; a bare letter in math is
# a variable, units.py, but a sentence ending "in 5s." means seconds).
_GLUED_LETTERS = re.compile(r"[A-Za-z]+(?![A-Za-z])")
_NUMBER_ENDINGS = frozenset({"st", "nd", "rd", "th", "am", "pm"})
_UNIT_LETTERS = frozenset("smghlLKVWAJN")
# A prose answer with one of these does not state its number plainly: it qualifies it
# ("not 5", "at least 5") or computes with it ("the square root of 2", "negative 5").
_HEDGED_NUMBER = re.compile(
    r"\b(?:not|no|never|cannot|than|least|most|about|approximately|around|nearly|almost|or|either|"
    r"sqrt|square\s+root|root|pi|over|squared|cubed|power|log|ln|exp|sin|cos|tan|sec|csc|cot|"
    r"cis|negative|"
    r"minus|plus|times|divided|half|third|quarter|fraction|reciprocal|inverse|under|within|"
    r"roughly|near|multiple|twice|thrice|double|triple|fold|except|guess|probably|likely|"
    r"maybe|perhaps|possibly|otherwise|assuming|unless|if|rounded|less|more|percent|page|"
    r"problem|question|step|attempts?|confidence|lub|albo|veya|atau|misschien|vielleicht|"
    r"quizás?|forse|возможно|либо|или|أو|approx\w*|circa|ca|estimated?|ballpark|up|upwards?|"
    r"above|below|beyond|between|range|(?:might|could|may)\s+(?:well\s+|also\s+)?be)\b|n't\b|\d(?:st|nd|rd|th)\b|(?<=\d)ish\b|^~\s*\d|"
    r"或|可能|かも|또는|या",
    re.IGNORECASE,
)
# Symbols that make a prose line a formula: its one number is then an operand, not the answer.
_PROSE_FORMULA = re.compile(r"[·×÷*^√∛∜π∞]")
# A last line that concludes: only there are number words read as the answer.
_CONCLUDES = re.compile(
    r"\s*(?:so|therefore|thus|hence|in\s+total|finally|altogether|overall)\b", re.IGNORECASE
)
_SPACE_GROUPS = re.compile(r"-?\d{1,3}(?: \d{3})+")
_ITEM_EVENTS = re.compile(r"\\[{}]|\\pm|\\mp|[()\[\]{},;]|\s(?:or|and)\s")
# "... or $12$", "(or 12)", "or maybe \frac{7}{4}" right after an answer: a second answer
# ("or equivalently $0.5$" is one too, compared with the first like any other).
_OR_AFTER = re.compile(
    r"(?:\s|\$|\\(?:quad|qquad|[,;: !]))*[,;.]?\s*\(?\s*(?:\\text\{\s*)?"
    r"(?:(?:or|alternatively|otherwise)\b|/(?!/))\s*\}?"  # "\boxed{5} / 6" offers 6
    r"(?:\s*(?:maybe|possibly|perhaps|equivalently|simply|just|in other words|i\.e\.)(?!\w),?)?\s*"
    r"(?:\$([^$]{1,500})\$|\\\((.{1,500}?)\\\)"
    r"|([^\n$]{1,300}?)(?=\s*(?:\)\s*(?:[.;!?]|\n|$)|[.;!?](?:\s|$)|\n|$)))",
    re.IGNORECASE,
)
_QUOTES = re.compile(r'^(?:\\?"|“)|(?:\\?"|”)$')
# Another formula right after the first one of an answer phrase: a list, or "/" a hedge.
_MORE_MATH = re.compile(
    r"\s*(,|;|/|&|\band\b)\s*(?:\$((?:\\.|[^$\\]){1,500})\$|\\\((.{1,500}?)\\\))", re.I
)
_MAX_LISTED = 32
# "12 or 11", "12, or maybe 11", and "12. Or 11" (a sentence that only offers another value);
# "1/4, i.e. 25%" restates its value, and one that restates another offers it.
_OR_BETWEEN = re.compile(
    r"\s*[,.;，、]?\s*(?:(?:and/)?or(?:\s+(?:maybe|possibly|perhaps))?|maybe|possibly|perhaps|"
    r"i\.\s?e\.,?|that\s+is,?|"
    r"lub|albo|veya|atau|of\s+misschien|oder|ou|o|или|либо|возможно|أو|या|也可能是|或者?|または)\s*",
    re.I,
)
# What closes the expression a number ends ("31^{9} or 9", "f(2) or 3"): the value before
# the "or" is that expression, still an answer offered beside the last one.
_CLOSERS = re.compile(r"^(?:\s|[)\]}!%']|\\right\s*\S|\\[})\]])*")
# What makes the number after it an argument, not a value of its own: a command, a root
# or function name, a power, an index or a product ("\sqrt{2}", "√2", "sqrt(2)", "π·2").
# A name glued to a coefficient is one too: "2sin(pi/6)" is 2 sin(pi/6), never pi/6.
_ARGUMENT_OF = re.compile(
    r"(?:\\[A-Za-z]+(?:_\{?\w{1,4}\}?)?|[√∛∜π·×^_]|(?<![A-Za-z])(?:sqrt|cbrt|log|ln|exp|"
    r"(?:arc)?(?:sin|cos|tan|sec|csc|cot)h?|cis|times|over))"
    r"\s*[{(\[]?\s*$"
)
# A degree mark after the angle of cis, and the parenthesis closing the call.
_CIS_DEGREES_AFTER = re.compile(r"(?:\s*(?:°|\^\s*\{?\s*\\circ\s*\}?|degrees?\b|deg\b)\s*\)?)?")
# Where that term starts: the run of math back to a space, and a coefficient before it.
_TERM_START = re.compile(r"(?:-?\d+(?:\.\d+)?\s+)?(?:\b(?:times|over)\s+)?[^\s$]*$")
# A value alone in parentheses after another ("1/4 (25%)", "(or 25%)", "(i.e. 25%)").
_ASIDE_OPENS = re.compile(r"\s*[,:]?\s*\(\s*(?:or|i\.\s?e\.,?|that\s+is,?)?\s*", re.I)
_ASIDE_CLOSES = re.compile(r"\s*\)")
# A check mark after an answer says it was checked: no part of the answer.
_CHECK_MARKS = re.compile(r"\s*[✓✔☑]\ufe0f?(?=\s*$)", re.MULTILINE)
_PERCENT_ASIDE = re.compile(r"\d\s+\(\s*(?:or\s+|i\.\s?e\.,?\s*)?-?[\d.]+\s*\\?%\s*\)$")
_UNIT_BEFORE_POWER = re.compile(r"\\(?:text|textrm|mathrm|mbox)\s*\{[^{}]*\}\s*\^\s*\{?\s*$")
_CLOSING = re.compile(r"(?:[)\]}]|\\right\s*[)\]}|.]|\\\})*")  # "\{1, 2\}" closes with "\}"
# A line that goes on offering answers after the line before it ("2\n or 3", left where a
# hidden comment between them was taken out).
_OR_LINE = re.compile(r"\s*(?:(?:and/)?or|maybe|possibly|perhaps)\b", re.I)


@dataclass(frozen=True, slots=True)
class Extraction:
    """What was found: the answer text, by which rule, and any problem."""

    answer: str | None
    method: str
    """One of "boxed", "restated" (a box and a stated answer after it), "final_statement",
    "answer_phrase", "conclusion", "final_math", "last_number", "none"."""
    problem: str | None = None
    """"hedged" (different answers), "unbalanced" (a box never closes), "empty_box",
    "truncated" (cut off after a fallback answer), "negated" (the text denies the value it
    ends with), "unasserted" (it asks about or supposes that value), "reasoning_only" or
    None."""
    candidates: tuple[str, ...] = ()
    """The distinct answers, when there were several."""
    denied: tuple[str, ...] = ()
    """Values the text rejects right after its answer ("5, not 6" denies 6): the verifier
    checks that the answer is none of them ("5, not 5" says nothing)."""


def _denying(found: Extraction, *rejected: str | None) -> Extraction:
    """`found` with the values its text rejects beside it, if any."""
    values = tuple(r for r in rejected if r is not None)
    if not values or found.answer is None:
        return found
    return replace(found, denied=(*found.denied, *values))


def _alternative(rest: str) -> str | None:
    """The second answer in "... or $12$" right after an answer, if there is one."""
    match = _OR_AFTER.match(rest)
    if match is None:
        return None
    answer = next(g for g in match.groups() if g is not None).strip()
    if answer.count("(") > answer.count(")") and rest[match.end() :].lstrip().startswith(")"):
        answer += ")"  # "or (3, 5)": the tuple's own parenthesis, not an aside's
    return answer if match.group(3) is None or _value_like(answer) else None


def _value_like(answer: str) -> bool:
    """A stated answer that could contradict a box: math, a number or a choice letter."""
    return bool(re.search(r"[\d\\]", answer)) or choice_letter(answer) is not None


def _restated(after_box: str, answer: str) -> str | None:
    """A different answer stated after the last box ("\\boxed{15}. The answer is 12.",
    "\\boxed{15}. Actually, 12.": `tails.stated_after`)."""
    alternative = _alternative(after_box)
    if alternative is not None:
        return alternative
    phrase = _after_phrase(after_box)
    if phrase and phrase.answer and _value_like(phrase.answer):
        return phrase.answer
    return stated_after(after_box, answer)


def _from_boxes(text: str) -> Extraction | None:
    boxes = from_boxes(text)
    if boxes is None:
        return None
    found = Extraction(boxes.answer, "boxed", boxes.problem, boxes.candidates)
    offered = _last_number(boxes.answer) if boxes.answer and boxes.problem is None else None
    if offered is not None and offered.problem == "hedged":  # \boxed{9 or possibly 9}
        found = Extraction(boxes.answer, "boxed", "hedged", offered.candidates)
    if found.problem is None and boxes.answer is not None:
        tail = _EMPTY_GROUP.sub("", text[boxes.last_end :][:20_000])  # hidden text was there
        said = _last_word(retractions_in_digits(tail), found)
        # "\boxed{5}, not 6" rejects 6; "\boxed{5}. It is not 5." denies its own answer
        return _denying(said, rejected_after(tail), *denied_after(tail))
    return found


def said_after(tail: str, found: Extraction) -> Extraction:
    """`found`, read with the text after it as the text after a box is: a retraction
    there names the final answer, another value offered is a hedge ("<answer>5</answer>
    or 6")."""
    if found.answer is None or found.problem is not None or not tail.strip():
        return found
    return _last_word(retractions_in_digits(tail[:20_000]), found)


def _last_word(tail: str, found: Extraction, depth: int = 0) -> Extraction:
    """`found`, unless the text after it states another answer: a retraction ("On second
    thought, it is 13") names the new final answer, anything else is a hedge."""
    assert found.answer is not None
    other = _restated(tail, found.answer)
    if other is None or hedge_key(other) == hedge_key(found.answer):
        return found
    rest = tail[tail.find(other) + len(other) :]
    if depth < 3 and retracted(tail, other):
        return _last_word(rest, Extraction(other, "retracted"), depth + 1)
    candidates: tuple[str, ...] = (found.answer, other)
    if depth < 3:  # the text after a restatement may still retract or offer another
        later = _last_word(rest, found, depth + 1)
        if later.method == "retracted":
            return later
        if later.problem == "hedged":
            candidates = (*candidates, *later.candidates[1:])
    return replace(found, method="restated", problem="hedged", candidates=candidates)


def _after_phrase(text: str) -> Extraction | None:
    matches = list(_PHRASE.finditer(text[-20_000:]))
    if not matches:
        return None
    # An empty group renders nothing (it is left where hidden text was: "{}8" shows 8).
    rest = _EMPTY_GROUP.sub("", text[-20_000:][matches[-1].end() :])
    math = _LEADING_MATH.match(rest)
    if QUESTION_AFTER.match(rest[math.end() :] if math else rest):  # "Is the answer $12$?"
        return Extraction(None, "answer_phrase", "unasserted")
    if math:
        return _phrase_math(rest, math)
    sentence = re.split(r"\.(?:\s|$)", rest.split("\n", 1)[0], maxsplit=1)[0]  # not 3.5
    if not re.search(r"\bis\b|[:：=]", matches[-1].group()) and _states_nothing(
        rest.split("\n", 1)[0]
    ):
        return None  # "This answer was checked carefully." names no answer
    line = _EXPLANATION.split(sentence, maxsplit=1)[0]  # "12 because ..." answers 12
    if " is " in line:  # "Final Answer: The volume of $V$ is 120" answers 120
        line = line.rsplit(" is ", 1)[1]
    line = _QUOTES.sub("", line.strip().strip("*").strip())  # 'is "$12$ and $13$".'
    line, rejected = without_rejection(line)  # "5, not 6" states 5 and rejects 6
    line = line.strip().strip("*").strip()  # "**5**, not **6**"
    line = re.sub(r"^~(?=\s*[\d.])", "≈", line)  # in prose a tilde means "about", not TeX's space
    chained = _last_number(line)
    if chained is not None and chained.problem == "hedged":  # "1/4, or 25%": two statements
        return Extraction(chained.answer, "answer_phrase", "hedged", chained.candidates)
    answer = _number_in_prose(line) or line
    if not answer:
        return None
    tail = rest[len(sentence) :]
    found = _denying(Extraction(answer, "answer_phrase"), *rejected, *denied_after(tail))
    return _unless_restated(found, tail)


def _phrase_math(rest: str, math: re.Match[str]) -> Extraction:
    """The math after an answer phrase: one formula, or several joined as a list ("$2$
    and $3$" is the list 2, 3; "$2$ / $3$" offers two answers)."""
    items = [next(g for g in math.groups() if g is not None).strip()]
    after = rest[math.end() :]
    while len(items) < _MAX_LISTED and (more := _MORE_MATH.match(after)):
        item = next(g for g in more.groups()[1:] if g is not None).strip()
        if more.group(1) == "/":
            return Extraction(items[-1], "answer_phrase", "hedged", (items[-1], item))
        items.append(item)
        after = after[more.end() :]
    found = Extraction(", ".join(items), "answer_phrase")
    found = _denying(found, rejected_after(after), *denied_after(after))
    return _unless_restated(found, after, _alternative(after))  # "Answer: $3$ or $4$"


def _unless_restated(found: Extraction, tail: str, other: str | None = None) -> Extraction:
    """`found`, or a hedge when `tail` (the text after it) states a different answer."""
    assert found.answer is not None
    other = other if other is not None else stated_after(tail, found.answer)
    if other is not None and hedge_key(other) != hedge_key(found.answer):
        return replace(found, problem="hedged", candidates=(found.answer, other))
    return found


def _number_in_prose(line: str) -> str | None:
    """The one number of a prose answer ("Jane started Sphere 3 hours ago" answers 3), if
    the line is words without math, states exactly one number and neither qualifies it
    nor computes with it (see `_HEDGED_NUMBER`)."""
    if "$" in line or "\\" in line or not _WORD.search(line) or _HEDGED_NUMBER.search(line):
        return None
    if _PROSE_FORMULA.search(line):  # "That gives π·4" answers 4π, not 4
        return None
    numbers = _NUMBER_PERCENT.findall(line)
    return numbers[0].strip() if len(numbers) == 1 else None


def stated_answer(text: str, start: int = 0) -> str | None:
    """The math of the last "Final Answer: The final answer is $X$" after ``start``. After
    the last box it is the model's last word and overrides intermediate boxes ("... =
    \\boxed{255}"); in a gold written as a worked solution it is the gold answer."""
    found = _final_statement(text, start)
    return found.answer if found else None


def _final_statement(text: str, start: int) -> Extraction | None:
    tail = text[start:][-20_000:]
    matches = list(_FINAL_STATEMENT.finditer(tail))
    math = _LEADING_MATH.match(tail, matches[-1].end()) if matches else None
    if math is None:
        return None
    answer = next(g for g in math.groups() if g is not None).strip()
    after = tail[math.end() :]  # "... is $3$ or $4$", "... is $3$. Actually, $4$."
    return _unless_restated(Extraction(answer, "final_statement"), after, _alternative(after))


def _conclusion(line: str) -> tuple[str, str] | None:
    """In a paragraph-long last line, a concluding sentence after the last math that states
    one number ("... $d = \\frac{90}{n}$ ... Therefore, there are 12 sequences."); the
    number and the text after it."""
    spans = list(_FINAL_MATH.finditer(line[-2_000:]))
    if not spans:
        return None
    tail = line[-2_000:][spans[-1].end() :].lstrip()
    found = None
    for sentence in _CONCLUSION.finditer(tail):
        numbers = list(_NUMBER_PERCENT.finditer(sentence.group()))
        if not _HEDGED_NUMBER.search(sentence.group()) and len(numbers) == 1:
            found = (numbers[0].group().strip(), tail[sentence.start() + numbers[0].end() :])
        else:
            found = None
    return found


def _answer_line(text: str) -> str:
    """The last line that is not closing prose (`_states_nothing`): "9\n\nI am confident
    this is correct." is read as its "9". A line that renders to nothing (the empty group or
    formula left where hidden content was, `rendered.py`) is no line."""
    lines = [line for line in text[-20_000:].splitlines() if line.strip(_RENDERS_EMPTY)]
    while len(lines) > 1 and _states_nothing(lines[-1]):
        lines.pop()
    last = lines[-1] if lines else ""
    states_a_value = bool(re.search(r"\d", last)) or words_to_digits(last) != last
    if len(lines) > 1 and _OR_LINE.match(last) and states_a_value:
        return f"{lines[-2]} {last}"
    return last


def _states_nothing(line: str) -> bool:
    """A line that neither states a value nor doubts the answer before it: confidence, a
    sign-off, a remark ("Hope this helps!", "This was double-checked."). One that takes the
    answer back, offers another or doubts it ("Actually, I am not sure.", "Or maybe
    something else.") is the model's last word and keeps the answer unread."""
    return (
        len(line) <= _CLOSING_PROSE_CHARS
        and line.rstrip(" *_\"')]").endswith((".", "!", "。"))  # a cut-off line is no close
        and not re.search(r"[\d$\\?]", line)
        and words_to_digits(line) == line
        and not RETRACTING.search(line)
        and not _DOUBTS.search(line)
    )


def _last_of(matches: list[re.Match[str]], line: str, method: str) -> Extraction | None:
    """The last match on the last line as the answer: hedged when an "or" joins it to the
    one before, truncated when the line goes on unfinished after it."""
    if not matches:
        return None
    last = matches[-1]
    answer = _value(last)
    offered_too = _or_chain(matches, line)
    if offered_too:  # "4 or maybe 3 or maybe 3": every value of the chain is an answer
        return Extraction(answer, method, "hedged", (*offered_too, answer))
    if not finished(line[last.end() :]):
        return Extraction(None, method, "truncated")
    previous_end = matches[-2].end() if len(matches) > 1 else 0
    since = max(previous_end, last.start() - 300)
    if negated(line, since, last.start(), last.end()):
        return Extraction(None, method, "negated")
    if offered(line, since, last.start(), last.end()):
        return Extraction(None, method, "unasserted")
    return Extraction(answer, method)


def _value(match: re.Match[str]) -> str:
    return next((g for g in match.groups() if g is not None), match.group()).strip()


def _or_chain(matches: list[re.Match[str]], line: str) -> tuple[str, ...]:
    """The values joined to the last one by "or" (or "maybe", ...), back to the first; a
    value is the whole expression its number ends ("x^2 + 14 or 14", "31^{9} or 9")."""
    chained: list[str] = []
    for before, after in zip(reversed(matches[:-1]), reversed(matches[1:]), strict=True):
        gap = line[before.end() : after.start()]
        closers = _CLOSERS.match(gap).group().rstrip()  # type: ignore[union-attr]
        joined = _OR_BETWEEN.fullmatch(gap[len(closers) :])
        if not (joined or _restated_aside(gap[len(closers) :], line[after.end() :])):
            break
        closed = before.end() + len(closers)
        value = _trailing_expression(line[:closed], before) or before
        value = _enclosing_term(line, value, closed) or value  # "3√6. or 6": 3√6 and 6
        chained.insert(0, value.group().strip() if value is not before else _value(before))
    return tuple(chained)


def _restated_aside(gap: str, rest: str) -> bool:
    """Whether a value stands alone in parentheses right after another ("1/4 (25%)",
    "3000 (or 3 thousand)"): a second statement of the answer, compared like any other."""
    return bool(_ASIDE_OPENS.fullmatch(gap) and _ASIDE_CLOSES.match(rest))


def _final_math(line: str) -> Extraction | None:
    # The last line is capped so that unclosed delimiters cannot make the scan quadratic.
    line = line[-2_000:]
    return _last_of(list(_FINAL_MATH.finditer(line)), line, "final_math")


def _last_number(line: str) -> Extraction | None:
    if _SPACE_GROUPS.fullmatch(line.strip().rstrip(".")):  # "1 000" is one number
        return Extraction(line.strip().rstrip("."), "last_number")
    line = line[-2_000:]
    numbers = [n for n in _NUMBER_PERCENT.finditer(line) if not _unit_power(line, n)]
    if numbers and not_a_result(line, numbers[-1]):
        return Extraction(None, "last_number", "unasserted")
    # The expression the last number closes ("31^{9}. Yes." is 31^{9}, not 9), even where
    # prose follows it on the line.
    closed = _CLOSING.match(line, numbers[-1].end()).end() if numbers else 0  # type: ignore[union-attr]
    expression = _trailing_expression(line[:closed], numbers[-1]) if numbers else None
    if expression is not None:  # the expression is the answer, read whole
        numbers = [n for n in numbers if n.end() <= expression.start()] + [expression]
    term = _enclosing_term(line, numbers[-1], closed) if numbers else None
    if term is not None:  # "3\sqrt{2}" is the answer, never its radicand 2
        numbers = [n for n in numbers if n.end() <= term.start()] + [term]
    # Every value with its glued letters: "11x or 11" offers two answers, never 11 twice.
    numbers = [_glued_term(line, n) or n for n in numbers]
    return _last_of(numbers, line, "last_number")


def _glued_term(line: str, number: re.Match[str]) -> re.Match[str] | None:
    """The number and the letters glued to it, read whole where the letters are no unit
    ("5x", "4j", "5k" are terms, not 5; "5cm", "5s", "3rd", "5pm" are numbers); None where
    nothing is glued to it."""
    letters = _GLUED_LETTERS.match(line, number.end())
    if letters is None or number.group().rstrip().endswith("%"):
        return None
    word = letters.group()
    if word.lower() in _NUMBER_ENDINGS or word in _UNIT_LETTERS:
        return None
    if split_unit(number.group() + word).unit is not None:
        return None
    return re.compile(re.escape(line[number.start() : letters.end()])).search(line, number.start())


def _enclosing_term(line: str, last: re.Match[str], closed: int) -> re.Match[str] | None:
    """The term the last value is an argument of, read whole ("3\\sqrt{2}", "3 sqrt(2)",
    "π·2", "\\log_2 8", "3 times 2"); None where the value stands alone."""
    before = line[: last.start()]
    if not _ARGUMENT_OF.search(before):
        return None
    start = _TERM_START.search(before.rstrip())  # "\\sin 30": from "\\sin" on
    assert start is not None  # it matches the empty string at the end
    end = max(closed, last.end())
    if "cis" in start.group():  # "cis 90°", "cis(90 degrees)": the angle's unit is its own
        end = _CIS_DEGREES_AFTER.match(line, end).end()  # type: ignore[union-attr]
    return re.compile(re.escape(line[start.start() : end])).search(line, start.start())


def _unit_power(line: str, number: re.Match[str]) -> bool:
    """Whether `number` is the power of a unit ("12 \\text{ m}^2" answers 12, not 2)."""
    return bool(_UNIT_BEFORE_POWER.search(line[max(0, number.start() - 80) : number.start()]))


def _final_display(text: str) -> str | None:
    """A display block ($$...$$ or \\[...\\]) that ends the completion, over several lines."""
    tail = text[-5_000:].rstrip().rstrip(".").rstrip()
    for left, right in (("$$", "$$"), (r"\[", r"\]")):
        if tail.endswith(right):
            start = tail.rfind(left, 0, len(tail) - len(right))
            if start >= 0:
                return tail[start + len(left) : len(tail) - len(right)].strip() or None
    return None


def has_several_items(answer: str) -> bool:
    """Whether an answer lists several values: a comma or semicolon outside brackets or
    inside ``\\{...\\}``, "or"/"and", or ``\\pm`` ("2, 3", "\\{1, 2\\}", "x = \\pm 1").
    A tuple or interval in brackets is one value."""
    answer = answer.strip().strip("$").strip()
    if answer.startswith("{") and answer.endswith("}"):
        answer = answer[1:-1]  # {1, 2, 3}: a set written without backslashes
    depth = 0
    for match in _ITEM_EVENTS.finditer(answer):
        token = match.group()
        if token in ("(", "[", "{"):  # not \{: the members of a set are several values
            depth += 1
        elif token in (")", "]", "}"):
            depth -= 1
        elif depth == 0 or token in (r"\pm", r"\mp"):
            return True
    return False


def _bare_expression(line: str) -> str | None:
    """A last line that is math without delimiters (``\\frac{10}{9}``, ``x^2 + 5``,
    ``(22, 5)``), not prose: it is the answer whole, never its last number."""
    line = _BOLD.sub(r"\1", line.strip().rstrip(".").strip())  # "**C**" is the letter C
    line = line.lstrip("=").strip()  # "= 42" is 42
    if len(line) > 200 or _NUMBER.fullmatch(line) or not _OPERATOR.search(line):
        return None  # a plain number (or a number and its unit) is the last-number rule's
    if _PERCENT_ASIDE.search(line):  # "1/4 (25%)" restates 1/4: no product
        return None
    words = _COMMAND.sub(" ", line)
    if _WORD.search(words) or _SMALL_WORDS.search(words) or _ANY_WORD.search(words):
        return None  # "[1, 3) возможно [1, 3)" is prose: a word in any script
    return line


def _trailing_expression(line: str, number: re.Match[str]) -> re.Match[str] | None:
    """The expression that ends a prose line, when its last number is only a part of it
    ("so the total is 22 - 5." is 22 - 5, not 5); None when the number stands alone."""
    end = len(line.rstrip().rstrip(".").rstrip())
    if number.end() > end:
        return None
    start = end
    for _ in range(3):  # "3ab + 5": a word the run stopped at is the operator's operand
        run = _EXPRESSION_RUN.match(line[:start][::-1])
        start -= run.end() if run else 0
        operand = _OPERAND_BEFORE.search(line, 0, start)
        if not (_BINARY_START.match(line, start) and operand):
            break
        start = operand.start()
    while start < end and line[start] in " \t=,:":  # "x = 22 - 5": from the name on
        start += 1
    if start > number.start() or not _OPERATOR.search(line[start:end]):
        return None
    return re.compile(re.escape(line[start:end])).search(line, start)


def _fallback(text: str) -> Extraction:
    """Rules 3 and 4 and the concluding sentence: the answer read off the end of the text;
    a rejection of another value that ends it ("It is 5, not 6.") is set apart first."""
    marked = _answer_line(text)
    return _denying(_read_off(text, marked), *without_rejection(marked)[1])


def _read_off(text: str, marked: str) -> Extraction:
    line = _GSM8K_MARK.sub("", marked)  # "#### 72" answers 72
    if line != marked and as_words(line):  # "#### \text{no}" answers no
        return Extraction(line.strip(), "final_math")
    line = _EMPTY_GROUP.sub("", line)  # left where hidden text was: no operator
    line = checks_dropped(line)  # "So, $x = 3$. Let me double-check: $3 + 3 = 6$." is 3
    line = without_rejection(line)[0]  # "It is 5, not 6." states 5
    line = _QUALIFIED_END.sub("", line)  # "It is 12, not counting the 2 corners." states 12
    concluded = _conclusion(line)
    if concluded:
        answer, tail = concluded
        return Extraction(answer, "conclusion") if finished(tail) else (
            Extraction(None, "conclusion", "truncated")
        )  # fmt: skip
    display = _final_display(text)
    if display:
        return Extraction(display, "final_math")
    found = _final_math(line)
    if found is None and _bare_expression(line):
        found = Extraction(_bare_expression(line), "final_math")
    if found is None and not _NUMBER.search(line):
        spelled = words_to_digits(line)  # "So, five." and a last line that is "twelve"
        if _CONCLUDES.match(line) or re.fullmatch(r"\d+", spelled.strip().rstrip(".!")):
            found = _last_number(spelled)
        else:
            found = _spelled_statement(line, text[: text.rfind(line)])
    return found or _last_number(line) or Extraction(None, "none")


def _spelled_statement(line: str, before: str) -> Extraction | None:
    """The one value the closing sentence of a line with no digits spells ("She has
    twelve apples.", "The probability is one half."), where no number comes before it or
    it restates the last one ("4 x 3 = 12.\nShe has twelve apples."): after "So we get 12.",
    "There are two cases to check." is a remark. Not a lone "one" (a pronoun as often as a
    number); none where the sentence spells two values, asks, or qualifies its value
    ("not five", "about five")."""
    sentence = re.split(r"(?<=[.!?])\s+", line.strip())[-1]
    runs = spelled_values(sentence)
    if len(runs) != 1 or sentence.rstrip().endswith("?"):
        return None
    match, value = runs[0]
    rest = f"{sentence[: match.start()]} {sentence[match.end() :]}"
    hedged = _HEDGED_NUMBER.search(rest)
    if hedged and not negated(sentence, 0, match.start(), match.end()):
        # a denial in the description ("the n such that n+1 is not prime is forty-two")
        hedged = _HEDGED_NUMBER.search(_DENIAL_WORDS.sub(" ", rest))
    if match.group().lower() == "one" or hedged:
        return None
    if not _STATES_BEFORE.search(sentence[: match.start()]):  # "I give up after twelve tries."
        return None
    earlier = _NUMBER.findall(before[-20_000:])
    if earlier and _number_value(earlier[-1]) != _number_value(value):
        return None
    return Extraction(value, "last_number")


_DENIAL_WORDS = re.compile(r"\b(?:not|never|cannot)\b|n't\b", re.IGNORECASE)


# A value stated: right after a verb of being or having ("There are five ways.", "She has
# twelve apples.", "The probability is one half.").
_STATES_BEFORE = re.compile(
    r"\b(?:is|are|was|were|be|has|have|had|equals?|makes?|gets?|needs?|takes?|costs?|"
    r"weighs?|totals?|comes\s+to)\s+(?:exactly\s+|only\s+|just\s+)?$",
    re.IGNORECASE,
)


def _number_value(text: str) -> object:
    number = as_number(text.replace(",", ""))
    return text if number is None else number.value


def extract_answer(text: str, *, strict: bool = False) -> Extraction:
    """The final answer of a completion; see the module docstring for the rules."""
    text, reasoning = final_text(cut_at_turn_end(text))
    if reasoning == "unclosed":
        return Extraction(None, "none", "reasoning_only")
    declared = declared_answer(text)
    if declared is not None:  # "<answer>[73, 30]</answer>": the tag's content
        text = "\n" + declared[0]
    found = _extract(_CHECK_MARKS.sub("", text), strict)  # "Answer: 5 ✓" answers 5
    if declared is not None:
        found = said_after(declared[1], found)
    if reasoning and found.answer is None and found.problem is None:
        return Extraction(None, "none", "reasoning_only")
    return found


def _extract(text: str, strict: bool) -> Extraction:
    boxed = _from_boxes(text)
    if boxed is not None and not strict:
        stated = _final_statement(text, box_starts(text)[-1]) if box_starts(text) else None
        return stated or boxed
    if boxed is not None or strict:
        return boxed if boxed is not None else Extraction(None, "none")
    text = retractions_in_digits(text)  # "42. On second thought, forty-four." ends in 44
    return _after_phrase(text) or _fallback(text)
