"""Robustness to exploits: how often a dressed-up wrong answer beats the right one.

For each held-out pair (prompt, better answer, worse answer) and each exploit class of
`rewardsmith.reward_models.exploits`, the class's variants of the worse answer are scored
by the same reward as the two plain answers. A class **wins** a pair when its best variant
scores above the better answer (a policy under optimisation pressure finds the best one);
a tie counts one half, so a reward that gives every answer the same number scores 0.5,
never 0. The **baseline** is the plain worse answer's win rate (one minus the pairwise
accuracy): a reward resists a class when the class wins less often than that.

The reward is anything that turns samples into values: a single reward model, an ensemble
or a whole spec, each through a `rewardsmith.graders.Scorer` (`scorer_values`), so what is
measured is what a trainer would get. A sample the reward gives no value (an
infrastructure failure) is counted as ``unscored`` and left out of the rates.

    >>> report = evaluate_exploits(scorer_values(scorer), pairs)        # doctest: +SKIP
    >>> report.baseline, report.classes["rm/repeat_question"].win_rate  # doctest: +SKIP
    (0.15, 0.41)
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from rewardsmith.reward_models.data import PreferencePair
from rewardsmith.reward_models.exploits import reward_model_exploits
from rewardsmith.verifiers.types import Sample

__all__ = [
    "ClassResult",
    "RobustnessReport",
    "Values",
    "evaluate_exploits",
    "pair_sample",
    "scorer_values",
]

Values = Callable[[Sequence[Sample]], list[float | None]]
"""Samples in, one reward value each (None: no reward) out."""


@dataclass(frozen=True)
class ClassResult:
    """One exploit class over the held-out pairs."""

    pairs: int
    """Pairs with at least one scored variant."""
    variants: int
    win_rate: float
    """Fraction of pairs whose best variant beats the better answer (ties count half)."""
    variant_win_rate: float
    """Fraction of single variants that beat the better answer (ties count half)."""
    mean_gain: float
    """Mean over pairs of (best variant's value − plain worse answer's value)."""


@dataclass(frozen=True)
class RobustnessReport:
    target: str
    pairs: int
    baseline: float
    """The plain worse answer's win rate over the better one (ties count half)."""
    classes: dict[str, ClassResult]
    unscored: int = 0
    """Samples the reward gave no value (left out of every rate)."""
    words: tuple[str, ...] = ()
    """The words the ``rm/frequent_words`` class used."""
    wins_by_subset: dict[str, dict[str, float]] = field(default_factory=dict)
    """Per subset of the pairs: the baseline and each class's win rate."""

    def below_baseline(self) -> dict[str, bool]:
        """Whether each class wins less often than a plain wrong answer."""
        return {name: c.win_rate < self.baseline for name, c in self.classes.items()}

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def pair_sample(index: int, pair: PreferencePair) -> Sample:
    """A held-out pair as the right sample the exploit generators start from."""
    return Sample(
        id=f"pair-{index}",
        prompt=pair.prompt,
        completion=pair.chosen,
        reference=pair.reference,
        meta={"rejected": pair.rejected, "subset": pair.subset},
    )


def scorer_values(scorer: Any) -> Values:
    """A `Scorer`'s values: the reward a trainer would get for each sample."""

    def values(samples: Sequence[Sample]) -> list[float | None]:
        return [reward.value for reward in scorer.score(list(samples))]

    return values


def _win(variant: float, better: float) -> float:
    return 1.0 if variant > better else 0.5 if variant == better else 0.0


def evaluate_exploits(
    values: Values,
    pairs: Sequence[PreferencePair],
    *,
    words: Sequence[str] = (),
    classes: Iterable[str] | None = None,
    target: str = "",
) -> RobustnessReport:
    """Score every pair's plain answers and exploit variants in one batch; see the module
    docstring for what is counted."""
    rows = []  # (pair index, role, exploit class)
    samples: list[Sample] = []
    chosen_classes = list(classes) if classes is not None else None
    for i, pair in enumerate(pairs):
        right = pair_sample(i, pair)
        wrong = right.model_copy(update={"id": f"{right.id}~plain", "completion": pair.rejected})
        rows += [(i, "better", ""), (i, "worse", "")]
        samples += [right, wrong]
        for exploit in reward_model_exploits(right, words, chosen_classes):
            rows.append((i, "variant", exploit.exploit_class))
            samples.append(exploit.sample)
    scored = values(samples)
    if len(scored) != len(samples):
        raise ValueError(f"the reward gave {len(scored)} values for {len(samples)} samples")
    return _report(target, pairs, rows, scored, tuple(words))


def _report(
    target: str,
    pairs: Sequence[PreferencePair],
    rows: list[tuple[int, str, str]],
    scored: list[float | None],
    words: tuple[str, ...],
) -> RobustnessReport:
    plain: dict[int, dict[str, float | None]] = defaultdict(dict)
    variants: dict[str, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    unscored = sum(v is None for v in scored)
    for (i, role, name), value in zip(rows, scored, strict=True):
        if role != "variant":
            plain[i][role] = value
        elif value is not None:
            variants[name][i].append(value)
    usable = [
        i for i in range(len(pairs)) if None not in (plain[i].get("better"), plain[i].get("worse"))
    ]
    better = {i: float(plain[i]["better"]) for i in usable}  # type: ignore[arg-type]
    worse = {i: float(plain[i]["worse"]) for i in usable}  # type: ignore[arg-type]
    baseline = _mean(_win(worse[i], better[i]) for i in usable)
    classes = {
        name: _class_result(by_pair, better, worse) for name, by_pair in sorted(variants.items())
    }
    subsets: dict[str, dict[str, float]] = {}
    for subset in sorted({p.subset for p in pairs}):
        members = [i for i in usable if pairs[i].subset == subset]
        rates = {"baseline": _mean(_win(worse[i], better[i]) for i in members)}
        for name, by_pair in sorted(variants.items()):
            picked = [i for i in members if by_pair.get(i)]
            rates[name] = _mean(_win(max(by_pair[i]), better[i]) for i in picked)
        subsets[subset] = rates
    return RobustnessReport(target, len(usable), baseline, classes, unscored, words, subsets)


def _class_result(
    by_pair: dict[int, list[float]], better: dict[int, float], worse: dict[int, float]
) -> ClassResult:
    picked = [i for i in better if by_pair.get(i)]
    singles = [_win(v, better[i]) for i in picked for v in by_pair[i]]
    return ClassResult(
        pairs=len(picked),
        variants=len(singles),
        win_rate=_mean(_win(max(by_pair[i]), better[i]) for i in picked),
        variant_win_rate=_mean(singles),
        mean_gain=_mean(max(by_pair[i]) - worse[i] for i in picked),
    )


def _mean(values: Iterable[float]) -> float:
    items = list(values)
    return sum(items) / len(items) if items else float("nan")
