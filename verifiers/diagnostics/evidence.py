"""What the shaped code rewards know about one attempt: its log, what the environment
recorded about the run, and what it did to the source.

The log is text the model's program helped write (it can print anything), so the rewards
read two more sources, each optional, from the attempt's ``meta`` (a `Step`'s for
``repair_progress``, the sample's for ``compile_gate`` and ``diagnostics_score``):

- ``exit_code`` (int): the status of the command the log came from. Non-zero with no
  error in the log is one unexplained error: at stage ``run`` when the log came from
  running the program (``tests`` is given, ``phase`` is ``"run"``, or the status says a
  signal killed it: 128 + N, or negative), else at stage ``parse`` (a build that failed
  in words no parser knows ranks lowest).
- ``tests`` (``{"passed": int, "total": int}``): the tests the environment ran. They
  decide everything past the build: full credit needs every test passed and exit 0, and
  a runtime error the log shows is one of the failed tests, not a stage of its own.
- ``phase`` (``"build"`` or ``"run"``), ``language`` and ``tool``.

The source: the step's ``action`` (or ``meta["sources"]``, joined), compared with the
source the task started from (the first attempt's, or ``meta["original"]``) by
`edits.compare`, names the functions removed or stubbed and the warnings silenced.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rewardsmith.verifiers.diagnostics.edits import LANGUAGE_OF_TOOL, EditReport, compare
from rewardsmith.verifiers.diagnostics.record import Diagnostic, Severity, Stage

__all__ = ["RunRecord", "TestResults", "edits_of", "read_run", "source_of", "unexplained_exit"]


@dataclass(frozen=True, slots=True)
class TestResults:
    passed: int
    total: int
    clean_exit: bool = True
    """The run exited 0 (a harness that fails after printing right answers did not pass)."""

    @property
    def all_passed(self) -> bool:
        return self.total > 0 and self.passed == self.total and self.clean_exit

    @property
    def fraction(self) -> float:
        return self.passed / self.total if self.total else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"passed": self.passed, "total": self.total, "clean_exit": self.clean_exit}


@dataclass(frozen=True, slots=True)
class RunRecord:
    """The environment's record of an attempt, validated."""

    exit_code: int | None = None
    tests: TestResults | None = None
    ran: bool = False
    """The log covers running the program (not only building it)."""


def read_run(meta: Mapping[str, Any]) -> RunRecord:
    """``exit_code``, ``tests`` and ``phase`` from an attempt's meta; malformed values are
    ignored (the log alone is then the evidence)."""
    code = meta.get("exit_code")
    code = code if isinstance(code, int) and not isinstance(code, bool) else None
    tests = _tests(meta.get("tests"), code)
    killed = code is not None and (code < 0 or code > 128)
    ran = tests is not None or meta.get("phase") == "run" or killed
    return RunRecord(code, tests, ran)


def _tests(value: Any, exit_code: int | None) -> TestResults | None:
    if not isinstance(value, Mapping):
        return None
    passed, total = value.get("passed"), value.get("total")
    if not all(isinstance(v, int) and not isinstance(v, bool) for v in (passed, total)):
        return None
    assert isinstance(passed, int) and isinstance(total, int)
    if total < 0 or not 0 <= passed <= total:
        return None
    return TestResults(passed, total, exit_code in (None, 0))


def unexplained_exit(diagnostics: list[Diagnostic], run: RunRecord) -> Diagnostic | None:
    """The error a non-zero exit stands for when the log names none."""
    if run.exit_code in (None, 0) or any(d.is_error for d in diagnostics):
        return None
    stage = Stage.RUN if run.ran else Stage.PARSE
    return Diagnostic(
        "rewardsmith",
        Severity.ERROR,
        f"exit code {run.exit_code} with no error the parser recognised",
        stage=stage,
    )


def source_of(action: str, meta: Mapping[str, Any]) -> str:
    """The attempt's source: ``meta["sources"]`` joined in order, else the action."""
    sources = meta.get("sources")
    if isinstance(sources, Mapping) and all(isinstance(v, str) for v in sources.values()):
        return "\n".join(str(v) for v in sources.values())
    return action


def language_of(meta: Mapping[str, Any], tool: str | None) -> str | None:
    language = meta.get("language")
    if isinstance(language, str):
        return language
    return LANGUAGE_OF_TOOL.get(tool or "")


def edits_of(original: str | None, source: str, language: str | None) -> EditReport:
    """What the attempt did to the original source (nothing known without both)."""
    if original is None or language is None:
        return EditReport()
    return compare(original, source, language)
