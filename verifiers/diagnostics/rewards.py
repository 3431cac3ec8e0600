"""Shaped code rewards as verifiers over recorded build, run and test logs.

Where the log comes from (documented in docs/diagnostics.md):

* `CompileGate` and `DiagnosticsScore` read ``sample.meta["build_log"]`` when the key is
  present (the log the code runner recorded; ``""`` means it printed nothing), otherwise
  the completion text (a log pasted as the completion). ``sample.meta["tool"]`` names the
  tool (else the verifier's `tool`, else detection); an optional
  ``sample.meta["exit_code"]`` that is non-zero with no parsed error counts as one
  unexplained parse-stage error, so a failure the parser cannot read is never a pass.
* `RepairProgress` reads a trajectory: each step's ``observation`` is the log that attempt
  produced (steps without one are not attempts), ``step.meta["tool"]`` its tool.

Parsing runs in a killable worker (`rewardsmith.verifiers.killable`) under `timeout_s`;
a parse that overruns is the verifier's timeout (score None), never the model's 0.

    >>> from rewardsmith.verifiers.types import Sample
    >>> log = "main.c:3:9: error: expected ';' before '}' token\\n"
    >>> v = DiagnosticsScore(timeout_s=None)(Sample(id="1", completion="", meta={"build_log": log}))
    >>> v.status.value, round(v.score, 4), v.evidence["summary"]["failed_stage"]
    ('fail', 0.0833, 'parse')
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from rewardsmith.verifiers.diagnostics.feedback import format_feedback
from rewardsmith.verifiers.diagnostics.parse import TOOLS, parse_log
from rewardsmith.verifiers.diagnostics.record import Diagnostic, Severity, Stage
from rewardsmith.verifiers.diagnostics.shaping import (
    potential,
    repair_gain,
    step_rewards,
    summarise,
)
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
class _LogSettings:
    tool: str | None = None
    """Tool whose output the logs hold (one of `TOOLS`); None detects it per log."""
    max_chars: int = 8_000_000
    """Characters of a log that are parsed (the head is kept)."""
    timeout_s: float | None = 30.0
    """Wall-clock limit on parsing one log, in a killable worker; None parses in process."""

    def __post_init__(self) -> None:
        if self.tool is not None and self.tool.lower() not in TOOLS:
            raise ValueError(f"tool {self.tool!r} is unknown; use one of {', '.join(TOOLS)}")
        if self.timeout_s is not None and self.timeout_s <= 0:
            raise ValueError("timeout_s must be positive, or None to parse in process")

    def parse(self, log: Any, tool: Any) -> list[Diagnostic]:
        if not isinstance(log, str | bytes):
            log = "" if log is None else str(log)
        name = tool if isinstance(tool, str) and tool.lower() in TOOLS else self.tool
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

    def read_sample(self, sample: Sample) -> tuple[list[Diagnostic], bool] | None:
        """The sample's diagnostics and whether the exit code was unexplained, or None."""
        meta = sample.meta
        if "build_log" in meta:
            log = meta["build_log"]
        elif sample.completion_text:
            log = sample.completion_text
        else:
            return None
        diagnostics = self.parse(log, meta.get("tool"))
        exit_code = meta.get("exit_code")
        unexplained = (
            isinstance(exit_code, int)
            and exit_code != 0
            and not any(d.is_error for d in diagnostics)
        )
        if unexplained:
            diagnostics.append(
                Diagnostic(
                    "rewardsmith",
                    Severity.ERROR,
                    f"exit code {exit_code} with no error the parser recognised",
                    stage=Stage.PARSE,
                )
            )
        return diagnostics, unexplained


def _evidence(diagnostics: Sequence[Diagnostic], **extra: Any) -> dict[str, Any]:
    return {
        "summary": summarise(diagnostics).to_dict(),
        "diagnostics": [d.to_dict() for d in diagnostics[:_MAX_EVIDENCE]],
        "diagnostics_total": len(diagnostics),
        **extra,
    }


def _no_log(name: str, version: str) -> Verdict:
    return Verdict.errored(
        name,
        version,
        Failure.BAD_REFERENCE,
        "no build log: set sample.meta['build_log'] or put the log in the completion",
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


@dataclass(frozen=True)
class CompileGate(_LogSettings):
    """Pass (1) when the log holds no error diagnostic; fail (0, compile or runtime error)
    otherwise. Warnings do not close the gate."""

    name: ClassVar[str] = "compile_gate"
    version: ClassVar[str] = "1"
    cost: ClassVar[Cost] = Cost.CPU
    takes_structured_reference: ClassVar[bool] = True  # JSON-text references are decoded

    def __call__(self, sample: Sample) -> Verdict:
        try:
            read = self.read_sample(sample)
        except _ParseTimeout as exc:
            return _parse_failed(self.name, self.version, exc)
        if read is None:
            return _no_log(self.name, self.version)
        diagnostics, unexplained = read
        summary = summarise(diagnostics)
        evidence = _evidence(diagnostics, unexplained_exit=unexplained)
        feedback = format_feedback(diagnostics, _sources(sample))
        if summary.stage is None:
            return Verdict.passed(self.name, self.version, evidence=evidence, feedback=feedback)
        return Verdict.failed(
            self.name,
            self.version,
            _FAILURE_BY_STAGE[summary.stage],
            evidence=evidence,
            feedback=feedback,
        )


@dataclass(frozen=True)
class DiagnosticsScore(_LogSettings):
    """Partial credit Φ from the diagnostics (see `shaping.potential`): the stage reached,
    refined by the weighted count of errors and warnings."""

    name: ClassVar[str] = "diagnostics_score"
    version: ClassVar[str] = "1"
    cost: ClassVar[Cost] = Cost.CPU
    takes_structured_reference: ClassVar[bool] = True  # JSON-text references are decoded

    warning_weight: float = 0.1
    """What one warning costs relative to one error."""
    max_feedback_items: int = 3
    """How many problems the feedback text lists."""

    def __call__(self, sample: Sample) -> Verdict:
        try:
            read = self.read_sample(sample)
        except _ParseTimeout as exc:
            return _parse_failed(self.name, self.version, exc)
        if read is None:
            return _no_log(self.name, self.version)
        diagnostics, unexplained = read
        phi = potential(diagnostics, self.warning_weight)
        summary = summarise(diagnostics)
        evidence = _evidence(diagnostics, potential=phi, unexplained_exit=unexplained)
        feedback = format_feedback(diagnostics, _sources(sample), self.max_feedback_items)
        if summary.stage is None:
            return Verdict.graded(
                self.name, self.version, phi, evidence=evidence, feedback=feedback
            )
        return Verdict.failed(
            self.name,
            self.version,
            _FAILURE_BY_STAGE[summary.stage],
            score=phi,
            evidence=evidence,
            feedback=feedback,
        )


@dataclass(frozen=True)
class RepairProgress(_LogSettings):
    """Reward a multi-turn repair for closing the gap to a clean build (`repair_gain`).

    Each trajectory step with an ``observation`` is one attempt and its log. Going back is
    never rewarded: the score is earned by the last attempt, and steps that fell below the
    best so far are listed in the evidence as ``regressions``.
    """

    name: ClassVar[str] = "repair_progress"
    version: ClassVar[str] = "1"
    cost: ClassVar[Cost] = Cost.CPU
    takes_structured_reference: ClassVar[bool] = True  # JSON-text references are decoded

    warning_weight: float = 0.1
    """What one warning costs relative to one error."""

    def __call__(self, sample: Sample) -> Verdict:
        attempts = [s for s in sample.steps if s.observation is not None]
        if len(attempts) < 2:
            return Verdict.skipped(
                self.name, self.version, "repair progress needs at least two attempts with logs"
            )
        try:
            parsed = [self.parse(s.observation, s.meta.get("tool")) for s in attempts]
        except _ParseTimeout as exc:
            return _parse_failed(self.name, self.version, exc)
        phis = [potential(p, self.warning_weight) for p in parsed]
        best = [max(phis[: t + 1]) for t in range(len(phis))]
        evidence = {
            "potentials": phis,
            "step_rewards": step_rewards(phis),
            "regressions": [t for t in range(1, len(phis)) if phis[t] < best[t - 1]],
            "summaries": [summarise(p).to_dict() for p in parsed],
        }
        feedback = format_feedback(parsed[-1], _sources(sample))
        gain = repair_gain(phis)
        if gain <= 0.0:
            return Verdict.failed(self.name, self.version, evidence=evidence, feedback=feedback)
        return Verdict.graded(self.name, self.version, gain, evidence=evidence, feedback=feedback)
