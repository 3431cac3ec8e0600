"""The pydantic models of each reward-spec block's arguments (see `spec`).

Field names are the Python functions' parameter names, so a spec reads like the code.
`extra="forbid"` turns a misspelt key into an error that `spec` names with its line.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from rewardsmith.graders import normalize, shaping


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


Weight = Any  # a number or a schedule mapping: checked by _Builder.weight, which says how


class _Top(_Args):
    grader: Any
    definitions: dict[str, Any] = {}
    on_infra_failure: Literal["drop", "fallback"] = "drop"
    fallback: float | None = None
    version: Literal[1] = 1


class _WeightedArgs(_Args):
    components: dict[str, Any]
    weights: dict[str, Weight] = {}
    renormalize: bool = True


class _GateArgs(_Args):
    on: str
    threshold: float | None = None
    otherwise: float = 0.0


class _ThresholdArgs(_Args):
    at: float
    above: float = 1.0
    below: float = 0.0


class _ClipArgs(_Args):
    low: float
    high: float


class _ScaleArgs(_Args):
    factor: Weight


class _PenalizeArgs(_Args):
    on: str
    amount: Weight = 1.0


class _LengthArgs(_Args):
    free: int
    limit: int
    coef: float = 1.0
    unit: shaping.Unit = "chars"


class _CosineArgs(_Args):
    max_length: int
    correct: tuple[float, float] = (1.0, 0.5)
    wrong: tuple[float, float] = (-1.0, -0.5)
    exceed: float = -1.0
    correct_at: float = 1.0
    unit: shaping.Unit = "chars"


class _OverlongArgs(_Args):
    max_length: int
    buffer: int
    coef: float = 1.0
    unit: shaping.Unit = "tokens"


class _RepetitionArgs(_Args):
    ngram: int = 3
    coef: float = 1.0


class _GroupArgs(_Args):
    by: str = "prompt"
    scale: normalize.ScaleKind = "mean_std"
    eps: float = 1e-6


class _RunningArgs(_Args):
    window: int = 1024
    scale: normalize.ScaleKind = "mean_std"
    eps: float = 1e-6


class _ShapingArgs(_Args):
    gamma: float = 1.0
    potential: str = "potential"


class _LinearArgs(_Args):
    start: float
    end: float
    steps: int
    begin: int = 0
