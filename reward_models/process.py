"""Measure a process reward model on held-out step-labelled chains, against the baselines
that a model which learned nothing would already reach.

Metrics (a step is judged right when ``σ(v) > 0.5``, its label is right when ``> 0.5``):

- **Per-step accuracy**, overall, per step position and per subset (the bundled chains:
  per error kind).
- **Baselines**: the majority label (chance for this label mix) and the **position
  prior**, the better label for each step position as measured on the training rows:
  where errors are spread over the steps, later steps are more often wrong, so "always 1
  at step 0, 0 at the last step" scores well above one half without reading anything.
- **Ranking** of a right chain against a wrong chain of the same prompt under each step
  aggregate (``min``, ``last``, ``mean``, ``product``; see `verifier.aggregate_steps`):
  the fraction of such pairs where the right one scores higher (ties count half).
- **First error found**: in wrong chains, how often the first step judged wrong is the
  first wrong one (localisation, not just detection).
- **Collapse**: the spread of all step scores; a model that gives every step the same score
  (e.g. σ = 0.5 after a learning-rate blow-up) is flagged ``collapsed``, whatever its
  accuracy says.

    >>> report = evaluate_steps(prm, test_rows, prior_rows=train_rows)  # doctest: +SKIP
    >>> report.step_accuracy, report.position_prior_accuracy  # doctest: +SKIP
    (0.96, 0.68)
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import torch

from rewardsmith.reward_models.data import StepExample
from rewardsmith.reward_models.model import RewardModel
from rewardsmith.reward_models.scoring import score_steps
from rewardsmith.reward_models.verifier import aggregate_steps

__all__ = ["AGGREGATES", "StepReport", "evaluate_steps", "position_prior", "step_report"]

AGGREGATES = ("min", "last", "mean", "product")
COLLAPSE_SPREAD = 1e-3
"""Step scores spread less than this (std of raw values) mean a collapsed model."""


@dataclass(frozen=True)
class StepReport:
    chains: int
    steps: int
    step_accuracy: float
    majority_accuracy: float
    position_prior_accuracy: float
    by_position: dict[int, float]
    by_subset: dict[str, float]
    ranking: dict[str, float]
    """Per aggregate: right chain above a wrong chain of the same prompt (ties half)."""
    ranked_pairs: int
    first_error_found: float
    score_spread: float
    collapsed: bool
    truncated: int = 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def position_prior(rows: Iterable[StepExample]) -> dict[int, float]:
    """The better label (1.0 or 0.0) for each step position, by majority over `rows`."""
    counts: dict[int, list[float]] = defaultdict(list)
    for row in rows:
        for j, label in enumerate(row.labels):
            counts[j].append(float(label > 0.5))
    return {j: float(sum(v) / len(v) >= 0.5) for j, v in counts.items()}


def evaluate_steps(
    model: RewardModel,
    rows: Sequence[StepExample],
    *,
    prior_rows: Sequence[StepExample] | None = None,
    batch_size: int = 32,
) -> StepReport:
    """Score every chain in one sorted, batched pass and report (see the module docstring).
    The position prior is fitted on `prior_rows` (the training rows), else on `rows`."""
    scored = score_steps(model, [(r.prompt, list(r.steps)) for r in rows], batch_size)
    values = [list(s.step_scores) for s in scored]
    report = step_report(rows, values, position_prior(prior_rows or rows))
    truncated = sum(s.truncated for s in scored)
    return StepReport(**{**asdict(report), "truncated": truncated})


def step_report(
    rows: Sequence[StepExample], values: Sequence[Sequence[float]], prior: dict[int, float]
) -> StepReport:
    """Every metric of the module docstring from per-step raw scores (one list per row; a
    list shorter than the row's steps lost its first steps to truncation)."""
    right, total = 0, 0
    majority_hits = prior_hits = 0
    by_position: dict[int, list[float]] = defaultdict(list)
    by_subset: dict[str, list[float]] = defaultdict(list)
    labels_all = [float(y > 0.5) for r in rows for y in r.labels]
    majority = float(sum(labels_all) / max(len(labels_all), 1) >= 0.5)
    for row, scores in zip(rows, values, strict=True):
        offset = len(row.labels) - len(scores)  # left truncation drops the first steps
        for j, v in enumerate(scores):
            label = float(row.labels[offset + j] > 0.5)
            hit = float((v > 0) == (label > 0.5))
            right += int(hit)
            total += 1
            by_position[offset + j].append(hit)
            by_subset[row.subset].append(hit)
            majority_hits += int(majority == label)
            prior_hits += int(prior.get(offset + j, majority) == label)
    flat = torch.tensor([v for scores in values for v in scores], dtype=torch.float64)
    spread = float(flat.std(unbiased=False)) if flat.numel() > 1 else 0.0
    ranking, pairs = _ranking(rows, values)
    return StepReport(
        chains=len(rows),
        steps=total,
        step_accuracy=right / total if total else float("nan"),
        majority_accuracy=majority_hits / total if total else float("nan"),
        position_prior_accuracy=prior_hits / total if total else float("nan"),
        by_position={j: sum(v) / len(v) for j, v in sorted(by_position.items())},
        by_subset={k: sum(v) / len(v) for k, v in sorted(by_subset.items())},
        ranking=ranking,
        ranked_pairs=pairs,
        first_error_found=_first_error_found(rows, values),
        score_spread=spread,
        collapsed=spread < COLLAPSE_SPREAD,
    )


def _ranking(
    rows: Sequence[StepExample], values: Sequence[Sequence[float]]
) -> tuple[dict[str, float], int]:
    chains: dict[str, dict[str, list[Sequence[float]]]] = defaultdict(lambda: defaultdict(list))
    for row, scores in zip(rows, values, strict=True):
        if scores:
            kind = "right" if all(y > 0.5 for y in row.labels) else "wrong"
            chains[row.prompt][kind].append(scores)
    wins: dict[str, list[float]] = {name: [] for name in AGGREGATES}
    for group in chains.values():
        for good in group["right"]:
            for bad in group["wrong"]:
                for name in AGGREGATES:
                    a, b = aggregate_steps(good, name), aggregate_steps(bad, name)
                    wins[name].append(1.0 if a > b else 0.5 if a == b else 0.0)
    pairs = len(wins["min"])
    return {k: sum(v) / pairs if pairs else float("nan") for k, v in wins.items()}, pairs


def _first_error_found(rows: Sequence[StepExample], values: Sequence[Sequence[float]]) -> float:
    found = []
    for row, scores in zip(rows, values, strict=True):
        offset = len(row.labels) - len(scores)
        first = next((j for j, y in enumerate(row.labels) if y <= 0.5), None)
        if first is None or first < offset or not scores:
            continue
        judged = next((j + offset for j, v in enumerate(scores) if v <= 0), None)
        found.append(float(judged == first))
    return sum(found) / len(found) if found else float("nan")
