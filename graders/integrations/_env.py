"""The Scorer a file-based adapter uses (veRL's ``compute_score``, OpenRLHF's
``reward_func``): one per process, built on first use from the environment, safely when
the first calls come from many threads at once (veRL's thread pool, OpenRLHF's
``asyncio.to_thread``): exactly one Scorer and one executor, never one per call.

- ``REWARDSMITH_SPEC``: the reward (a YAML path or text; required).
- ``REWARDSMITH_BACKEND``: pool (default), ray or inline; ``REWARDSMITH_WORKERS``: workers.
- ``REWARDSMITH_TIMEOUT``: seconds per verifier call (default 60).
- ``REWARDSMITH_TASK``: the task of samples that arrive without one (OpenRLHF).
"""

from __future__ import annotations

import os
import threading
from typing import Any

from rewardsmith.graders.scorer import Scorer

__all__ = ["BACKEND_ENV", "SPEC_ENV", "TASK_ENV", "shared_scorer", "task_from_env"]

SPEC_ENV = "REWARDSMITH_SPEC"
BACKEND_ENV = "REWARDSMITH_BACKEND"
WORKERS_ENV = "REWARDSMITH_WORKERS"
TIMEOUT_ENV = "REWARDSMITH_TIMEOUT"
TASK_ENV = "REWARDSMITH_TASK"

_shared: dict[str, Scorer] = {}
_lock = threading.Lock()


def shared_scorer() -> Scorer:
    """This process's Scorer for the reward named by ``REWARDSMITH_SPEC``."""
    with _lock:
        spec = os.environ.get(SPEC_ENV)
        if not spec:
            raise RuntimeError(f"set {SPEC_ENV} to a reward spec (a YAML path or text)")
        scorer = _shared.get(spec)
        if scorer is None:
            scorer = _shared[spec] = Scorer(spec, **_settings())
        return scorer


def _settings() -> dict[str, Any]:
    settings: dict[str, Any] = {"backend": os.environ.get(BACKEND_ENV, "pool")}
    if os.environ.get(WORKERS_ENV):
        settings["workers"] = int(os.environ[WORKERS_ENV])
    if os.environ.get(TIMEOUT_ENV):
        settings["timeout_s"] = float(os.environ[TIMEOUT_ENV])
    return settings


def task_from_env() -> str | None:
    return os.environ.get(TASK_ENV) or None
