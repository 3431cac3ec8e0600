"""Go on real broken programs: go build errors, go vet findings and runtime panics."""

from __future__ import annotations

import pytest

from rewardsmith.verifiers.diagnostics import Severity, Stage, parse_log

P, T = Stage.PARSE, Stage.TYPE


def _main(body: str, extra: str = "", imports: str = "") -> str:
    return f"package main\n{imports}\n{extra}func main() {{\n{body}}}\n"


# name -> (source, (stage, line, column, message fragment)); Go prints no error codes.
# Fragments are the parts of Go's wording that Go 1.19 (Debian 12) and later share.
CASES: dict[str, tuple[str, tuple]] = {
    "undefined": (_main("\ty = 2\n"), (T, 4, 2, "undefined: y")),
    "declared_not_used": (_main("\tx := 1\n"), (T, 4, 2, "x declared but not used")),
    "imported_not_used": (_main("", imports='import "os"\n'), (T, 2, 8, "imported and not used")),
    "type_mismatch": (
        _main('\tvar x int = "s"\n\t_ = x\n'),
        (T, 4, 14, 'cannot use "s" (untyped string constant) as int value'),
    ),
    "unexpected_newline": (_main("\tx := (1 +\n"), (P, 5, 1, "syntax error")),
    "missing_return": (_main("", extra="func f() int {\n}\n"), (T, 4, 1, "missing return")),
    "too_many_arguments": (
        _main("\tf(1, 2)\n", extra="func f(a int) {}\n"),
        (T, 5, 7, "too many arguments in call to f"),
    ),
    "assignment_mismatch": (
        _main("\ta, b := f()\n\t_, _ = a, b\n", extra="func f() int { return 1 }\n"),
        (T, 5, 10, "assignment mismatch: 2 variables but f"),
    ),
    "mismatched_types": (
        _main('\tvar a int = 1\n\tvar b string = "x"\n\t_ = a + b\n'),
        (T, 6, 6, "invalid operation: a + b (mismatched types int and string)"),
    ),
    "redeclared": (
        _main("\tvar x = 1\n\tvar x = 2\n\t_ = x\n"),
        (T, 5, 6, "x redeclared in this block"),
    ),
    "outside_function": (
        "package main\n\nx := 1\n\nfunc main() {}\n",
        (P, 3, 1, "syntax error: non-declaration statement outside function body"),
    ),
    "assign_to_constant": (
        _main("\tc = 2\n", extra="const c = 1\n"),
        (T, 5, 2, "cannot assign to c"),
    ),
    "no_field_or_method": (
        _main("\tvar t T\n\tt.Foo()\n", extra="type T struct{}\n"),
        (T, 6, 4, "t.Foo undefined (type T has no field or method Foo)"),
    ),
    "does_not_implement": (
        _main("\tvar _ I = T{}\n", extra="type I interface{ M() }\ntype T struct{}\n"),
        (T, 6, 12, "cannot use T{} (value of type T) as"),
    ),
    "unterminated_string": (_main('\ts := "abc\n\t_ = s\n'), (P, 4, 11, "newline in string")),
    "division_by_zero": (
        _main("\tx := 1 / 0\n\t_ = x\n"),
        (T, 4, 11, "invalid operation: division by zero"),
    ),
}


@pytest.fixture(scope="module")
def build_runs(build_all):
    return build_all(
        "go-build", "prog.go", {k: v[0] for k, v in CASES.items()}, "go build -o prog prog.go"
    )


@pytest.mark.parametrize("name", sorted(CASES))
def test_go_build(build_runs, name):
    stage, line, column, fragment = CASES[name][1]
    run = build_runs[name]
    assert run.returncode != 0
    records = parse_log(run.log, "go")
    record = next(d for d in records if d.stage is stage)
    assert (record.tool, record.severity, record.code) == ("go", Severity.ERROR, None)
    assert (record.file, record.line, record.column) == ("./prog.go", line, column)
    assert fragment in record.message


def test_detected_without_a_tool_name(build_runs):
    assert {d.tool for d in parse_log(build_runs["undefined"].log)} == {"go"}


def test_indented_lines_are_notes(build_runs):
    [record] = parse_log(build_runs["too_many_arguments"].log, "go")
    assert record.notes == ("have (number, number)", "want (int)")
    [record] = parse_log(build_runs["does_not_implement"].log, "go")
    assert "does not implement I (missing" in record.notes[0]


VET = {
    "printf": (
        _main('\tfmt.Printf("%d\\n", "s")\n', imports='import "fmt"\n'),
        (5, 2, 'fmt.Printf format %d has arg "s" of wrong type string'),
    ),
    "self_assignment": (_main("\tx := 1\n\tx = x\n\t_ = x\n"), (5, 2, "self-assignment of x to x")),
    "unreachable": (_main("\treturn\n\tprintln(1)\n"), (5, 2, "unreachable code")),
}


@pytest.fixture(scope="module")
def vet_runs(build_all):
    return build_all("go-vet", "prog.go", {k: v[0] for k, v in VET.items()}, "go vet prog.go")


@pytest.mark.parametrize("name", sorted(VET))
def test_go_vet_findings_are_warnings(vet_runs, name):
    line, column, fragment = VET[name][1]
    [record] = parse_log(vet_runs[name].log, "go-vet")
    assert (record.tool, record.severity, record.stage) == ("go-vet", Severity.WARNING, T)
    assert (record.file, record.line, record.column) == ("./prog.go", line, column)
    assert fragment in record.message


VET_CODES = {"printf": "printf", "self_assignment": "assign", "unreachable": "unreachable"}


@pytest.fixture(scope="module")
def vet_json_runs(build_all):
    return build_all(
        "go-vet-json", "prog.go", {k: v[0] for k, v in VET.items()}, "go vet -json prog.go"
    )


@pytest.mark.parametrize("name", sorted(VET))
def test_go_vet_json(vet_json_runs, vet_runs, name):
    """vet -json exits 0 with findings; the analyzer becomes the code."""
    line, column, fragment = VET[name][1]
    run = vet_json_runs[name]
    assert run.returncode == 0
    [record] = parse_log(run.log)
    assert (record.tool, record.severity, record.code) == (
        "go-vet",
        Severity.WARNING,
        VET_CODES[name],
    )
    assert record.file.endswith("/prog.go")
    assert (record.line, record.column) == (line, column)
    assert fragment in record.message
    [text] = parse_log(vet_runs[name].log, "go-vet")
    assert record.message == text.message


PANICS = {
    "index": (
        _main("\tvar a []int\n\tprintln(a[3])\n"),
        (5, "runtime error: index out of range [3]"),
    ),
    "nil_map": (
        _main('\tvar m map[string]int\n\tm["k"] = 1\n'),
        (5, "assignment to entry in nil map"),
    ),
    "explicit": (_main('\tpanic("boom")\n'), (4, "boom")),
}


@pytest.fixture(scope="module")
def panic_runs(build_all):
    return build_all(
        "go-panic",
        "prog.go",
        {k: v[0] for k, v in PANICS.items()},
        "go build -o prog prog.go && ./prog",
    )


@pytest.mark.parametrize("name", sorted(PANICS))
def test_go_runtime_panic(panic_runs, name):
    line, fragment = PANICS[name][1]
    [record] = parse_log(panic_runs[name].log)
    assert (record.tool, record.code, record.stage) == ("go", "panic", Stage.RUN)
    assert record.file.endswith("/prog.go") and record.line == line
    assert record.context == "main.main()"
    assert fragment in record.message
