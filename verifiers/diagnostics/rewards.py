"""Shaped code rewards as verifiers over recorded build, run and test logs.

Where the evidence comes from (documented in docs/diagnostics.md):

* `CompileGate` and `DiagnosticsScore` read ``sample.meta["build_log"]`` (the log the code
  runner recorded; ``""`` means it printed nothing; the completion is then the program).
  Without it, the completion is the log only with ``log_in_completion=True`` (a log pasted
  as the completion); otherwise the verdict is an error, never a score for the text.
  ``sample.meta["tool"]`` names the tool (else the verifier's `tool`, else detection);
  ``exit_code``, ``tests``, ``phase``, ``language`` and ``original`` (the source
  the task started from) are read as `evidence` describes.
* `RepairProgress` reads a trajectory: each step's ``observation`` is the log that attempt
  produced (steps without one are not attempts), its ``action`` the source, its ``meta``
  the same keys; the first attempt is the original.

Full credit only when tests ran and passed; an attempt that removed or stubbed the
original's functions earns nothing unless its tests all pass (`edits`); silencing warnings
never raises a score (`shaping`).

Parsing runs in a killable worker (`rewardsmith.verifiers.killable`) under `timeout_s`;
a parse that overruns is the verifier's timeout (score None), never the model's 0.

    >>> from rewardsmith.verifiers.types import Sample
    >>> log = "main.c:3:9: error: expected ';' before '}' token\\n"
    >>> v = DiagnosticsScore(timeout_s=None)(Sample(id="1", completion="", meta={"build_log": log}))
    >>> v.status.value, round(v.score, 4), v.evidence["summary"]["failed_stage"]
    ('fail', 0.0833, 'parse')
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from rewardsmith.verifiers.diagnostics.edits import EditReport
from rewardsmith.verifiers.diagnostics.evidence import (
    RunRecord,
    edits_of,
    language_of,
    read_run,
    source_of,
    unexplained_exit,
)
from rewardsmith.verifiers.diagnostics.feedback import format_feedback
from rewardsmith.verifiers.diagnostics.parse import TOOLS, parse_log
from rewardsmith.verifiers.diagnostics.record import Diagnostic, Stage
from rewardsmith.verifiers.diagnostics.shaping import (
    BuildSummary,
    potential_of,
    repair_gain,
    step_rewards,
    summarise,
)
from rewardsmith.verifiers.exploits import Exploit, ExploitGenerator
from rewardsmith.verifiers.killable import call_with_limits
from rewardsmith.verifiers.protocol import Cost
from rewardsmith.verifiers.types import Failure, Sample, Verdict

__all__ = ["CompileGate", "DiagnosticsScore", "RepairProgress"]

_FAILURE_BY_STAGE = {
    Stage.PARSE: Failure.COMPILE_ERROR,
    Stage.TYPE: Failure.COMPILE_ERROR,
    Stage.LINK: Failure.COMPILE_ERROR,
    Stage.RUN: Failure.RUNTIME_ERROR,
    Stage.TEST: Failure.WRONG_ANSWER,
}
_MAX_EVIDENCE = 20


class _ParseTimeout(Exception):
    """The parser overran its limit, raised, or its worker died."""

    def __init__(self, message: str, timed_out: bool) -> None:
        super().__init__(message)
        self.timed_out = timed_out


def _parse_in_worker(log: str | bytes, tool: str | None, max_chars: int) -> list[Diagnostic]:
    return parse_log(log, tool, max_chars=max_chars)


@dataclass(frozen=True)
class Attempt:
    """One attempt, read: its diagnostics, the environment's record, its edits."""

    diagnostics: list[Diagnostic]
    run: RunRecord
    edits: EditReport = field(default_factory=EditReport)
    unexplained: bool = False

    @property
    def summary(self) -> BuildSummary:
        return summarise(self.diagnostics, self.run.tests, self.edits.silenced > 0)

    @property
    def retreated(self) -> bool:
        """It removed or stubbed the original's code, and its tests do not all pass."""
        tests = self.run.tests
        return self.edits.retreated and not (tests is not None and tests.all_passed)

    def evidence(self) -> dict[str, Any]:
        return {
            "summary": self.summary.to_dict(),
            "diagnostics": [d.to_dict() for d in self.diagnostics[:_MAX_EVIDENCE]],
            "diagnostics_total": len(self.diagnostics),
            "unexplained_exit": self.unexplained,
            "edits": self.edits.to_dict(),
        }


@dataclass(frozen=True)
class _LogSettings:
    tool: str | None = None
    """Tool whose output the logs hold (one of `TOOLS`); None detects it per log."""
    max_chars: int = 8_000_000
    """Characters of a log that are parsed (the head is kept)."""
    timeout_s: float | None = 30.0
    """Wall-clock limit on parsing one log, in a killable worker; None parses in process."""
    log_in_completion: bool = False
    """Read the completion as the log where meta has no ``build_log`` (logs pasted as
    completions, as in a dump of build logs). Off by default: a model's completion is its
    own text, and read as a log, a program or a claim of success reads as a clean build."""

    def __post_init__(self) -> None:
        if self.tool is not None and self.tool.lower() not in TOOLS:
            raise ValueError(f"tool {self.tool!r} is unknown; use one of {', '.join(TOOLS)}")
        if self.timeout_s is not None and self.timeout_s <= 0:
            raise ValueError("timeout_s must be positive, or None to parse in process")

    def _tool(self, tool: Any) -> str | None:
        return tool if isinstance(tool, str) and tool.lower() in TOOLS else self.tool

    def parse(self, log: Any, tool: Any) -> list[Diagnostic]:
        if not isinstance(log, str | bytes):
            log = "" if log is None else str(log)
        name = self._tool(tool)
        if self.timeout_s is None:
            return parse_log(log, name, max_chars=self.max_chars)
        outcome = call_with_limits(
            _parse_in_worker,
            log,
            name,
            self.max_chars,
            timeout_s=self.timeout_s,
            preload=("rewardsmith.verifiers.diagnostics",),
        )
        if not outcome.ok:
            reason = outcome.error or ("timed out" if outcome.timed_out else "worker died")
            raise _ParseTimeout(reason, outcome.timed_out)
        return list(outcome.value)

    def read_attempt(
        self, log: Any, meta: Mapping[str, Any], source: str | None, original: str | None
    ) -> Attempt:
        """Parse one attempt's log and read what its meta and its source say."""
        diagnostics = self.parse(log, meta.get("tool"))
        run = read_run(meta)
        extra = unexplained_exit(diagnostics, run)
        if extra is not None:
            diagnostics.append(extra)
        language = language_of(meta, self._tool(meta.get("tool")))
        edits = edits_of(original, source, language) if source is not None else EditReport()
        return Attempt(diagnostics, run, edits, extra is not None)

    def read_sample(self, sample: Sample) -> Attempt | None:
        """The single attempt a sample records, or None when it holds no log."""
        meta = sample.meta
        if "build_log" in meta:
            log, source = meta["build_log"], source_of(sample.completion_text, meta)
        elif self.log_in_completion and sample.completion_text:
            log, source = sample.completion_text, source_of("", meta) or None
        else:
            return None
        original = meta.get("original")
        return self.read_attempt(log, meta, source, original if isinstance(original, str) else None)

    def exploits(self, sample: Sample) -> Iterator[Exploit]:
        """Retreats instead of repairs, built and tested for real (see
        `rewardsmith.verifiers.diagnostics.exploits`); a sample with a repair task as its
        reference has them."""
        from rewardsmith.verifiers.diagnostics.exploits import repair_exploits

        verify: Any = self
        return repair_exploits(sample, lambda s: verify(s).score)

    def exploit_generators(self) -> dict[str, ExploitGenerator]:
        """The generators `exploits` composes, by class (the audit caps each on its own,
        so it builds no more rewrites than it scores)."""
        from rewardsmith.verifiers.diagnostics.exploits import generators

        verify: Any = self
        return generators(lambda s: verify(s).score)


def _no_log(name: str, version: str) -> Verdict:
    return Verdict.errored(
        name,
        version,
        Failure.BAD_REFERENCE,
        "no build log: set sample.meta['build_log'] (or log_in_completion=True where the "
        "completions are logs)",
    )


def _parse_failed(name: str, version: str, exc: _ParseTimeout) -> Verdict:
    """The parser's failure is the verifier's (score None), never the model's."""
    message = f"parsing the log: {exc}"
    if exc.timed_out:
        return Verdict.timed_out(name, version, Failure.VERIFIER_TIMEOUT, message)
    return Verdict.errored(name, version, Failure.VERIFIER_CRASH, message)


def _sources(sample: Sample) -> Mapping[str, str] | None:
    sources = sample.meta.get("sources")
    return sources if isinstance(sources, Mapping) else None


def _retreat_feedback(edits: EditReport) -> str:
    parts = [f"removed {', '.join(edits.removed)}" if edits.removed else ""]
    parts.append(f"stubbed {', '.join(edits.stubbed)}" if edits.stubbed else "")
    done = "; ".join(p for p in parts if p)
    return f"The attempt {done} instead of repairing it, and its tests do not all pass."


def _tests_failed(attempt: Attempt) -> bool:
    tests = attempt.run.tests
    return tests is not None and not tests.all_passed


@dataclass(frozen=True)
class CompileGate(_LogSettings):
    """Pass (1) when the attempt built, ran and passed its tests; partial
    (`untested_score`) when it built cleanly but no test ran; fail (0) on an error at any
    stage, on failed tests, and when it removed or stubbed the original's code. Warnings
    do not close the gate."""

    name: ClassVar[str] = "compile_gate"
    version: ClassVar[str] = "2"
    cost: ClassVar[Cost] = Cost.CPU
    takes_structured_reference: ClassVar[bool] = True  # JSON-text references are decoded

    untested_score: float = 0.5
    """What a clean build whose tests did not run earns (full credit needs tests)."""

    def __post_init__(self) -> None:
        super().__post_init__()
        if not 0.0 <= self.untested_score < 1.0:
            raise ValueError(
                "untested_score must be in [0, 1): a build without tests is not a pass"
            )

    def __call__(self, sample: Sample) -> Verdict:
        try:
            attempt = self.read_sample(sample)
        except _ParseTimeout as exc:
            return _parse_failed(self.name, self.version, exc)
        if attempt is None:
            return _no_log(self.name, self.version)
        summary, evidence = attempt.summary, attempt.evidence()
        feedback = format_feedback(attempt.diagnostics, _sources(sample))
        if attempt.retreated:
            feedback = _retreat_feedback(attempt.edits)
            return Verdict.failed(self.name, self.version, evidence=evidence, feedback=feedback)
        if summary.stage is not None:
            failure = _FAILURE_BY_STAGE[summary.stage]
            return Verdict.failed(
                self.name, self.version, failure, evidence=evidence, feedback=feedback
            )
        if _tests_failed(attempt):
            return Verdict.failed(self.name, self.version, evidence=evidence, feedback=feedback)
        if attempt.run.tests is None:
            return Verdict.graded(
                self.name, self.version, self.untested_score, evidence=evidence, feedback=feedback
            )
        return Verdict.passed(self.name, self.version, evidence=evidence, feedback=feedback)


@dataclass(frozen=True)
class DiagnosticsScore(_LogSettings):
    """Partial credit Φ (see `shaping.potential`): the stage reached, refined by the
    weighted count of errors and warnings and by the tests; 0 for an attempt that removed
    or stubbed the original's code while its tests do not all pass."""

    name: ClassVar[str] = "diagnostics_score"
    version: ClassVar[str] = "2"
    cost: ClassVar[Cost] = Cost.CPU
    takes_structured_reference: ClassVar[bool] = True  # JSON-text references are decoded

    warning_weight: float = 0.1
    """What one warning costs relative to one error."""
    max_feedback_items: int = 3
    """How many problems the feedback text lists."""

    def __call__(self, sample: Sample) -> Verdict:
        try:
            attempt = self.read_sample(sample)
        except _ParseTimeout as exc:
            return _parse_failed(self.name, self.version, exc)
        if attempt is None:
            return _no_log(self.name, self.version)
        summary = attempt.summary
        phi = potential_of(summary, self.warning_weight)
        evidence = {**attempt.evidence(), "potential": phi}
        feedback = format_feedback(attempt.diagnostics, _sources(sample), self.max_feedback_items)
        if attempt.retreated:
            feedback = _retreat_feedback(attempt.edits)
            return Verdict.failed(self.name, self.version, evidence=evidence, feedback=feedback)
        if summary.stage is not None or _tests_failed(attempt):
            failure = _FAILURE_BY_STAGE[summary.stage] if summary.stage else Failure.WRONG_ANSWER
            return Verdict.failed(
                self.name, self.version, failure, score=phi, evidence=evidence, feedback=feedback
            )
        return Verdict.graded(self.name, self.version, phi, evidence=evidence, feedback=feedback)


@dataclass(frozen=True)
class RepairProgress(_LogSettings):
    """Reward a multi-turn repair for closing the gap to a tested, working program
    (`repair_gain`).

    Each trajectory step with an ``observation`` is one attempt and its log; the first
    attempt's source is the original. Going back is never rewarded: the score is earned
    by the last attempt, and steps that fell below the best so far are listed in the
    evidence as ``regressions``. A last attempt that removed or stubbed the original's
    functions earns no gain unless its tests all pass.
    """

    name: ClassVar[str] = "repair_progress"
    version: ClassVar[str] = "2"
    cost: ClassVar[Cost] = Cost.CPU
    takes_structured_reference: ClassVar[bool] = True  # JSON-text references are decoded

    warning_weight: float = 0.1
    """What one warning costs relative to one error."""

    def __call__(self, sample: Sample) -> Verdict:
        steps = [s for s in sample.steps if s.observation is not None]
        if len(steps) < 2:
            return Verdict.skipped(
                self.name, self.version, "repair progress needs at least two attempts with logs"
            )
        original = source_of(steps[0].action, steps[0].meta)
        try:
            attempts = [
                self.read_attempt(
                    s.observation, s.meta, source_of(s.action, s.meta), original if t else None
                )
                for t, s in enumerate(steps)
            ]
        except _ParseTimeout as exc:
            return _parse_failed(self.name, self.version, exc)
        phis = [potential_of(a.summary, self.warning_weight) for a in attempts]
        last = attempts[-1]
        if last.retreated:
            phis[-1] = min(phis[-1], phis[0])  # a retreat is not progress
        best = [max(phis[: t + 1]) for t in range(len(phis))]
        evidence = {
            "potentials": phis,
            "step_rewards": step_rewards(phis),
            "regressions": [t for t in range(1, len(phis)) if phis[t] < best[t - 1]],
            "summaries": [a.summary.to_dict() for a in attempts],
            "edits": last.edits.to_dict(),
            "retreated": last.retreated,
        }
        feedback = format_feedback(last.diagnostics, _sources(sample))
        if last.retreated:
            feedback = _retreat_feedback(last.edits)
        gain = repair_gain(phis)
        if gain <= 0.0:
            return Verdict.failed(self.name, self.version, evidence=evidence, feedback=feedback)
        return Verdict.graded(self.name, self.version, gain, evidence=evidence, feedback=feedback)
