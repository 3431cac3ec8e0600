"""An ensemble of outcome reward models: mean or min reward, disagreement as uncertainty.

For member rewards ``r_1 … r_k`` of one completion the ensemble reports
``mean = (1/k) Σ r_i``, ``min = min_i r_i`` (a pessimistic reward that is harder to
over-optimise; Coste et al., 2024, "Reward Model Ensembles Help Mitigate Overoptimization")
and the disagreement ``std = sqrt((1/k) Σ (r_i − mean)²)``, a cheap uncertainty signal: a
policy drifting where the members disagree is exploiting their errors.

    >>> combine(torch.tensor([[1.0, 3.0], [2.0, 2.0]]))["std"].tolist()
    [0.5, 0.5]
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import ClassVar, Literal

import torch

from rewardsmith.reward_models.scoring import score_outcomes
from rewardsmith.reward_models.verifier import load_cached, prompt_text
from rewardsmith.verifiers.protocol import Cost
from rewardsmith.verifiers.types import Failure, Sample, Verdict

__all__ = ["EnsembleVerifier", "combine"]


def combine(scores: torch.Tensor) -> dict[str, torch.Tensor]:
    """Mean, min and population std over members. Shape (k members, n samples) -> (n,)."""
    return {
        "mean": scores.mean(dim=0),
        "min": scores.min(dim=0).values,
        "std": scores.std(dim=0, unbiased=False),
    }


@dataclass(frozen=True)
class EnsembleVerifier:
    """Score with every member model; the verdict is σ of the mean or min raw reward."""

    name: ClassVar[str] = "reward_model_ensemble"
    version: ClassVar[str] = "1"
    cost: ClassVar[Cost] = Cost.GPU

    model_paths: tuple[str, ...]
    reduce: Literal["mean", "min"] = "mean"
    batch_size: int = 32
    max_chars: int = 100_000
    device: str = "cpu"

    def __post_init__(self) -> None:
        if len(self.model_paths) < 2:
            raise ValueError("an ensemble needs at least two model_paths")
        object.__setattr__(self, "model_paths", tuple(self.model_paths))

    def __call__(self, sample: Sample) -> Verdict:
        return self.batch([sample])[0]

    def batch(self, samples: Sequence[Sample]) -> list[Verdict]:
        start = time.perf_counter()
        too_long = [len(s.completion_text) > self.max_chars for s in samples]
        pairs = [
            (prompt_text(s), s.completion_text)
            for s, big in zip(samples, too_long, strict=True)
            if not big
        ]
        try:
            members = [self._member_scores(path, pairs) for path in self.model_paths]
        except Exception as exc:  # a broken member is the infrastructure's fault
            message = f"ensemble member failed: {type(exc).__name__}: {exc}"[:2000]
            failed = Verdict.errored(self.name, self.version, Failure.VERIFIER_CRASH, message)
            return [failed] * len(samples)
        stats = combine(torch.tensor(members)) if pairs else {}
        out, j = [], 0
        for big, sample in zip(too_long, samples, strict=True):
            if big:
                out.append(
                    Verdict.failed(
                        self.name,
                        self.version,
                        Failure.INPUT_TOO_LARGE,
                        evidence={"length": len(sample.completion_text), "limit": self.max_chars},
                    )
                )
                continue
            out.append(
                self._verdict([m[j] for m in members], {k: float(v[j]) for k, v in stats.items()})
            )
            j += 1
        per_sample = (time.perf_counter() - start) / max(len(samples), 1)
        return [v.with_elapsed(per_sample) for v in out]

    def _member_scores(self, path: str, pairs: list[tuple[str, str]]) -> list[float]:
        model = load_cached(path, self.device)
        return [s.score for s in score_outcomes(model, pairs, self.batch_size)]

    def _verdict(self, members: list[float], stats: dict[str, float]) -> Verdict:
        raw = stats[self.reduce]
        if not math.isfinite(raw):
            return Verdict.errored(
                self.name, self.version, Failure.VERIFIER_CRASH, f"non-finite ensemble score {raw}"
            )
        squashed = 1.0 / (1.0 + math.exp(-max(min(raw, 700.0), -700.0)))
        evidence = {
            "raw_score": raw,
            "member_scores": members,
            **stats,
            "disagreement": stats["std"],
        }
        return Verdict.graded(self.name, self.version, squashed, evidence=evidence)
