"""The `code_tests` verifier: run a completion's program against the sample's tests.

>>> from rewardsmith.verifiers.types import Sample
>>> ref = {"format": "calls", "fn": "add", "cases": [{"input": "(1, 2)", "output": "3"}]}
>>> CodeTests()(Sample(id="1", completion="def add(a, b): return a + b", reference=ref)).score
1.0
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, ClassVar

from rewardsmith.verifiers.code import diagnostics_bridge, function_tests, stdio
from rewardsmith.verifiers.code.extract import extract_code
from rewardsmith.verifiers.code.formats import ReferenceError_, Suite, parse_reference
from rewardsmith.verifiers.code.languages import Language, language
from rewardsmith.verifiers.code.outcome import (
    LIMIT_FAILURES,
    candidate_evidence,
    conceal,
    from_records,
    text_excerpt,
)
from rewardsmith.verifiers.code.values import excerpt
from rewardsmith.verifiers.exploits import Exploit, ExploitGenerator
from rewardsmith.verifiers.protocol import Cost
from rewardsmith.verifiers.sandbox import Limits, fork_server
from rewardsmith.verifiers.types import Failure, Sample, Verdict

__all__ = ["CodeTests"]


@dataclass(frozen=True)
class CodeTests:
    """Run the program in a completion against the tests in `sample.reference` (see
    `rewardsmith.verifiers.code.formats` for the shapes) and score the fraction passed."""

    name: ClassVar[str] = "code_tests"
    version: ClassVar[str] = "2"
    cost: ClassVar[Cost] = Cost.SANDBOX
    takes_structured_reference: ClassVar[bool] = True  # JSON-text references are decoded

    language: str = "python"
    """The program's language unless the reference names one (``reference["language"]``)."""
    extract: bool = True
    """Take the last fenced code block of the language from the completion, if any."""
    wall_s: float = 10.0
    """Wall-clock limit for one run of the candidate (all calls of a function-test run, or
    one stdin/stdout case)."""
    call_timeout_s: float = 5.0
    """Limit for one call in function-call tests; a call past it ends the run (timeout)."""
    memory_mb: int = 512
    """Memory for the candidate's whole process tree."""
    max_code_chars: int = 200_000
    """Longer programs fail as too large without being run."""
    compile_wall_s: float = 60.0
    """Wall-clock limit for compiling (C, C++, Rust, Java); past it, a compile error."""
    checker_wall_s: float = 30.0
    """Wall-clock limit for a stdio ``custom`` checker over all cases; outputs that drive
    it past the limit are the model's failure (check_limit)."""

    def __post_init__(self) -> None:
        language(self.language)  # KeyError naming the known languages
        if self.wall_s <= 0 or self.call_timeout_s <= 0 or self.memory_mb < 16:
            raise ValueError("wall_s and call_timeout_s must be positive; memory_mb >= 16")

    @property
    def limits(self) -> Limits:
        return Limits(wall_s=self.wall_s, cpu_s=self.wall_s, memory_bytes=self.memory_mb << 20)

    def __call__(self, sample: Sample) -> Verdict:
        start = time.perf_counter()
        try:
            suite = parse_reference(sample.reference)
            lang = language(_ref_language(sample.reference, self.language))
        except (ReferenceError_, KeyError) as exc:
            return Verdict.errored(self.name, self.version, Failure.BAD_REFERENCE, str(exc))
        if suite.format != "stdio" and lang.name != "python":
            return Verdict.errored(
                self.name,
                self.version,
                Failure.BAD_REFERENCE,
                f"format {suite.format!r} is for Python; use stdio for {lang.name}",
            )
        text = sample.completion_text
        code = extract_code(text, lang.name, suite.candidate_names) if self.extract else text
        code = code.removeprefix("\ufeff")  # a byte-order mark, which `compile` refuses
        if len(code) > self.max_code_chars:
            return Verdict.failed(
                self.name,
                self.version,
                Failure.INPUT_TOO_LARGE,
                evidence={"length": len(code), "limit": self.max_code_chars},
                feedback=f"program has {len(code)} characters; the limit is {self.max_code_chars}",
            )
        if suite.format == "stdio":
            verdict = self._stdio(suite, lang, code)
        else:
            verdict = self._functions(suite, code)
        return verdict.with_elapsed(time.perf_counter() - start)

    def exploits(self, sample: Sample) -> Iterator[Exploit]:
        """Adversarial variants of a right `sample`, each limited to what its honest twin
        earns (see `rewardsmith.verifiers.code.exploits` and docs/gaming.md)."""
        from rewardsmith.verifiers.code.exploits import code_exploits

        return code_exploits(sample, self.language)

    def exploit_generators(self) -> dict[str, ExploitGenerator]:
        """The generators `exploits` composes, by class (the audit caps each on its own)."""
        from rewardsmith.verifiers.code.exploits import generators

        return generators(self.language)

    # ------------------------------------------------------------------ function calls

    def _functions(self, suite: Suite, code: str) -> Verdict:
        if suite.prompt and suite.entry_point and not _defines(code, suite.entry_point):
            code = suite.prompt + code  # HumanEval: the completion is the function's body
        preload = ("pytest",) if suite.format == "pytest" else ()
        with fork_server(preload) as server:
            if suite.format == "calls":
                ran = function_tests.run_calls(server, code, suite.judge_spec, self.limits)
            elif suite.batch is not None:  # a check of literal calls: no judge (check_plan)
                ran = function_tests.run_planned(server, code, suite, self.limits)
            else:
                ran = function_tests.run_function_tests(
                    server, code, suite.judge_spec, self.limits, self.call_timeout_s
                )
        evidence: dict[str, Any] = {
            "format": suite.format,
            "language": "python",
            "sandbox_mode": ran.candidate.mode,
            "candidate": candidate_evidence(ran.candidate),
        }
        for res in (ran.judge, ran.candidate):
            if res.error:
                return Verdict.errored(
                    self.name, self.version, Failure.SANDBOX_ERROR, res.error, evidence=evidence
                )
        report = ran.report
        limit = ran.candidate.limit_hit
        if report is None:
            return self._no_report(ran, limit, evidence, suite)
        hello = report.get("hello", {})
        if not hello.get("loaded"):
            return self._load_failure(hello, limit, evidence)
        if report.get("missing_entry_point"):
            return Verdict.failed(
                self.name,
                self.version,
                Failure.RUNTIME_ERROR,
                evidence=evidence,
                feedback=f"the program does not define {report['missing_entry_point']}",
            )
        if report.get("judge_error"):
            evidence["judge_error"] = report["judge_error"]
        records = report.get("tests", [])
        if suite.format == "calls":
            records = function_tests.compare_calls(records, list(suite.cases))
        if suite.format == "pytest":
            records = _enforce_count(records, suite.expected_tests)
        if suite.hide_expected:
            records = conceal(records, suite.shown)
        return from_records(self.name, self.version, records, limit=limit, evidence=evidence)

    def _no_report(
        self,
        ran: function_tests.FunctionRun,
        limit: Any,
        evidence: dict[str, Any],
        suite: Suite,
    ) -> Verdict:
        evidence["judge"] = candidate_evidence(ran.judge)
        if limit is not None:  # the candidate exhausted something: its fault
            failure = LIMIT_FAILURES[limit]
            return Verdict.errored(
                self.name, self.version, failure, f"stopped: {limit.value} limit", evidence=evidence
            )
        if ran.judge.limit_hit is not None:
            # The tests are bounded and the candidate was within its own limits, so what
            # drove the judge past its budget is what the candidate sent (a huge value, a
            # number the tests loop over): the model's fault, never an escape from a 0.
            return Verdict.errored(
                self.name,
                self.version,
                Failure.CHECK_LIMIT,
                f"the candidate's answers drove the tests past their {ran.judge.limit_hit.value}"
                " limit",
                evidence=evidence,
            )
        # Say why: the judge's last words (an import error, a crash) are the cause.
        last = ran.judge.stderr.decode(errors="replace").strip().splitlines()[-1:]
        cause = f": {last[0][:500]}" if last and not suite.hide_expected else ""
        return Verdict.errored(
            self.name,
            self.version,
            Failure.VERIFIER_CRASH,
            f"the judge wrote no report ({ran.judge.describe()}){cause}",
            evidence=evidence,
        )

    def _load_failure(self, hello: dict[str, Any], limit: Any, evidence: dict[str, Any]) -> Verdict:
        kind, error = hello.get("kind"), str(hello.get("error", ""))[:2000]
        evidence["compile" if kind == "syntax" else "load"] = {
            "tool": "python",
            "stdout": evidence["candidate"]["stdout"],
            "stderr": error,
            "exit_code": evidence["candidate"]["exit_code"],
            **diagnostics_bridge.parsed(error, "python"),
        }
        if limit is not None:
            failure = LIMIT_FAILURES[limit]
        elif kind == "syntax":
            failure = Failure.COMPILE_ERROR
        elif kind == "timeout":
            failure = Failure.TIME_LIMIT
        else:
            failure = Failure.RUNTIME_ERROR
        message = f"the program failed to load: {error.strip()[-500:] or kind}"
        if failure is Failure.TIME_LIMIT:
            return Verdict.timed_out(self.name, self.version, failure, message, evidence=evidence)
        return Verdict.errored(self.name, self.version, failure, message, evidence=evidence)

    # ------------------------------------------------------------------ stdin/stdout

    def _stdio(self, suite: Suite, lang: Language, code: str) -> Verdict:
        if not lang.available:
            return Verdict.errored(
                self.name,
                self.version,
                Failure.SANDBOX_ERROR,
                f"no {lang.name} toolchain ({lang.tool}) on this machine",
            )
        built = stdio.build(lang, code, self.compile_wall_s)
        evidence: dict[str, Any] = {
            "format": "stdio",
            "language": lang.name,
            "checker": suite.checker,
            "sandbox_mode": built.result.mode if built.result is not None else None,
        }
        if built.result is not None:
            evidence["compile"] = _compile_evidence(lang, built.result)
        if not built.ok:
            return self._compile_failure(built, evidence)
        records, outputs, limit = [], [], None
        with fork_server(binds=lang.binds) as server:
            for i, case in enumerate(suite.cases):
                res = stdio.run_case(server, lang, built, case["input"], self.limits)
                evidence["sandbox_mode"] = res.mode
                if res.error:
                    return Verdict.errored(
                        self.name, self.version, Failure.SANDBOX_ERROR, res.error, evidence=evidence
                    )
                outputs.append(res.stdout.decode("utf-8", errors="replace"))
                records.append(_case_record(i, case, res))
                limit = limit or res.limit_hit
        checked = stdio.check_outputs(
            suite.checker,
            list(suite.cases),
            outputs,
            suite.judge_spec["float_tol"],
            suite.checker_code,
            self.checker_wall_s,
        )
        if isinstance(checked, stdio.CheckerError):
            failure = Failure.CHECK_LIMIT if checked.model_caused else Failure.VERIFIER_CRASH
            return Verdict.errored(
                self.name, self.version, failure, checked.message, evidence=evidence
            )
        for record, ok in zip(records, checked, strict=True):
            if record["status"] == "ran":
                record["status"] = "pass" if ok else "fail"
        if suite.hide_expected:
            records = conceal(records, {})
        return from_records(self.name, self.version, records, limit=limit, evidence=evidence)

    def _compile_failure(self, built: stdio.Build, evidence: dict[str, Any]) -> Verdict:
        result = built.result
        if result is not None and result.error:
            return Verdict.errored(
                self.name, self.version, Failure.SANDBOX_ERROR, result.error, evidence=evidence
            )
        how = result.describe() if result is not None else "no output"
        return Verdict.errored(
            self.name,
            self.version,
            Failure.COMPILE_ERROR,
            f"compilation failed ({how})",
            evidence=evidence,
        )


def _ref_language(reference: Any, default: str) -> str:
    value = reference.get("language", default) if isinstance(reference, dict) else default
    return value if isinstance(value, str) else default


_DEF = re.compile(r"^[ \t\f]*+(?:async\s++)?def\s++([^\s(]++)\s*+\(", re.MULTILINE)
r"""A ``def`` line and the function's name (one pattern for every entry point: a pattern
per name was compiled anew for each task). Its indent is the line's own spaces and tabs,
and every run is possessive: ``^\s*`` ran from each blank line through all the blank
lines after it, quadratic (20,000 newlines before a statement: 23 s; red team rtcode8)."""


def _defines(code: str, name: str) -> bool:
    return name in _DEF.findall(code)


def _compile_evidence(lang: Language, result: Any) -> dict[str, Any]:
    stderr = text_excerpt(result.stderr, 4000)
    return {
        "tool": lang.tool,
        "stdout": text_excerpt(result.stdout, 2000),
        "stderr": stderr,
        "exit_code": result.exit_code,
        "limit_hit": result.limit_hit.value if result.limit_hit else None,
        **diagnostics_bridge.parsed(stderr, lang.tool),
    }


def _case_record(i: int, case: dict[str, Any], res: Any) -> dict[str, Any]:
    record: dict[str, Any] = {
        "name": f"case {i}",
        "input": excerpt(case["input"]),
        "output": excerpt(res.stdout.decode("utf-8", errors="replace")),
    }
    if res.limit_hit is not None:
        status = "timeout" if LIMIT_FAILURES[res.limit_hit] is Failure.TIME_LIMIT else "error"
        record.update(status=status, message=res.describe())
    elif res.exit_code != 0:
        record.update(status="error", message=f"{res.describe()}: {text_excerpt(res.stderr, 300)}")
    else:
        record["status"] = "ran"
        record["expected"] = excerpt(case["output"])
    return record


def _enforce_count(records: list[dict[str, Any]], expected: int) -> list[dict[str, Any]]:
    """Pytest: fewer tests than expected count as failures (zero collected is a failure)."""
    missing = max(0, expected - len(records))
    return records[:expected] + [
        {"name": f"missing test {i}", "status": "fail", "message": "not collected"}
        for i in range(missing)
    ]
