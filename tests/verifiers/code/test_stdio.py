"""stdin/stdout tests: checkers, every language, compile failures and compile-time attacks."""

from __future__ import annotations

from pathlib import Path

import pytest

from rewardsmith.verifiers.code import CodeTests, language
from rewardsmith.verifiers.code.stdio import CHECKERS
from rewardsmith.verifiers.types import Failure, Sample, Status

CASES = [
    {"input": "1 2\n", "output": "3\n"},
    {"input": "-5 5\n", "output": "0"},
    {"input": "40 2\n", "output": "42\n"},
]
SUM = {
    "python": "a, b = map(int, input().split())\nprint(a + b)\n",
    "c": '#include <stdio.h>\nint main(){long a,b; if(scanf("%ld %ld",&a,&b)!=2) return 1;'
    ' printf("%ld\\n",a+b); return 0;}\n',
    "cpp": '#include <iostream>\nint main(){long a,b; std::cin>>a>>b; std::cout<<a+b<<"\\n";}\n',
    "rust": "use std::io::Read;\nfn main(){let mut s=String::new();"
    "std::io::stdin().read_to_string(&mut s).unwrap();"
    "let v:Vec<i64>=s.split_whitespace().map(|x|x.parse().unwrap()).collect();"
    'println!("{}", v[0]+v[1]);}\n',
    "java": "import java.util.*;\npublic class Main{public static void main(String[] a){"
    "Scanner s=new Scanner(System.in); long x=s.nextLong(), y=s.nextLong();"
    "System.out.println(x+y);}}\n",
    "javascript": 'const d=require("fs").readFileSync(0,"utf8").trim().split(/\\s+/).map(Number);'
    "console.log(d[0]+d[1]);\n",
}
# Right on "-5 5" only: a difference, patched to be right there (true partial credit 1/3)
WRONG = {
    "python": "a, b = map(int, input().split())\nprint(a - b + 2 * b * (a == -5))\n",
    "c": '#include <stdio.h>\nint main(){long a,b; scanf("%ld %ld",&a,&b);'
    ' printf("%ld\\n",a-b+2*b*(a==-5));}\n',
}
BROKEN = {
    "c": "int main( { return 0; }\n",
    "cpp": "int main() { undefined_call(); }\n",
    "rust": 'fn main() { let x: i32 = "no"; }\n',
    "java": 'public class Main { public static void main(String[] a) { int x = "no"; } }\n',
}
VERIFIER = CodeTests(wall_s=10.0, compile_wall_s=120.0)


def _verdict(lang: str, code: str, cases=CASES, verifier=VERIFIER, **ref):
    reference = {"format": "stdio", "language": lang, "cases": cases, **ref}
    return verifier(Sample(id=lang, completion=code, reference=reference))


def _need(lang: str) -> None:
    if not language(lang).available:
        pytest.skip(f"no {lang} toolchain ({language(lang).tool}) on this machine")


@pytest.mark.parametrize(
    ("checker", "got", "want", "ok"),
    [
        ("exact", "3\n", "3\n", True),
        ("exact", "3", "3\n", False),
        ("lines", "1 \n2\n\n", "1\n2", True),
        ("lines", "1 2", "1\n2", False),
        ("tokens", " 1\t2\n", "1 2", True),
        ("tokens", "12", "1 2", False),
        ("float", "0.3333334", "0.333333", True),
        ("float", "0.34", "0.333333", False),
        ("float", "1e9", "1000000000.0000001", True),
        ("float", "nan", "nan", True),
        ("float", "inf", "1e308", False),
        ("float", "YES 1.0", "YES 1", True),
        ("tokens", "", "", True),
        ("tokens", "", "0", False),
    ],
)
def test_checkers(checker: str, got: str, want: str, ok: bool) -> None:
    fn = CHECKERS[checker]
    assert fn is not None and fn(got, want, 1e-6) is ok


@pytest.mark.sandbox
@pytest.mark.parametrize(
    "lang", [pytest.param(n, marks=pytest.mark.slow) if n == "java" else n for n in sorted(SUM)]
)
def test_each_language_passes_a_correct_program(lang: str) -> None:
    _need(lang)
    verdict = _verdict(lang, SUM[lang])
    assert verdict.status is Status.PASS, verdict
    assert [t["status"] for t in verdict.evidence["tests"]] == ["pass"] * 3


@pytest.mark.sandbox
@pytest.mark.parametrize("lang", sorted(WRONG))
def test_wrong_output_fails_with_partial_credit(lang: str) -> None:
    _need(lang)
    verdict = _verdict(lang, WRONG[lang])
    assert verdict.status is Status.PARTIAL and verdict.score == pytest.approx(1 / 3), verdict


@pytest.mark.sandbox
@pytest.mark.parametrize("lang", sorted(BROKEN))
def test_compile_error_is_the_models_fault_with_output_kept(lang: str) -> None:
    _need(lang)
    verdict = _verdict(lang, BROKEN[lang])
    assert verdict.failure is Failure.COMPILE_ERROR and verdict.score == 0.0, verdict
    info = verdict.evidence["compile"]
    assert info["tool"] == language(lang).tool and info["exit_code"] not in (0, None)
    assert "error" in info["stderr"].lower()
    if "diagnostics_error" not in info and lang in ("c", "cpp", "rust", "java"):
        # rewardsmith.verifiers.diagnostics is installed here: its parse is attached
        assert info["diagnostics"] and info["diagnostics"][0]["severity"] == "error"


REPO_ROOT = Path(__file__).resolve().parents[3]

COMPILE_ATTACKS = {
    "c-include-dev-zero": ("c", '#include "/dev/zero"\nint main(){}\n'),
    # Reading only: the project's own file, outside the jail.
    "c-include-host-file": ("c", f'#include "{REPO_ROOT}/pyproject.toml"\nint main(){{}}\n'),
    "cpp-template-bomb": (
        "cpp",
        "template<int N> struct B { enum { v = B<N-1>::v + B<N-2>::v };"
        " };\ntemplate<> struct B<0> { enum { v = 1 }; };\n"
        "template<> struct B<1> { enum { v = 1 }; };\n"
        "int main() { return B<100000>::v; }\n",
    ),
    "c-macro-bomb": (
        "c",
        "#define A x x x x x x x x x x\n#define B A A A A A A A A A A\n"
        "#define C B B B B B B B B B B\n#define D C C C C C C C C C C\n"
        "#define E D D D D D D D D D D\n#define F E E E E E E E E E E\n"
        "#define G F F F F F F F F F F\n#define H G G G G G G G G G G\n"
        "int main(){ H; }\n",
    ),
    "rust-include-dev-zero": (
        "rust",
        'static Z: &[u8] = include_bytes!("/dev/zero");\nfn main() { println!("{}", Z.len()); }\n',
    ),
    "rust-const-eval-loop": (
        "rust",
        "const fn spin() -> u64 { let mut i = 0u64; loop { i += 1;"
        " if i == 0 { return i; } } }\nconst X: u64 = spin();\n"
        'fn main() { println!("{}", X); }\n',
    ),
}


@pytest.mark.sandbox
@pytest.mark.slow
@pytest.mark.parametrize("attack", sorted(COMPILE_ATTACKS))
def test_compile_time_attacks_are_contained(attack: str) -> None:
    lang, code = COMPILE_ATTACKS[attack]
    _need(lang)
    verifier = CodeTests(wall_s=5.0, compile_wall_s=8.0)
    verdict = _verdict(lang, code, verifier=verifier)
    assert verdict.failure is Failure.COMPILE_ERROR and verdict.score == 0.0, verdict
    assert "build-system" not in verdict.evidence["compile"]["stderr"]  # host file unseen


@pytest.mark.sandbox
def test_missing_or_extra_output_never_passes() -> None:
    verdict = _verdict("python", "print(3)\nprint('extra')\n", cases=CASES[:1], checker="tokens")
    assert verdict.status is Status.FAIL
    silent = _verdict("python", "pass\n", cases=CASES[:1])
    assert silent.status is Status.FAIL and silent.score == 0.0


@pytest.mark.sandbox
def test_custom_checker_runs_outside_the_candidate() -> None:
    checker = "def check(inp, out, exp):\n    return sorted(out.split()) == sorted(exp.split())\n"
    cases = [{"input": "", "output": "1 2 3"}, {"input": "", "output": "9"}]
    verdict = _verdict(
        "python", "print(3, 1, 2)\n", cases=cases, checker="custom", checker_code=checker
    )
    assert verdict.score == 0.5 and [t["status"] for t in verdict.evidence["tests"]] == [
        "pass",
        "fail",
    ]


@pytest.mark.sandbox
def test_runtime_error_and_time_limit_per_case() -> None:
    code = (
        "n = int(input().split()[0])\nif n < 0:\n    raise ValueError(n)\n"
        "while n == 40:\n    pass\nprint(n)\n"
    )
    verifier = CodeTests(wall_s=2.0)
    verdict = _verdict("python", code, verifier=verifier)
    statuses = [t["status"] for t in verdict.evidence["tests"]]
    assert statuses == ["fail", "error", "timeout"], verdict
    assert verdict.score == 0.0 and verdict.failure is Failure.TIME_LIMIT
