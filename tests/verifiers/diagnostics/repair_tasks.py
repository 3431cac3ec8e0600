"""Repair tasks in every language the repair rewards read: a trusted harness, stdin/stdout
cases, a broken first attempt and its fix. The harness asserts on the model's function
before it prints, so a stub's log holds a real failed assertion (glibc's, a Rust panic, a
Python AssertionError, ...) and a non-zero exit, as in the issue."""

from __future__ import annotations

from typing import Any

CASES = [
    {"input": "3\n", "output": "6\n"},
    {"input": "4\n", "output": "10\n"},
    {"input": "1\n", "output": "1\n"},
]

TASKS: dict[str, dict[str, Any]] = {
    "c": {
        "harness": {
            "main.c": (
                "#include <assert.h>\n#include <stdio.h>\nint sum_to(int n);\n"
                'int main(void) {\n    int n;\n    if (scanf("%d", &n) != 1) return 2;\n'
                '    assert(sum_to(2) == 3);\n    printf("%d\\n", sum_to(n));\n    return 0;\n}\n'
            )
        },
        "broken": (
            "int add(int a, int b) { return a + b; }\n\nint sum_to(int n) {\n    int s = 0;\n"
            "    for (int i = 1; i <= n; i++) s = add(s, i)\n    return s;\n}\n"
        ),
        "fixed": (
            "int add(int a, int b) { return a + b; }\n\nint sum_to(int n) {\n    int s = 0;\n"
            "    for (int i = 1; i <= n; i++) s = add(s, i);\n    return s;\n}\n"
        ),
    },
    "cpp": {
        "harness": {
            "main.cpp": (
                "#include <cassert>\n#include <iostream>\nint sum_to(int n);\n"
                "int main() {\n    int n;\n    std::cin >> n;\n    assert(sum_to(2) == 3);\n"
                "    std::cout << sum_to(n) << std::endl;\n}\n"
            )
        },
        "broken": (
            "int add(int a, int b) { return a + b; }\n\nint sum_to(int n) {\n    int s = 0;\n"
            "    for (int i = 1; i <= n; i++) s = add(s, i, 0);\n    return s;\n}\n"
        ),
        "fixed": (
            "int add(int a, int b) { return a + b; }\n\nint sum_to(int n) {\n    int s = 0;\n"
            "    for (int i = 1; i <= n; i++) s = add(s, i);\n    return s;\n}\n"
        ),
    },
    "rust": {
        "harness": {
            "main.rs": (
                "mod solution;\nuse std::io::Read;\nfn main() {\n    let mut s = String::new();\n"
                "    std::io::stdin().read_to_string(&mut s).unwrap();\n"
                "    let n: i64 = s.trim().parse().unwrap();\n"
                '    assert_eq!(solution::sum_to(2), 3);\n    println!("{}", solution::sum_to(n));\n}\n'
            )
        },
        "broken": (
            "pub fn add(a: i64, b: i64) -> i64 {\n    a + b\n}\n\npub fn sum_to(n: i64) -> i64 {\n"
            '    let mut s: i64 = "0";\n    for i in 1..=n {\n        s = add(s, i);\n    }\n    s\n}\n'
        ),
        "fixed": (
            "pub fn add(a: i64, b: i64) -> i64 {\n    a + b\n}\n\npub fn sum_to(n: i64) -> i64 {\n"
            "    let mut s: i64 = 0;\n    for i in 1..=n {\n        s = add(s, i);\n    }\n    s\n}\n"
        ),
    },
    "java": {
        "harness": {
            "Main.java": (
                "public class Main {\n    public static void main(String[] args) throws Exception {\n"
                "        int n = Integer.parseInt(new String(System.in.readAllBytes()).trim());\n"
                '        if (Solution.sumTo(2) != 3) throw new AssertionError("sumTo(2)");\n'
                "        System.out.println(Solution.sumTo(n));\n    }\n}\n"
            )
        },
        "broken": (
            "class Solution {\n    static int add(int a, int b) { return a + b; }\n"
            '    static int sumTo(int n) {\n        int s = "0";\n'
            "        for (int i = 1; i <= n; i++) s = add(s, i);\n        return s;\n    }\n}\n"
        ),
        "fixed": (
            "class Solution {\n    static int add(int a, int b) { return a + b; }\n"
            "    static int sumTo(int n) {\n        int s = 0;\n"
            "        for (int i = 1; i <= n; i++) s = add(s, i);\n        return s;\n    }\n}\n"
        ),
    },
    "go": {
        "harness": {
            "main.go": (
                'package main\n\nimport "fmt"\n\nfunc main() {\n    var n int\n    fmt.Scan(&n)\n'
                '    if sumTo(2) != 3 {\n        panic("sumTo(2)")\n    }\n    fmt.Println(sumTo(n))\n}\n'
            )
        },
        "broken": (
            "package main\n\nfunc add(a, b int) int { return a + b }\n\nfunc sumTo(n int) int {\n"
            '    s := "0"\n    for i := 1; i <= n; i++ {\n        s = add(s, i)\n    }\n    return s\n}\n'
        ),
        "fixed": (
            "package main\n\nfunc add(a, b int) int { return a + b }\n\nfunc sumTo(n int) int {\n"
            "    s := 0\n    for i := 1; i <= n; i++ {\n        s = add(s, i)\n    }\n    return s\n}\n"
        ),
    },
    "javascript": {
        "harness": {
            "main.js": (
                "const { sumTo } = require('./solution.js');\n"
                "const n = Number(require('fs').readFileSync(0, 'utf8'));\n"
                "if (sumTo(2) !== 3) throw new Error('sumTo(2)');\nconsole.log(sumTo(n));\n"
            )
        },
        "broken": (
            "function add(a, b) { return a + b; }\n\nfunction sumTo(n) {\n    let s = 0;\n"
            "    for (let i = 1; i <= n; i++ s = add(s, i);\n    return s;\n}\n\n"
            "module.exports = { add, sumTo };\n"
        ),
        "fixed": (
            "function add(a, b) { return a + b; }\n\nfunction sumTo(n) {\n    let s = 0;\n"
            "    for (let i = 1; i <= n; i++) s = add(s, i);\n    return s;\n}\n\n"
            "module.exports = { add, sumTo };\n"
        ),
    },
    "python": {
        "harness": {
            "main.py": (
                "import sys\nfrom solution import sum_to\nn = int(sys.stdin.read())\n"
                "assert sum_to(2) == 3, 'sum_to(2)'\nprint(sum_to(n))\n"
            )
        },
        "broken": (
            "def add(a, b):\n    return a + b\n\n\ndef sum_to(n):\n    s = 0\n"
            "    for i in range(1, n + 1)\n        s = add(s, i)\n    return s\n"
        ),
        "fixed": (
            "def add(a, b):\n    return a + b\n\n\ndef sum_to(n):\n    s = 0\n"
            "    for i in range(1, n + 1):\n        s = add(s, i)\n    return s\n"
        ),
    },
}


def reference(language: str) -> dict[str, Any]:
    """The repair task a sample's `reference` holds."""
    return {"language": language, "harness": TASKS[language]["harness"], "cases": CASES}
