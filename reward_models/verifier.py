"""A reward model as a batch verifier, so it composes with rule-based ones in a grader.

The verdict's score is the raw reward squashed into [0, 1], ``σ((r − center) / scale)``; the
raw reward itself is in ``evidence["raw_score"]`` (a trainer that wants it unsquashed reads
it there). The status is PARTIAL unless the squashed score rounds to exactly 0 or 1: a learned
score is a preference, not a proof, so it never claims a plain PASS or FAIL in between.

Process mode scores each reasoning step: the steps are the actions of a trajectory, the
assistant turns of a chat completion, or a text completion split at the model's step
separator. The per-step rewards go into ``evidence["step_scores"]`` and are reduced with
`step_aggregate`: ``min`` (a solution is as good as its worst step, Lightman et al., 2023),
``last``, ``mean``, or ``product`` (the probability that every step is right,
``Π σ(v_i)``, read back as a raw score ``logit(Π σ(v_i))``).

With ``normalize`` the raw reward is first put in units of the spread of the model's scores
on its training data (`RewardModel.normalize`), so ``center`` and ``scale`` mean the same
for every model. `exploits` yields the reward-model exploit classes
(`rewardsmith.reward_models.exploits`) for ``rewardsmith audit``.

Hostile input: completions longer than `max_chars` characters fail as too large before
tokenising; longer than the model's context, they are truncated from the left (the verdict
says so in ``evidence["truncated"]``); an empty completion is scored like any other text. A
model that cannot be loaded or scores NaN gives an infrastructure error (score None), never 0.

    >>> rm = RewardModelVerifier(model_path="runs/rm/checkpoint-0000300")  # doctest: +SKIP
    >>> rm(Sample(id="1", prompt="2+2?", completion="4")).evidence["raw_score"]  # doctest: +SKIP
    3.1
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import ClassVar, Literal

import torch

from rewardsmith.reward_models.exploits import reward_model_exploits
from rewardsmith.reward_models.model import RewardModel
from rewardsmith.reward_models.scoring import Scored, score_outcomes, score_steps
from rewardsmith.verifiers.exploits import Exploit
from rewardsmith.verifiers.protocol import Cost
from rewardsmith.verifiers.types import Failure, Message, Sample, Step, Verdict

__all__ = [
    "RewardModelVerifier",
    "aggregate_steps",
    "load_cached",
    "prompt_text",
    "sample_steps",
]

StepAggregate = Literal["min", "mean", "last", "product"]


def aggregate_steps(steps: Sequence[float], how: StepAggregate) -> float:
    """One raw score from per-step raw scores: their min, mean or last, or the log-odds of
    ``Π σ(v_i)`` (``product``: the chance that every step is right)."""
    if how == "product":
        log_p = sum(-math.log1p(math.exp(-v)) if v > -30 else v for v in steps)
        if log_p > -1e-12:  # every step certain: keep a finite, very large score
            return 27.6
        return log_p - math.log(-math.expm1(log_p))
    values = list(steps)
    if how == "min":
        return min(values)
    if how == "mean":
        return sum(values) / len(values)
    return values[-1]


@functools.lru_cache(maxsize=4)
def load_cached(
    path: str, device: str = "cpu", max_length: int | None = None, separator: str | None = None
) -> RewardModel:
    """Load a reward model once per process (verifiers stay stateless and picklable)."""
    if device == "auto":
        device = "cuda" if torch.cuda.is_available() else "cpu"
    model = RewardModel.load(path, max_length=max_length, step_separator=separator)
    return model.to(device).eval()


def prompt_text(sample: Sample) -> str:
    """The prompt as text; chat messages joined by blank lines."""
    if isinstance(sample.prompt, str):
        return sample.prompt
    return "\n\n".join(m.content for m in sample.prompt)


def sample_steps(sample: Sample, separator: str) -> list[str]:
    """Reasoning steps: trajectory actions, assistant turns, or text split at `separator`."""
    completion = sample.completion
    if isinstance(completion, list) and completion and isinstance(completion[0], Step):
        return [s.action for s in completion if isinstance(s, Step)]
    if isinstance(completion, list) and completion:
        turns = [m for m in completion if isinstance(m, Message) and m.role == "assistant"]
        return [m.content for m in turns] or [sample.completion_text]
    parts = [p for p in sample.completion_text.split(separator) if p.strip()]
    return parts or [""]


@dataclass(frozen=True)
class RewardModelVerifier:
    """Score samples with a saved reward model (outcome or process), in sorted batches."""

    name: ClassVar[str] = "reward_model"
    version: ClassVar[str] = "1"
    cost: ClassVar[Cost] = Cost.GPU

    model_path: str
    """A directory written by `RewardModel.save` (any training checkpoint is one)."""
    mode: Literal["outcome", "process"] = "outcome"
    """One score per completion, or one per reasoning step (value-head models only)."""
    batch_size: int = 32
    center: float = 0.0
    """Raw reward that maps to 0.5."""
    scale: float = 1.0
    """Raw-reward units per logit of the squashed score."""
    normalize: bool = False
    """Read the raw reward in units of the model's training scores (before center/scale)."""
    step_aggregate: StepAggregate = "min"
    max_length: int | None = None
    """Token limit; None keeps the saved model's."""
    max_chars: int = 100_000
    device: str = "cpu"
    """``cpu``, ``cuda`` or ``auto``."""

    def __post_init__(self) -> None:
        if self.scale <= 0 or not math.isfinite(self.scale):
            raise ValueError(f"scale must be a positive number, got {self.scale}")
        if self.batch_size < 1:
            raise ValueError(f"batch_size must be at least 1, got {self.batch_size}")

    def __call__(self, sample: Sample) -> Verdict:
        return self.batch([sample])[0]

    def exploits(self, sample: Sample) -> Iterator[Exploit]:
        """Wrong answers dressed up (see `rewardsmith.reward_models.exploits`)."""
        if self.mode == "outcome":
            yield from reward_model_exploits(sample)

    def batch(self, samples: Sequence[Sample]) -> list[Verdict]:
        start = time.perf_counter()
        try:
            model = load_cached(self.model_path, self.device, self.max_length)
        except Exception as exc:  # a missing or broken model is the infrastructure's fault
            return [self._infra(f"cannot load reward model {self.model_path!r}: {exc}")] * len(
                samples
            )
        verdicts: list[Verdict | None] = [None] * len(samples)
        todo = []
        for i, sample in enumerate(samples):
            size = (
                len(sample.completion_text)
                if self.mode == "outcome"
                else sum(len(s) for s in sample_steps(sample, model.spec.step_separator))
            )
            if size > self.max_chars:
                verdicts[i] = Verdict.failed(
                    self.name,
                    self.version,
                    Failure.INPUT_TOO_LARGE,
                    evidence={"length": size, "limit": self.max_chars},
                    feedback=f"completion has {size} characters; the limit is {self.max_chars}",
                )
            else:
                todo.append(i)
        try:
            scored = self._score(model, [samples[i] for i in todo])
        except Exception as exc:
            scored = [None] * len(todo)
            message = f"reward model failed: {type(exc).__name__}: {exc}"
            for i in todo:
                verdicts[i] = self._infra(message)
        per_sample = (time.perf_counter() - start) / max(len(samples), 1)
        for i, result in zip(todo, scored, strict=True):
            if result is not None:
                verdicts[i] = self._verdict(result, model)
        return [v.with_elapsed(per_sample) for v in verdicts if v is not None]

    def _score(self, model: RewardModel, samples: list[Sample]) -> list[Scored]:
        if not samples:
            return []
        if self.mode == "outcome":
            pairs = [(prompt_text(s), s.completion_text) for s in samples]
            return score_outcomes(model, pairs, self.batch_size)
        sep = model.spec.step_separator
        items = [(prompt_text(s), sample_steps(s, sep)) for s in samples]
        return score_steps(model, items, self.batch_size)

    def _verdict(self, result: Scored, model: RewardModel) -> Verdict:
        raw = result.score
        if self.mode == "process" and result.step_scores:
            raw = aggregate_steps(result.step_scores, self.step_aggregate)
        if not math.isfinite(raw):
            return self._infra(f"reward model produced a non-finite score ({raw})")
        if self.normalize:
            try:
                raw = model.normalize(raw)
            except ValueError as exc:
                return self._infra(f"{self.model_path}: {exc}")
        squashed = 1.0 / (1.0 + math.exp(-max(min((raw - self.center) / self.scale, 700), -700)))
        evidence = {
            "raw_score": raw,
            "truncated": result.truncated,
            "tokens": result.tokens,
            **({"step_scores": list(result.step_scores)} if self.mode == "process" else {}),
        }
        return Verdict.graded(self.name, self.version, squashed, evidence=evidence)

    def _infra(self, message: str) -> Verdict:
        return Verdict.errored(self.name, self.version, Failure.VERIFIER_CRASH, message[:2000])
