"""The two records every verifier speaks: the `Sample` it reads and the `Verdict` it returns.

`Sample` is a pydantic model because it crosses trust boundaries (files, HTTP, the CLI): a
bad row must fail with the field that is wrong. `Verdict` is a frozen dataclass because
verifiers create millions of them: it checks its own invariants cheaply and round-trips
through JSON and pickle.

Example:
    >>> s = Sample(id="q1", prompt="2+2?", completion="4", reference="4")
    >>> v = Verdict.passed("exact_match", "1", evidence={"normalised": "4"})
    >>> v.status, v.score, v.fault
    (<Status.PASS: 'pass'>, 1.0, None)
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

__all__ = [
    "Failure",
    "Fault",
    "FunctionCall",
    "Message",
    "Sample",
    "Status",
    "Step",
    "ToolCall",
    "Verdict",
]


# --------------------------------------------------------------------------- samples


class FunctionCall(BaseModel):
    """The function a tool call names and its arguments (an object, as transformers' chat
    templates take them, or JSON text, as OpenAI-style APIs return them)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    arguments: dict[str, Any] | str = Field(default_factory=dict)


class ToolCall(BaseModel):
    """One tool call in an assistant message (``{"type": "function", "function": ...}``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    type: str = "function"
    function: FunctionCall
    id: str | None = None


class Message(BaseModel):
    """One chat message, in the shape transformers' chat templates take: an assistant
    turn may carry ``tool_calls`` (its ``content`` then often empty or null), and a
    ``tool`` turn holds a tool's result with the ``name`` or ``tool_call_id`` it answers."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    role: str
    content: str = ""
    tool_calls: tuple[ToolCall, ...] | None = None
    tool_call_id: str | None = None
    name: str | None = None

    @field_validator("content", mode="before")
    @classmethod
    def _null_content_is_empty(cls, value: Any) -> Any:
        # An assistant turn that only calls tools has content null in chat logs.
        return "" if value is None else value


class Step(BaseModel):
    """One step of a multi-step trajectory: what the model did and what it saw back."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    action: str
    observation: str | None = None
    meta: dict[str, Any] = Field(default_factory=dict)


class Sample(BaseModel):
    """One scored unit: what the model was asked, what it produced, and the ground truth.

    `reference` is whatever the task's verifiers need (a gold answer, tests, an expected
    table, a reference mesh path, a scene spec); `task` names which verifiers apply.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str = Field(min_length=1, max_length=512)
    prompt: str | list[Message] = ""
    completion: str | list[Message] | list[Step]
    reference: Any = None
    task: str | None = None
    meta: dict[str, Any] = Field(default_factory=dict)

    @field_validator("id", mode="before")
    @classmethod
    def _id_as_text(cls, value: Any) -> Any:
        # Dumps often carry integer ids; booleans are almost always a mistake.
        if isinstance(value, int) and not isinstance(value, bool):
            return str(value)
        return value

    @property
    def question(self) -> str:
        """The question as text: the prompt, or the last user message of a chat prompt."""
        if isinstance(self.prompt, str):
            return self.prompt
        users = [m for m in self.prompt if m.role == "user"]
        return users[-1].content if users and isinstance(users[-1].content, str) else ""

    @property
    def completion_text(self) -> str:
        """The text a single-answer verifier should judge.

        A plain string as is; for chat messages the last assistant message, or nothing
        when that message calls tools (text beside a tool call is not a final answer: the
        model had not seen the result yet); for a trajectory the last step's action.
        """
        completion = self.completion
        if isinstance(completion, str):
            return completion
        if not completion:
            return ""
        if isinstance(completion[0], Message):
            assistant = [m for m in completion if isinstance(m, Message) and m.role == "assistant"]
            last = assistant[-1] if assistant else completion[-1]
            if not isinstance(last, Message) or last.tool_calls:
                return ""
            return last.content
        last_step = completion[-1]
        return last_step.action if isinstance(last_step, Step) else ""

    @property
    def steps(self) -> list[Step]:
        """The trajectory's steps; a single completion is one step with no observation."""
        completion = self.completion
        if isinstance(completion, list) and completion and isinstance(completion[0], Step):
            return [s for s in completion if isinstance(s, Step)]
        return [Step(action=self.completion_text)]


# --------------------------------------------------------------------------- verdicts


class Status(StrEnum):
    """What a verifier concluded."""

    PASS = "pass"
    """Fully correct: score 1."""
    FAIL = "fail"
    """Checked and wrong: score 0 (or a small shaped value)."""
    PARTIAL = "partial"
    """Checked and partly right: 0 < score < 1."""
    TIMEOUT = "timeout"
    """A time limit ended the check; see `failure` for whose."""
    ERROR = "error"
    """The check could not be carried out; see `failure` for whose fault."""
    SKIP = "skip"
    """Not applicable to this sample: score is None and it drops out of the reward."""


class Fault(StrEnum):
    """Whose fault a failure is. Only the model's failures become a reward."""

    MODEL = "model"
    """The model's answer is wrong or unusable: scored (usually 0)."""
    INFRA = "infra"
    """The infrastructure failed (a crash, a hang, a dead worker): retried, counted, no reward."""
    DATA = "data"
    """The sample's own data is unusable (its ground truth is missing or malformed): no
    reward, counted as a data error, never retried (it would fail the same way again)."""


class Failure(StrEnum):
    """Why a verdict is not a pass, precise enough to count and to act on."""

    WRONG_ANSWER = "wrong_answer"
    FORMAT = "format"
    """The answer could not be found or parsed where the task requires a form."""
    COMPILE_ERROR = "compile_error"
    RUNTIME_ERROR = "runtime_error"
    TIME_LIMIT = "time_limit"
    MEMORY_LIMIT = "memory_limit"
    OUTPUT_LIMIT = "output_limit"
    RESOURCE_LIMIT = "resource_limit"
    """Processes, file size, open files or disk."""
    INPUT_TOO_LARGE = "input_too_large"
    CHECK_LIMIT = "check_limit"
    """The model's own answer drove the check past its budget (a tower of exponents, an
    expression that explodes, a mesh too large to measure): the model's fault, scored 0,
    so that writing something expensive is never an escape from a wrong answer. Distinct
    from VERIFIER_TIMEOUT, a limit the infrastructure caused, which stays out of the reward."""
    # The infrastructure's failures: retried, counted, and kept out of the reward.
    VERIFIER_CRASH = "verifier_crash"
    VERIFIER_TIMEOUT = "verifier_timeout"
    SANDBOX_ERROR = "sandbox_error"
    BAD_REFERENCE = "bad_reference"
    """The sample's ground truth is missing or unusable: a data error (`Fault.DATA`)."""
    WORKER_DIED = "worker_died"
    VERIFIER_MEMORY = "verifier_memory"
    """A verifier's worker went past the executor's memory limit for a worker (the worker is
    replaced). A verifier that knows the model's input caused it reports MEMORY_LIMIT."""

    @property
    def fault(self) -> Fault:
        if self in _INFRA_FAILURES:
            return Fault.INFRA
        return Fault.DATA if self in _DATA_FAILURES else Fault.MODEL


_INFRA_FAILURES = frozenset(
    {
        Failure.VERIFIER_CRASH,
        Failure.VERIFIER_TIMEOUT,
        Failure.SANDBOX_ERROR,
        Failure.WORKER_DIED,
        Failure.VERIFIER_MEMORY,
    }
)
_DATA_FAILURES = frozenset({Failure.BAD_REFERENCE})


@dataclass(frozen=True, slots=True)
class Verdict:
    """What one verifier concluded about one sample.

    `score` is in [0, 1], or None when the verifier does not apply (`skip`) or could not
    decide (an infrastructure failure, a data error, or a timeout it will not call right
    or wrong).
    `evidence` holds JSON-serialisable detail (per-test results, parsed forms, metric
    values); `feedback` is short text a model could use to correct itself.
    """

    name: str
    version: str
    status: Status
    score: float | None
    failure: Failure | None = None
    evidence: Mapping[str, Any] = field(default_factory=dict)
    feedback: str = ""
    elapsed_s: float = 0.0

    def __post_init__(self) -> None:
        # Coerce strings from JSON so `Verdict(**row)` works; frozen, hence object.__setattr__.
        if not isinstance(self.status, Status):
            object.__setattr__(self, "status", Status(self.status))
        if self.failure is not None and not isinstance(self.failure, Failure):
            object.__setattr__(self, "failure", Failure(self.failure))
        _check_invariants(self)

    # ------------------------------------------------------------------ constructors

    @classmethod
    def passed(cls, name: str, version: str, **kw: Any) -> Verdict:
        return cls(name, version, Status.PASS, 1.0, **kw)

    @classmethod
    def failed(
        cls,
        name: str,
        version: str,
        failure: Failure = Failure.WRONG_ANSWER,
        score: float = 0.0,
        **kw: Any,
    ) -> Verdict:
        return cls(name, version, Status.FAIL, score, failure, **kw)

    @classmethod
    def graded(cls, name: str, version: str, score: float, **kw: Any) -> Verdict:
        """A pass at 1, a fail (wrong answer) at 0, partial in between."""
        if score >= 1.0:
            return cls(name, version, Status.PASS, 1.0, **kw)
        if score <= 0.0:
            return cls(name, version, Status.FAIL, 0.0, Failure.WRONG_ANSWER, **kw)
        return cls(name, version, Status.PARTIAL, float(score), **kw)

    @classmethod
    def skipped(cls, name: str, version: str, reason: str, **kw: Any) -> Verdict:
        return cls(name, version, Status.SKIP, None, feedback=reason, **kw)

    @classmethod
    def errored(cls, name: str, version: str, failure: Failure, message: str, **kw: Any) -> Verdict:
        """An error of the model's (score 0), or of the infrastructure's or the data's
        (score None: not the model's doing, so never a reward or a penalty)."""
        score = 0.0 if failure.fault is Fault.MODEL else None
        return cls(name, version, Status.ERROR, score, failure, feedback=message, **kw)

    @classmethod
    def timed_out(
        cls, name: str, version: str, failure: Failure, message: str, **kw: Any
    ) -> Verdict:
        """A time limit: the model's (score 0) or one the verifier will not decide (None)."""
        score = 0.0 if failure is Failure.TIME_LIMIT else None
        return cls(name, version, Status.TIMEOUT, score, failure, feedback=message, **kw)

    # ------------------------------------------------------------------ queries

    @property
    def fault(self) -> Fault | None:
        return self.failure.fault if self.failure is not None else None

    @property
    def is_infra_failure(self) -> bool:
        return self.fault is Fault.INFRA

    @property
    def is_data_error(self) -> bool:
        return self.fault is Fault.DATA

    def with_elapsed(self, elapsed_s: float) -> Verdict:
        return Verdict(
            self.name,
            self.version,
            self.status,
            self.score,
            self.failure,
            self.evidence,
            self.feedback,
            elapsed_s,
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "version": self.version,
            "status": self.status.value,
            "score": self.score,
            "failure": self.failure.value if self.failure else None,
            "fault": self.fault.value if self.fault else None,
            "evidence": dict(self.evidence),
            "feedback": self.feedback,
            "elapsed_s": self.elapsed_s,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Verdict:
        fields = {k: v for k, v in data.items() if k != "fault"}  # fault is derived
        return cls(**fields)


def _check_invariants(v: Verdict) -> None:
    score = v.score
    if score is not None:
        if isinstance(score, bool) or not isinstance(score, int | float):
            raise TypeError(f"Verdict.score must be a float or None, got {type(score).__name__}")
        if not math.isfinite(score) or not 0.0 <= score <= 1.0:
            raise ValueError(f"Verdict.score must be in [0, 1] or None, got {score!r}")
    if v.status is Status.SKIP and score is not None:
        raise ValueError("a skipped verdict has score None: it is not applicable")
    if v.status is Status.PASS and score != 1.0:
        raise ValueError("a passing verdict has score 1.0; use Status.PARTIAL below that")
    if v.status in (Status.ERROR, Status.TIMEOUT) and v.failure is None:
        raise ValueError(f"a {v.status.value} verdict must name its failure (Failure.*)")
    if v.failure is not None and v.failure.fault is not Fault.MODEL and score is not None:
        raise ValueError(
            f"a failure of the {v.failure.fault.value} ({v.failure.value}) has score None: "
            "it is not the model's doing, so never a reward"
        )
