"""The shaped code rewards as verifiers, over real gcc logs and a real repair trajectory."""

from __future__ import annotations

import pickle

import pytest

from rewardsmith.verifiers import Failure, Sample, Status, Step, create, run_verifier
from rewardsmith.verifiers.diagnostics import (
    CompileGate,
    DiagnosticsScore,
    RepairProgress,
    parse_log,
)
from rewardsmith.verifiers.diagnostics.shaping import potential
from rewardsmith.verifiers.protocol import Verifier, verifier_config

# A repair trajectory: each attempt gets one stage further, the last one builds.
MAIN = "int main(void) { return add(1, 2) - 3; }\n"
ATTEMPTS = {
    "a0_parse": "int add(int a, int b) { return a + b }\n" + MAIN,
    "a1_type": "int add(int a, int b) { return a + c; }\n" + MAIN,
    "a2_link": "int add(int a, int b);\n" + MAIN,
    "a3_clean": "int add(int a, int b) { return a + b; }\n" + MAIN,
    "warn": "int add(int a, int b) { int unused; return a + b; }\nint main(void) { return 0; }\n",
}
ALL = [CompileGate(), DiagnosticsScore(), RepairProgress()]


@pytest.fixture(scope="module")
def logs(build_all):
    runs = build_all("rewards-gcc", "prog.c", ATTEMPTS, "gcc -Wall -o prog prog.c")
    return {name: run.log for name, run in runs.items()}


def _sample(log, **meta):
    return Sample(id="s", completion="", meta={"build_log": log, "tool": "gcc", **meta})


def _trajectory(logs, names):
    steps = [Step(action=ATTEMPTS[n], observation=logs[n], meta=_RAN.get(n, {})) for n in names]
    return Sample(id="t", completion=steps)


_RAN = {"a3_clean": {"tests": {"passed": 1, "total": 1}, "exit_code": 0}}
"""The environment ran the clean build's program (main returns add(1, 2) - 3 = 0)."""


# ------------------------------------------------------------------ compile gate


@pytest.mark.parametrize(
    ("name", "status", "failure"),
    [
        ("a0_parse", Status.FAIL, Failure.COMPILE_ERROR),
        ("a1_type", Status.FAIL, Failure.COMPILE_ERROR),
        ("a2_link", Status.FAIL, Failure.COMPILE_ERROR),
        ("a3_clean", Status.PARTIAL, None),  # it builds, but no test ran
        ("warn", Status.PARTIAL, None),
    ],
)
def test_compile_gate(logs, name, status, failure):
    verdict = CompileGate()(_sample(logs[name]))
    assert (verdict.status, verdict.failure) == (status, failure)
    tested = CompileGate()(_sample(logs[name], tests={"passed": 1, "total": 1}, exit_code=0))
    assert tested.status is (Status.PASS if status is Status.PARTIAL else Status.FAIL)
    assert verdict.evidence["diagnostics_total"] == len(verdict.evidence["diagnostics"])


def test_runtime_errors_are_runtime_failures():
    log = 'Traceback (most recent call last):\n  File "p.py", line 1, in <module>\nNameError: x\n'
    verdict = CompileGate(log_in_completion=True)(Sample(id="s", completion=log))
    assert (verdict.status, verdict.failure) == (Status.FAIL, Failure.RUNTIME_ERROR)


def test_unexplained_exit_code_is_never_a_pass():
    # killed by a signal: it ran, so a runtime failure, above any compile failure
    verdict = CompileGate()(_sample("", exit_code=139))
    assert (verdict.status, verdict.failure) == (Status.FAIL, Failure.RUNTIME_ERROR)
    assert verdict.evidence["unexplained_exit"] is True
    failed_build = CompileGate()(_sample("", exit_code=1))  # a build failing in unknown words
    assert failed_build.failure is Failure.COMPILE_ERROR
    ran = DiagnosticsScore()(_sample("", exit_code=1, phase="run"))
    assert ran.failure is Failure.RUNTIME_ERROR
    assert ran.score > DiagnosticsScore()(_sample("prog.c:1:5: error: 'y' undeclared\n")).score
    assert CompileGate()(_sample("", exit_code=0)).status is Status.PARTIAL


def test_missing_log_is_a_data_problem_not_a_zero():
    verdict = CompileGate()(Sample(id="s", completion=""))
    assert (verdict.status, verdict.failure, verdict.score) == (
        Status.ERROR,
        Failure.BAD_REFERENCE,
        None,
    )


def test_parse_timeout_is_the_verifiers_not_the_models(logs):
    huge = logs["a1_type"] * 200_000
    verdict = DiagnosticsScore(timeout_s=0.001)(_sample(huge))
    assert (verdict.status, verdict.failure, verdict.score) == (
        Status.TIMEOUT,
        Failure.VERIFIER_TIMEOUT,
        None,
    )


@pytest.mark.parametrize("log", [b"\xff\xfe\x00garbage", {"not": "a string"}, 12345, "x" * 10**6])
def test_hostile_build_logs_give_a_verdict(log):
    for verifier in ALL[:2]:
        verdict = run_verifier(verifier, Sample(id="s", completion="", meta={"build_log": log}))
        assert verdict.failure is not Failure.VERIFIER_CRASH


# ------------------------------------------------------------------ diagnostics score


def test_diagnostics_score_orders_the_stages(logs):
    scores = [
        DiagnosticsScore()(_sample(logs[n])).score
        for n in ("a0_parse", "a1_type", "a2_link", "warn", "a3_clean")
    ]
    assert scores == sorted(scores) and len(set(scores)) == 5
    assert scores[-1] == potential([]) < 1.0  # untested
    tested = _sample(logs["a3_clean"], tests={"passed": 4, "total": 4}, exit_code=0)
    assert DiagnosticsScore()(tested).score == 1.0


def test_diagnostics_score_evidence_and_feedback(logs):
    verdict = DiagnosticsScore()(_sample(logs["a1_type"], sources={"prog.c": ATTEMPTS["a1_type"]}))
    # 'c' undeclared, and gcc then warns that control reaches the end of add()
    summary = verdict.evidence["summary"]
    assert (summary["errors"], summary["warnings"], summary["failed_stage"]) == (1, 1, "type")
    assert verdict.score == pytest.approx((1 + 1 / (1 + 1 + 0.1)) / 6)  # Φ, see shaping
    assert verdict.score == potential(parse_log(logs["a1_type"], "gcc"))
    assert "prog.c:1:36: error:" in verdict.feedback
    assert verdict.evidence["diagnostics"][0]["code"] is None


def test_log_from_the_completion_only_where_the_completions_are_logs(logs):
    by_meta = DiagnosticsScore()(_sample(logs["a2_link"]))
    pasted = Sample(id="s", completion=logs["a2_link"])
    assert DiagnosticsScore(log_in_completion=True)(pasted).score == by_meta.score
    assert DiagnosticsScore()(pasted).failure is Failure.BAD_REFERENCE


MODEL_TEXTS = {
    "program": "#include <stdio.h>\nint main(void) { return 0; }\n",
    "claimed_success": "gcc -Wall main.c -o main\nBuild succeeded: 0 errors, 0 warnings.\n",
    "claimed_tests": "test result: ok. 12 passed; 0 failed; 0 ignored\n",
    "prose": "I fixed the missing semicolon, so it compiles now.",
}


@pytest.mark.parametrize("verifier", [CompileGate(), DiagnosticsScore()], ids=lambda v: v.name)
@pytest.mark.parametrize("text", MODEL_TEXTS.values(), ids=MODEL_TEXTS.keys())
def test_a_models_own_text_is_never_read_as_its_build_log(verifier, text):
    # Without a recorded build_log, the completion used to be read as the log: any program
    # or claim of success read as a clean build and earned the untested score (0.5, 0.75)
    # whatever it was. That is the grader's configuration error, so it says so (score None).
    verdict = verifier(Sample(id="s", completion=text))
    assert (verdict.status, verdict.failure, verdict.score) == (
        Status.ERROR,
        Failure.BAD_REFERENCE,
        None,
    )
    assert "build_log" in verdict.feedback


# ------------------------------------------------------------------ repair progress


def test_repair_trajectory_that_reaches_a_clean_build(logs):
    verdict = RepairProgress()(_trajectory(logs, ["a0_parse", "a1_type", "a2_link", "a3_clean"]))
    phis = verdict.evidence["potentials"]
    assert phis == sorted(phis) and phis[-1] == 1.0
    assert (verdict.status, verdict.score) == (Status.PASS, 1.0)
    assert verdict.evidence["regressions"] == []
    assert sum(verdict.evidence["step_rewards"]) == pytest.approx(phis[-1] - phis[0])


def test_going_back_is_never_rewarded(logs):
    forward = RepairProgress()(_trajectory(logs, ["a0_parse", "a2_link"]))
    back = RepairProgress()(_trajectory(logs, ["a0_parse", "a2_link", "a1_type"]))
    worse = RepairProgress()(_trajectory(logs, ["a2_link", "a0_parse"]))
    assert 0 < back.score < forward.score < 1
    assert back.evidence["regressions"] == [2]
    assert (worse.status, worse.score) == (Status.FAIL, 0.0)


def test_steps_without_observations_are_not_attempts(logs):
    sample = Sample(
        id="t", completion=[Step(action="think"), Step(action="x", observation=logs["a0_parse"])]
    )
    assert RepairProgress()(sample).status is Status.SKIP


# ------------------------------------------------------------------ as verifiers


@pytest.mark.parametrize("verifier", ALL, ids=lambda v: v.name)
def test_pickle_round_trip_and_protocol(verifier, logs):
    clone = pickle.loads(pickle.dumps(verifier))
    assert clone == verifier and isinstance(clone, Verifier)
    sample = _trajectory(logs, ["a0_parse", "a3_clean"])
    assert clone(sample) == verifier(sample)


@pytest.mark.parametrize("name", ["compile_gate", "diagnostics_score", "repair_progress"])
def test_registered(name):
    verifier = create(name, tool="gcc", timeout_s=None)
    assert verifier.name == name
    assert verifier_config(verifier)["tool"] == "gcc"


def test_bad_settings_say_how_to_fix_them():
    with pytest.raises(ValueError, match="tool 'fortran' is unknown; use one of"):
        DiagnosticsScore(tool="fortran")
    with pytest.raises(ValueError, match="timeout_s must be positive"):
        CompileGate(timeout_s=0)


# ------------------------------------------------------------------ tests stage (real pytest)

TEST_FILE = "".join(f"def test_{x}():\n    assert {{{x}}}\n\n\n" for x in "abc")


@pytest.fixture(scope="module")
def junit_logs(build_all):
    import sys

    variants = {
        "three_fail": TEST_FILE.format(a=0, b=0, c=0),
        "one_fails": TEST_FILE.format(a=1, b=1, c=0),
        "all_pass": TEST_FILE.format(a=1, b=1, c=1),
    }
    runs = build_all(
        "rewards-junit",
        "test_prog.py",
        variants,
        f"{sys.executable} -m pytest -q -p no:cacheprovider "
        "-c /dev/null --junitxml=r.xml "
        "test_prog.py > /dev/null; cat r.xml",
    )
    return {name: run.log for name, run in runs.items()}


def test_more_tests_passing_is_progress(junit_logs):
    steps = [
        Step(action="v1", observation=junit_logs["three_fail"], meta={"tool": "pytest-junit"}),
        Step(action="v2", observation=junit_logs["one_fails"], meta={"tool": "pytest-junit"}),
    ]
    partial = RepairProgress()(Sample(id="t", completion=steps))
    assert [s["errors"] for s in partial.evidence["summaries"]] == [3, 1]
    assert [s["failed_stage"] for s in partial.evidence["summaries"]] == ["test", "test"]
    assert 0 < partial.score < 1
    # a report in the log is text the program could have printed: full credit needs the
    # environment's own record of the tests
    untested = [*steps, Step(action="v3", observation=junit_logs["all_pass"])]
    assert RepairProgress()(Sample(id="t", completion=untested)).score < 1.0
    ran = {"tool": "pytest-junit", "tests": {"passed": 3, "total": 3}, "exit_code": 0}
    done = [*steps, Step(action="v3", observation=junit_logs["all_pass"], meta=ran)]
    assert RepairProgress()(Sample(id="t", completion=done)).score == 1.0
    failing = DiagnosticsScore(tool="pytest-junit", log_in_completion=True)(
        Sample(id="s", completion=junit_logs["one_fails"])
    )
    assert failing.failure is Failure.WRONG_ANSWER
