"""Graders: compose verifiers into shaped rewards, from Python or a YAML spec, and run
them through an executor (inline, a process pool, or Ray).

    >>> from rewardsmith.graders import Executor, Grader, weighted
    >>> from rewardsmith.verifiers.types import Sample
    >>> grader = Grader(weighted({"correct": "exact_match"}))
    >>> with Executor("inline") as ex:
    ...     grader.score([Sample(id="1", completion="Paris", reference="paris")], ex)[0].value
    1.0

See docs/rewards.md for the reward-design guide.
"""

from rewardsmith.graders.cache import MemoryCache, SqliteCache
from rewardsmith.graders.executor import Executor, Job, JobResult
from rewardsmith.graders.grader import Grader, GraderState, default_executor
from rewardsmith.graders.nodes import chain, maximum, minimum, product, verify, weighted
from rewardsmith.graders.normalize import group_normalize, running_normalize
from rewardsmith.graders.reward import Component, Reward, batch_stats
from rewardsmith.graders.schedule import linear_schedule, piecewise_schedule
from rewardsmith.graders.shaping import (
    cosine_length,
    length_penalty,
    overlong_penalty,
    potential_shaping,
    repetition_penalty,
    shaping_terms,
)
from rewardsmith.graders.spec import SpecError, load_spec
from rewardsmith.graders.transforms import clip, gate, penalize, scale, threshold

__all__ = [
    "Component",
    "Executor",
    "Grader",
    "GraderState",
    "Job",
    "JobResult",
    "MemoryCache",
    "Reward",
    "SpecError",
    "SqliteCache",
    "batch_stats",
    "chain",
    "clip",
    "cosine_length",
    "default_executor",
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
