"""`MathAnswer`: is the final answer of a completion equal to the gold answer?

    >>> from rewardsmith.verifiers.types import Sample
    >>> sample = Sample(id="1", completion=r"So it is \\boxed{\\dfrac{6}{8}}.", reference="0.75")
    >>> MathAnswer()(sample).status
    <Status.PASS: 'pass'>

The path of one check: repair text escaped twice (`rewardsmith.verifiers.math.spelling`);
extract the answer (in process, linear scans); if the gold is a choice letter, compare
letters; read a decimal comma beside a decimal point; an answer written exactly as the
gold is equal; if both answers are plain numbers, compare them exactly in process
(`rewardsmith.verifiers.math.fast`); otherwise parse and compare in a warm killable
worker (`rewardsmith.verifiers.killable.call_with_limits`) under a hard time and memory
limit. A comparison that passes the limit is a TIMEOUT verdict with score None: never
"wrong", never "right".
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

from rewardsmith.verifiers.exploits import Exploit
from rewardsmith.verifiers.killable import CallOutcome, call_with_limits
from rewardsmith.verifiers.math.exploits import math_exploits
from rewardsmith.verifiers.math.extract import (
    Extraction,
    extract_answer,
    has_several_items,
    stated_answer,
)
from rewardsmith.verifiers.math.fast import as_number, choice_letter, numbers_equal
from rewardsmith.verifiers.math.spelling import decimal_comma, repair_escapes
from rewardsmith.verifiers.protocol import Cost
from rewardsmith.verifiers.types import Failure, Sample, Verdict

__all__ = ["MathAnswer"]

_WORKER_PRELOAD = ("sympy", "rewardsmith.verifiers.math.worker")
_MAX_CANDIDATES = 4


def _judge(*args: Any) -> dict[str, Any]:
    # Imported here, in the worker, so that the scoring process never loads sympy (a
    # smaller parent forks faster, and no parser of model text is at hand in it).
    from rewardsmith.verifiers.math.forms import judge

    return judge(*args)


def _gold_text(reference: Any) -> str | None:
    if isinstance(reference, bool) or reference is None:
        return None
    if isinstance(reference, int | float):
        return repr(reference)
    if not isinstance(reference, str) or not reference.strip():
        return None
    reference = repair_escapes(reference)
    if "\\boxed" in reference or "\\fbox" in reference:
        found = extract_answer(reference, strict=True)
        return ", ".join(found.candidates) if found.problem == "hedged" else found.answer
    return stated_answer(reference) or reference.strip()


def _squashed(answer: str) -> str:
    # Runs of spaces become one, not none: "\\pi r" is not "\\pir".
    return " ".join(answer.strip().strip("$").split())


@dataclass(frozen=True)
class MathAnswer:
    """Math final-answer verifier. Settings:"""

    name: ClassVar[str] = "math"
    version: ClassVar[str] = "1"
    cost: ClassVar[Cost] = Cost.CPU

    strict: bool = False
    """Accept only an answer in ``\\boxed{}`` / ``\\fbox{}``; no phrase or last-number rules."""
    rel_tol: float = 0.0
    """Relative tolerance for numbers; 0 means exact (with the rounding rule below)."""
    rounding_digits: int = 3
    """A decimal with this many significant digits may stand for a value no finite decimal
    writes (``0.333`` for 1/3, ``3.14`` for pi). 0 turns the rule off."""
    timeout_s: float = 5.0
    """Hard wall-clock limit of one parse-and-compare in the worker."""
    memory_bytes: int = 2 << 30
    """Address-space limit of the worker process."""
    max_completion_chars: int = 200_000
    """Longer completions fail as too large before any scan."""
    max_answer_chars: int = 1_000
    """Longer extracted answers fail as too large before any parse."""

    def __post_init__(self) -> None:
        if not self.timeout_s > 0:
            raise ValueError(f"timeout_s must be > 0 seconds, got {self.timeout_s}")
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

    # ------------------------------------------------------------------ steps

    def _check(self, sample: Sample) -> Verdict:
        gold = _gold_text(sample.reference)
        if gold is None:
            return self._error(Failure.BAD_REFERENCE, "math needs `reference`: a string or number")
        text = sample.completion_text
        if len(text) > self.max_completion_chars:
            return self._too_large("completion", len(text), self.max_completion_chars)
        found = extract_answer(repair_escapes(text), strict=self.strict)
        if found.problem == "hedged" and has_several_items(gold):
            # Several values asked for, one per box: together they are the answer (a
            # hedge still fails, as the list then has values the gold does not).
            found = Extraction(", ".join(found.candidates), "boxed_list")
        evidence: dict[str, Any] = {"gold": gold[:500], "extraction": found.method}
        problem = self._extraction_problem(found, evidence)
        if problem is not None:
            return problem
        answer = found.answer
        assert answer is not None
        evidence["extracted"] = answer[:500]
        if len(answer) > self.max_answer_chars:
            return self._too_large("answer", len(answer), self.max_answer_chars)
        letter = choice_letter(gold, alone=True)
        if letter is not None:
            return self._choice(letter, answer, evidence)
        gold, answer = decimal_comma(gold, answer)
        if _squashed(gold) == _squashed(answer):  # "204_5" is "204_5" whatever it means
            return self._decided(True, {**evidence, "rule": "same_text", "path": "fast"})
        gold_number, pred_number = as_number(gold), as_number(answer)
        if gold_number is not None and pred_number is not None:
            equal, rule = numbers_equal(
                gold_number, pred_number, self.rel_tol, self.rounding_digits
            )
            return self._decided(equal, {**evidence, "rule": rule, "path": "fast"})
        return self._in_worker(gold, answer, evidence)

    def _extraction_problem(self, found: Extraction, evidence: dict[str, Any]) -> Verdict | None:
        if found.problem == "hedged" and not self._all_equivalent(found.candidates):
            evidence["candidates"] = [c[:200] for c in found.candidates[:8]]
            return self._fail(Failure.FORMAT, evidence, "several different final answers")
        if found.answer is None:
            where = "\\boxed{}" if self.strict else "final answer"
            detail = " (a \\boxed{ never closes)" if found.problem == "unbalanced" else ""
            return self._fail(Failure.FORMAT, evidence, f"no {where} found{detail}")
        return None

    def _all_equivalent(self, candidates: tuple[str, ...]) -> bool:
        """Boxes that differ only in form (``\\frac12`` and ``0.5``) are one answer."""
        if len(candidates) > _MAX_CANDIDATES or any(
            len(c) > self.max_answer_chars for c in candidates
        ):
            return False
        last = candidates[-1]
        return all(self._same(last, other) for other in candidates[:-1])

    def _same(self, first: str, second: str) -> bool:
        a, b = as_number(first), as_number(second)
        if a is not None and b is not None:
            return numbers_equal(a, b, self.rel_tol, self.rounding_digits)[0]
        if choice_letter(first) is not None or choice_letter(second) is not None:
            return choice_letter(first) == choice_letter(second)
        outcome = self._compare(first, second)
        return outcome.ok and outcome.value.get("outcome") == "equal"

    def _compare(self, gold: str, answer: str) -> CallOutcome:
        """`judge` in a killable worker; the limit covers the comparison, not the worker's
        start (`call_with_limits` waits for a new worker to be ready before the clock runs)."""
        return call_with_limits(
            _judge, gold, answer, self.rel_tol, self.rounding_digits,
            timeout_s=self.timeout_s, memory_bytes=self.memory_bytes, preload=_WORKER_PRELOAD,
        )  # fmt: skip

    def _choice(self, letter: str, answer: str, evidence: dict[str, Any]) -> Verdict:
        got = choice_letter(answer)
        evidence = {**evidence, "rule": "choice", "path": "fast", "choice": got}
        if got is None:
            return self._fail(Failure.FORMAT, evidence, "expected a choice letter")
        return self._decided(got == letter, evidence)

    def _in_worker(self, gold: str, answer: str, evidence: dict[str, Any]) -> Verdict:
        outcome = self._compare(gold, answer)
        evidence = {**evidence, "path": "worker", "worker_s": round(outcome.elapsed_s, 6)}
        if not outcome.ok:
            return self._worker_failure(outcome, evidence)
        result: dict[str, Any] = outcome.value
        evidence.update({k: v for k, v in result.items() if k != "outcome"})
        if result["outcome"] == "bad_reference":
            return self._error(
                Failure.BAD_REFERENCE, "the gold answer could not be parsed", evidence
            )
        if result["outcome"] == "unparsed":
            return self._fail(Failure.FORMAT, evidence, "the answer could not be parsed")
        return self._decided(result["outcome"] == "equal", evidence)

    def _worker_failure(self, outcome: CallOutcome, evidence: dict[str, Any]) -> Verdict:
        if outcome.timed_out:
            message = f"comparison passed its {self.timeout_s:g} s limit: neither right nor wrong"
            return Verdict.timed_out(
                self.name, self.version, Failure.VERIFIER_TIMEOUT, message, evidence=evidence
            )
        if outcome.died:
            return self._error(Failure.WORKER_DIED, "the comparison worker died", evidence)
        return self._error(Failure.VERIFIER_CRASH, f"comparison failed: {outcome.error}", evidence)

    # ------------------------------------------------------------------ verdicts

    def _decided(self, equal: bool, evidence: dict[str, Any]) -> Verdict:
        if equal:
            return Verdict.passed(self.name, self.version, evidence=evidence)
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
