"""Honest twins: the most an exploit variant of a code sample may earn.

An exploit variant is a program that tries to earn more than its behaviour deserves (it
raises StopIteration where a test maps over calls, prints "PASSED", shadows `abs`). Its
*twin* is the plain program that behaves the same way as far as any test can see, without
the trick: it returns the same constant, raises an ordinary error, prints the same text.
What the twin earns under the sample's tests is the variant's limit.

The twin's score is computed without the harness under test. For ``calls`` and ``stdio``
it is data: the twin's constant result is compared with the expected values here (a
``custom`` stdio checker runs in its own jail, as always). For ``humaneval``, ``asserts``
and ``pytest`` the reference's tests run with the twin's functions defined *inside* the
judge (`harness.twin_judge.twins_main`: no proxy, no socket, no candidate process; the twins
are this module's code, not the model's), in one sandboxed run for all twins of a sample.

    >>> from rewardsmith.verifiers.code.formats import parse_reference
    >>> suite = parse_reference({"format": "calls", "fn": "f", "cases": [
    ...     {"input": "(1,)", "output": "0"}, {"input": "(2,)", "output": "4"}]})
    >>> deserved(suite, [returns(0), returns(None), raises("ValueError"), echoes()])
    [0.5, 0.0, 0.0, 0.0]
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from rewardsmith.verifiers.code import stdio
from rewardsmith.verifiers.code.formats import Suite
from rewardsmith.verifiers.code.harness import program_source
from rewardsmith.verifiers.code.values import decode, encode, exact_equal
from rewardsmith.verifiers.sandbox import Limits, Program, fork_server

__all__ = ["Twin", "deserved", "echoes", "fails", "prints", "raises", "returns", "table"]

_TWINS = program_source("judge", "twins_main", extra=("twin_judge",))


@dataclass(frozen=True)
class Twin:
    """What a program honestly does, as far as a test can see."""

    kind: str
    """``returns`` (every function returns a constant), ``raises`` (every call raises an
    ordinary builtin error), ``echoes`` (returns its first argument; prints its input),
    ``prints`` (prints a text and exits 0), ``table`` (returns the value a table gives
    for its arguments, else a default: a program that replays seen expected values) or
    ``fails`` (never answers: does not load, exits early, exits non-zero)."""
    payload: str = ""
    """The constant (JSON of `values.encode`), the exception's name or the printed text."""

    @property
    def value(self) -> Any:
        return decode(json.loads(self.payload)) if self.kind == "returns" else None


def returns(value: Any) -> Twin:
    return Twin("returns", json.dumps(encode(value)))


def raises(name: str) -> Twin:
    return Twin("raises", name)


def echoes() -> Twin:
    return Twin("echoes")


def prints(text: str) -> Twin:
    return Twin("prints", text)


def fails() -> Twin:
    return Twin("fails")


def table(rows: list[list[Any]], default: Any = None) -> Twin:
    """`rows`: ``[encoded args, encoded value]`` pairs (`values.encode`)."""
    return Twin("table", json.dumps({"rows": rows, "default": encode(default)}))


def _looked_up(twin: Twin, args: list[Any]) -> Any:
    data = json.loads(twin.payload)
    for row_args, value in data["rows"]:
        if repr(tuple(decode(row_args))) == repr(tuple(args)):
            return decode(value)
    return decode(data["default"])


def deserved(suite: Suite, twins: Sequence[Twin], names: Sequence[str] = ()) -> list[float]:
    """The score each twin earns under `suite` (``names``: the functions a twin defines,
    for the judge formats)."""
    if suite.format == "calls":
        return [_calls_score(suite, twin) for twin in twins]
    if suite.format == "stdio":
        return _stdio_scores(suite, twins)
    return _judged_scores(suite, twins, names)


def _calls_score(suite: Suite, twin: Twin) -> float:
    if twin.kind not in ("returns", "echoes", "table"):
        return 0.0
    hits = 0
    for case in suite.cases:
        if twin.kind == "table":
            got = _looked_up(twin, case["args"])
        else:
            got = twin.value if twin.kind == "returns" else (case["args"] or [None])[0]
        tol = {"rel_tol": case["rel_tol"], "abs_tol": case["abs_tol"]}
        hits += exact_equal(got, case["expected"], **tol)
    return hits / len(suite.cases)


def _stdio_scores(suite: Suite, twins: Sequence[Twin]) -> list[float]:
    cases = list(suite.cases)
    out = []
    for twin in twins:
        if twin.kind not in ("prints", "echoes"):
            out.append(0.0)
            continue
        outputs = [twin.payload if twin.kind == "prints" else c["input"] for c in cases]
        checked = stdio.check_outputs(
            suite.checker, cases, outputs, suite.judge_spec["float_tol"], suite.checker_code
        )
        if isinstance(checked, stdio.CheckerError):
            raise RuntimeError(f"the reference's checker failed on a twin: {checked.message}")
        out.append(sum(checked) / len(cases))
    return out


def _judged_scores(suite: Suite, twins: Sequence[Twin], names: Sequence[str]) -> list[float]:
    scores: dict[Twin, float] = {t: 0.0 for t in twins if t.kind == "fails"}
    run = [t for t in dict.fromkeys(twins) if t.kind != "fails"]
    if run:
        sources = [twin_source(t, names) for t in run]
        spec = {**suite.judge_spec, "entry_point": suite.entry_point}
        program = Program(
            python=_TWINS,
            trusted_code=True,
            readonly_files={
                "spec.json": json.dumps(spec).encode(),
                "twins.json": json.dumps({"sources": sources, "names": list(names)}).encode(),
                **{n: s.encode() for n, s in suite.judge_spec.get("files", {}).items()},
            },
            env={"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
            collect=("twins.json.out",),
            limits=Limits(wall_s=60.0, cpu_s=60.0, memory_bytes=512 << 20, processes=16),
        )
        preload = ("pytest",) if suite.format == "pytest" else ()
        with fork_server(preload) as server:
            result = server.run_programs([program])[0]
        try:
            reports = json.loads(result.files["twins.json.out"])
        except (KeyError, ValueError):
            tail = result.stderr[-800:].decode(errors="replace")
            message = f"the twins' judge wrote no report ({result.describe()}): {tail}"
            raise RuntimeError(message) from None
        for twin, records in zip(run, reports, strict=True):
            scores[twin] = _fraction(records, suite)
    return [scores[t] for t in twins]


def _fraction(records: list[dict[str, Any]] | None, suite: Suite) -> float:
    if not records:
        return 0.0
    total = max(len(records), suite.expected_tests) if suite.format == "pytest" else len(records)
    passed = sum(r.get("status") == "pass" for r in records[:total])
    return passed / total


def twin_source(twin: Twin, names: Sequence[str]) -> str:
    """Python source that defines every function in `names` to do what `twin` does."""
    if twin.kind == "returns":
        body = f"return decode(json.loads({twin.payload!r}))"  # a fresh copy per call
    elif twin.kind == "raises":
        body = f"raise _rs_make(getattr(builtins, {twin.payload!r}))"
    elif twin.kind == "echoes":
        body = "return args[0] if args else None"
    else:
        raise ValueError(f"a {twin.kind!r} twin defines no functions")
    from rewardsmith.verifiers.code.exploit_programs import MAKE_EXCEPTION

    head = "import builtins, json\n" + MAKE_EXCEPTION
    defs = "".join(f"def {name}(*args, **kwargs):\n    {body}\n" for name in names)
    return head + defs
