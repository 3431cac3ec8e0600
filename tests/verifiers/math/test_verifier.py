"""`MathAnswer` end to end: config, references, evidence, limits, hostile input."""

from __future__ import annotations

import contextlib
import json
import multiprocessing
import os
import pickle
import signal
import subprocess
import sys
import threading
from typing import Any

import pytest

from rewardsmith.verifiers import (
    Failure,
    Message,
    Sample,
    Status,
    Verdict,
    create,
    run_verifier,
)
from rewardsmith.verifiers.math import MathAnswer


def check(completion: str, reference: object, **config: Any) -> Verdict:
    return MathAnswer(**config)(Sample(id="t", completion=completion, reference=reference))


def test_pickle_round_trip() -> None:
    verifier = MathAnswer(strict=True, rel_tol=1e-6, timeout_s=2.0)
    clone = pickle.loads(pickle.dumps(verifier))
    assert clone == verifier
    sample = Sample(id="p", completion=r"\boxed{x^2-1}", reference="(x-1)(x+1)")
    assert clone(sample).status is Status.PASS


def test_registered_as_math() -> None:
    verifier = create("math", strict=True)
    assert isinstance(verifier, MathAnswer) and verifier.strict


@pytest.mark.parametrize(
    ("config", "message"),
    [({"timeout_s": 0}, "timeout_s"), ({"timeout_s": 0.8}, "twice check_budget_s"),
     ({"check_budget_s": 0}, "check_budget_s"), ({"rel_tol": 1.5}, "rel_tol"),
     ({"rounding_digits": -1}, "rounding_digits"), ({"max_answer_chars": 0}, "max_answer_chars")],
)  # fmt: skip
def test_bad_config_says_how_to_fix(config: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        MathAnswer(**config)


@pytest.mark.parametrize("reference", [None, "", "   ", True, ["1"]])
def test_missing_reference_is_a_data_error_not_a_reward(reference: object) -> None:
    verdict = check(r"\boxed{1}", reference)
    assert verdict.status is Status.ERROR and verdict.failure is Failure.BAD_REFERENCE
    assert verdict.score is None


def test_unparseable_gold_is_bad_reference() -> None:
    verdict = check(r"\boxed{x^2}", r"\weird{stuff}")
    assert verdict.failure is Failure.BAD_REFERENCE and verdict.score is None


@pytest.mark.parametrize(
    ("reference", "completion"), [(12, "The answer is 12"), (0.5, r"\boxed{\frac12}"),
                                  (r"\boxed{3}", "so 3"), (-7, r"\boxed{-7}")]
)  # fmt: skip
def test_references_as_numbers_and_boxed_text(reference: object, completion: str) -> None:
    assert check(completion, reference).status is Status.PASS


def test_chat_completion_uses_last_assistant_message() -> None:
    messages = [Message(role="assistant", content=r"\boxed{1}"),
                Message(role="user", content="are you sure?"),
                Message(role="assistant", content=r"Yes: \boxed{2}")]  # fmt: skip
    verdict = MathAnswer()(Sample(id="c", completion=messages, reference="2"))
    assert verdict.status is Status.PASS


def test_strict_mode_needs_a_box() -> None:
    verdict = check("The answer is 12.", "12", strict=True)
    assert verdict.status is Status.FAIL and verdict.failure is Failure.FORMAT
    assert check(r"\boxed{12}", "12", strict=True).status is Status.PASS


def test_tolerance_only_when_asked() -> None:
    assert check(r"\boxed{1.5000004}", "1.5").status is Status.FAIL
    assert check(r"\boxed{1.5000004}", "1.5", rel_tol=1e-6).status is Status.PASS
    assert check(r"\boxed{\sqrt{2}+10^{-9}}", r"\sqrt{2}", rel_tol=1e-6).status is Status.PASS


def test_rounding_rule_can_be_turned_off() -> None:
    assert check(r"\boxed{0.333}", "1/3").status is Status.PASS
    assert check(r"\boxed{0.333}", "1/3", rounding_digits=0).status is Status.FAIL


def test_evidence_says_what_was_extracted_parsed_and_decided() -> None:
    verdict = check(r"Thus \boxed{(x+1)^2}", "x^2+2x+1")
    evidence = verdict.evidence
    assert evidence["extracted"] == "(x+1)^2" and evidence["extraction"] == "boxed"
    assert evidence["path"] == "worker" and evidence["rule"] == "symbolic"
    assert evidence["gold_form"] == "x**2 + 2*x + 1" and evidence["pred_form"] == "(x + 1)**2"
    assert verdict.elapsed_s > 0
    json.dumps(verdict.to_dict())  # JSON-serialisable


def test_fast_path_skips_the_worker() -> None:
    verdict = check(r"\boxed{\dfrac{6}{8}}", "0.75")
    assert verdict.status is Status.PASS and verdict.evidence["path"] == "fast"


def test_hedging_does_not_pay_but_one_answer_written_twice_does() -> None:
    hedged = check(r"\boxed{3} or \boxed{4}", "3")
    assert hedged.failure is Failure.FORMAT and hedged.evidence["candidates"] == ["3", "4"]
    assert check(r"\boxed{\frac{1}{2}}, i.e. \boxed{0.5}", "1/2").status is Status.PASS


def test_run_verifier_wraps_it_without_changes() -> None:
    sample = Sample(id="r", completion=r"\boxed{7}", reference="7")
    assert run_verifier(MathAnswer(), sample).status is Status.PASS


def test_concurrent_threads_get_correct_verdicts() -> None:
    verifier = MathAnswer()
    results: dict[int, Status] = {}

    def one(i: int) -> None:
        sample = Sample(id=str(i), completion=rf"\boxed{{x + {i}}}", reference=f"{i} + x")
        results[i] = verifier(sample).status

    threads = [threading.Thread(target=one, args=(i,)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == {i: Status.PASS for i in range(4)}


def test_the_scoring_process_never_imports_sympy() -> None:
    # Parsing model text happens only in the worker; the scorer stays small and parser-free.
    code = (
        "import sys\n"
        "from rewardsmith.verifiers import Sample\n"
        "from rewardsmith.verifiers.math import MathAnswer\n"
        "v = MathAnswer()(Sample(id='1', completion=r'\\boxed{x^2}', reference='x**2'))\n"
        "assert v.status.value == 'pass', v\n"
        "assert 'sympy' not in sys.modules\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-2000:]


def _check_in_child(queue: Any) -> None:
    queue.put(check(r"\boxed{\sqrt{8}}", r"2\sqrt{2}").status.value)


def test_works_in_a_forked_child_after_the_parent_used_it() -> None:
    assert check(r"\boxed{x+1}", "1+x").status is Status.PASS  # the parent has a worker
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_check_in_child, args=(queue,))
    child.start()
    child.join(timeout=120)
    assert queue.get(timeout=5) == "pass"


# ---------------------------------------------------------------------- hostile input

HOSTILE = [
    # (completion, gold, statuses allowed): each must end in a clear verdict within the limit
    ("x" * 1_000_000, "1", {Status.FAIL}),
    (r"\boxed{" + "9" * 1_000_000 + "}", "1", {Status.FAIL}),
    (r"\boxed{" + "1" * 900 + "}", "1", {Status.FAIL}),
    (r"\boxed{10^{10^{10}}}", "5", {Status.FAIL}),
    (r"\boxed{10^{10^{10}}}", r"10^{10000000000}", {Status.PASS}),
    (r"\boxed{10^{10^{10}}}", r"10^{10^{10}}", {Status.PASS}),
    (r"\boxed{9^{9^{9}}}", "3", {Status.FAIL}),
    (r"\boxed{2^{2^{2^{2^{2^{2}}}}}}", "4", {Status.FAIL}),
    (r"\boxed{" + r"\frac{1}{" * 40 + "2" + "}" * 40 + "}", "2", {Status.FAIL}),
    (r"\boxed{" + "(" * 400 + "1" + ")" * 400 + "}", "1", {Status.FAIL}),
    (r"\boxed{" + "{" * 400 + "1" + "}" * 400 + "}", "1", {Status.FAIL}),
    (r"\boxed{\frac{1}{2}", "1/2", {Status.FAIL}),
    (r"\boxed{1}}}}{{{", "1", {Status.PASS}),
    (r"\boxed{\def\a{\b\b}\def\b{\c\c}\def\c{\d\d}\a}", "1", {Status.FAIL}),
    (r"\boxed{\newcommand{\x}{\x\x}\x}", "1", {Status.FAIL}),
    (r"\boxed{1000000!}", "5", {Status.FAIL}),
    (r"\boxed{" + r"\pm 1" * 10 + "}", "1", {Status.FAIL}),
    (r"\boxed{" + ",".join(["1"] * 300) + "}", "1", {Status.FAIL}),
    (r"\boxed{\begin{pmatrix}" + r"1\\" * 300 + r"\end{pmatrix}}", "1", {Status.FAIL}),
    (r"\boxed{x^{x^{x^{x^{x}}}}}", "x", {Status.FAIL}),
    (r"\boxed{\sqrt{-1}^{\sqrt{-1}}}", r"e^{-\pi/2}", {Status.PASS}),
    (r"\boxed{\frac{1}{0}}", "1", {Status.FAIL}),
    (r"\boxed{0^0 + \infty - \infty}", "1", {Status.FAIL}),
    ("\\boxed{\x00\x01\u202e1}", "1", {Status.FAIL}),
]


@pytest.mark.slow
@pytest.mark.parametrize(("completion", "gold", "allowed"), HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_input_ends_in_a_clear_verdict(
    completion: str, gold: str, allowed: set[Status]
) -> None:
    verdict = check(completion, gold, timeout_s=3.0)
    # Decided: never a timeout or an error that would keep a hostile answer out of the reward.
    assert verdict.status in allowed, (verdict.status, verdict.failure, verdict.feedback)
    assert verdict.score is not None
    assert verdict.elapsed_s < 60  # generous: the limit is enforced, not the speed


def test_once_hanging_comparisons_are_decided_in_bounded_steps() -> None:
    # Expanding (x^2+2x+1)^1500 would take minutes: the points decide it, with enough
    # digits to see a "+ 1" beside numbers of 1,800 digits.
    right = check(r"\boxed{(x^2+2x+1)^{1500}}", "(x+1)^{3000}")
    assert right.status is Status.PASS and right.evidence["rule"] == "numeric_points_agree"
    wrong = check(r"\boxed{(x+1)^{3000} + 1}", "(x^2+2x+1)^{1500}")
    assert wrong.failure is Failure.WRONG_ANSWER and wrong.evidence["rule"] == "numeric_points"


def test_an_answer_past_its_cpu_budget_is_the_models_fault() -> None:
    verdict = check(r"\boxed{\sin^2(3y) + \cos^2(3y)}", "1", check_budget_s=0.001, timeout_s=5.0)
    assert verdict.status is Status.FAIL and verdict.failure is Failure.CHECK_LIMIT
    assert verdict.score == 0.0 and verdict.evidence["limit"] == "cpu"
    assert verdict.evidence["path"] == "worker"
    assert check(r"\boxed{\sin^2(3y) + \cos^2(3y)}", "1").status is Status.PASS


def _children(pid: int) -> dict[int, bytes]:
    found = {}
    for entry in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{entry}/stat") as stat, open(f"/proc/{entry}/cmdline", "rb") as cmd:
                parent = int(stat.read().rsplit(")", 1)[1].split()[1])
                command = cmd.read()
        except OSError:
            continue
        if parent == pid:
            found[int(entry)] = command
    return found


def _workers_of_this_process() -> list[int]:
    # A warm worker runs under its warden (a subreaper that this process started).
    wardens = [pid for pid, command in _children(os.getpid()).items() if b"_warden" in command]
    return [worker for warden in wardens for worker in _children(warden)]


@pytest.mark.slow
def test_a_starved_worker_is_the_infrastructures_timeout_never_the_models() -> None:
    # A stopped worker gets no CPU, as on an overloaded machine: its wall clock runs out
    # before its CPU budget, and that is no verdict on the answer (score None, counted).
    verifier = MathAnswer(timeout_s=1.0, check_budget_s=0.5)
    sample = Sample(id="s", completion=r"\boxed{x+1}", reference="1+x")
    assert verifier(sample).status is Status.PASS  # a warm worker now waits in the pool
    stopped = _workers_of_this_process()
    assert stopped
    for pid in stopped:
        os.kill(pid, signal.SIGSTOP)
    try:
        verdict = verifier(sample)
    finally:
        for pid in stopped:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)
    assert verdict.status is Status.TIMEOUT and verdict.failure is Failure.VERIFIER_TIMEOUT
    assert verdict.score is None and "starved" in verdict.feedback
    # The killed worker is replaced: the next check works and is not charged its start-up.
    assert verifier(sample).status is Status.PASS
