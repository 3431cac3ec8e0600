"""Generate the compiled-language tasks of ``code_repair.jsonl`` (the `code_repair`
environment's bundled tasks) and the reference fix of every task.

Each task below is declared once: the trusted harness (reads a case from stdin, calls the
model's function, prints the result), the broken program the model is given, its
reference fix (played only by the expert policy and the tests; never shown), and the
inputs of the visible and the hidden cases. The expected outputs are computed here by a
Python model of the function, so a task cannot carry a wrong expected value; the tests
check that every reference fix passes every case with the real compiler.

The Python tasks (``calls`` format, tested by `code_tests`) are kept as they are in the
file; only their ``solution`` is filled in from `PYTHON_FIXES`.

    python datasets/environments/repair_programs.py   # rewrites code_repair.jsonl

The output is deterministic (no clock, no randomness).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable
from pathlib import Path
from textwrap import dedent
from typing import Any

OUT = Path(__file__).resolve().parent / "code_repair.jsonl"


def _src(text: str) -> str:
    return dedent(text).lstrip("\n")


PYTHON_FIXES = {
    "r-mean": "def mean(xs):\n    return sum(xs) / len(xs)\n",
    "r-last": "def last(xs):\n    return xs[-1]\n",
    "r-syntax": "def is_even(n):\n    return n % 2 == 0\n",
    "r-reverse": "def reverse_words(s):\n    return ' '.join(reversed(s.split()))\n",
    "r-count": "def count_vowels(s):\n    return sum(c in 'aeiouAEIOU' for c in s)\n",
    "r-clamp": "def clamp(x, lo, hi):\n    return max(lo, min(x, hi))\n",
}


def _digit_sum(text: str) -> str:
    return str(sum(int(c) for c in text.strip()))


def _longest_run(text: str) -> str:
    xs = text.split()[1:]
    best = run = 1
    for a, b in itertools.pairwise(xs):
        run = run + 1 if a == b else 1
        best = max(best, run)
    return str(best)


def _vowels(text: str) -> str:
    return str(sum(c in "aeiouAEIOU" for c in text.rstrip("\n")))


def _rotate(text: str) -> str:
    head, values = text.split("\n", 1)
    k = int(head.split()[1])
    xs = values.split()
    k %= len(xs)
    return " ".join(xs[k:] + xs[:k])


def _words(text: str) -> str:
    return str(len(text.split()))


def _gcd(text: str) -> str:
    import math

    a, b = (int(x) for x in text.split())
    return str(math.gcd(a, b))


def _reverse(text: str) -> str:
    return text.rstrip("\n")[::-1]


def _fizzbuzz(text: str) -> str:
    def one(i: int) -> str:
        return (
            "FizzBuzz"
            if i % 15 == 0
            else "Fizz"
            if i % 3 == 0
            else "Buzz"
            if i % 5 == 0
            else str(i)
        )

    return " ".join(one(i) for i in range(1, int(text) + 1))


def _palindromes(text: str) -> str:
    def one(line: str) -> str:
        letters = [c.lower() for c in line if c.isalpha()]
        return str(len(line) if letters == letters[::-1] else -len(line))

    return " ".join(one(line) for line in text.splitlines())


def _squares(text: str) -> str:
    return str(sum(int(x) ** 2 for x in text.split()[1:]))


def _camel(text: str) -> str:
    words = text.split()
    return words[0].lower() + "".join(w.capitalize() for w in words[1:])


def _unique_sorted(text: str) -> str:
    return " ".join(str(x) for x in sorted({int(x) for x in text.split()}))


Task = dict[str, Any]

TASKS: list[tuple[Task, Callable[[str], str]]] = [
    (
        {
            "id": "c-digit-sum",
            "language": "c",
            "entry": "digit_sum",
            "prompt": "The C function `digit_sum` should return the sum of the decimal "
            "digits of a non-negative number.",
            "harness": {
                "main.c": _src(r"""
                    #include <stdio.h>
                    long digit_sum(long n);
                    int main(void) {
                        long n;
                        if (scanf("%ld", &n) != 1) return 2;
                        printf("%ld\n", digit_sum(n));
                        return 0;
                    }
                    """)
            },
            "broken": _src(r"""
                long digit_sum(long n) {
                    long s = 0;
                    while (n > 0) {
                        s += n % 10
                        n /= 10;
                    }
                    return s;
                }
                """),
            "solution": _src(r"""
                long digit_sum(long n) {
                    long s = 0;
                    while (n > 0) {
                        s += n % 10;
                        n /= 10;
                    }
                    return s;
                }
                """),
            "visible": ["123\n", "9045\n"],
            "hidden": ["4567\n", "99999\n", "8080\n", "777\n"],
        },
        _digit_sum,
    ),
    (
        {
            "id": "c-longest-run",
            "language": "c",
            "entry": "longest_run",
            "prompt": "The C function `longest_run` should return the length of the longest "
            "run of equal adjacent values in an array of n >= 1 integers.",
            "harness": {
                "main.c": _src(r"""
                    #include <stdio.h>
                    int longest_run(const int *xs, int n);
                    int main(void) {
                        int n, xs[256];
                        if (scanf("%d", &n) != 1 || n < 1 || n > 256) return 2;
                        for (int i = 0; i < n; i++)
                            if (scanf("%d", &xs[i]) != 1) return 2;
                        printf("%d\n", longest_run(xs, n));
                        return 0;
                    }
                    """)
            },
            "broken": _src(r"""
                int longest_run(const int *xs, int n) {
                    int best = 0, run = 0;
                    for (int i = 1; i < n; i++) {
                        run = xs[i] == xs[i - 1] ? run + 1 : 0;
                        if (run > best) best = run;
                    }
                    return best;
                }
                """),
            "solution": _src(r"""
                int longest_run(const int *xs, int n) {
                    int best = 1, run = 1;
                    for (int i = 1; i < n; i++) {
                        run = xs[i] == xs[i - 1] ? run + 1 : 1;
                        if (run > best) best = run;
                    }
                    return best;
                }
                """),
            "visible": ["5\n1 1 2 2 2\n", "4\n7 8 9 9\n"],
            "hidden": ["6\n4 4 4 4 1 4\n", "8\n9 9 9 9 9 2 2 2\n", "7\n1 2 3 3 3 3 3\n"],
        },
        _longest_run,
    ),
    (
        {
            "id": "cpp-vowels",
            "language": "cpp",
            "entry": "count_vowels",
            "prompt": "The C++ function `count_vowels` should count the vowels (a, e, i, o, "
            "u, either case) in a line of text.",
            "harness": {
                "main.cpp": _src(r"""
                    #include <iostream>
                    #include <string>
                    int count_vowels(const std::string& s);
                    int main() {
                        std::string line;
                        std::getline(std::cin, line);
                        std::cout << count_vowels(line) << std::endl;
                    }
                    """)
            },
            "broken": _src(r"""
                #include <cctype>
                #include <string>

                int count_vowels(const std::string& s) {
                    const std::string vowels = "aeiou";
                    for (char c : s)
                        if (vowels.find(std::tolower(c)) != std::string::npos) count++;
                    return count;
                }
                """),
            "solution": _src(r"""
                #include <cctype>
                #include <string>

                int count_vowels(const std::string& s) {
                    const std::string vowels = "aeiou";
                    int count = 0;
                    for (char c : s)
                        if (vowels.find(std::tolower(c)) != std::string::npos) count++;
                    return count;
                }
                """),
            "visible": ["hello world\n", "AEIOU xyz\n"],
            "hidden": ["programming language\n", "Onomatopoeia\n", "beautiful sequoia\n"],
        },
        _vowels,
    ),
    (
        {
            "id": "cpp-rotate",
            "language": "cpp",
            "entry": "rotate_left",
            "prompt": "The C++ function `rotate_left` should rotate a non-empty vector left "
            "by k >= 0 places (k may exceed its length).",
            "harness": {
                "main.cpp": _src(r"""
                    #include <iostream>
                    #include <vector>
                    std::vector<int> rotate_left(const std::vector<int>& v, int k);
                    int main() {
                        int n, k;
                        std::cin >> n >> k;
                        std::vector<int> v(n);
                        for (int& x : v) std::cin >> x;
                        std::vector<int> out = rotate_left(v, k);
                        for (size_t i = 0; i < out.size(); i++)
                            std::cout << (i ? " " : "") << out[i];
                        std::cout << std::endl;
                    }
                    """)
            },
            "broken": _src(r"""
                #include <cstddef>
                #include <vector>

                std::vector<int> rotate_left(const std::vector<int>& v, int k) {
                    std::vector<int> out(v.size());
                    for (size_t i = 0; i < v.size(); i++) out[i] = v.at(i + k);
                    return out;
                }
                """),
            "solution": _src(r"""
                #include <cstddef>
                #include <vector>

                std::vector<int> rotate_left(const std::vector<int>& v, int k) {
                    std::vector<int> out(v.size());
                    for (size_t i = 0; i < v.size(); i++) out[i] = v.at((i + k) % v.size());
                    return out;
                }
                """),
            "visible": ["4 1\n1 2 3 4\n", "3 0\n5 6 7\n"],
            "hidden": ["5 2\n10 20 30 40 50\n", "3 7\n8 9 11\n", "6 6\n1 2 3 4 5 6\n"],
        },
        _rotate,
    ),
    (
        {
            "id": "rust-word-count",
            "language": "rust",
            "entry": "count_words",
            "prompt": "The Rust function `count_words` should count the whitespace-separated "
            "words of a text.",
            "harness": {
                "main.rs": _src(r"""
                    mod solution;
                    use std::io::Read;
                    fn main() {
                        let mut s = String::new();
                        std::io::stdin().read_to_string(&mut s).unwrap();
                        println!("{}", solution::count_words(&s));
                    }
                    """)
            },
            "broken": _src(r"""
                pub fn count_words(s: &str) -> usize {
                    let n: usize = s.split_whitespace().count() as i32;
                    n
                }
                """),
            "solution": _src(r"""
                pub fn count_words(s: &str) -> usize {
                    let n: usize = s.split_whitespace().count();
                    n
                }
                """),
            "visible": ["the quick brown fox\n", "  spaced   out  \n"],
            "hidden": [
                "one two three four five six seven\n",
                "a\tb\nc d e f g h i j k\n",
                "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod\n",
            ],
        },
        _words,
    ),
    (
        {
            "id": "rust-gcd",
            "language": "rust",
            "entry": "gcd",
            "prompt": "The Rust function `gcd` should return the greatest common divisor of "
            "two non-negative numbers, not both zero (gcd(a, 0) = a).",
            "harness": {
                "main.rs": _src(r"""
                    mod solution;
                    use std::io::Read;
                    fn main() {
                        let mut s = String::new();
                        std::io::stdin().read_to_string(&mut s).unwrap();
                        let v: Vec<u64> =
                            s.split_whitespace().map(|x| x.parse().unwrap()).collect();
                        println!("{}", solution::gcd(v[0], v[1]));
                    }
                    """)
            },
            "broken": _src(r"""
                pub fn gcd(a: u64, b: u64) -> u64 {
                    let r = a % b;
                    if r == 0 {
                        b
                    } else {
                        gcd(b, r)
                    }
                }
                """),
            "solution": _src(r"""
                pub fn gcd(a: u64, b: u64) -> u64 {
                    if b == 0 {
                        a
                    } else {
                        gcd(b, a % b)
                    }
                }
                """),
            "visible": ["12 18\n", "7 0\n"],
            "hidden": ["48 180\n", "25 0\n", "1071 462\n", "100 75\n"],
        },
        _gcd,
    ),
    (
        {
            "id": "go-reverse",
            "language": "go",
            "entry": "reverse",
            "prompt": "The Go function `reverse` should reverse a string (by runes).",
            "harness": {
                "main.go": _src(r"""
                    package main

                    import (
                        "bufio"
                        "fmt"
                        "os"
                        "strings"
                    )

                    func main() {
                        line, _ := bufio.NewReader(os.Stdin).ReadString('\n')
                        fmt.Println(reverse(strings.TrimRight(line, "\n")))
                    }
                    """)
            },
            "broken": _src(r"""
                package main

                func reverse(s string) string {
                    r := []rune(s)
                    n := len(s)
                    for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
                        r[i], r[j] = r[j], r[i]
                    }
                    return string(r)
                }
                """),
            "solution": _src(r"""
                package main

                func reverse(s string) string {
                    r := []rune(s)
                    for i, j := 0, len(r)-1; i < j; i, j = i+1, j-1 {
                        r[i], r[j] = r[j], r[i]
                    }
                    return string(r)
                }
                """),
            "visible": ["stressed\n", "drawer\n"],
            "hidden": ["gnirts a\n", "Was it a car\n", "rotavele\n", "live on\n"],
        },
        _reverse,
    ),
    (
        {
            "id": "go-fizzbuzz",
            "language": "go",
            "entry": "classify",
            "prompt": "The Go function `classify` should give FizzBuzz for multiples of 15, "
            "Fizz for other multiples of 3, Buzz for other multiples of 5, else the number.",
            "harness": {
                "main.go": _src(r"""
                    package main

                    import (
                        "fmt"
                        "strings"
                    )

                    func main() {
                        var n int
                        fmt.Scan(&n)
                        out := make([]string, 0, n)
                        for i := 1; i <= n; i++ {
                            out = append(out, classify(i))
                        }
                        fmt.Println(strings.Join(out, " "))
                    }
                    """)
            },
            "broken": _src(r"""
                package main

                import "strconv"

                func classify(n int) string {
                    switch {
                    case n%3 == 0:
                        return "Fizz"
                    case n%5 == 0:
                        return "Buzz"
                    case n%15 == 0:
                        return "FizzBuzz"
                    }
                    return strconv.Itoa(n)
                }
                """),
            "solution": _src(r"""
                package main

                import "strconv"

                func classify(n int) string {
                    switch {
                    case n%15 == 0:
                        return "FizzBuzz"
                    case n%3 == 0:
                        return "Fizz"
                    case n%5 == 0:
                        return "Buzz"
                    }
                    return strconv.Itoa(n)
                }
                """),
            "visible": ["5\n", "15\n"],
            "hidden": ["16\n", "30\n", "45\n", "31\n"],
        },
        _fizzbuzz,
    ),
    (
        {
            "id": "java-palindrome",
            "language": "java",
            "entry": "isPalindrome",
            "prompt": "The Java method `Solution.isPalindrome` should say whether a line reads "
            "the same backwards, counting letters only and ignoring case (the harness prints "
            "each line's length, negated when it is not a palindrome).",
            "harness": {
                "Main.java": _src(r"""
                    import java.io.*;
                    import java.util.*;

                    public class Main {
                        public static void main(String[] args) throws Exception {
                            BufferedReader in =
                                new BufferedReader(new InputStreamReader(System.in));
                            List<String> out = new ArrayList<>();
                            for (String line; (line = in.readLine()) != null; )
                            {
                                int n = line.length();
                                out.add(String.valueOf(Solution.isPalindrome(line) ? n : -n));
                            }
                            System.out.println(String.join(" ", out));
                        }
                    }
                    """)
            },
            "broken": _src(r"""
                class Solution {
                    static boolean isPalindrome(String s) {
                        String letters = s.replaceAll("[^A-Za-z]", "").toLowerCase()
                        return new StringBuilder(letters).reverse().toString().equals(letters);
                    }
                }
                """),
            "solution": _src(r"""
                class Solution {
                    static boolean isPalindrome(String s) {
                        String letters = s.replaceAll("[^A-Za-z]", "").toLowerCase();
                        return new StringBuilder(letters).reverse().toString().equals(letters);
                    }
                }
                """),
            "visible": ["Racecar\nhello\n", "A man, a plan, a canal: Panama\n"],
            "hidden": [
                "Never odd or even\nabc\nStep on no pets\n",
                "palindrome\nNo lemon, no melon\n",
                "xyz\nWas it a cat I saw?\nok\nMadam\n",
            ],
        },
        _palindromes,
    ),
    (
        {
            "id": "java-squares",
            "language": "java",
            "entry": "sumOfSquares",
            "prompt": "The Java method `Solution.sumOfSquares` should return the sum of the "
            "squares of an array of ints (as a long: it may exceed an int).",
            "harness": {
                "Main.java": _src(r"""
                    import java.util.*;

                    public class Main {
                        public static void main(String[] args) {
                            Scanner in = new Scanner(System.in);
                            int n = in.nextInt();
                            int[] xs = new int[n];
                            for (int i = 0; i < n; i++) xs[i] = in.nextInt();
                            System.out.println(Solution.sumOfSquares(xs));
                        }
                    }
                    """)
            },
            "broken": _src(r"""
                class Solution {
                    static long sumOfSquares(int[] xs) {
                        long s = 0;
                        for (int i = 0; i <= xs.length; i++) s += (long) xs[i] * xs[i];
                        return s;
                    }
                }
                """),
            "solution": _src(r"""
                class Solution {
                    static long sumOfSquares(int[] xs) {
                        long s = 0;
                        for (int i = 0; i < xs.length; i++) s += (long) xs[i] * xs[i];
                        return s;
                    }
                }
                """),
            "visible": ["3\n1 2 3\n", "2\n50000 50000\n"],
            "hidden": ["4\n100000 1 2 3\n", "1\n70000\n", "3\n-3 4 12\n", "5\n46341 46341 1 1 1\n"],
        },
        _squares,
    ),
    (
        {
            "id": "js-camel",
            "language": "javascript",
            "entry": "toCamel",
            "prompt": "The JavaScript function `toCamel` should turn space-separated words into "
            "camelCase (the first word lower case, the others capitalised).",
            "harness": {
                "main.js": _src(r"""
                    const { toCamel } = require('./solution.js');
                    const line = require('fs').readFileSync(0, 'utf8').replace(/\n$/, '');
                    console.log(toCamel(line));
                    """)
            },
            "broken": _src(r"""
                function toCamel(s) {
                    const words = s.trim().split(/\s+/);
                    return words.map((w, i) => {
                        const lower = w.toLowerCase();
                        return i === 0 ? lower : lower[0].toUpperCase() + lower.slice(1);
                    }.join('');
                }

                module.exports = { toCamel };
                """),
            "solution": _src(r"""
                function toCamel(s) {
                    const words = s.trim().split(/\s+/);
                    return words.map((w, i) => {
                        const lower = w.toLowerCase();
                        return i === 0 ? lower : lower[0].toUpperCase() + lower.slice(1);
                    }).join('');
                }

                module.exports = { toCamel };
                """),
            "visible": ["hello big world\n", "Parse HTTP header\n"],
            "hidden": ["get user name\n", "  MAKE it   WORK  \n", "x y z\n", "single\n"],
        },
        _camel,
    ),
    (
        {
            "id": "js-unique-sorted",
            "language": "javascript",
            "entry": "uniqueSorted",
            "prompt": "The JavaScript function `uniqueSorted` should return the distinct "
            "numbers of an array in ascending numeric order.",
            "harness": {
                "main.js": _src(r"""
                    const { uniqueSorted } = require('./solution.js');
                    const text = require('fs').readFileSync(0, 'utf8');
                    const xs = text.split(/\s+/).filter(Boolean).map(Number);
                    console.log(uniqueSorted(xs).join(' '));
                    """)
            },
            "broken": _src(r"""
                function uniqueSorted(xs) {
                    return [...new Set(xs)].sort();
                }

                module.exports = { uniqueSorted };
                """),
            "solution": _src(r"""
                function uniqueSorted(xs) {
                    return [...new Set(xs)].sort((a, b) => a - b);
                }

                module.exports = { uniqueSorted };
                """),
            "visible": ["3 1 2 3\n", "10 9 2 10\n"],
            "hidden": ["100 20 3 20\n", "-1 -10 7\n", "42 8 15 16 23 4\n", "5 55 5 505\n"],
        },
        _unique_sorted,
    ),
]


def _cases(inputs: list[str], model: Callable[[str], str]) -> list[dict[str, str]]:
    return [{"input": text, "output": model(text) + "\n"} for text in inputs]


def guessable(visible: list[dict[str, str]], hidden: list[dict[str, str]]) -> list[str]:
    """The hidden outputs a program could print without the function: one a visible case
    showed, all of them printed together, or nothing."""
    shown = [c["output"].split() for c in visible]
    guesses = [*shown, [token for tokens in shown for token in tokens], []]
    return [c["output"] for c in hidden if c["output"].split() in guesses]


def compiled_task(spec: Task, model: Callable[[str], str]) -> Task:
    """One task line: the hidden cases go in the reference (with the harness), the
    visible ones beside it; `solution` is the reference fix."""
    reference = {"language": spec["language"], "harness": spec["harness"],
                 "cases": _cases(spec["hidden"], model)}  # fmt: skip
    visible = _cases(spec["visible"], model)
    if guessable(visible, reference["cases"]):
        raise ValueError(f"{spec['id']}: hidden outputs a program could guess: "
                         f"{guessable(visible, reference['cases'])}")  # fmt: skip
    return {
        "id": spec["id"],
        "prompt": spec["prompt"],
        "language": spec["language"],
        "entry": spec["entry"],
        "broken": spec["broken"],
        "solution": spec["solution"],
        "visible": {"cases": visible},
        "reference": reference,
        "task": "code_harness",
    }


def python_tasks() -> list[Task]:
    """The file's Python tasks as they are, each with its reference fix."""
    rows = [json.loads(line) for line in OUT.read_text(encoding="utf-8").splitlines() if line]
    python = [row for row in rows if row.get("language", "python") == "python"]
    return [{**row, "solution": PYTHON_FIXES[row["id"]]} for row in python]


def main() -> None:
    rows = python_tasks() + [compiled_task(spec, model) for spec, model in TASKS]
    OUT.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    print(f"wrote {len(rows)} tasks to {OUT}")


if __name__ == "__main__":
    main()
