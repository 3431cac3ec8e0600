"""stdin/stdout tests: build once, run each case in its own jail, compare outside.

The expected output never enters a jail; the candidate's output is compared here by a
stated checker. A custom checker is trusted code from the reference, but it still runs in
a jail of its own (it reads the candidate's output, which is hostile data), never in the
candidate's process.

Checkers (``got`` is the program's stdout, ``want`` the reference output):

- ``exact``: ``got == want``, byte for byte.
- ``lines``: equal line by line after stripping trailing whitespace on each line and
  trailing blank lines (the common judge default).
- ``tokens``: equal sequences of whitespace-separated tokens.
- ``float``: tokens equal, except that two numeric tokens match when
  ``|a - b| <= tol * max(1, |b|)`` (absolute or relative error within ``float_tol``, as
  Codeforces-style judges state it).
- ``custom``: ``checker_code`` defines ``check(input, output, expected) -> bool``. The
  output it reads is hostile: a checker that raises on one case fails that case (the
  output was not acceptable), and one that the outputs drive past its time or memory is
  the model's failure (`CheckerError.model_caused`), never a way out of a 0.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from rewardsmith.verifiers.code.languages import Language, java_as_main
from rewardsmith.verifiers.sandbox import ForkServer, Limits, Program, SandboxResult, run

__all__ = ["CHECKERS", "Build", "CheckerError", "build", "check_outputs", "run_case"]


def _exact(got: str, want: str, tol: float) -> bool:
    return got == want


_ASCII_SPACE = " \t\n\r\v\f"
"""Whitespace as a judge in C reads it (``isspace``): Python's ``split`` and ``rstrip``
also take ``\\xa0``, ``\\u3000`` and ``\\x1f`` for spaces, which paid ``3\\xa04`` for
``3 4`` (red team rtcode3)."""


def _split(text: str) -> list[str]:
    return [token for token in re.split(r"[ \t\n\r\v\f]+", text) if token]


def _lines(text: str) -> list[str]:
    lines = [line.rstrip(_ASCII_SPACE) for line in text.split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def _by_lines(got: str, want: str, tol: float) -> bool:
    return _lines(got) == _lines(want)


def _tokens(got: str, want: str, tol: float) -> bool:
    return _split(got) == _split(want)


_NUMERAL = re.compile(r"[+-]?(?:\d++(?:\.\d*+)?+|\.\d++)(?:[eE][+-]?\d++)?+", re.ASCII)
r"""A number as a judge in C reads one: no `3_0`, no non-ASCII digits (Python's `float`
accepts both). Possessive (``++``): a run of digits followed by a letter fails at once;
``\d+\.?\d*`` tried every split of the run, quadratic in its length (12,000 digits and an
``x`` held the scoring process 6.8 s; 1 MiB of output, hours; red team rtcode8)."""


def _number(token: str) -> float | None:
    if _NUMERAL.fullmatch(token) is None:
        return None
    try:
        value = float(token)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _floats(got: str, want: str, tol: float) -> bool:
    a, b = _split(got), _split(want)
    if len(a) != len(b):
        return False
    for x, y in zip(a, b, strict=True):
        fx, fy = _number(x), _number(y)
        if fy is None or fx is None:
            if x != y:
                return False
        elif abs(fx - fy) > tol * max(1.0, abs(fy)):
            return False
    return True


CHECKERS: dict[str, Callable[[str, str, float], bool] | None] = {
    "exact": _exact,
    "lines": _by_lines,
    "tokens": _tokens,
    "float": _floats,
    "custom": None,
}


@dataclass(frozen=True)
class CheckerError:
    """A custom checker that could not decide."""

    message: str
    model_caused: bool
    """True when the candidates' outputs drove it past its limits."""


@dataclass(frozen=True)
class Build:
    """A compiled program ready to run, or the compiler's failure."""

    ok: bool
    files: dict[str, bytes]
    executables: tuple[str, ...]
    result: SandboxResult | None = None


def build(lang: Language, code: str, wall_s: float | None = None) -> Build:
    """Compile `code` in a jail (no-op for interpreted languages)."""
    if lang.name == "java":
        code = java_as_main(code)
    files = {lang.source: code.encode()}
    if lang.compile is None:
        return Build(True, files, ())
    limits = lang.compile_limits
    if wall_s is not None:
        limits = limits.replace(wall_s=wall_s, cpu_s=wall_s)
    result = run(
        list(lang.compile),
        files=files,
        limits=limits,
        collect=(lang.artifact,) if lang.artifact else (),
        env=lang.env,
        binds=lang.binds,
    )
    if result.error or not result.ok or not lang.artifact or lang.artifact not in result.files:
        return Build(False, {}, (), result)
    artifact = {lang.artifact: result.files[lang.artifact]}
    return Build(True, artifact, (lang.artifact,) if lang.artifact == "main" else (), result)


def run_case(
    server: ForkServer, lang: Language, built: Build, stdin: str, limits: Limits
) -> SandboxResult:
    """One case: the built program with `stdin`, in a fresh jail."""
    limits = limits.replace(
        memory_bytes=max(limits.memory_bytes, lang.run_memory_bytes),
        processes=max(limits.processes, lang.run_processes),
    )
    if lang.name == "python":  # a warm fork instead of an interpreter start
        program = Program(
            python=built.files[lang.source].decode(), stdin=stdin.encode(), limits=limits
        )
    else:
        program = Program(
            command=lang.run,
            files=built.files,
            executables=built.executables,
            stdin=stdin.encode(),
            limits=limits,
            env=lang.env,
            binds=lang.binds,
        )
    return server.run_programs([program])[0]


def check_outputs(
    checker: str,
    cases: list[dict[str, Any]],
    outputs: list[str],
    tol: float,
    checker_code: str = "",
    checker_wall_s: float = 30.0,
) -> list[bool] | CheckerError:
    """Verdicts per case; for ``custom``, run the checker in its own jail, all cases
    within `checker_wall_s`."""
    fn = CHECKERS[checker]
    if fn is not None:
        return [fn(out, case["output"], tol) for out, case in zip(outputs, cases, strict=True)]
    payload = json.dumps(
        [[c["input"], o, c["output"]] for c, o in zip(cases, outputs, strict=True)]
    )
    script = (
        checker_code
        + "\nimport json as _j, sys as _s\n"
        + "def _one(i, o, e):\n"
        + "    try:\n        return bool(check(i, o, e))\n"
        + "    except BaseException:\n        return False\n"  # SystemExit too: the case fails
        + "_r = [_one(i, o, e) for i, o, e in _j.loads(_s.stdin.read())]\n"
        + "open('verdicts.json', 'w').write(_j.dumps(_r))\n"
    )
    res = Program(
        python=script,
        stdin=payload.encode(),
        collect=("verdicts.json",),
        limits=Limits(wall_s=checker_wall_s, cpu_s=checker_wall_s, memory_bytes=512 << 20),
    )
    from rewardsmith.verifiers.sandbox import fork_server

    with fork_server() as server:
        result = server.run_programs([res])[0]
    try:
        verdicts = json.loads(result.files["verdicts.json"])
    except (KeyError, ValueError):
        tail = result.stderr[-500:].decode(errors="replace")
        return CheckerError(
            f"custom checker failed: {result.describe()}: {tail}", result.limit_hit is not None
        )
    if not isinstance(verdicts, list) or len(verdicts) != len(cases):
        return CheckerError("custom checker returned the wrong number of verdicts", False)
    return [v is True for v in verdicts]
