"""Find the final answer in a model's completion.

Rules, in order (the first that finds something decides):

1. ``\\boxed{...}`` / ``\\fbox{...}`` (nested braces matched). If the completion boxes two
   or more *different* answers it is hedging, which must not pay: the extraction reports
   ``problem="hedged"``.
2. An answer phrase: the last "final answer", "the answer is", "Answer:" and what follows
   it on that line.
3. The last ``$...$``, ``$$...$$``, ``\\(...\\)`` or ``\\[...\\]`` on the last line.
4. The last number on the last line.

Refinements for ways real completions end: a "Final Answer: The final answer is $X$"
after the last box overrides the boxes (they were intermediate results); a prose answer
after a phrase that states one plain number answers that number; a concluding
"Therefore ..." sentence with one plain number after the last math of a paragraph-long
last line answers that number.

`strict=True` keeps only rule 1. Every step is a linear scan, so a megabyte of hostile
text costs milliseconds, not a hang; callers cap the size before calling.

    >>> extract_answer(r"So $x = 3$, and therefore \\boxed{\\frac{1}{2}}.").answer
    '\\\\frac{1}{2}'
    >>> extract_answer(r"It is \\boxed{3} or maybe \\boxed{4}").problem
    'hedged'
    >>> extract_answer("The answer is 12.").answer
    '12'
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = [
    "Extraction", "extract_answer", "has_several_items", "matching_braces", "stated_answer"
]  # fmt: skip

_BOX = re.compile(r"\\(?:boxed|fbox)\s*\{")
_BRACE_EVENTS = re.compile(r"\\.|[{}]", re.DOTALL)
_PHRASE = re.compile(
    r"\b(?:final\s+answer|the\s+answer|answer)\b(?:\s+is)?\s*[:：]?[\s*:]*", re.IGNORECASE
)
_FINAL_MATH = re.compile(r"\$\$(.+?)\$\$|\\\[(.+?)\\\]|\\\((.+?)\\\)|\$([^$]+)\$", re.DOTALL)
# A number not glued to a word before it ("AZYUK2A" has none); a unit may follow ("5cm").
_NUMBER = re.compile(r"(?<![A-Za-z\d.])(?:-?\d[\d,]*(?:\.\d+)?(?:\s*/\s*\d+)?|-?\.\d+)")
# Chat-template tokens: text after them is a new turn the model should not have written.
_TURN_END = re.compile(r"<\|(?:im_start|im_end|endoftext|eot_id|end_of_text)\|>")
_COMMAND = re.compile(r"\\[A-Za-z]+")
_WORD = re.compile(r"[A-Za-z]{3,}")
_EXPLANATION = re.compile(
    r"[,;]?\s+(?:because|since|as|which|so|for|when|where|if|given|from|by|using)\s", re.I
)
# Math right after an answer phrase; "\$" inside "$...$" is a dollar sign, not its end.
_LEADING_MATH = re.compile(
    r"\$\$(.+?)\$\$|\$((?:\\.|[^$\\])+)\$|\\\((.+?)\\\)|\\\[(.+?)\\\]", re.DOTALL
)
# "Final Answer: The final answer is $X$" (Minerva's format) after the last box.
_FINAL_STATEMENT = re.compile(
    r"\bfinal\s+answer\b\s*[:：]?\s*(?:the\s+final\s+answer\s+is\s*)?(?=\$)", re.IGNORECASE
)
# A sentence that draws the conclusion, after the last math of a paragraph-long last line.
_CONCLUSION = re.compile(
    r"(?:^|[.!?]\s+)(?:therefore|thus|hence|so|in total|finally)\b(?:[^.!?]|\.(?=\d))*",
    re.IGNORECASE,
)
_NUMBER_PERCENT = re.compile(_NUMBER.pattern + r"(?:\s*\\?%)?")
# A prose answer with one of these does not state its number plainly: it qualifies it
# ("not 5", "at least 5") or computes with it ("the square root of 2", "negative 5").
_HEDGED_NUMBER = re.compile(
    r"\b(?:not|no|never|cannot|than|least|most|about|approximately|around|nearly|almost|"
    r"sqrt|square\s+root|root|pi|over|squared|cubed|power|log|ln|exp|sin|cos|tan|negative|"
    r"minus|plus|times|divided|half|third|quarter|fraction|reciprocal|inverse)\b|n't\b",
    re.IGNORECASE,
)
_SPACE_GROUPS = re.compile(r"-?\d{1,3}(?: \d{3})+")
_MAX_BOXES = 64
_ITEM_EVENTS = re.compile(r"\\[{}]|\\pm|\\mp|[()\[\]{},;]|\s(?:or|and)\s")
_HEDGE_SPACES = re.compile(r"\s+|\\[,;!: ]|\\(?:left|right|displaystyle)(?![A-Za-z])")


@dataclass(frozen=True, slots=True)
class Extraction:
    """What was found: the answer text, by which rule, and any problem."""

    answer: str | None
    method: str
    """One of "boxed", "final_statement", "answer_phrase", "conclusion", "final_math",
    "last_number", "none"."""
    problem: str | None = None
    """"hedged" (different boxed answers), "unbalanced" (a box never closes) or None."""
    candidates: tuple[str, ...] = ()
    """The distinct boxed answers, when there were several."""


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


def _boxed(text: str) -> tuple[list[str], bool]:
    starts = [m.end() - 1 for m in _BOX.finditer(text)][-_MAX_BOXES:]
    if not starts:
        return [], False
    pairs = matching_braces(text)
    found: list[str] = []
    outer_end = -1
    unbalanced = False
    for start in starts:
        end = pairs.get(start)
        if end is None:
            unbalanced = True
            continue
        if start < outer_end:  # a box inside a box: the outer one is the answer
            continue
        outer_end = end
        found.append(_BOX.sub("{", text[start + 1 : end]).strip())
    return found, unbalanced


def _hedge_key(answer: str) -> str:
    return _HEDGE_SPACES.sub("", answer).replace("dfrac", "frac").rstrip(".")


def _from_boxes(text: str) -> Extraction | None:
    boxes, unbalanced = _boxed(text)
    if not boxes:
        return Extraction(None, "none", "unbalanced") if unbalanced else None
    distinct: dict[str, str] = {}
    for box in boxes:
        distinct.setdefault(_hedge_key(box), box)
    if len(distinct) > 1:
        return Extraction(boxes[-1], "boxed", "hedged", tuple(distinct.values()))
    return Extraction(boxes[-1], "boxed")


def _after_phrase(text: str) -> str | None:
    matches = list(_PHRASE.finditer(text[-20_000:]))
    if not matches:
        return None
    rest = text[-20_000:][matches[-1].end() :]
    math = _LEADING_MATH.match(rest)
    if math:
        return next(g for g in math.groups() if g is not None).strip()
    line = rest.split("\n", 1)[0]
    line = re.split(r"\.(?:\s|$)", line, maxsplit=1)[0]  # a sentence end, not a decimal point
    line = _EXPLANATION.split(line, maxsplit=1)[0]  # "12 because ..." answers 12
    if " is " in line:  # "Final Answer: The volume of $V$ is 120" answers 120
        line = line.rsplit(" is ", 1)[1]
    line = line.strip().strip("*").strip()
    return _number_in_prose(line) or line or None


def _number_in_prose(line: str) -> str | None:
    """The one number of a prose answer ("Jane started Sphere 3 hours ago" answers 3), if
    the line is words without math, states exactly one number and neither qualifies it
    nor computes with it (see `_HEDGED_NUMBER`)."""
    if "$" in line or "\\" in line or not _WORD.search(line) or _HEDGED_NUMBER.search(line):
        return None
    numbers = _NUMBER_PERCENT.findall(line)
    return numbers[0].strip() if len(numbers) == 1 else None


def stated_answer(text: str, start: int = 0) -> str | None:
    """The math of the last "Final Answer: The final answer is $X$" after ``start``. After
    the last box it is the model's last word and overrides intermediate boxes ("... =
    \\boxed{255}"); in a gold written as a worked solution it is the gold answer."""
    tail = text[start:][-20_000:]
    matches = list(_FINAL_STATEMENT.finditer(tail))
    if not matches:
        return None
    math = _LEADING_MATH.match(tail, matches[-1].end())
    return next(g for g in math.groups() if g is not None).strip() if math else None


def _conclusion(line: str) -> str | None:
    """In a paragraph-long last line, a concluding sentence after the last math that states
    one number ("... $d = \\frac{90}{n}$ ... Therefore, there are 12 sequences.")."""
    spans = list(_FINAL_MATH.finditer(line[-2_000:]))
    if not spans:
        return None
    tail = line[-2_000:][spans[-1].end() :].lstrip()
    found = None
    for sentence in _CONCLUSION.finditer(tail):
        if not _HEDGED_NUMBER.search(sentence.group()):
            numbers = _NUMBER_PERCENT.findall(sentence.group())
            found = numbers[0].strip() if len(numbers) == 1 else None
    return found


def _last_line(text: str) -> str:
    for line in reversed(text[-20_000:].splitlines()):
        if line.strip():
            return line
    return ""


def _final_math(line: str) -> str | None:
    # The last line is capped so that unclosed delimiters cannot make the scan quadratic.
    matches = _FINAL_MATH.finditer(line[-2_000:])
    found = [next(g for g in m.groups() if g is not None) for m in matches]
    return found[-1].strip() if found else None


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


def _bare_latex(line: str) -> str | None:
    """A last line that is LaTeX without delimiters (``\\frac{10}{9}``), not prose."""
    line = line.strip().rstrip(".")
    if "\\" not in line or len(line) > 200 or _WORD.search(_COMMAND.sub(" ", line)):
        return None
    return line


def extract_answer(text: str, *, strict: bool = False) -> Extraction:
    """The final answer of a completion; see the module docstring for the rules."""
    turn_end = _TURN_END.search(text)
    if turn_end and turn_end.start() > 0:
        text = text[: turn_end.start()]
    boxed = _from_boxes(text)
    if boxed is not None and not strict:
        stated = stated_answer(text, max(m.start() for m in _BOX.finditer(text)))
        return Extraction(stated, "final_statement") if stated else boxed
    if boxed is not None or strict:
        return boxed if boxed is not None else Extraction(None, "none")
    phrase = _after_phrase(text)
    if phrase:
        return Extraction(phrase, "answer_phrase")
    line = _last_line(text)
    concluded = _conclusion(line)
    if concluded:
        return Extraction(concluded, "conclusion")
    math = _final_display(text) or _final_math(line) or _bare_latex(line)
    if math:
        return Extraction(math, "final_math")
    if _SPACE_GROUPS.fullmatch(line.strip().rstrip(".")):  # "1 000" is one number
        return Extraction(line.strip().rstrip("."), "last_number")
    numbers = _NUMBER.findall(line)
    if numbers:
        return Extraction(numbers[-1].strip(), "last_number")
    return Extraction(None, "none")
