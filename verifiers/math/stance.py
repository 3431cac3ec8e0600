"""How the text stands to a value read off its end: stated, denied, asked about, or
something other than a result. Used by the last-line rules of
`rewardsmith.verifiers.math.extract`, which read an answer off the end of the text and so
must know whether the text asserts it.

    >>> import re
    >>> line = "It is not $12$."
    >>> negated(line, 0, line.index("$"), line.index(".") )
    True
    >>> line = "See page 12"
    >>> not_a_result(line, re.search("12", line))
    True
"""

from __future__ import annotations

import re

__all__ = [
    "QUESTION_AFTER",
    "denied_after",
    "framed_as_untrue",
    "negated",
    "not_a_result",
    "offered",
    "rejected_after",
    "without_rejection",
]

# A value read off the end of the text that the text itself denies.
_DENIED_BEFORE = re.compile(
    r"\b(?:not|never|cannot|no\s+longer)\b|n't\b|(?:[<>≠≤≥]|\\(?:ne|neq|lt|gt|le|ge|leq|geq))\s*\$?\s*$",
    re.IGNORECASE,
)
_DENIED_AFTER = re.compile(
    r"\$?\s*(?:is|was|are|would\s+be)\s+"
    r"(?:(?:not|never)(?!\s+(?:wrong|incorrect|false|impossible)\b)|wrong|incorrect|false|impossible)\b|"
    r"\$?\s*(?:isn't|wasn't|aren't)\b",
    re.IGNORECASE,
)
# Another value rejected right after the one stated, ending its sentence: "5, not 6",
# "5 (not 6)", "5 and not 6", "5, rather than 6", "$5$, not $6$".
_REJECTED_VALUE = (
    r"(?P<value>\$[^$]{1,300}\$|[(\[][^()\[\]$]{1,80}[)\]]|\\\{[^$]{1,80}?\\\}|"
    r"[^\s$,;()]{0,40}\d[^\s$,;()]{0,40}?(?:\s*\\?%|\s+(?:percent|[A-Za-z]{1,12}(?:\^\d)?))?)"
)
_REJECTS = r"(?:not|never|rather\s+than|instead\s+of)"
_REJECTION = (
    rf"(?:\s*[,;(—–]\s*\(?\s*(?:(?:and|but)\s+)?{_REJECTS}|\s+(?:and|but)\s+not|"
    r"\s+(?:rather\s+than|instead\s+of))\s+" + _REJECTED_VALUE + r"(?=[\s.,;:!?)]|$)"
)
_REJECTED_AFTER = re.compile(r"[$}]*" + _REJECTION, re.IGNORECASE)
# The end of the value stated before a rejection: a digit, a closing bracket or
# delimiter, a percent sign, or a unit after a digit ("5 cm, not 6 cm").
_VALUE_END = r"(?P<end>(?:[\d$}%)\]]|\d\s*[A-Za-z]{1,12}(?:\^\d)?)\**)"  # "**5**, not 6"
_REJECTED_IN = re.compile(_VALUE_END + _REJECTION, re.IGNORECASE)
_OPENS_WITH_REJECTION = re.compile(
    r"\s*(?:not|never)\s+" + _REJECTED_VALUE + r"\s*,?\s+but\s+(?:rather\s+)?(?=\S)",
    re.IGNORECASE,
)
_ENDS_WITH_REJECTION = re.compile(_VALUE_END + _REJECTION + r"\s*\)?\s*[.!]?\s*$", re.IGNORECASE)


def _value_of(found: re.Match[str]) -> str:
    return found.group("value").strip().strip("$").strip()


# A later sentence that denies a value of the answer's: "It is not 5.", "Not 5.", "The
# answer is not 5.", "5 is wrong." (the subject is the answer, not "the denominator").
_DENIES_ANSWER = re.compile(
    r"(?:^|[.!?;]\s+|\n)[\s$]*(?:(?:so\s+|but\s+)?(?:it|this|that|the\s+(?:final\s+)?answer|"
    r"the\s+result|my\s+answer)\s+(?:is\s+(?:definitely\s+)?not|isn't|is\s+never|cannot\s+be|"
    r"can't\s+be|could\s*(?:not|n't)\s+be)|(?:definitely\s+)?not)\s+"
    + _REJECTED_VALUE
    + r"\s*[.!]*\s*(?=$|\n|[A-Z])"
    r"|(?:^|[.!?;]\s+|\n)[\s$]*(?P<wrong>\$[^$]{1,300}\$|[^\s$,;()]{0,40}\d[^\s$,;()]{0,40}?)\s+"
    r"(?:is|was)\s+(?:wrong|incorrect|not\s+(?:right|correct|the\s+answer))\b",
    re.IGNORECASE,
)


def denied_after(tail: str) -> tuple[str, ...]:
    """The values the sentences after a committed answer deny of it ("\\boxed{5}. It is
    not 5." denies 5): the verifier checks that none of them is the gold.

    >>> denied_after(". It is not 5. The denominator is not 0.")
    ('5',)
    """
    found = _DENIES_ANSWER.finditer(tail[:4_000])
    return tuple((m.group("value") or m.group("wrong")).strip().strip("$").strip() for m in found)


def rejected_after(tail: str) -> str | None:
    """The value the text right after an answer rejects ("\\boxed{5}, not 6." rejects 6).

    >>> rejected_after("$, not $6$.")
    '6'
    """
    found = _REJECTED_AFTER.match(tail[:400])
    return _value_of(found) if found else None


def without_rejection(line: str) -> tuple[str, tuple[str, ...]]:
    """`line` without the rejection of another value that ends it, and every value the
    line rejects after a value: "It is 5, not 6." is "It is 5" and 6 (the value stated
    is read as if alone, and the verifier checks that no rejected value is the gold).

    >>> without_rejection("It is 5, not 6.")
    ('It is 5', ('6',))
    """
    cut = max(0, len(line) - 2_000)  # the scans are linear, over the end of the line
    rejected = tuple(_value_of(m) for m in _REJECTED_IN.finditer(line, cut))
    opening = _OPENS_WITH_REJECTION.match(line)
    if opening is not None:  # "not 6 but 5" (after an answer phrase)
        return line[opening.end() :], (_value_of(opening), *rejected)
    found = _ENDS_WITH_REJECTION.search(line, cut)
    return (line[: found.end("end")] if found else line), rejected


# A relative word opens a description ("that are not real"); a verb of being after the
# denial states the value of what was described ("... is 5", "... equals 5", "... = 5").
_RELATIVE = re.compile(r"\b(?:that|which|who|whose|whom|where|when|for\s+which)\b", re.I)
_STATES_VALUE = re.compile(r"\b(?:is|are|was|were|equals|totals|comes\s+to)\b|=", re.I)
# A value offered, not stated: a question ("Is it $12$?") or a supposition ("Suppose it is
# $12$.", "Maybe $12$."); "If we add them we get $12$." states its value, so no bare "if".
_OFFERED_BEFORE = re.compile(
    r"\b(?:suppose|supposing|assume|assuming|whether|what\s+if|maybe|perhaps|possibly|"
    r"i\s+guess|let'?s\s+(?:check|try|test|see|verify)|(?:might|could|may)\s+be\s+that)\b",
    re.IGNORECASE,
)
QUESTION_AFTER = re.compile(r"[^.!\n]{0,200}?\?")
_OFFERS_CLAUSE = re.compile(
    rf"\s*(?:(?:so|then|and|but|thus|hence|therefore)\s+)?(?:{_OFFERED_BEFORE.pattern})",
    re.IGNORECASE,
)
# A possibility right before the value: "it might be 5", "x could be $\boxed{5}$" ("the
# number of ways it could be done is 5" states 5).
_MODAL_NEXT = re.compile(
    r"\b(?:might|could|may)\s+(?:well\s+|also\s+)?(?:be|equal)(?:\s+(?:equal\s+)?to)?[\s$]*$",
    re.IGNORECASE,
)
# A guess or a doubt right before the value, as a label or an adverb: "Probably 5.",
# "Most likely $\boxed{5}$.", "Guess: 5", "Not sure: 5", "Low confidence: 5" ("the most
# likely value is 5" states 5: a verb comes between).
_GUESS_NEXT = re.compile(
    r"(?<![A-Za-z])(?:probably|likely|most\s+likely|(?:my\s+)?(?:best\s+)?guess|not\s+sure|"
    r"unsure|low\s+confidence)\s*[:—–-]?[\s$*_]*$",
    re.IGNORECASE,
)
_OFFERS_NEXT = re.compile(rf"(?:{_OFFERED_BEFORE.pattern})[\s$]*$", re.IGNORECASE)
# A value left open after it is given: "5 or not", "$\boxed{5}$, or perhaps something
# else", "5, maybe not" (another value named after it is a hedge, read where values are).
_OPEN_AFTER = re.compile(
    r"[\s$}]*[,;]?\s*(?:(?:or|either)\s+(?:(?:maybe|perhaps|possibly)\s+)?"
    r"(?:not|something(?:\s+else)?|anything\s+else|another\s+\w+|some\s+other|other\w*)\b"
    r"|(?:maybe|perhaps|possibly)\s+not\b)",
    re.IGNORECASE,
)
# A denial that governs the value right after it ("is not $\boxed{5}$", "cannot be 5",
# "isn't 5"), not one inside the clause's description ("the roots that are not real is 5").
_DENIES_NEXT = re.compile(
    r"(?:\b(?:not|never|cannot|no\s+longer)|n't)\s+(?:(?:be|equal|equal\s+to)\s+)?[\s$]*$",
    re.IGNORECASE,
)
# What a last number may not be: a label, a count of tries, a confidence, one side of an
# equation in an unknown that is not a bare name.
_LABEL_BEFORE = re.compile(
    r"\b(?:problems?|questions?|exercises?|pages?|steps?|sections?|chapters?|parts?|figures?|"
    r"examples?|lines?|versions?|items?|no\.|#)\s*$",
    re.IGNORECASE,
)
_COUNT_AFTER = re.compile(r"\s*(?:attempts?|tries|times|pages?|steps?)\b", re.IGNORECASE)
_NOT_RESULT = re.compile(
    r"\b(?:confidence|giving\s+up|gave\s+up|couldn't|could\s+not|not\s+sure)\b", re.I
)
# A name a result may be given: "x = 12", "Total = 12" (a word is a label, not an unknown).
_NAME = re.compile(r"[A-Za-z]|[A-Za-z]{3,}")
_EQUATION_LHS = re.compile(r"(?:^|[\s$(])([^\s=$(]*[A-Za-z][^\s=$]*)\s*=\s*$")


# A clause that states an answer only to deny, doubt or suppose it: "It is false that the
# answer is 5", "I don't think the answer is $5$", "Suppose the answer is \boxed{5}", "A
# common mistake is to say the answer is 5". "No doubt", "without a doubt" assert.
_UNTRUE_FRAME = re.compile(
    r"\b(?:(?:it\s+is|it's|it\s+would\s+be|that\s+is|that's)\s+(?:false|untrue|not\s+true|"
    r"not\s+the\s+case|wrong|incorrect|a\s+mistake|an\s+error)"
    r"|(?:do|does|did)\s+not\s+(?:think|believe)|(?:don't|doesn't|didn't)\s+(?:think|believe)"
    r"|(?<!\bno\s)(?<!\bwithout\s)(?<!\bwithout\sa\s)doubt(?:s|ful)?"
    r"|nobody|no\s+one|(?:cannot|can't|could\s+not|couldn't)\s+(?:conclude|say|claim)"
    r"|(?:common|typical|classic)\s+(?:mistake|error|misconception|trap)|mistaken(?:ly)?|wrongly|"
    r"falsely|incorrectly|suppose|supposing|assume|assuming|pretend|imagine|hypothetically|"
    r"(?:might|could|may)\s+(?:well\s+)?be\s+that)\b",
    re.IGNORECASE,
)


def framed_as_untrue(before: str) -> bool:
    """Whether the clause before a final statement (the text of its sentence up to the
    answer phrase or box) denies, doubts or supposes what it states."""
    clause = re.split(r"[,;:](?:\s|$)", before)[-1]
    return bool(_UNTRUE_FRAME.search(clause))


def negated(line: str, since: int, start: int, end: int, *, governing: bool = False) -> bool:
    """Whether the text around a value read off the end says it is not the answer: "it
    is not $12$", "$12$ is wrong", "so $x \\ne 12$" (the clause before it, since the value
    before it, or what follows it in its sentence, denies it). With ``governing`` (a box,
    which marks its value as the answer), only a denial right before the value counts:
    "is not $\\boxed{5}$", not "the roots that are not real number $\\boxed{5}$"."""
    before = re.split(r"[.!?;,:](?:\s|$)", line[since:start])[-1]
    after = line[end : end + 300]
    if governing:
        denied_before = bool(_DENIES_NEXT.search(before))
    else:  # the description may start before the value before this one ("n+1")
        clause = re.split(r"[.!?;,:](?:\s|$)", line[:start])[-1]
        offset = len(clause) - len(before)
        denied_before = any(
            not _describes(clause, d.start() + offset, d.end() + offset)
            for d in _DENIED_BEFORE.finditer(before)
        )
    return bool(denied_before or _DENIED_AFTER.match(after))


def _describes(clause: str, start: int, end: int) -> bool:
    """Whether a denial in the clause before a value sits in the description the value
    ends, not in what is said of the value: after a relative word and before the verb
    that states the value ("the roots that are not real is 5", "the smallest n such that
    n+1 is not prime is 5"). "It is not true that x is 5" and "The answer that I got is not
    5" deny it."""
    return bool(_RELATIVE.search(clause, 0, start) and _STATES_VALUE.search(clause, end))


def offered(line: str, since: int, start: int, end: int, *, governing: bool = False) -> bool:
    """Whether a value read off the end is asked about or supposed, not stated: its
    sentence is a question, the clause before it supposes or guesses, or the text after
    it leaves it open ("5 or not", "5, or perhaps something else"). With ``governing``
    (a box), the clause must open with the guess or end with it ("Perhaps the answer is
    $\\boxed{5}$", "It is maybe $\\boxed{5}$"), not describe with it ("the number of
    possibly empty subsets is $\\boxed{8}$")."""
    before = re.split(r"[.!?;,:](?:\s|$)", line[since:start])[-1]
    after = line[end : end + 300]
    guessed: object
    if governing:
        guessed = _OFFERS_CLAUSE.match(before) or _OFFERS_NEXT.search(before)
    else:  # not in a description: "the number of ways to possibly pick is 5" states 5
        clause = re.split(r"[.!?;,:](?:\s|$)", line[:start])[-1]
        offset = len(clause) - len(before)
        guessed = any(
            not _describes(clause, g.start() + offset, g.end() + offset)
            for g in _OFFERED_BEFORE.finditer(before)
        )
    guessed = guessed or _MODAL_NEXT.search(before)  # "it might be 5"
    guessed = guessed or _GUESS_NEXT.search(line[max(since, start - 80) : start])  # "Guess: 5"
    return bool(guessed or QUESTION_AFTER.match(after) or _OPEN_AFTER.match(after))


def not_a_result(line: str, number: re.Match[str]) -> bool:
    """A last number that labels or counts something else ("Problem 12", "page 12",
    "after 12 attempts", "my confidence is 12") or is one side of an equation in an
    unknown other than a bare name ("x^2 = 12", "2x = 12"): not a stated result."""
    before, after = line[: number.start()], line[number.end() :]
    equation = _EQUATION_LHS.search(before)
    return bool(
        _LABEL_BEFORE.search(before)
        or _COUNT_AFTER.match(after)
        or _NOT_RESULT.search(line)
        or (equation and not _NAME.fullmatch(equation.group(1)))
    )
