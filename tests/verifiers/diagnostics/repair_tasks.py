"""Repair tasks in every language the repair rewards read: a trusted harness, stdin/stdout
cases, a broken first attempt and its fix. The harness asserts on the model's function
before it prints, so a stub's log holds a real failed assertion (glibc's, a Rust panic, a
Python AssertionError, ...) and a non-zero exit, as in the issue."""

from __future__ import annotations

from textwrap import dedent
from typing import Any

CASES = [
    {"input": "3\n", "output": "6\n"},
    {"input": "4\n", "output": "10\n"},
    {"input": "1\n", "output": "1\n"},
]


def _src(text: str) -> str:
    return dedent(text).lstrip("\n")


TASKS: dict[str, dict[str, Any]] = {
    "c": {
        "harness": {
            "main.c": _src(
                r"""
            #include <assert.h>
            #include <stdio.h>
            int sum_to(int n);
            int main(void) {
                int n;
                if (scanf("%d", &n) != 1) return 2;
                assert(sum_to(2) == 3);
                printf("%d\n", sum_to(n));
                return 0;
            }
"""
            )
        },
        "broken": _src(
            r"""
            int add(int a, int b) { return a + b; }

            int sum_to(int n) {
                int s = 0;
                for (int i = 1; i <= n; i++) s = add(s, i)
                return s;
            }
"""
        ),
        "fixed": _src(
            r"""
            int add(int a, int b) { return a + b; }

            int sum_to(int n) {
                int s = 0;
                for (int i = 1; i <= n; i++) s = add(s, i);
                return s;
            }
"""
        ),
    },
    "cpp": {
        "harness": {
            "main.cpp": _src(
                r"""
            #include <cassert>
            #include <iostream>
            int sum_to(int n);
            int main() {
                int n;
                std::cin >> n;
                assert(sum_to(2) == 3);
                std::cout << sum_to(n) << std::endl;
            }
"""
            )
        },
        "broken": _src(
            r"""
            int add(int a, int b) { return a + b; }

            int sum_to(int n) {
                int s = 0;
                for (int i = 1; i <= n; i++) s = add(s, i, 0);
                return s;
            }
"""
        ),
        "fixed": _src(
            r"""
            int add(int a, int b) { return a + b; }

            int sum_to(int n) {
                int s = 0;
                for (int i = 1; i <= n; i++) s = add(s, i);
                return s;
            }
"""
        ),
    },
    "rust": {
        "harness": {
            "main.rs": _src(
                r"""
            mod solution;
            use std::io::Read;
            fn main() {
                let mut s = String::new();
                std::io::stdin().read_to_string(&mut s).unwrap();
                let n: i64 = s.trim().parse().unwrap();
                assert_eq!(solution::sum_to(2), 3);
                println!("{}", solution::sum_to(n));
            }
"""
            )
        },
        "broken": _src(
            r"""
            pub fn add(a: i64, b: i64) -> i64 {
                a + b
            }

            pub fn sum_to(n: i64) -> i64 {
                let mut s: i64 = "0";
                for i in 1..=n {
                    s = add(s, i);
                }
                s
            }
"""
        ),
        "fixed": _src(
            r"""
            pub fn add(a: i64, b: i64) -> i64 {
                a + b
            }

            pub fn sum_to(n: i64) -> i64 {
                let mut s: i64 = 0;
                for i in 1..=n {
                    s = add(s, i);
                }
                s
            }
"""
        ),
    },
    "java": {
        "harness": {
            "Main.java": _src(
                r"""
            public class Main {
                public static void main(String[] args) throws Exception {
                    int n = Integer.parseInt(new String(System.in.readAllBytes()).trim());
                    if (Solution.sumTo(2) != 3) throw new AssertionError("sumTo(2)");
                    System.out.println(Solution.sumTo(n));
                }
            }
"""
            )
        },
        "broken": _src(
            r"""
            class Solution {
                static int add(int a, int b) { return a + b; }
                static int sumTo(int n) {
                    int s = "0";
                    for (int i = 1; i <= n; i++) s = add(s, i);
                    return s;
                }
            }
"""
        ),
        "fixed": _src(
            r"""
            class Solution {
                static int add(int a, int b) { return a + b; }
                static int sumTo(int n) {
                    int s = 0;
                    for (int i = 1; i <= n; i++) s = add(s, i);
                    return s;
                }
            }
"""
        ),
    },
    "go": {
        "harness": {
            "main.go": _src(
                r"""
            package main

            import "fmt"

            func main() {
                var n int
                fmt.Scan(&n)
                if sumTo(2) != 3 {
                    panic("sumTo(2)")
                }
                fmt.Println(sumTo(n))
            }
"""
            )
        },
        "broken": _src(
            r"""
            package main

            func add(a, b int) int { return a + b }

            func sumTo(n int) int {
                s := "0"
                for i := 1; i <= n; i++ {
                    s = add(s, i)
                }
                return s
            }
"""
        ),
        "fixed": _src(
            r"""
            package main

            func add(a, b int) int { return a + b }

            func sumTo(n int) int {
                s := 0
                for i := 1; i <= n; i++ {
                    s = add(s, i)
                }
                return s
            }
"""
        ),
    },
    "javascript": {
        "harness": {
            "main.js": _src(
                r"""
            const { sumTo } = require('./solution.js');
            const n = Number(require('fs').readFileSync(0, 'utf8'));
            if (sumTo(2) !== 3) throw new Error('sumTo(2)');
            console.log(sumTo(n));
"""
            )
        },
        "broken": _src(
            r"""
            function add(a, b) { return a + b; }

            function sumTo(n) {
                let s = 0;
                for (let i = 1; i <= n; i++ s = add(s, i);
                return s;
            }

            module.exports = { add, sumTo };
"""
        ),
        "fixed": _src(
            r"""
            function add(a, b) { return a + b; }

            function sumTo(n) {
                let s = 0;
                for (let i = 1; i <= n; i++) s = add(s, i);
                return s;
            }

            module.exports = { add, sumTo };
"""
        ),
    },
    "python": {
        "harness": {
            "main.py": _src(
                r"""
            import sys
            from solution import sum_to
            n = int(sys.stdin.read())
            assert sum_to(2) == 3, 'sum_to(2)'
            print(sum_to(n))
"""
            )
        },
        "broken": _src(
            r"""
            def add(a, b):
                return a + b


            def sum_to(n):
                s = 0
                for i in range(1, n + 1)
                    s = add(s, i)
                return s
"""
        ),
        "fixed": _src(
            r"""
            def add(a, b):
                return a + b


            def sum_to(n):
                s = 0
                for i in range(1, n + 1):
                    s = add(s, i)
                return s
"""
        ),
    },
}


def reference(language: str) -> dict[str, Any]:
    """The repair task a sample's `reference` holds."""
    return {"language": language, "harness": TASKS[language]["harness"], "cases": CASES}
