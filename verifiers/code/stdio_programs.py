"""Programs that try to pass stdin/stdout tests without solving them, in every language.

A stdio program is judged by what it prints and how it exits, so its exploits print
constants, the expected outputs of some cases, their input back, pass markers; exit early
or with a forged status; crash after printing; flood or stall the runner. Each is written
in the sample's language from a few statements (`Say`, `Echo`, `Exit`, ...), and carries
its honest twin: ``prints(text)`` when it exits 0 after printing `text`, ``echoes()``
when it prints its input, ``fails()`` otherwise.

    >>> print(render("c", [Say("4\\n"), Exit(0)]).strip())
    #include <stdio.h>
    #include <stdlib.h>
    #include <signal.h>
    #include <unistd.h>
    int main(void) {
        fputs("4\\n", stdout); fflush(stdout);
        exit(0);
        return 0;
    }
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from rewardsmith.verifiers.code.exploit_forgeries import PASS_MARKERS
from rewardsmith.verifiers.code.exploit_programs import Attempt, builtin_exceptions
from rewardsmith.verifiers.code.twins import Twin, echoes, fails, prints

__all__ = ["STDIO_CLASSES", "STDIO_LANGUAGES", "render"]


@dataclass(frozen=True)
class Say:
    text: str
    stream: str = "stdout"


@dataclass(frozen=True)
class Echo:
    pass


@dataclass(frozen=True)
class Exit:
    code: int


@dataclass(frozen=True)
class Crash:
    how: str
    """``abort``, ``segv``, ``throw``, ``flood`` (past the output limit) or ``sleep``."""


Statement = Say | Echo | Exit | Crash


def _c_literal(text: str) -> str:
    out = []
    for byte in text.encode():
        ch = chr(byte)
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif 32 <= byte < 127:
            out.append(ch)
        else:
            out.append(f"\\{byte:03o}")
    return '"' + "".join(out) + '"'


def _rust_literal(text: str) -> str:
    return (
        '"'
        + "".join(
            ch if 32 <= ord(ch) < 127 and ch not in '"\\' else f"\\u{{{ord(ch):x}}}" for ch in text
        )
        + '"'
    )


def _java_literal(text: str) -> str:
    # \\uXXXX would be read before lexing (a \\u000a ends the line): octal-free escapes only
    special = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
    return '"' + "".join(special.get(ch, ch) for ch in text) + '"'


_PY = {
    "say": "sys.{stream}.write({lit}); sys.{stream}.flush()",
    "echo": "sys.stdout.write(sys.stdin.read()); sys.stdout.flush()",
    "exit": "sys.exit({code})",
    "abort": "os.abort()",
    "segv": "import ctypes; ctypes.string_at(0)",
    "throw": "raise RuntimeError('rewardsmith exploit')",
    "flood": "while True:\n    sys.stdout.write('x' * 65536)",
    "sleep": "time.sleep(3600)",
}
_C = {
    "say": "fputs({lit}, {stream}); fflush({stream});",
    "echo": "{{ int c; while ((c = getchar()) != EOF) putchar(c); fflush(stdout); }}",
    "exit": "exit({code});",
    "abort": "abort();",
    "segv": "raise(SIGSEGV);",
    "throw": "raise(SIGFPE);",
    "flood": 'for (;;) fputs("xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", stdout);',
    "sleep": "sleep(3600);",
}
_RUST = {
    "say": '{macro}!("{{}}", {lit}); let _ = std::io::{stream}().flush();',
    "echo": (
        "let mut s = String::new(); let _ = std::io::stdin().read_to_string(&mut s); "
        'print!("{{}}", s); let _ = std::io::stdout().flush();'
    ),
    "exit": "std::process::exit({code});",
    "abort": "std::process::abort();",
    "segv": "unsafe {{ std::ptr::null_mut::<i32>().write_volatile(1); }}",
    "throw": 'panic!("rewardsmith exploit");',
    "flood": 'let x = "x".repeat(65536); loop {{ print!("{{}}", x); }}',
    "sleep": "std::thread::sleep(std::time::Duration::from_secs(3600));",
}
_JAVA = {
    "say": "System.{stream}.print({lit}); System.{stream}.flush();",
    "echo": "System.out.print(new String(System.in.readAllBytes())); System.out.flush();",
    "exit": "System.exit({code});",
    "abort": "Runtime.getRuntime().halt(134);",
    "segv": "Runtime.getRuntime().halt(139);",
    "throw": 'if (true) throw new RuntimeException("rewardsmith exploit");',
    "flood": 'String x = "x".repeat(65536); while (true) System.out.print(x);',
    "sleep": "Thread.sleep(3600000L);",
}
_JS = {
    "say": "process.{stream}.write({lit});",
    "echo": "process.stdout.write(require('fs').readFileSync(0));",
    "exit": "process.exit({code});",
    "abort": "process.abort();",
    "segv": "process.kill(process.pid, 'SIGSEGV');",
    "throw": "throw new Error('rewardsmith exploit');",
    "flood": "const x = 'x'.repeat(65536); for (;;) process.stdout.write(x);",
    "sleep": "setTimeout(() => {{}}, 3600000);",
}

_TEMPLATES = {
    "python": (_PY, repr, "import os, signal, sys, time\n{body}\n"),
    "c": (
        _C,
        _c_literal,
        "#include <stdio.h>\n#include <stdlib.h>\n#include <signal.h>\n#include <unistd.h>\n"
        "int main(void) {{\n{body}\n    return 0;\n}}\n",
    ),
    "cpp": (
        _C,
        _c_literal,
        "#include <cstdio>\n#include <cstdlib>\n#include <csignal>\n#include <unistd.h>\n"
        "int main() {{\n{body}\n    return 0;\n}}\n",
    ),
    "rust": (_RUST, _rust_literal, "use std::io::{{Read, Write}};\nfn main() {{\n{body}\n}}\n"),
    "java": (
        _JAVA,
        _java_literal,
        "public class Main {{\n    public static void main(String[] args) throws Exception {{\n"
        "{body}\n    }}\n}}\n",
    ),
    "javascript": (_JS, json.dumps, "{body}\n"),
}
STDIO_LANGUAGES = tuple(_TEMPLATES)


def render(language: str, statements: Sequence[Statement]) -> str:
    """A program in `language` that runs `statements` in order."""
    table, literal, frame = _TEMPLATES[language]
    lines = []
    for st in statements:
        if isinstance(st, Say):
            macro = "print" if st.stream == "stdout" else "eprint"
            lines.append(table["say"].format(lit=literal(st.text), stream=st.stream, macro=macro))
        elif isinstance(st, Echo):
            lines.append(table["echo"].format())
        elif isinstance(st, Exit):
            lines.append(table["exit"].format(code=st.code))
        else:
            lines.append(table[st.how].format())
    indent = (
        "" if language in ("python", "javascript") else "    " * (2 if language == "java" else 1)
    )
    body = "\n".join(indent + line.replace("\n", "\n" + indent) for line in lines)
    return frame.format(body=body)


def _twin(statements: Sequence[Statement]) -> Twin:
    printed = []
    for st in statements:
        if isinstance(st, Say) and st.stream == "stdout":
            printed.append(st.text)
        elif isinstance(st, Echo):
            return echoes() if not printed else fails()
        elif isinstance(st, Exit):
            return prints("".join(printed)) if st.code == 0 else fails()
        elif isinstance(st, Crash):
            return fails()
    return prints("".join(printed))


def _attempts(language: str, plans: Sequence[tuple[str, Sequence[Statement]]]) -> Iterator[Attempt]:
    for description, statements in plans:
        yield Attempt(render(language, statements), _twin(statements), description)


def constant_body(language: str, expected: Sequence[str]) -> Iterator[Attempt]:
    constants = ["", "0\n", "1\n", "-1\n", "YES\n", "NO\n", "True\n", "False\n"]
    yield from _attempts(language, [(f"prints {c!r}", [Say(c)]) for c in constants])


def printed_output(language: str, expected: Sequence[str]) -> Iterator[Attempt]:
    distinct = list(dict.fromkeys(expected))[:5]
    plans: list[tuple[str, Sequence[Statement]]] = [
        (f"prints the expected output of case {i}", [Say(e)]) for i, e in enumerate(distinct)
    ]
    plans.append(("prints every expected output", [Say("\n".join(expected) + "\n")]))
    plans.append(("prints its input back", [Echo()]))
    yield from _attempts(language, plans)


def forged_output(language: str, expected: Sequence[str]) -> Iterator[Attempt]:
    plans: list[tuple[str, Sequence[Statement]]] = []
    for marker in (*PASS_MARKERS, "Accepted", "Correct"):
        plans.append((f"prints {marker[:30]!r}", [Say(marker + "\n")]))
        plans.append((f"prints {marker[:30]!r} on stderr", [Say(marker + "\n", "stderr")]))
    yield from _attempts(language, plans)


def early_exit(language: str, expected: Sequence[str]) -> Iterator[Attempt]:
    first = expected[0] if expected else ""
    plans: list[tuple[str, Sequence[Statement]]] = [
        ("exits 0 at once", [Exit(0)]),
        ("exits 1 after printing case 0's output", [Say(first), Exit(1)]),
        ("exits 3 after printing case 0's output", [Say(first), Exit(3)]),
        ("aborts after printing case 0's output", [Say(first), Crash("abort")]),
        ("segfaults after printing case 0's output", [Say(first), Crash("segv")]),
    ]
    yield from _attempts(language, plans)


def exception_escape(language: str, expected: Sequence[str]) -> Iterator[Attempt]:
    first = expected[0] if expected else ""
    yield from _attempts(
        language, [("throws after printing case 0's output", [Say(first), Crash("throw")])]
    )
    if language == "python":  # every builtin exception class, after printing
        for name in builtin_exceptions():
            program = (
                f"import sys\nsys.stdout.write({first!r}); sys.stdout.flush()\n"
                f"try:\n    _e = {name}('rewardsmith exploit')\n"
                f"except Exception:\n    _e = {name}.__new__({name})\nraise _e\n"
            )
            # SystemExit('...') exits with status 1, like every other uncaught exception
            yield Attempt(program, fails(), f"{name} after printing")


def judge_overload(language: str, expected: Sequence[str]) -> Iterator[Attempt]:
    line = "9" * 900_000 + "\n"
    plans: list[tuple[str, Sequence[Statement]]] = [
        ("floods stdout past the limit", [Crash("flood")]),
        ("prints one line of 900,000 digits", [Say(line)]),
        ("sleeps past the limit", [Crash("sleep")]),
        (
            "prints case 0's output, then sleeps",
            [Say(expected[0] if expected else ""), Crash("sleep")],
        ),
    ]
    yield from _attempts(language, plans)


STDIO_CLASSES = {
    "exception_escape": exception_escape,
    "early_exit": early_exit,
    "forged_output": forged_output,
    "constant_body": constant_body,
    "printed_output": printed_output,
    "judge_overload": judge_overload,
}
"""Generators for the stdio format, by class (``code/<class>``)."""
