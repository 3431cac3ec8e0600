"""An ensemble of outcome reward models: members on one scale, a pessimistic reward, and
their disagreement as an uncertainty a grader can use.

**Normalised members** (``normalize``, the default). Bradley-Terry fixes only differences
of scores, so two models trained apart sit at different offsets and spreads (on the bundled
set, one seed's wrong answers averaged −0.05, another's −0.98), and a ``min`` over raw
scores mostly picks the member with the lower offset. Each member's raw score ``r_i`` is
therefore read as ``z_i = (r_i − μ_i) / σ_i``, with the mean and spread of that member's
scores on its own training data, measured when its checkpoint was written (as OpenRLHF's
``normalize_reward`` does).

**Reductions** over ``z_1 … z_k`` (or the raw scores with ``normalize=False``):

- ``mean``: ``(1/k) Σ z_i``;
- ``min``: ``min_i z_i`` (worst-case optimisation, Coste et al. 2023, "Reward Model
  Ensembles Help Mitigate Overoptimization");
- ``mean_minus_std``: ``mean − λ · std`` with ``λ = std_coef`` (their uncertainty-weighted
  optimisation), where ``std = sqrt((1/k) Σ (z_i − mean)²)``.

The verdict's score is ``σ(reduced)``; ``evidence["disagreement"]`` is ``std`` (in
normalised units), so a grader can penalise, gate on or log it with the ``evidence`` block
(`rewardsmith.graders.evidence_block`): ``{evidence: {on: rm, name: disagreement}}``.

    >>> reduce_scores(torch.tensor([[1.0, 3.0], [3.0, 3.0]]), "mean_minus_std", 1.0).tolist()
    [1.0, 3.0]
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import ClassVar, Literal

import torch

from rewardsmith.reward_models.exploits import reward_model_exploits
from rewardsmith.reward_models.scoring import score_outcomes
from rewardsmith.reward_models.verifier import load_cached, prompt_text
from rewardsmith.verifiers.exploits import Exploit
from rewardsmith.verifiers.protocol import Cost
from rewardsmith.verifiers.types import Failure, Sample, Verdict

__all__ = ["EnsembleVerifier", "Reduce", "combine", "reduce_scores"]

Reduce = Literal["mean", "min", "mean_minus_std"]


def combine(scores: torch.Tensor) -> dict[str, torch.Tensor]:
    """Mean, min and population std over members. Shape (k members, n samples) -> (n,)."""
    return {
        "mean": scores.mean(dim=0),
        "min": scores.min(dim=0).values,
        "std": scores.std(dim=0, unbiased=False),
    }


def reduce_scores(scores: torch.Tensor, reduce: Reduce, std_coef: float = 1.0) -> torch.Tensor:
    """One reward per sample from member scores of shape (k, n); see the module docstring."""
    stats = combine(scores)
    if reduce == "mean_minus_std":
        return stats["mean"] - std_coef * stats["std"]
    return stats[reduce]


@dataclass(frozen=True)
class EnsembleVerifier:
    """Score with every member model and reduce; see the module docstring."""

    name: ClassVar[str] = "reward_model_ensemble"
    version: ClassVar[str] = "2"
    cost: ClassVar[Cost] = Cost.GPU

    model_paths: tuple[str, ...]
    reduce: Reduce = "mean"
    std_coef: float = 1.0
    """λ of ``mean_minus_std``."""
    normalize: bool = True
    """Read each member's score in units of its training scores' spread (needs the
    statistics every rewardsmith checkpoint records)."""
    batch_size: int = 32
    max_chars: int = 100_000
    device: str = "cpu"

    def __post_init__(self) -> None:
        if len(self.model_paths) < 2:
            raise ValueError("an ensemble needs at least two model_paths")
        object.__setattr__(self, "model_paths", tuple(self.model_paths))
        if self.reduce not in ("mean", "min", "mean_minus_std"):
            raise ValueError(f"reduce is 'mean', 'min' or 'mean_minus_std', not {self.reduce!r}")
        if not (math.isfinite(self.std_coef) and self.std_coef >= 0):
            raise ValueError(f"std_coef must be a number >= 0, got {self.std_coef}")

    def __call__(self, sample: Sample) -> Verdict:
        return self.batch([sample])[0]

    def exploits(self, sample: Sample) -> Iterator[Exploit]:
        """Wrong answers dressed up (see `rewardsmith.reward_models.exploits`)."""
        yield from reward_model_exploits(sample)

    def batch(self, samples: Sequence[Sample]) -> list[Verdict]:
        start = time.perf_counter()
        too_long = [len(s.completion_text) > self.max_chars for s in samples]
        pairs = [
            (prompt_text(s), s.completion_text)
            for s, big in zip(samples, too_long, strict=True)
            if not big
        ]
        try:
            raw = [self._member_scores(path, pairs) for path in self.model_paths]
            members = [
                self._scaled(path, scores)
                for path, scores in zip(self.model_paths, raw, strict=True)
            ]
        except Exception as exc:  # a broken member is the infrastructure's fault
            message = f"ensemble member failed: {type(exc).__name__}: {exc}"[:2000]
            failed = Verdict.errored(self.name, self.version, Failure.VERIFIER_CRASH, message)
            return [failed] * len(samples)
        scores = torch.tensor(members, dtype=torch.float64)
        stats = combine(scores) if pairs else {}
        reduced = reduce_scores(scores, self.reduce, self.std_coef) if pairs else None
        out, j = [], 0
        for big, sample in zip(too_long, samples, strict=True):
            if big:
                out.append(self._too_large(len(sample.completion_text)))
                continue
            assert reduced is not None
            per_member = {k: float(v[j]) for k, v in stats.items()}
            out.append(
                self._verdict(
                    [m[j] for m in raw], [m[j] for m in members], per_member, float(reduced[j])
                )
            )
            j += 1
        per_sample = (time.perf_counter() - start) / max(len(samples), 1)
        return [v.with_elapsed(per_sample) for v in out]

    def _member_scores(self, path: str, pairs: list[tuple[str, str]]) -> list[float]:
        model = load_cached(path, self.device)
        return [s.score for s in score_outcomes(model, pairs, self.batch_size)]

    def _scaled(self, path: str, scores: list[float]) -> list[float]:
        if not self.normalize:
            return scores
        model = load_cached(path, self.device)
        try:
            return [model.normalize(s) for s in scores]
        except ValueError as exc:
            raise ValueError(f"{path}: {exc} (or set normalize: false)") from None

    def _too_large(self, length: int) -> Verdict:
        return Verdict.failed(
            self.name,
            self.version,
            Failure.INPUT_TOO_LARGE,
            evidence={"length": length, "limit": self.max_chars},
            feedback=f"completion has {length} characters; the limit is {self.max_chars}",
        )

    def _verdict(
        self, raw: list[float], members: list[float], stats: dict[str, float], reduced: float
    ) -> Verdict:
        if not math.isfinite(reduced):
            return Verdict.errored(
                self.name,
                self.version,
                Failure.VERIFIER_CRASH,
                f"non-finite ensemble score {reduced}",
            )
        squashed = 1.0 / (1.0 + math.exp(-max(min(reduced, 700.0), -700.0)))
        evidence = {
            "raw_score": reduced,
            "member_scores": raw,
            **({"member_normalized": members} if self.normalize else {}),
            **stats,
            "disagreement": stats["std"],
        }
        return Verdict.graded(self.name, self.version, squashed, evidence=evidence)
