"""Graders: compose verifiers into shaped rewards, from Python or a YAML spec, and score
them with a `Scorer` (the grader, its executor, its state) on an executor (inline, a
process pool, or Ray).

    >>> from rewardsmith.graders import Scorer, build
    >>> from rewardsmith.verifiers.types import Sample
    >>> with Scorer(build(["exact_match"]), backend="inline") as scorer:
    ...     scorer.score([Sample(id="1", completion="Paris", reference="paris")])[0].value
    1.0

See docs/rewards.md for the reward-design guide.
"""

from rewardsmith.graders.build import build
from rewardsmith.graders.cache import MemoryCache, SqliteCache
from rewardsmith.graders.evidence_block import evidence
from rewardsmith.graders.executor import Executor, Job, JobResult
from rewardsmith.graders.fingerprint import Fingerprint
from rewardsmith.graders.grader import Grader, GraderState, default_executor
from rewardsmith.graders.nodes import chain, maximum, minimum, product, verify, weighted
from rewardsmith.graders.normalize import group_normalize, running_normalize
from rewardsmith.graders.reward import Component, Reward
from rewardsmith.graders.schedule import linear_schedule, piecewise_schedule
from rewardsmith.graders.scorer import (
    DataError,
    InfraFailureError,
    NoRewardError,
    NotApplicableError,
    Scorer,
    ScorerSettings,
)
from rewardsmith.graders.shaping import (
    cosine_length,
    length_penalty,
    overlong_penalty,
    potential_shaping,
    repetition_penalty,
    shaping_terms,
)
from rewardsmith.graders.spec import SpecError, load_spec
from rewardsmith.graders.stats import Stats, batch_stats
from rewardsmith.graders.transforms import clip, gate, penalize, scale, threshold

__all__ = [
    "Component",
    "DataError",
    "Executor",
    "Fingerprint",
    "Grader",
    "GraderState",
    "InfraFailureError",
    "Job",
    "JobResult",
    "MemoryCache",
    "NoRewardError",
    "NotApplicableError",
    "Reward",
    "Scorer",
    "ScorerSettings",
    "SpecError",
    "SqliteCache",
    "Stats",
    "batch_stats",
    "build",
    "chain",
    "clip",
    "cosine_length",
    "default_executor",
    "evidence",
    "gate",
    "group_normalize",
    "length_penalty",
    "linear_schedule",
    "load_spec",
    "maximum",
    "minimum",
    "overlong_penalty",
    "penalize",
    "piecewise_schedule",
    "potential_shaping",
    "product",
    "repetition_penalty",
    "running_normalize",
    "scale",
    "shaping_terms",
    "threshold",
    "verify",
    "weighted",
]
