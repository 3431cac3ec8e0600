"""OpenRLHF's reward function file and ``/get_reward`` contract, backed by a `Scorer`.

Run OpenRLHF with ``--remote_rm_url <site-packages>/rewardsmith/graders/integrations/openrlhf.py``
and ``REWARDSMITH_SPEC=/path/to/reward.yaml``, or run ``rewardsmith serve`` and point it at
``http://host:port/get_reward``. OpenRLHF calls ``reward_func(queries, prompts, labels)``
(0.11 does so from ``asyncio.to_thread``, one sample per call: concurrent calls are run
together on the one Scorer), where each query is the prompt followed by the response; it
reads ``rewards`` for the advantage, ``scores`` for dynamic filtering and logs
``extra_logs``.

**Tasks.** OpenRLHF sends no task. A sample's task is, in order: the ``task`` of its label
when the label is an object ``{"task": ..., "reference": ...}`` (or that object as JSON
text, as a dataset column often holds it; ``reference`` may also be ``label`` or
``answer``); else the door's default (``REWARDSMITH_TASK`` for the file, ``serve --task``
for the server); else the spec's ``default_task``.

``extra_logs`` has one entry per leaf of the grader, the same for every sample (NaN, or
null over HTTP, where a leaf does not apply), plus ``infra_failure`` (1 or 0). The file
form needs a number for every sample, so a sample with no reward raises the
`NoRewardError` that says why (state a fallback in the spec to train through
infrastructure failures); over HTTP it is ``null`` and counted.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any

from rewardsmith.datasets.mapping import to_sample
from rewardsmith.graders.integrations._env import shared_scorer, task_from_env
from rewardsmith.graders.reward import Reward
from rewardsmith.verifiers.types import Sample

__all__ = ["openrlhf_reply", "openrlhf_samples", "reward_func"]

_REFERENCE_KEYS = ("reference", "label", "answer", "ground_truth")


def openrlhf_samples(body: Any, task: str | None = None) -> list[Sample]:
    """Samples from ``{"query": [...], "prompts": [...], "labels": [...]}``; a
    ``ValueError`` names what is wrong."""
    if not isinstance(body, Mapping) or not isinstance(body.get("query"), list):
        raise ValueError('expected {"query": [...], "prompts": [...], "labels": [...]}')
    queries = body["query"]
    n = len(queries)
    columns = {"prompts": body.get("prompts", [""] * n), "labels": body.get("labels", [None] * n)}
    for name, column in columns.items():
        if not isinstance(column, list) or len(column) != n:
            raise ValueError(f"{name} must be a list as long as query ({n})")
    samples = []
    for i in range(n):
        routed, reference = _routed(columns["labels"][i])
        record = {"query": queries[i], "prompts": columns["prompts"][i], "labels": reference}
        try:
            sample = to_sample(record, default_id=str(i), mapping="openrlhf")
        except ValueError as exc:  # MappingProblem and pydantic's ValidationError
            raise ValueError(f"item {i}: {exc}") from None
        samples.append(sample.model_copy(update={"task": routed or task}))
    return samples


def _routed(label: Any) -> tuple[str | None, Any]:
    """(task, reference) from a label: an object with a ``task``, or its JSON text."""
    data = label
    if isinstance(label, str) and label.lstrip().startswith("{"):
        try:
            data = json.loads(label)
        except ValueError:
            return None, label
    if isinstance(data, Mapping) and isinstance(data.get("task"), str):
        key = next((k for k in _REFERENCE_KEYS if k in data), None)
        return data["task"], data[key] if key else None
    return None, label


def _leaf_scores(rewards: list[Reward]) -> dict[str, list[float | None]]:
    keys = sorted({key for r in rewards for key in r.verdicts})
    return {
        key: [r.verdicts[key].score if key in r.verdicts else None for r in rewards] for key in keys
    }


def openrlhf_reply(rewards: list[Reward]) -> dict[str, Any]:
    """The JSON reply of ``/get_reward``: no reward is ``null`` (counted in
    ``extra_logs.infra_failure`` when the infrastructure caused it)."""
    values = [r.value for r in rewards]
    extra_logs: dict[str, list[float | None]] = _leaf_scores(rewards)
    extra_logs["infra_failure"] = [1.0 if r.failed else 0.0 for r in rewards]
    return {"rewards": values, "scores": values, "extra_logs": extra_logs}


def reward_func(
    queries: list[str], prompts: list[str], labels: list[Any], **_: Any
) -> dict[str, Any]:
    """OpenRLHF's remote reward function (tensors, a number for every sample)."""
    import torch

    scorer = shared_scorer()
    samples = openrlhf_samples(
        {"query": queries, "prompts": prompts, "labels": labels}, task=task_from_env()
    )
    rewards = scorer.score(samples)
    values = torch.tensor([scorer.require_value(r) for r in rewards], dtype=torch.float32)
    extra_logs = {
        key: torch.tensor([math.nan if v is None else v for v in column], dtype=torch.float32)
        for key, column in _leaf_scores(rewards).items()
    }
    extra_logs["infra_failure"] = torch.tensor([float(r.failed) for r in rewards])
    return {"rewards": values, "scores": values, "extra_logs": extra_logs}
