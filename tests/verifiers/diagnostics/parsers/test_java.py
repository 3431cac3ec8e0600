"""javac on real broken programs (-XDrawDiagnostics and the default text), and java runtime
exceptions."""

from __future__ import annotations

import pytest

from rewardsmith.verifiers.diagnostics import Severity, Stage, parse_log

E, W = Severity.ERROR, Severity.WARNING
P, T = Stage.PARSE, Stage.TYPE


def _main(body: str, extra: str = "") -> str:
    head = "    public static void main(String[] args) {\n"
    return f"public class Main {{\n{extra}{head}{body}    }}\n}}\n"


# name -> (source, (severity, stage, raw code, line, column, text-form message fragment))
CASES: dict[str, tuple[str, tuple]] = {
    "cant_resolve": (
        _main("        int x = y;\n"),
        (E, T, "compiler.err.cant.resolve.location", 3, 17, "cannot find symbol"),
    ),
    "incompatible_types": (
        _main('        int x = "s";\n'),
        (E, T, "compiler.err.prob.found.req", 3, 17, "incompatible types"),
    ),
    "missing_semicolon": (
        _main("        int x = 1\n"),
        (E, P, "compiler.err.expected", 3, 18, "';' expected"),
    ),
    "missing_return": (
        _main("", "    static int f() {\n    }\n"),
        (E, T, "compiler.err.missing.ret.stmt", 3, 5, "missing return statement"),
    ),
    "uninitialized": (
        _main("        int x;\n        System.out.println(x);\n"),
        (
            E,
            T,
            "compiler.err.var.might.not.have.been.initialized",
            4,
            28,
            "might not have been initialized",
        ),
    ),
    "wrong_arguments": (
        _main("        f(1, 2);\n", "    static void f(int a) {}\n"),
        (E, T, "compiler.err.cant.apply.symbol", 4, 9, "cannot be applied to given types"),
    ),
    "already_defined": (
        _main("        int x = 1;\n        int x = 2;\n"),
        (E, T, "compiler.err.already.defined", 4, 13, "is already defined"),
    ),
    "abstract_not_implemented": (
        "interface I { void f(); }\npublic class Main implements I {\n"
        "    public static void main(String[] a) {}\n}\n",
        (E, T, "compiler.err.does.not.override.abstract", 2, 8, "is not abstract"),
    ),
    "unreported_exception": (
        _main('        throw new Exception("x");\n'),
        (
            E,
            T,
            "compiler.err.unreported.exception.need.to.catch.or.throw",
            3,
            9,
            "unreported exception",
        ),
    ),
    "not_a_statement": (
        _main("        1 + 2;\n"),
        (E, P, "compiler.err.not.stmt", 3, 11, "not a statement"),
    ),
    "premature_eof": (
        "public class Main {\n    public static void main(String[] a) {\n",
        (E, P, "compiler.err.premature.eof", 2, 42, "reached end of file while parsing"),
    ),
    "final_assign": (
        _main("        final int x = 1;\n        x = 2;\n"),
        (
            E,
            T,
            "compiler.err.cant.assign.val.to.final.var",
            4,
            9,
            "cannot assign a value to final variable",
        ),
    ),
    "unreachable": (
        _main("        return;\n        System.out.println(1);\n"),
        (E, T, "compiler.err.unreachable.stmt", 4, 9, "unreachable statement"),
    ),
    "illegal_start": (
        _main("        int x = );\n"),
        (E, P, "compiler.err.illegal.start.of.expr", 3, 17, "illegal start of expression"),
    ),
    "non_static": (
        _main("        f();\n", "    void f() {}\n"),
        (E, T, "compiler.err.non-static.cant.be.ref", 4, 9, "non-static method"),
    ),
    "unclosed_string": (
        _main('        String s = "abc;\n'),
        (E, P, "compiler.err.unclosed.str.lit", 3, 20, "unclosed string literal"),
    ),
    "redundant_cast": (
        _main("        int x = (int) 1;\n"),
        (W, T, "compiler.warn.redundant.cast", 3, 17, "redundant cast to int"),
    ),
}


def _cls(name: str) -> str:
    return f"C_{name}"


def _files(cases: dict[str, tuple]) -> dict[str, str]:
    """One file per case, its class renamed so that one javac run compiles them all."""
    return {f"{_cls(n)}.java": src.replace("Main", _cls(n)) for n, (src, *_) in cases.items()}


# Keep going after parse errors so each file's own errors are reported, as if alone.
JAVAC = "javac -XDshould-stop.ifError=FLOW -Xmaxerrs 1000 -Xlint:all -d out *.java"


def _first(records, name, severity):
    matching = [d for d in records if d.severity is severity and d.file == f"{_cls(name)}.java"]
    assert matching, [(d.severity, d.message) for d in records]
    return matching[0]


@pytest.fixture(scope="module")
def raw_records(build_together):
    run = build_together(
        "javac-raw", _files(CASES), JAVAC.replace("javac", "javac -XDrawDiagnostics")
    )
    assert run.returncode != 0
    return parse_log(run.log, "javac")


@pytest.fixture(scope="module")
def text_records(build_together):
    return parse_log(build_together("javac-text", _files(CASES), JAVAC).log)


@pytest.mark.parametrize("name", sorted(CASES))
def test_javac_raw(raw_records, name):
    severity, stage, code, line, column, _ = CASES[name][1]
    record = _first(raw_records, name, severity)
    assert (record.tool, record.severity, record.stage, record.code) == (
        "javac",
        severity,
        stage,
        code,
    )
    assert (record.line, record.column) == (line, column)


@pytest.mark.parametrize("name", sorted(CASES))
def test_javac_text(text_records, name):
    """The default text: same place (the column from the caret), message in words."""
    severity, stage, _, line, column, fragment = CASES[name][1]
    record = _first(text_records, name, severity)
    assert (record.tool, record.severity, record.stage) == ("javac", severity, stage)
    assert (record.line, record.column) == (line, column)
    assert fragment in record.message
    assert record.excerpt


def test_text_notes(text_records):
    record = _first(text_records, "cant_resolve", E)
    assert record.notes == ("symbol:   variable y", "location: class C_cant_resolve")


def test_lint_name_is_the_text_code(text_records):
    assert _first(text_records, "redundant_cast", W).code == "cast"


RUNTIME: dict[str, tuple[str, str, int, str]] = {
    "arithmetic": (
        _main("        int z = 0;\n        System.out.println(1 / z);\n"),
        "java.lang.ArithmeticException",
        4,
        "/ by zero",
    ),
    "null_pointer": (
        _main("        String s = null;\n        s.length();\n"),
        "java.lang.NullPointerException",
        4,
        'Cannot invoke "String.length()"',
    ),
    "index": (
        _main("        int[] a = new int[1];\n        a[2] = 1;\n"),
        "java.lang.ArrayIndexOutOfBoundsException",
        4,
        "Index 2 out of bounds for length 1",
    ),
    "parse_int": (
        _main('        Integer.parseInt("x");\n'),
        "java.lang.NumberFormatException",
        3,
        'For input string: "x"',
    ),
}


@pytest.fixture(scope="module")
def runtime_records(build_together):
    mains = " ; ".join(f"java -cp out {_cls(n)}" for n in sorted(RUNTIME))
    run = build_together("java-run", _files(RUNTIME), f"javac -d out *.java && ( {mains} )")
    return parse_log(run.log)


@pytest.mark.parametrize("name", sorted(RUNTIME))
def test_java_runtime_exception(runtime_records, name):
    _, exc_type, line, fragment = RUNTIME[name]
    [record] = [d for d in runtime_records if d.file == f"{_cls(name)}.java"]
    assert (record.tool, record.code, record.stage) == ("java", exc_type, Stage.RUN)
    assert (record.line, record.context) == (line, f"{_cls(name)}.main")
    assert fragment in record.message
