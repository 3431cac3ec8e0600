"""Map the row shapes trainers already write onto `Sample`.

- ``native``: the keys are a subset of `Sample`'s fields; taken as named.
- ``trl``: ``prompt`` + ``completion`` and other columns. The reference comes from the
  first of ``reference``, ``ground_truth``, ``answer``, ``solution``, ``label``; the other
  columns go to ``meta``.
- ``verl``: ``data_source`` (the task), ``reward_model.ground_truth`` (the reference),
  ``extra_info`` (into ``meta``); the completion from ``response``, ``responses`` or
  ``solution_str``.
- ``openrlhf``: ``query`` (prompt + response), ``prompts``, ``labels``; the completion is
  the query without the prompt prefix, the labels are the reference.
- ``chat``: ``messages``; the turns after the last user turn are the completion. A
  multi-turn trajectory (assistant ``tool_calls``, ``tool`` results, as transformers' chat
  templates take them) is such a row.
- ``verl_dump``: veRL's own generation dump (``trainer.rollout_data_dir`` and
  ``validation_data_dir``): ``input`` (the prompt as text), ``output`` (the response),
  ``gts`` (the ground truth), ``score``, ``step`` and any extra reward columns (into
  ``meta``). It names no task: give one with ``--map task:=NAME`` or the spec's
  ``default_task``.
- ``openrlhf_dataset``: OpenRLHF's dataset keys (``--input_key input``, ``--label_key
  label``) with the response in ``output``, as OpenRLHF's batch inference writes it.

A `ColumnMap` (``--map FIELD=COLUMN``) says where fields come from when a dump has a
shape of its own; see `rewardsmith.datasets.columns`.

Rows without an `id` get ``"<file stem>:<line>"``, stable across runs, so resuming works.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from rewardsmith.datasets.columns import FIELDS, ColumnMap, ColumnProblem
from rewardsmith.verifiers.types import Sample

__all__ = ["MAPPINGS", "MappingName", "MappingProblem", "detect_mapping", "to_sample"]

MappingName = Literal[
    "auto", "native", "trl", "verl", "verl_dump", "openrlhf", "openrlhf_dataset", "chat"
]
MAPPINGS: tuple[str, ...] = (
    "auto",
    "native",
    "trl",
    "verl",
    "verl_dump",
    "openrlhf",
    "openrlhf_dataset",
    "chat",
)

_NATIVE_FIELDS = frozenset(Sample.model_fields)
_REFERENCE_COLUMNS = ("reference", "ground_truth", "answer", "solution", "label")
_VERL_COMPLETION_COLUMNS = ("response", "responses", "solution_str", "completion")


class MappingProblem(ValueError):
    """A row that does not fit its shape: names the field and the problem."""

    def __init__(self, field: str, problem: str) -> None:
        super().__init__(f"{field}: {problem}")
        self.field = field
        self.problem = problem


def detect_mapping(record: Mapping[str, Any]) -> str:
    """The shape of one row (see the module table)."""
    keys = set(record)
    if keys <= _NATIVE_FIELDS:
        return "native"
    if keys & {"data_source", "reward_model"}:
        return "verl"
    if "query" in keys or ("prompts" in keys and "labels" in keys):
        return "openrlhf"
    if {"input", "output"} <= keys:
        return "verl_dump" if keys & {"gts", "step"} else "openrlhf_dataset"
    if "messages" in keys:
        return "chat"
    if "completion" in keys:
        return "trl"
    if "ground_truth" in keys:
        return "verl"
    return "native"  # let validation name what is missing


def to_sample(
    record: Mapping[str, Any],
    default_id: str,
    mapping: str = "auto",
    columns: ColumnMap | None = None,
) -> Sample:
    """Build a validated `Sample` from one row; raises `MappingProblem` or pydantic's
    `ValidationError` (whose `loc` names the field).

    With ``columns``, the fields it maps come from their columns. If it maps the
    completion, the row's shape is not looked at: other fields come from the columns of
    their own names and the remaining columns go to ``meta``. Otherwise the row is read
    by its shape and the mapped fields replace what that gave.
    """
    if columns:
        try:
            mapped, used = columns.resolve(record)
        except ColumnProblem as exc:
            raise MappingProblem(exc.column, exc.problem) from None
        if "completion" in mapped:
            fields = _by_name({k: v for k, v in record.items() if k not in used})
        else:
            fields = _by_shape(record, mapping)
        fields.update(mapped)
    else:
        fields = _by_shape(record, mapping)
    fields.setdefault("id", default_id)
    if fields["id"] is None:
        fields["id"] = default_id
    return Sample.model_validate(fields)


def _by_shape(record: Mapping[str, Any], mapping: str) -> dict[str, Any]:
    shape = detect_mapping(record) if mapping == "auto" else mapping
    builder = _BUILDERS.get(shape)
    if builder is None:
        raise MappingProblem("mapping", f"unknown shape {shape!r}; choose one of {MAPPINGS}")
    return builder(record)


def _by_name(record: Mapping[str, Any]) -> dict[str, Any]:
    """Fields from the columns of their names; every other column into ``meta``."""
    fields = {k: record[k] for k in FIELDS if k in record}
    meta = record.get("meta")
    extra = {k: v for k, v in record.items() if k not in _NATIVE_FIELDS}
    fields["meta"] = {**meta, **extra} if isinstance(meta, Mapping) else extra
    return fields


def _native(record: Mapping[str, Any]) -> dict[str, Any]:
    return dict(record)


def _trl(record: Mapping[str, Any]) -> dict[str, Any]:
    if "completion" not in record:
        raise MappingProblem("completion", "missing (TRL rows need `prompt` and `completion`)")
    return _named_columns(
        record, "prompt", "completion", _REFERENCE_COLUMNS, ("task", "data_source")
    )


def _named_columns(
    record: Mapping[str, Any],
    prompt: str,
    completion: str,
    references: tuple[str, ...],
    tasks: tuple[str, ...],
) -> dict[str, Any]:
    """Fields from named columns (the reference and the task from the first of their
    columns the row has); every other column into ``meta``."""
    reference = next((c for c in references if c in record), None)
    task = next((c for c in tasks if c in record), None)
    used = {"id", prompt, completion, reference, task}
    return {
        "id": record.get("id"),
        "prompt": record.get(prompt, ""),
        "completion": record[completion],
        "reference": record[reference] if reference else None,
        "task": record[task] if task else None,
        "meta": {k: v for k, v in record.items() if k not in used},
    }


def _verl(record: Mapping[str, Any]) -> dict[str, Any]:
    column = next((c for c in _VERL_COMPLETION_COLUMNS if c in record), None)
    if column is None:
        raise MappingProblem(
            "response", f"missing: veRL rows need one of {_VERL_COMPLETION_COLUMNS}"
        )
    completion = record[column]
    if isinstance(completion, list) and completion and isinstance(completion[0], str):
        completion = completion[0]  # `responses` holds one string per sample
    reward_model = record.get("reward_model") or {}
    if not isinstance(reward_model, Mapping):
        raise MappingProblem("reward_model", "must be an object with `ground_truth`")
    reference = reward_model.get("ground_truth", record.get("ground_truth"))
    extra = record.get("extra_info") or {}
    meta = dict(extra) if isinstance(extra, Mapping) else {"extra_info": extra}
    if "ability" in record:
        meta["ability"] = record["ability"]
    return {
        "id": record.get("id", meta.get("index")),
        "prompt": record.get("prompt", ""),
        "completion": completion,
        "reference": reference,
        "task": record.get("data_source"),
        "meta": meta,
    }


def _openrlhf(record: Mapping[str, Any]) -> dict[str, Any]:
    query = record.get("query")
    prompt = record.get("prompts", record.get("prompt", ""))
    if query is None and "response" not in record:
        raise MappingProblem("query", "missing: OpenRLHF rows need `query` (prompt + response)")
    if query is None:
        completion = record["response"]
    elif isinstance(query, str) and isinstance(prompt, str) and query.startswith(prompt):
        completion = query[len(prompt) :]
    else:
        completion = query
    used = {"id", "query", "prompts", "prompt", "labels", "response"}
    return {
        "id": record.get("id"),
        "prompt": prompt,
        "completion": completion,
        "reference": record.get("labels"),
        "meta": {k: v for k, v in record.items() if k not in used},
    }


def _verl_dump(record: Mapping[str, Any]) -> dict[str, Any]:
    """veRL's `_dump_generations` rows: input, output, gts, score, step, extra columns."""
    if "output" not in record:
        raise MappingProblem("output", "missing: veRL generation dumps hold the response there")
    return _named_columns(record, "input", "output", ("gts",), ("data_source",))


def _openrlhf_dataset(record: Mapping[str, Any]) -> dict[str, Any]:
    """OpenRLHF's default dataset keys (``input``, ``label``, ``datasource``) and ``output``."""
    if "output" not in record:
        raise MappingProblem("output", "missing: the response goes in `output`")
    references = ("label", *_REFERENCE_COLUMNS)
    return _named_columns(record, "input", "output", references, ("task", "datasource"))


def _chat(record: Mapping[str, Any]) -> dict[str, Any]:
    messages = record.get("messages")
    if not isinstance(messages, list) or not messages:
        raise MappingProblem("messages", "must be a non-empty list of {role, content} messages")
    roles = [m.get("role") if isinstance(m, Mapping) else None for m in messages]
    last_user = max((i for i, r in enumerate(roles) if r == "user"), default=-1)
    if last_user == len(messages) - 1:
        raise MappingProblem("messages", "ends with a user turn: there is no completion to score")
    reference_column = next((c for c in _REFERENCE_COLUMNS if c in record), None)
    used = {"id", "messages", "task", reference_column}
    return {
        "id": record.get("id"),
        "prompt": messages[: last_user + 1],
        "completion": messages[last_user + 1 :],
        "reference": record.get(reference_column) if reference_column else None,
        "task": record.get("task"),
        "meta": {k: v for k, v in record.items() if k not in used},
    }


_BUILDERS = {
    "native": _native,
    "trl": _trl,
    "verl": _verl,
    "verl_dump": _verl_dump,
    "openrlhf": _openrlhf,
    "openrlhf_dataset": _openrlhf_dataset,
    "chat": _chat,
}
