"""gcc and g++ on real broken programs: text and JSON output, field by field."""

# ruff: noqa: E501  (tool output is quoted verbatim, long lines included)
from __future__ import annotations

import pytest

from rewardsmith.verifiers.diagnostics import Severity, Stage, parse_log

E, W = Severity.ERROR, Severity.WARNING
P, T, L = Stage.PARSE, Stage.TYPE, Stage.LINK

# name -> (source, (severity, stage, code, line, column, message fragment)) of the first
# record with that severity and stage. Column None: not checked (the line is).
C_CASES: dict[str, tuple[str, tuple]] = {
    "missing_semicolon": (
        "int main(void) {\n  int x = 1\n  return x;\n}\n",
        (E, P, None, 3, 3, "expected ',' or ';' before 'return'"),
    ),
    "undeclared": ("int main(void) {\n  return y;\n}\n", (E, T, None, 2, 10, "'y' undeclared")),
    "implicit_declaration": (
        "int main(void) {\n  return foo();\n}\nint foo(void) { return 0; }\n",
        (W, T, "-Wimplicit-function-declaration", 2, 10, "implicit declaration of function"),
    ),
    "undefined_reference": (
        "int foo(void);\nint main(void) {\n  return foo();\n}\n",
        (E, L, "undefined-reference", None, None, "undefined reference to `foo'"),
    ),
    "incompatible_init": (
        "int main(void) {\n  int *p = 1.0;\n  return *p;\n}\n",
        (E, T, None, 2, 12, "incompatible types when initializing type 'int *'"),
    ),
    "unused_variable": (
        "int main(void) {\n  int unused = 3;\n  return 0;\n}\n",
        (W, T, "-Wunused-variable", 2, 7, "unused variable 'unused'"),
    ),
    "missing_header": (
        '#include "nope.h"\nint main(void) { return 0; }\n',
        (E, P, None, 1, 10, "nope.h: No such file or directory"),
    ),
    "too_few_arguments": (
        "int f(int a, int b) { return a + b; }\nint main(void) {\n  return f(1);\n}\n",
        (E, T, None, 3, 10, "too few arguments to function 'f'"),
    ),
    "conflicting_types": (
        "int x;\ndouble x;\nint main(void) { return 0; }\n",
        (E, T, None, 2, 8, "conflicting types for 'x'"),
    ),
    "missing_return": (
        "int f(int a) {\n  if (a) return 1;\n}\nint main(void) { return f(0); }\n",
        (W, T, "-Wreturn-type", 3, 1, "control reaches end of non-void function"),
    ),
    "unterminated_string": (
        'int main(void) {\n  char *s = "abc;\n  return 0;\n}\n',
        (E, P, None, 2, 13, "missing terminating"),
    ),
    "no_member": (
        "struct S { int a; };\nint main(void) {\n  struct S s = {0};\n  return s.b;\n}\n",
        (E, T, None, 4, 11, "'struct S' has no member named 'b'"),
    ),
    "format_mismatch": (
        '#include <stdio.h>\nint main(void) {\n  printf("%d\\n", "s");\n  return 0;\n}\n',
        (W, T, "-Wformat=", 3, 12, "format '%d' expects argument of type 'int'"),
    ),
    "void_value": (
        "void f(void) {}\nint main(void) {\n  int x = f();\n  return x;\n}\n",
        (E, T, None, 3, 11, "void value not ignored"),
    ),
    "stray_character": (
        "int main(void) {\n  @ return 0;\n}\n",
        (E, P, None, 2, 3, "stray '@' in program"),
    ),
    "read_only": (
        "int main(void) {\n  const int x = 1;\n  x = 2;\n  return x;\n}\n",
        (E, T, None, 3, 5, "assignment of read-only variable 'x'"),
    ),
    "division_by_zero": (
        "int main(void) {\n  return 1 / 0;\n}\n",
        (W, T, "-Wdiv-by-zero", 2, 12, "division by zero"),
    ),
}

CPP_CASES: dict[str, tuple[str, tuple]] = {
    "struct_semicolon": (
        "struct S { int a; }\nint main() { return 0; }\n",
        (E, P, None, 1, 20, "expected ';' after struct definition"),
    ),
    "not_declared": (
        "int main() {\n  return y;\n}\n",
        (E, T, None, 2, 10, "'y' was not declared in this scope"),
    ),
    "no_member": (
        "#include <vector>\nint main() {\n  std::vector<int> v;\n  v.foo();\n}\n",
        (E, T, None, 4, 5, "has no member named 'foo'"),
    ),
    "no_matching_call": (
        '#include <vector>\nint main() {\n  std::vector<int> v;\n  v.push_back("x");\n}\n',
        (E, T, None, 4, 14, "no matching function for call to 'push_back(const char [2])'"),
    ),
    "too_few_arguments": (
        "void f(int, int);\nint main() {\n  f(1);\n}\n",
        (E, T, None, 3, 4, "too few arguments to function"),
    ),
    "abstract_type": (
        "struct B { virtual void f() = 0; };\nint main() {\n  B b;\n}\n",
        (E, T, None, 3, 5, "cannot declare variable 'b' to be of abstract type 'B'"),
    ),
    "private_member": (
        "class C { int x; };\nint main() {\n  C c;\n  return c.x;\n}\n",
        (E, T, None, 4, 12, "'int C::x' is private within this context"),
    ),
    "const_member": (
        "struct S { int x; void set() const { x = 1; } };\nint main() { S s; s.set(); }\n",
        (E, T, None, 1, 40, "assignment of member 'S::x' in read-only object"),
    ),
    "missing_return": (
        "int f(int a) {\n  if (a) return 1;\n}\nint main() { return f(0); }\n",
        (W, T, "-Wreturn-type", 3, 1, "control reaches end of non-void function"),
    ),
    "unused_variable": (
        "int main() {\n  int unused = 3;\n  return 0;\n}\n",
        (W, T, "-Wunused-variable", 2, 7, "unused variable 'unused'"),
    ),
    "undefined_reference": (
        "int foo();\nint main() {\n  return foo();\n}\n",
        (E, L, "undefined-reference", None, None, "undefined reference to `foo()'"),
    ),
    "redefinition": (
        "int f() { return 1; }\nint f() { return 2; }\nint main() { return f(); }\n",
        (E, T, None, 2, 5, "redefinition of 'int f()'"),
    ),
    "missing_include": (
        "#include <nosuchheader>\nint main() {}\n",
        (E, P, None, 1, 10, "nosuchheader: No such file or directory"),
    ),
    "narrowing": (
        "int main() {\n  int x{1.5};\n  return x;\n}\n",
        (E, T, "-Wnarrowing", 2, 9, "narrowing conversion of '1.5e+0' from 'double' to 'int'"),
    ),
    "no_viable_overload": (
        "#include <string>\nint main() {\n  std::string s = 1.5;\n}\n",
        (E, T, None, 3, 19, "conversion from 'double' to non-scalar type"),
    ),
    "use_of_deleted": (
        "struct N { N(const N&) = delete; N() {} };\nint main() {\n  N a;\n  N b = a;\n}\n",
        (E, T, None, 4, 9, "use of deleted function 'N::N(const N&)'"),
    ),
}


def _first(records, severity, stage):
    matching = [d for d in records if d.severity is severity and d.stage is stage]
    assert matching, [(d.severity, d.stage, d.message) for d in records]
    return matching[0]


def _check(record, tool, expected):
    severity, stage, code, line, column, fragment = expected
    assert record.tool == tool
    assert (record.severity, record.stage, record.code) == (severity, stage, code)
    assert record.line == line
    if column is not None:
        assert record.column == column
    # gcc quotes with U+2018/U+2019 in a UTF-8 locale; compare with ASCII quotes.
    assert fragment in record.message.replace("\u2018", "'").replace("\u2019", "'")
    if line is not None:
        assert record.file.endswith(("prog.c", "prog.cpp"))


@pytest.fixture(scope="module")
def c_runs(build_all):
    return build_all(
        "gcc", "prog.c", {k: v[0] for k, v in C_CASES.items()}, "gcc -Wall -Wextra -o prog prog.c"
    )


@pytest.fixture(scope="module")
def c_json_runs(build_all):
    return build_all(
        "gcc-json",
        "prog.c",
        {k: v[0] for k, v in C_CASES.items()},
        "gcc -Wall -Wextra -fdiagnostics-format=json -o prog prog.c",
    )


@pytest.fixture(scope="module")
def cpp_runs(build_all):
    return build_all(
        "gpp",
        "prog.cpp",
        {k: v[0] for k, v in CPP_CASES.items()},
        "g++ -std=c++17 -Wall -Wextra -o prog prog.cpp",
    )


@pytest.mark.parametrize("name", sorted(C_CASES))
def test_gcc_text(c_runs, name):
    run = c_runs[name]
    assert run.returncode != 0 or C_CASES[name][1][0] is W
    expected = C_CASES[name][1]
    _check(_first(parse_log(run.log, "gcc"), expected[0], expected[1]), "gcc", expected)


@pytest.mark.parametrize("name", sorted(C_CASES))
def test_gcc_json_agrees_with_text(c_runs, c_json_runs, name):
    """Every record of the JSON form has its twin in the text form (linker lines stay text).

    Not the converse: for an unterminated string gcc's text has a warning *and* an error at
    the same place, its JSON only the warning.
    """
    text = parse_log(c_runs[name].log, "gcc")
    from_json = parse_log(c_json_runs[name].log, "gcc")
    key = lambda d: (d.severity, d.stage, d.code, d.line, d.column, d.message)  # noqa: E731
    assert from_json
    assert set(map(key, from_json)) <= set(map(key, text))


@pytest.mark.parametrize("name", sorted(CPP_CASES))
def test_gpp_text(cpp_runs, name):
    expected = CPP_CASES[name][1]
    _check(_first(parse_log(cpp_runs[name].log, "g++"), expected[0], expected[1]), "g++", expected)


def test_detection_without_a_tool_name(c_runs):
    records = parse_log(c_runs["undeclared"].log)
    assert [d.tool for d in records] == ["gcc"]


def test_function_context_and_excerpt(c_runs):
    [record] = parse_log(c_runs["undeclared"].log, "gcc")[:1]
    assert record.context is not None and "main" in record.context
    assert "return y;" in (record.excerpt or "")


def test_notes_attach_to_their_error(cpp_runs):
    """g++ explains a failed overload with notes; they are related locations, not records."""
    records = parse_log(cpp_runs["no_matching_call"].log, "g++")
    assert all(d.severity is not Severity.NOTE for d in records)
    assert any(d.related for d in records)


def test_fixit_becomes_a_fix(c_runs, c_json_runs):
    """gcc suggests the missing ';' (a fix-it line under the caret; ``fixits`` in JSON)."""
    log = "a.c:2:12: error: expected ';' before '}' token\n    2 |   int x = 1 }\n      |            ^~\n      |            ;\n"
    [record] = parse_log(log, "gcc")
    assert [(f.replacement, f.line, f.column) for f in record.fixes] == [(";", 2, 12)]
    [first] = [d for d in parse_log(c_runs["missing_semicolon"].log, "gcc") if d.is_error][:1]
    assert first.excerpt and "return x;" in first.excerpt


# ------------------------------------------------------------------ clang (hand-written)
# clang is not installed here; this is its documented text format (source line, caret,
# fix-it line, then an "N errors generated." summary) with its real messages.
CLANG_LOG = """\
prog.c:3:10: error: use of undeclared identifier 'y'
  return y;
         ^
prog.c:2:7: warning: unused variable 'x' [-Wunused-variable]
  int x = 1;
      ^
prog.c:7:11: error: expected ';' after return statement
  return 0
          ^
          ;
prog.c:9:3: error: call to undeclared function 'foo'; ISO C99 and later do not support implicit function declarations [-Wimplicit-function-declaration]
  foo();
  ^
prog.c:11:14: warning: format specifies type 'int' but the argument has type 'char *' [-Wformat]
  printf("%d", s);
          ~~   ^
          %s
prog.c:12:10: error: incompatible pointer to integer conversion initializing 'int' with an expression of type 'char[2]' [-Wint-conversion]
  int z = "a";
          ^~~
prog.c:1:10: fatal error: 'nope.h' file not found
#include "nope.h"
         ^~~~~~~~
/usr/bin/ld: /tmp/prog-1a2b3c.o: in function `main':
prog.c:(.text+0x1d): undefined reference to `bar'
clang: error: linker command failed with exit code 1 (use -v to see invocation)
4 errors and 2 warnings generated.
"""


def test_clang_is_not_installed_here():
    """The hand-written output above is allowed only while clang is absent."""
    import shutil

    if shutil.which("clang"):
        pytest.fail("clang is installed: replace the hand-written output with a real run")


def test_clang_text():
    records = parse_log(CLANG_LOG)
    got = [(d.tool, d.severity.value, d.stage.value, d.code, d.line, d.column) for d in records]
    assert got == [
        ("clang", "error", "type", None, 3, 10),
        ("clang", "warning", "type", "-Wunused-variable", 2, 7),
        ("clang", "error", "parse", None, 7, 11),
        ("clang", "error", "type", "-Wimplicit-function-declaration", 9, 3),
        ("clang", "warning", "type", "-Wformat", 11, 14),
        ("clang", "error", "type", "-Wint-conversion", 12, 10),
        ("clang", "error", "parse", None, 1, 10),
        ("clang", "error", "link", "undefined-reference", None, None),
        ("clang", "error", "link", None, None, None),
    ]
    assert records[0].excerpt == "  return y;\n         ^"


# clang -fdiagnostics-format=sarif prints one SARIF line on stderr, then a text warning
# that the mode is unstable (clang 17's shape; hand-written, clang is absent).
CLANG_SARIF = (
    '{"$schema":"https://docs.oasis-open.org/sarif/sarif/v2.1.0/cos02/schemas/sarif-schema-2.1.0.json",'
    '"runs":[{"artifacts":[{"length":-1,"location":{"index":0,"uri":"file:///w/prog%20dir/prog.c"},'
    '"mimeType":"text/plain","roles":["resultFile"]}],"columnKind":"unicodeCodePoints","results":['
    '{"level":"error","locations":[{"physicalLocation":{"artifactLocation":{"index":0,'
    '"uri":"file:///w/prog%20dir/prog.c"},"region":{"endColumn":10,"startColumn":10,"startLine":3}}}],'
    '"message":{"text":"use of undeclared identifier \'y\'"},"ruleId":"3503","ruleIndex":0},'
    '{"level":"warning","locations":[{"physicalLocation":{"artifactLocation":{"index":0,'
    '"uri":"file:///w/prog%20dir/prog.c"},"region":{"endColumn":7,"startColumn":7,"startLine":2}}}],'
    '"message":{"text":"unused variable \'x\'"},"ruleId":"6771","ruleIndex":1}],'
    '"tool":{"driver":{"fullName":"","informationUri":"https://clang.llvm.org/docs/UsersManual.html",'
    '"language":"en-US","name":"clang","rules":[{"id":"3503","name":""},{"id":"6771","name":""}],'
    '"version":"17.0.6"}}}],"version":"2.1.0"}\n'
    "warning: diagnostic formatting in SARIF mode is currently unstable [-Wsarif-format-unstable]\n"
    "1 warning and 1 error generated.\n"
)


def test_clang_sarif():
    records = parse_log(CLANG_SARIF)
    got = [(d.tool, d.severity.value, d.code, d.file, d.line, d.column) for d in records]
    assert got == [
        ("clang", "error", "3503", "/w/prog dir/prog.c", 3, 10),
        ("clang", "warning", "6771", "/w/prog dir/prog.c", 2, 7),
    ]
