"""Normalisation transforms: over a group of samples for one prompt, or a running window.

`group_normalize` is GRPO's group-relative advantage (Shao et al. 2024, "DeepSeekMath",
arXiv:2402.03300, section 4.1.2): for the G completions of one prompt,
``A_i = r_i - mean(r)`` (``scale="mean"``, as in Dr. GRPO, Liu et al. 2025,
arXiv:2503.20783) or ``A_i = (r_i - mean(r)) / (std(r) + eps)`` (``scale="mean_std"``).
Standard deviations here are population ones (ddof=0); a group of one gets 0.

`running_normalize` uses the last ``window`` values seen, kept as explicit state (see
`Grader.score_with_state`): ``(r - mean_w) / (std_w + eps)``.

Samples whose value is None (not applicable, or an infrastructure failure) take no part
in the statistics and stay None.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from dataclasses import dataclass
from typing import ClassVar, Literal

from rewardsmith.graders.nodes import Context, Node, Values
from rewardsmith.graders.reward import Component
from rewardsmith.verifiers.types import Sample

__all__ = ["GroupNormalize", "RunningNormalize", "group_normalize", "running_normalize"]

ScaleKind = Literal["mean", "mean_std"]


def _mean_std(xs: list[float]) -> tuple[float, float]:
    mean = math.fsum(xs) / len(xs)
    return mean, math.sqrt(math.fsum((x - mean) ** 2 for x in xs) / len(xs))


def _normalise(v: float, mean: float, std: float, scale: ScaleKind, eps: float) -> float:
    return v - mean if scale == "mean" else (v - mean) / (std + eps)


def group_key(sample: Sample, by: str) -> str:
    """The group a sample belongs to: its prompt, or ``meta[<name>]`` for ``by="meta.<name>"``."""
    if by == "prompt":
        prompt = sample.prompt
        return prompt if isinstance(prompt, str) else json.dumps([m.model_dump() for m in prompt])
    name = by.removeprefix("meta.")
    return json.dumps(sample.meta.get(name), sort_keys=True, default=str)


@dataclass(frozen=True)
class GroupNormalize:
    """GRPO-style normalisation within each group (see the module docstring)."""

    source: ClassVar[bool] = False
    by: str = "prompt"
    scale: ScaleKind = "mean_std"
    eps: float = 1e-6

    def __post_init__(self) -> None:
        if self.by != "prompt" and not self.by.startswith("meta."):
            raise ValueError(f"group by 'prompt' or 'meta.<key>', got {self.by!r}")
        if self.scale not in ("mean", "mean_std"):
            raise ValueError(f"scale must be 'mean' or 'mean_std', got {self.scale!r}")

    def children(self) -> tuple[Node, ...]:
        return ()

    def apply(self, values: Values | None, ctx: Context) -> Values:
        assert values is not None
        groups: dict[str, list[int]] = defaultdict(list)
        for i, v in enumerate(values):
            if v is not None:
                groups[group_key(ctx.samples[i], self.by)].append(i)
        out: Values = list(values)
        for members in groups.values():
            mean, std = _mean_std([v for i in members if (v := values[i]) is not None])
            for i in members:
                v = values[i]
                assert v is not None
                out[i] = _normalise(v, mean, std, self.scale, self.eps)
                ctx.record(i, "group_mean", Component(mean, 1.0, mean))
        return out


def group_normalize(
    by: str = "prompt", scale: ScaleKind = "mean_std", eps: float = 1e-6
) -> GroupNormalize:
    return GroupNormalize(by, scale, float(eps))


@dataclass(frozen=True)
class RunningNormalize:
    """Normalise by the statistics of the last ``window`` values (current batch included).

    Its state is a tuple of recent values, read from and written to the grader state under
    this block's path; without state (plain `Grader.score`) the window is this batch only.
    """

    source: ClassVar[bool] = False
    window: int = 1024
    scale: ScaleKind = "mean_std"
    eps: float = 1e-6

    def __post_init__(self) -> None:
        if self.window < 2:
            raise ValueError(f"running window must hold at least 2 values, got {self.window}")

    def children(self) -> tuple[Node, ...]:
        return ()

    def apply(self, values: Values | None, ctx: Context) -> Values:
        assert values is not None
        previous = tuple(ctx.state_in.get(ctx.path, ()))
        current = [v for v in values if v is not None]
        history = (previous + tuple(current))[-self.window :]
        ctx.state_out[ctx.path] = history
        if not history:
            return list(values)
        mean, std = _mean_std(list(history))
        return [
            None if v is None else _normalise(v, mean, std, self.scale, self.eps) for v in values
        ]


def running_normalize(
    window: int = 1024, scale: ScaleKind = "mean_std", eps: float = 1e-6
) -> RunningNormalize:
    return RunningNormalize(int(window), scale, float(eps))
