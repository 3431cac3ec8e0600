"""`MathAnswer`: is the final answer of a completion equal to the gold answer?

    >>> from rewardsmith.verifiers.types import Sample
    >>> sample = Sample(id="1", completion=r"So it is \\boxed{\\dfrac{6}{8}}.", reference="0.75")
    >>> MathAnswer()(sample).status
    <Status.PASS: 'pass'>

The path of one check: repair text escaped twice (`rewardsmith.verifiers.math.spelling`);
extract the answer (in process, linear scans; `rewardsmith.verifiers.math.extract`); if
the gold is a choice letter, compare letters; then `rewardsmith.verifiers.math.decide`
compares the answer with the gold: in process for text, plain numbers and units, and
otherwise in a warm killable worker after a structural cost estimate has let it through.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

from rewardsmith.verifiers.exploits import Exploit
from rewardsmith.verifiers.math.decide import Decision, Settings, decide
from rewardsmith.verifiers.math.exploits import math_exploits
from rewardsmith.verifiers.math.extract import (
    Extraction,
    extract_answer,
    stated_answer,
)
from rewardsmith.verifiers.math.fast import choice_letter, other_choices, split_choice
from rewardsmith.verifiers.math.glyphs import plain_glyphs
from rewardsmith.verifiers.math.normalize import normalise
from rewardsmith.verifiers.math.reading import read_answer
from rewardsmith.verifiers.math.spelling import repair_escapes
from rewardsmith.verifiers.math.unevaluated import leftover_operation, restated_question
from rewardsmith.verifiers.math.units import radians_asked
from rewardsmith.verifiers.protocol import Cost
from rewardsmith.verifiers.types import Failure, Sample, Verdict

__all__ = ["MathAnswer"]

_MAX_CANDIDATES = 4
_PROBLEMS = {
    "hedged": "several different final answers",
    "truncated": "the completion is cut off after its last formula: no final answer",
    "reasoning_only": "no final answer after the reasoning",
    "negated": "the completion ends by saying its last value is not the answer",
    "unasserted": "the completion ends by asking about or supposing its last value",
    "empty_box": "the \\boxed{} is empty",
    "unbalanced": "no final answer found (a \\boxed{ never closes)",
    "refused": "the completion cannot be read as rendered",
}


def _restated_percent(first: str, second: str) -> tuple[str, str]:
    """Two statements of one answer where just one is a percentage ("\\frac34, i.e. 75%"):
    the percentage as the ratio it restates. A percent against a bare number is otherwise
    another quantity (a unit), which is right for a final answer and wrong for a restatement."""
    one, other = normalise(first), normalise(second)
    if one.percent == other.percent:
        return first, second
    if one.percent:
        return rf"\frac{{{one.text}}}{{100}}", other.text
    return one.text, rf"\frac{{{other.text}}}{{100}}"


def _gold_text(reference: Any) -> str | None:
    if isinstance(reference, bool) or reference is None:
        return None
    if isinstance(reference, int | float):
        return repr(reference)
    if not isinstance(reference, str) or not reference.strip():
        return None
    reference = plain_glyphs(repair_escapes(reference)).text
    if "\\boxed" in reference or "\\fbox" in reference:
        found = extract_answer(reference, strict=True)
        # Several boxes in a gold are its list of values; what a worked solution says
        # after its box is explanation, not a second gold ("restated" is a completion's hedge).
        several = found.problem == "hedged" and found.method != "restated"
        return ", ".join(found.candidates) if several else found.answer
    return stated_answer(reference) or reference.strip()


def _in_form_of(gold: str, restatements: tuple[str, ...]) -> str | None:
    """Of several statements of one value, the one a percentage or not as `gold` is: "1/4,
    or 25%" answers the gold 1/4 with 1/4 and the gold 25% with 25% (a percentage against a
    bare number is otherwise another quantity)."""
    percent = normalise(gold).percent
    return next((r for r in restatements if normalise(r).percent == percent), None)


@dataclass(frozen=True)
class MathAnswer:
    """Math final-answer verifier. Settings:"""

    name: ClassVar[str] = "math"
    version: ClassVar[str] = "3"
    cost: ClassVar[Cost] = Cost.CPU

    strict: bool = False
    """Accept only an answer in ``\\boxed{}`` / ``\\fbox{}``; no phrase or last-number rules."""
    rel_tol: float = 0.0
    """Relative tolerance for numbers; 0 means exact (with the rounding rule below)."""
    rounding_digits: int = 3
    """A decimal with this many significant digits may stand for a value no finite decimal
    writes (``0.333`` for 1/3, ``3.14`` for pi). 0 turns the rule off."""
    check_budget_s: float = 0.5
    """CPU seconds one parse-and-compare may use in the worker. An answer that needs more
    is the model's fault: a ``check_limit`` failure, score 0."""
    timeout_s: float = 5.0
    """Wall-clock limit of one parse-and-compare; the worker is killed at it. At least twice
    `check_budget_s`: a comparison that reaches it without having used its CPU budget was
    starved by the machine, a ``verifier_timeout`` kept out of the reward."""
    memory_bytes: int = 2 << 30
    """Address-space limit of the worker process."""
    max_completion_chars: int = 200_000
    """Longer completions fail as too large before any scan."""
    max_answer_chars: int = 1_000
    """Longer extracted answers fail as too large before any parse."""

    def __post_init__(self) -> None:
        if not self.check_budget_s > 0:
            raise ValueError(f"check_budget_s must be > 0 CPU seconds, got {self.check_budget_s}")
        if not self.timeout_s >= 2 * self.check_budget_s:
            raise ValueError(
                f"timeout_s must be at least twice check_budget_s ({self.check_budget_s:g} s), "
                f"got {self.timeout_s}: the wall clock is the infrastructure's limit"
            )
        if not 0.0 <= self.rel_tol < 1.0:
            raise ValueError(f"rel_tol must be in [0, 1), got {self.rel_tol}; 0 means exact")
        if self.rounding_digits < 0:
            raise ValueError("rounding_digits must be >= 0 (0 turns the rounding rule off)")
        if self.max_answer_chars < 1 or self.max_completion_chars < self.max_answer_chars:
            raise ValueError("need 1 <= max_answer_chars <= max_completion_chars")

    def __call__(self, sample: Sample) -> Verdict:
        start = time.perf_counter()
        verdict = self._check(sample)
        return verdict.with_elapsed(time.perf_counter() - start)

    def exploits(self, sample: Sample) -> Iterator[Exploit]:
        """Adversarial variants of a right `sample`, each to earn nothing (see
        `rewardsmith.verifiers.math.exploits`); none when its reference is unusable."""
        gold = _gold_text(sample.reference)
        if gold is not None:
            yield from math_exploits(sample, gold)

    @property
    def _settings(self) -> Settings:
        return Settings(
            self.rel_tol, self.rounding_digits, self.check_budget_s, self.timeout_s,
            self.memory_bytes,
        )  # fmt: skip

    # ------------------------------------------------------------------ steps

    def _check(self, sample: Sample) -> Verdict:
        gold = _gold_text(sample.reference)
        if gold is None:
            return self._error(Failure.BAD_REFERENCE, "math needs `reference`: a string or number")
        text = sample.completion_text
        if len(text) > self.max_completion_chars:
            return self._too_large("completion", len(text), self.max_completion_chars)
        found = read_answer(repair_escapes(text), gold, strict=self.strict)
        evidence: dict[str, Any] = {"gold": gold[:500], "extraction": found.method}
        problem = self._extraction_problem(found, evidence)
        if problem is not None:
            return problem
        answer = found.answer
        assert answer is not None
        if found.problem == "hedged":  # one value in several forms ("1/4, or 25%")
            answer = _in_form_of(gold, found.candidates) or answer
        if any(self._same(gold, denied) for denied in found.denied[:_MAX_CANDIDATES]):
            evidence.update(problem="negated", denied=[d[:200] for d in found.denied])
            return self._fail(Failure.FORMAT, evidence, "the completion denies the right value")
        evidence["extracted"] = answer[:500]
        if len(answer) > self.max_answer_chars:
            return self._too_large("answer", len(answer), self.max_answer_chars)
        operation = leftover_operation(answer, gold)
        if operation is not None:  # "\sum_{k=1}^{100} k" leaves the task to the checker
            evidence.update(problem="unevaluated", operation=operation)
            message = f"the answer leaves a computation ({operation}) to the checker"
            return self._fail(Failure.FORMAT, evidence, message)
        letter = choice_letter(gold, alone=True)
        gold_choice = split_choice(gold)
        if letter is None and gold_choice and choice_letter(answer, alone=True):
            letter = gold_choice[0]  # gold "\text{(A) } 5", answer "A": the letter decides
        if letter is not None:
            return self._choice(letter, answer, evidence)
        if radians_asked(gold, answer, sample.question):
            evidence.update(problem="unit", reason="degrees where radians were asked")
            return self._fail(Failure.WRONG_ANSWER, evidence, "the question asks for radians")
        restated = restated_question(answer, gold, sample.question)
        if restated is not None:  # "Compute 17 \cdot 23" answered "17 \cdot 23"
            evidence.update(problem="restated", reason=restated, path="fast")
            return self._fail(Failure.FORMAT, evidence, f"the answer {restated}")
        return self._verdict(decide(gold, answer, self._settings), evidence)

    def _extraction_problem(self, found: Extraction, evidence: dict[str, Any]) -> Verdict | None:
        if found.problem == "hedged" and not self._all_equivalent(found.candidates):
            evidence["candidates"] = [c[:200] for c in found.candidates[:8]]
            return self._fail(Failure.FORMAT, evidence, _PROBLEMS["hedged"])
        if found.answer is None:
            where = "\\boxed{}" if self.strict else "final answer"
            message = _PROBLEMS.get(found.problem or "", f"no {where} found")
            if found.problem == "refused":  # the reason the rendering gave
                message = f"{message}: {found.candidates[0]}"
            return self._fail(Failure.FORMAT, {**evidence, "problem": found.problem}, message)
        return None

    def _all_equivalent(self, candidates: tuple[str, ...]) -> bool:
        """Answers that differ only in form (``\\frac12`` and ``0.5``) are one answer."""
        if len(candidates) > _MAX_CANDIDATES or any(
            len(c) > self.max_answer_chars for c in candidates
        ):
            return False
        last = candidates[-1]
        return all(self._same(last, other) for other in candidates[:-1])

    def _same(self, first: str, second: str) -> bool:
        if choice_letter(first) is not None or choice_letter(second) is not None:
            return choice_letter(first) == choice_letter(second)
        return decide(*_restated_percent(first, second), self._settings).equal is True

    def _choice(self, letter: str, answer: str, evidence: dict[str, Any]) -> Verdict:
        found = split_choice(answer)
        if found is None and re.fullmatch(r"[a-j]", answer.strip().strip("$*(). ")):
            found = (answer.strip().strip("$*(). ").upper(), "")  # \boxed{c} for the choice C
        got = found[0] if found else None
        evidence = {**evidence, "rule": "choice", "path": "fast", "choice": got}
        if found is None:
            return self._fail(Failure.FORMAT, evidence, "expected a choice letter")
        if other_choices(found[1], found[0]):
            return self._fail(Failure.FORMAT, evidence, _PROBLEMS["hedged"])
        return self._decided(found[0] == letter, evidence)

    # ------------------------------------------------------------------ verdicts

    def _verdict(self, decision: Decision, evidence: dict[str, Any]) -> Verdict:
        evidence = {**evidence, **decision.evidence}
        if decision.equal is not None:
            return self._decided(decision.equal, evidence)
        failure = decision.failure
        assert failure is not None
        if failure is Failure.VERIFIER_TIMEOUT:
            return Verdict.timed_out(
                self.name, self.version, failure, decision.message, evidence=evidence
            )
        if failure.fault.value == "model":
            return self._fail(failure, evidence, decision.message)
        return self._error(failure, decision.message, evidence)

    def _decided(self, equal: bool, evidence: dict[str, Any]) -> Verdict:
        if equal:
            return Verdict.passed(self.name, self.version, evidence=evidence)
        if evidence.get("rule") == "false_statement":
            message = "the answer states a false equation: its sides are different numbers"
            return self._fail(Failure.WRONG_ANSWER, evidence, message)
        return self._fail(Failure.WRONG_ANSWER, evidence, "the answer is not equal to the gold")

    def _fail(self, failure: Failure, evidence: dict[str, Any], message: str) -> Verdict:
        return Verdict.failed(self.name, self.version, failure, evidence=evidence, feedback=message)

    def _error(
        self, failure: Failure, message: str, evidence: dict[str, Any] | None = None
    ) -> Verdict:
        return Verdict.errored(self.name, self.version, failure, message, evidence=evidence or {})

    def _too_large(self, what: str, length: int, limit: int) -> Verdict:
        evidence = {"length": length, "limit": limit}
        message = f"{what} has {length} characters; the limit is {limit}"
        return self._fail(Failure.INPUT_TOO_LARGE, evidence, message)
