"""Is one extracted answer equal to the gold? Decided in process where that is cheap and
safe; otherwise in a killable worker, and only after the cost estimate has let it through.

In this order, the first step that can decide does:

1. a decimal comma beside a decimal point is read as a point
   (`rewardsmith.verifiers.math.spelling`);
2. an answer written exactly as the gold (spaces aside) is equal;
3. text answers are compared as words (`rewardsmith.verifiers.math.words`): ``listen``
   never equals ``silent``, ``Even`` equals ``even``;
4. a choice with its value (``\\\\text{(C) } 12``) is its value;
5. units (`rewardsmith.verifiers.math.units`): another dimension is a wrong answer, the
   same dimension is converted, a unit on one side only is dropped;
6. plain numbers are compared exactly with `fractions.Fraction`
   (`rewardsmith.verifiers.math.fast`);
7. the cost estimate (`rewardsmith.verifiers.math.cost`) refuses an answer too expensive to
   check: ``check_limit``, the model's fault, decided in microseconds;
8. the worker (`rewardsmith.verifiers.killable.call_with_limits`) parses and compares
   under a CPU budget (model's fault when passed) inside a wall-clock limit (the
   infrastructure's when passed: the worker did not get the CPU; see
   `rewardsmith.verifiers.math.budget`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from rewardsmith.verifiers.killable import CallOutcome, call_with_limits
from rewardsmith.verifiers.math.cost import Cost, estimate, over_budget
from rewardsmith.verifiers.math.fast import as_number, numbers_equal, other_choices, split_choice
from rewardsmith.verifiers.math.normalize import cis_as_exp, cis_unread, normalise
from rewardsmith.verifiers.math.numerals import Based, as_plain, based, in_base
from rewardsmith.verifiers.math.spelling import decimal_comma
from rewardsmith.verifiers.math.units import Conversion, as_angles, conversion, split_unit
from rewardsmith.verifiers.math.words import as_words
from rewardsmith.verifiers.types import Failure

__all__ = ["Decision", "Settings", "decide"]

_WORKER_PRELOAD = ("sympy", "rewardsmith.verifiers.math.worker")


@dataclass(frozen=True, slots=True)
class Settings:
    rel_tol: float
    rounding_digits: int
    check_budget_s: float
    timeout_s: float
    memory_bytes: int


@dataclass(frozen=True, slots=True)
class Decision:
    """Equal, not equal, or undecided with the failure that says why."""

    equal: bool | None
    evidence: dict[str, Any] = field(default_factory=dict)
    failure: Failure | None = None
    message: str = ""


def _judge(*args: Any) -> dict[str, Any]:
    # Imported here, in the worker, so that the scoring process never loads sympy (a
    # smaller parent forks faster, and no parser of model text is at hand in it).
    from rewardsmith.verifiers.math.forms import judge

    return judge(*args)


def _squashed(answer: str) -> str:
    # Runs of spaces become one, not none: "\\pi r" is not "\\pir".
    return " ".join(answer.strip().strip("$").split())


@lru_cache(maxsize=4096)
def _cost(text: str) -> Cost:
    return estimate(normalise(text).text)


def _scaled(value: str, factor: Conversion) -> str:
    """The answer's value in the gold's unit."""
    if factor.is_identity:
        return value
    number = as_number(value)
    if number is not None and factor.pi_power == 0:
        scaled = number.value * factor.ratio
        if scaled.denominator == 1:
            return str(scaled.numerator)
        return rf"\frac{{{scaled.numerator}}}{{{scaled.denominator}}}"
    return rf"{factor.latex} \cdot \left({value}\right)"


def decide(gold: str, answer: str, settings: Settings) -> Decision:
    """Compare `answer` with `gold`; see the module docstring for the order of the steps."""
    gold, answer = decimal_comma(gold, answer)
    if _squashed(gold) == _squashed(answer):  # "204_5" is "204_5" whatever it means
        return Decision(True, {"rule": "same_text", "path": "fast"})
    bases = based(gold), based(answer)
    if bases != (None, None):
        return _bases(*bases, gold, answer)
    gold, answer = as_plain(gold), as_plain(answer)  # 0.\overline{3}, "twelve"
    words = as_words(gold), as_words(answer)
    if words != (None, None):
        return Decision(words[0] == words[1], {"rule": "words", "path": "fast", "words": words})
    choice = split_choice(answer)
    if choice is not None and choice[1] and not other_choices(choice[1], choice[0]):
        answer = choice[1]  # "(C) 12" answers 12 when the gold is a value
    gold, answer = cis_as_exp(gold), cis_as_exp(answer)  # "2 cis 30°": before the unit split
    if cis_unread(answer):  # "2 cis 60": degrees or radians? Never c·i·s
        message = "cis of an angle that is not read (a bare number: degrees or radians?)"
        return Decision(None, {"rule": "cis", "path": "fast"}, Failure.FORMAT, message)
    gold_quantity, answer_quantity = split_unit(gold), split_unit(answer)
    gold_quantity, answer_quantity = as_angles(gold_quantity, answer_quantity)
    factor = conversion(gold_quantity.unit, answer_quantity.unit)
    if factor is None:
        units = [q.unit.word if q.unit else None for q in (gold_quantity, answer_quantity)]
        return Decision(False, {"rule": "unit", "path": "fast", "units": units})
    return _values(gold_quantity.value, _scaled(answer_quantity.value, factor), settings)


def _bases(gold_base: Based | None, answer_base: Based | None, gold: str, answer: str) -> Decision:
    """Numerals with a base subscript compare by value; a bare numeral answered for a
    based gold is read in the gold's base (``1011`` for ``1011_2``; ``11`` is then 3)."""
    if gold_base is not None and answer_base is None:
        bare = _squashed(answer).rsplit("=", 1)[-1].strip()  # "n = 1011"
        answer_base = in_base(bare, gold_base.base)
    if answer_base is not None and gold_base is None:
        number = as_number(gold)
        if number is not None and number.value.denominator == 1:
            gold_base = Based(gold, 10, int(number.value))
    equal = (
        gold_base is not None and answer_base is not None and gold_base.value == answer_base.value
    )
    return Decision(equal, {"rule": "base", "path": "fast"})


def _values(gold: str, answer: str, settings: Settings) -> Decision:
    gold_number, answer_number = as_number(gold), as_number(answer)
    if gold_number is not None and answer_number is not None:
        equal, rule = numbers_equal(
            gold_number, answer_number, settings.rel_tol, settings.rounding_digits
        )
        return Decision(equal, {"rule": rule, "path": "fast"})
    gold_cost, answer_cost = _cost(gold), _cost(answer)
    refused = over_budget(gold_cost, answer_cost)
    if refused is not None:
        digits = f"{answer_cost.digits:.4g}"  # a string: inf is not JSON
        evidence = {"path": "estimate", "digits": digits, "depth": answer_cost.depth}
        return Decision(None, evidence, Failure.CHECK_LIMIT, f"too expensive to check: {refused}")
    return _in_worker(gold, answer, settings)


def _in_worker(gold: str, answer: str, settings: Settings) -> Decision:
    outcome = call_with_limits(
        _judge, gold, answer, settings.rel_tol, settings.rounding_digits,
        settings.check_budget_s, timeout_s=settings.timeout_s,
        memory_bytes=settings.memory_bytes, preload=_WORKER_PRELOAD,
    )  # fmt: skip
    evidence: dict[str, Any] = {"path": "worker", "worker_s": round(outcome.elapsed_s, 6)}
    if not outcome.ok:
        return _worker_failure(outcome, evidence, settings)
    result: dict[str, Any] = outcome.value
    evidence.update({k: v for k, v in result.items() if k != "outcome"})
    kind = result["outcome"]
    if kind == "bad_reference":
        return Decision(None, evidence, Failure.BAD_REFERENCE, "the gold could not be parsed")
    if kind == "unparsed":
        if result.get("raised"):  # sympy raised on this answer (the gold parsed): its fault
            message = f"the answer could not be compared ({result['detail']})"
            return Decision(None, evidence, Failure.FORMAT, message)
        return Decision(None, evidence, Failure.FORMAT, "the answer could not be parsed")
    if kind == "check_limit":
        message = f"checking the answer passed its {settings.check_budget_s:g} s CPU budget"
        return Decision(None, evidence, Failure.CHECK_LIMIT, message)
    return Decision(kind == "equal", evidence)


def _worker_failure(outcome: CallOutcome, evidence: dict[str, Any], settings: Settings) -> Decision:
    if outcome.timed_out:
        message = (
            f"the worker passed its {settings.timeout_s:g} s wall-clock limit before its "
            f"{settings.check_budget_s:g} s CPU budget: it was starved, neither right nor wrong"
        )
        return Decision(None, evidence, Failure.VERIFIER_TIMEOUT, message)
    if outcome.died:
        return Decision(None, evidence, Failure.WORKER_DIED, "the comparison worker died")
    return Decision(None, evidence, Failure.VERIFIER_CRASH, f"comparison failed: {outcome.error}")
