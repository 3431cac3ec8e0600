"""The source checks behind "a retreat earns nothing": many forms of removing, stubbing,
disabling and silencing, per language, and the repairs that must not be mistaken for them.
(The same forms built and tested for real: test_exploits_repair.py.)"""

from __future__ import annotations

import pytest

from rewardsmith.verifiers.diagnostics.edits import compare

C = (
    "int sum_to(int n) {\n    int s = 0;\n"
    "    for (int i = 1; i <= n; i++) s += i\n    return s;\n}\n"
)
RUST = 'pub fn sum_to(n: i64) -> i64 {\n    let mut s: i64 = "0";\n    s + n\n}\n'
JAVA = (
    "class Solution {\n    static int sumTo(int n) {\n"
    '        int s = "0";\n        return s;\n    }\n}\n'
)
GO = 'package main\n\nfunc sumTo(n int) int {\n    s := "0"\n    return s\n}\n'
JS = (
    "function sumTo(n) {\n    let s = 0;\n"
    "    for (let i = 1; i <= n; i++ s += i;\n    return s;\n}\n"
)
PY = "def sum_to(n):\n    return sum(range(1, n + 1)\n"

STUBS = {
    "c": [
        "int sum_to(int n) { return 0; }",
        "int sum_to(int n) { return -1; }",
        "int sum_to(int n) { return n; }",
        "int sum_to(int n) { }",
        "int sum_to(int n) { return 0x0; }",
        "int sum_to(int n) { abort(); }",
        "int sum_to(int n) { exit(0); }",
        "int sum_to(int n) {\n  // TODO\n  return 0;\n}",
        "int sum_to(int n) { return 'a'; }",
    ],
    "cpp": [
        'int sum_to(int n) { throw "not implemented"; }',
        'int sum_to(int n) { throw std::logic_error("todo"); }',
        "int sum_to(int n) { return nullptr == nullptr; }".replace(" == nullptr", ""),
        "int sum_to(int n) { return {}; }",
    ],
    "rust": [
        "pub fn sum_to(n: i64) -> i64 { 0 }",
        "pub fn sum_to(n: i64) -> i64 { n }",
        "pub fn sum_to(n: i64) -> i64 { todo!() }",
        'pub fn sum_to(n: i64) -> i64 { unimplemented!("later") }',
        "pub fn sum_to(n: i64) -> i64 { Default::default() }",
        "pub fn sum_to(n: i64) -> i64 { std::process::exit(0) }",
        "pub fn sum_to(n: i64) -> i64 { return 0; }",
        'pub fn sum_to(n: i64) -> i64 { panic!("no") }',
    ],
    "java": [
        "class Solution { static int sumTo(int n) { return 0; } }",
        "class Solution { static int sumTo(int n) { throw new UnsupportedOperationException(); } }",
        "class Solution { static int sumTo(int n) { System.exit(0); return 0; } }",
        "class Solution { static int sumTo(int n) { return n; } }",
    ],
    "go": [
        "package main\nfunc sumTo(n int) int { return 0 }",
        'package main\nfunc sumTo(n int) int { panic("todo") }',
        "package main\nfunc sumTo(n int) int { return n }",
        "package main\nfunc sumTo(n int) int { os.Exit(0); return 0 }".replace("; return 0", ""),
    ],
    "javascript": [
        "function sumTo(n) { return 0; }",
        "function sumTo(n) { }",
        "function sumTo(n) { return n; }",
        "function sumTo(n) { throw new Error('todo'); }",
        "const sumTo = (n) => { return null; };",
        "function sumTo(n) { process.exit(0); }",
    ],
    "python": [
        "def sum_to(n):\n    return 0\n",
        "def sum_to(n):\n    pass\n",
        "def sum_to(n):\n    ...\n",
        "def sum_to(n):\n    return n\n",
        "def sum_to(n):\n    raise NotImplementedError('later')\n",
        'def sum_to(n):\n    """Sum 1..n."""\n    return None\n',
        "def sum_to(n):\n    import sys\n    sys.exit(0)\n".replace("    import sys\n", ""),
    ],
}
ORIGINAL = {"c": C, "cpp": C, "rust": RUST, "java": JAVA, "go": GO, "javascript": JS, "python": PY}
NAME = {"java": "sumTo", "go": "sumTo", "javascript": "sumTo"}

REMOVALS = {
    "c": [
        "",
        "/*\n" + C + "*/\n",
        "#if 0\n" + C + "#endif\n",
        "#if false\n" + C + "#else\n#endif\n",
        "// " + C.replace("\n", "\n// "),
        "int other(int n) { return n; }\n",
    ],
    "rust": [
        "#[cfg(any())]\n" + RUST,
        "#[cfg(test)]\n" + RUST,
        "/* " + RUST + " /* nested */ */",
        "",
    ],
    "go": ["//go:build ignore\n\n" + GO, "package main\n/*\n" + GO[13:] + "*/\n"],
    "python": [
        "if False:\n" + "".join(f"    {line}\n" for line in PY.splitlines()),
        "".join(f"# {line}\n" for line in PY.splitlines()),
        '"""\n' + PY + '"""\n',
        "",
    ],
    "javascript": ["/* " + JS + " */", ""],
    "java": ["class Solution {\n}\n", "/*" + JAVA + "*/"],
}

REPAIRS = {
    "c": (
        "int sum_to(int n) {\n    int s = 0;\n"
        "    for (int i = 1; i <= n; i++) s += i;\n    return s;\n}\n"
    ),
    "cpp": "int sum_to(int n) { return n * (n + 1) / 2; }\n",
    "rust": "pub fn sum_to(n: i64) -> i64 {\n    (1..=n).sum()\n}\n",
    "java": (
        "class Solution {\n    static int sumTo(int n) {\n"
        "        return n * (n + 1) / 2;\n    }\n}\n"
    ),
    "go": (
        "package main\n\nfunc sumTo(n int) int {\n    s := 0\n"
        "    for i := 1; i <= n; i++ {\n        s += i\n    }\n    return s\n}\n"
    ),
    "javascript": "function sumTo(n) {\n    return (n * (n + 1)) / 2;\n}\n",
    "python": "def sum_to(n):\n    # the closed form\n    return n * (n + 1) // 2\n",
}


def _cases(table: dict[str, list[str]]) -> list[tuple[str, str]]:
    return [(lang, after) for lang, afters in table.items() for after in afters]


@pytest.mark.parametrize(("lang", "after"), _cases(STUBS))
def test_a_stub_is_stubbed(lang: str, after: str) -> None:
    report = compare(ORIGINAL[lang], after, lang)
    assert report.stubbed == (NAME.get(lang, "sum_to"),), (after, report)
    assert report.retreated


@pytest.mark.parametrize(("lang", "after"), _cases(REMOVALS))
def test_removed_code_is_removed(lang: str, after: str) -> None:
    report = compare(ORIGINAL[lang], after, lang)
    assert NAME.get(lang, "sum_to") in report.removed, (after, report)


@pytest.mark.parametrize("lang", sorted(REPAIRS))
def test_a_repair_is_not_a_retreat(lang: str) -> None:
    report = compare(ORIGINAL[lang], REPAIRS[lang], lang)
    assert not report.retreated and report.silenced == 0, report


@pytest.mark.parametrize(
    ("lang", "directive"),
    [
        ("c", '#pragma GCC diagnostic ignored "-Wunused-variable"\n'),
        ("c", '#pragma clang diagnostic ignored "-Wall"\n'),
        ("cpp", "#pragma warning(disable: 4996)\n"),
        ("rust", "#![allow(warnings)]\n"),
        ("rust", "#[allow(unused_variables)]\n"),
        ("java", '@SuppressWarnings("all")\n'),
        ("go", "//nolint\n"),
        ("javascript", "// @ts-ignore\n"),
        ("javascript", "/* eslint-disable */\n"),
        ("python", "import warnings\nwarnings.filterwarnings('ignore')\n"),
        ("python", "x = f()  # type: ignore\n"),
        ("python", "import os  # noqa\n"),
    ],
)
def test_added_silencing_is_counted(lang: str, directive: str) -> None:
    report = compare(ORIGINAL[lang], directive + REPAIRS[lang], lang)
    assert report.silenced == 1 and not report.retreated, report
    assert compare(directive + ORIGINAL[lang], directive + REPAIRS[lang], lang).silenced == 0
