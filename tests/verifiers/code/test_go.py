"""Go as a `code_tests` language (Debian's golang-go): verdicts, compile-time attacks, and
hostile programs, all built and run in the jail."""

from __future__ import annotations

import pytest

from rewardsmith.verifiers.code import CodeTests, language
from rewardsmith.verifiers.types import Failure, Sample, Status

pytestmark = pytest.mark.sandbox

CASES = [{"input": "1 2\n", "output": "3\n"}, {"input": "-5 5\n", "output": "0\n"}]
SUM = (
    'package main\nimport "fmt"\n'
    "func main() { var a, b int64; fmt.Scan(&a, &b); fmt.Println(a + b) }\n"
)
VERIFIER = CodeTests(wall_s=5.0, compile_wall_s=120.0)


@pytest.fixture(autouse=True)
def _need_go() -> None:
    if not language("go").available:
        pytest.skip("no Go toolchain (go) on this machine")


def _verdict(code: str, verifier: CodeTests = VERIFIER, cases: list | None = None):
    ref = {"format": "stdio", "language": "go", "cases": cases or CASES}
    return verifier(Sample(id="go", completion=code, reference=ref))


def test_a_right_program_passes_and_a_wrong_one_fails() -> None:
    assert _verdict(SUM).status is Status.PASS
    wrong = _verdict(SUM.replace("a + b", "a - b"))
    assert wrong.status is Status.FAIL and wrong.score == 0.0, wrong
    half = _verdict(SUM.replace("a + b", "a * b + 1"))  # 1*2+1 = 3 right; -5*5+1 wrong
    assert half.status is Status.PARTIAL and half.score == 0.5, half


def test_the_language_is_found_by_its_aliases() -> None:
    assert language("golang") is language("go")
    fenced = "Here:\n```go\n" + SUM + "```\n"
    assert _verdict(fenced).status is Status.PASS


def test_a_compile_error_is_the_models_fault_with_the_compilers_words() -> None:
    verdict = _verdict('package main\nfunc main() { x := "no" + 1 }\n')
    assert verdict.failure is Failure.COMPILE_ERROR and verdict.score == 0.0, verdict
    assert verdict.evidence["compile"]["tool"] == "go"
    assert "mismatched types" in verdict.evidence["compile"]["stderr"] or (
        "invalid operation" in verdict.evidence["compile"]["stderr"]
    )


COMPILE_ATTACKS = {
    "embed-device": 'package main\nimport _ "embed"\n//go:embed /dev/zero\nvar z []byte\n'
    "func main() { println(len(z)) }\n",
    "embed-host-file": 'package main\nimport _ "embed"\n//go:embed ../../etc/passwd\n'
    "var z string\nfunc main() { println(z) }\n",
    "cgo-include-host-file": 'package main\n// #include "/etc/shadow"\nimport "C"\n'
    "func main() {}\n",
    "huge-constant": "package main\nconst x = 1 << 100000000\nfunc main() { println(x) }\n",
    "huge-array": "package main\nvar a [1 << 50]byte\nfunc main() { println(len(a)) }\n",
    "instantiation-cycle": "package main\ntype T[P any] struct{ next *T[T[P]] }\n"
    "func main() { var t T[int]; _ = t }\n",
}


@pytest.mark.slow
@pytest.mark.parametrize("attack", sorted(COMPILE_ATTACKS))
def test_compile_time_attacks_end_as_compile_errors(attack: str) -> None:
    verdict = _verdict(COMPILE_ATTACKS[attack], CodeTests(wall_s=5.0, compile_wall_s=30.0))
    assert verdict.failure is Failure.COMPILE_ERROR and verdict.score == 0.0, verdict
    stderr = verdict.evidence["compile"]["stderr"]
    assert "root:" not in stderr  # no host file's contents


HOSTILE = {
    "goroutine-memory-bomb": (
        "package main\nfunc main() { var keep [][]byte\n for { b := make([]byte, 1<<22);"
        " for i := range b { b[i] = 1 }; keep = append(keep, b) } }\n",
        {Failure.MEMORY_LIMIT, Failure.RUNTIME_ERROR},  # runtime's own "out of memory" too
    ),
    "busy-loop": ("package main\nfunc main() { for {} }\n", {Failure.TIME_LIMIT}),
    "output-flood": (
        'package main\nimport "os"\nfunc main() { b := make([]byte, 1<<16)\n'
        " for { os.Stdout.Write(b) } }\n",
        {Failure.OUTPUT_LIMIT},
    ),
    "fork-itself": (
        'package main\nimport ("os"; "syscall")\nfunc main() { for {'
        " syscall.ForkExec(os.Args[0], os.Args, nil) } }\n",
        {Failure.RESOURCE_LIMIT, Failure.TIME_LIMIT, Failure.MEMORY_LIMIT},
    ),
    "denied-syscall": (
        'package main\nimport ("fmt"; "syscall")\nfunc main() {'
        " syscall.Syscall(syscall.SYS_PTRACE, 0, 0, 0); var a, b int; fmt.Scan(&a, &b);"
        " fmt.Println(a + b) }\n",
        {Failure.RUNTIME_ERROR},
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_hostile_go_programs_score_zero_with_a_clear_verdict(name: str) -> None:
    code, failures = HOSTILE[name]
    # The bomb's own cause must end it, not the clock: touching 128 MiB has taken over 3 s
    # here at a load of 8 on two cores.
    wall_s = 15.0 if name == "goroutine-memory-bomb" else 3.0
    limits = CodeTests(wall_s=wall_s, memory_mb=128, compile_wall_s=120.0)
    verdict = _verdict(code, limits, cases=CASES[:1])
    assert verdict.score == 0.0 and verdict.failure in failures, verdict
    if name == "denied-syscall":
        assert "SIGSYS" in verdict.feedback and "denies" in verdict.feedback, verdict
