"""Training and evaluation rows for reward models, read from dicts, files or HF datasets.

Three row shapes, one per training objective:

- `PreferencePair` (prompt, chosen, rejected, optional margin and subset): Bradley-Terry.
- `PointwiseExample` (prompt, completion, label in [0, 1]): binary cross-entropy.
- `StepExample` (prompt, steps, a label per step): a process reward model's per-step loss.

Column names follow TRL's preference format (``prompt``/``chosen``/``rejected``); pass
``columns={"chosen": "response_a", ...}`` to map others. ``chosen`` and ``rejected`` may be
strings or chat message lists (``[{"role": ..., "content": ...}]``); a message list becomes
its assistant turns joined by blank lines. A missing ``prompt`` column means an implicit
prompt (the empty string), as in TRL.

What bad rows do (each skipped row is reported with its index and reason, never silently):

======================================  ====================================================
a required column absent from the set   `MissingColumnError` naming it and the columns there
a row missing a field, or not text      skipped: ``missing_field`` / ``not_text``
chosen identical to rejected            skipped: ``identical`` (no preference to learn)
empty (or blank) chosen                 skipped: ``empty_chosen`` (almost always a data bug)
empty rejected                          kept: saying nothing is a legitimate bad answer
non-finite margin or label              skipped: ``bad_number``
text longer than the model's context    kept; truncated from the left (see `model`)
======================================  ====================================================
"""

from __future__ import annotations

import importlib
import json
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, TypeVar

__all__ = [
    "Loaded",
    "MissingColumnError",
    "PointwiseExample",
    "PreferencePair",
    "Skipped",
    "StepExample",
    "as_text",
    "bundled_preferences",
    "bundled_steps",
    "pointwise_examples",
    "preference_pairs",
    "read_rows",
    "step_examples",
]


@dataclass(frozen=True)
class PreferencePair:
    prompt: str
    chosen: str
    rejected: str
    margin: float = 0.0
    """How much more `chosen` should score than `rejected` (the margin term of Llama 2's
    reward loss); 0 for plain Bradley-Terry."""
    subset: str = "default"
    """A group name for per-subset accuracy (RewardBench reports by subset)."""
    reference: Any = None
    """The gold answer where the set has one (a spec's rule-based verifiers read it when
    the pair is scored through a spec); training ignores it."""


@dataclass(frozen=True)
class PointwiseExample:
    prompt: str
    completion: str
    label: float
    """1 for good, 0 for bad; values in between are soft labels."""


@dataclass(frozen=True)
class StepExample:
    prompt: str
    steps: tuple[str, ...]
    labels: tuple[float, ...]
    """One label in [0, 1] per step: is this step still correct (PRM800K-style)."""
    subset: str = "default"
    """A group name for per-subset results (the bundled chains: the error kind)."""


@dataclass(frozen=True)
class Skipped:
    index: int
    reason: str


T = TypeVar("T")


@dataclass(frozen=True)
class Loaded(Generic[T]):
    """The rows that passed, and every row that did not with why."""

    rows: list[T]
    skipped: list[Skipped] = field(default_factory=list)


class MissingColumnError(ValueError):
    """A column the objective needs is not in the data."""


def read_rows(path: str | Path) -> Iterable[dict[str, Any]]:
    """Rows of a JSONL file, a Parquet file, or a dataset saved with ``save_to_disk``.

    A JSONL line that is not a JSON object is yielded as ``{"__error__": message}`` so that
    the loaders skip and report it with its index instead of stopping.
    """
    path = Path(path)
    if path.is_dir():
        # Imported by name: type checkers run from the repo root see our datasets/ folder.
        load_from_disk = importlib.import_module("datasets").load_from_disk
        yield from load_from_disk(str(path))
    elif path.suffix == ".parquet":
        import pyarrow.parquet as pq

        for batch in pq.ParquetFile(path).iter_batches(batch_size=1024):
            yield from batch.to_pylist()
    else:
        with path.open(encoding="utf-8") as lines:
            for number, line in enumerate(lines, 1):
                if line.strip():
                    yield _json_row(line, f"{path}:{number}")


def bundled_preferences(name: str = "arithmetic", split: str | None = None) -> list[dict[str, Any]]:
    """Rows of a preference set shipped in ``datasets/preferences/`` (see its README card),
    optionally only one ``split`` (``train`` or ``test``)."""
    import rewardsmith.datasets.preferences as bundled  # a namespace package: no resources API

    return _bundled(bundled.__path__, name, split)


def bundled_steps(
    name: str = "arithmetic_chains", split: str | None = None
) -> list[dict[str, Any]]:
    """Rows of a step-labelled set shipped in ``datasets/steps/`` (see its README card),
    for `step_examples`; optionally only one ``split``."""
    import rewardsmith.datasets.steps as bundled

    return _bundled(bundled.__path__, name, split)


def _bundled(paths: Iterable[str], name: str, split: str | None) -> list[dict[str, Any]]:
    folders = [Path(p) for p in paths if Path(p).is_dir()]
    source = next((f / f"{name}.jsonl" for f in folders if (f / f"{name}.jsonl").is_file()), None)
    if source is None:
        raise FileNotFoundError(f"no bundled set {name!r} in {[str(f) for f in folders]}")
    rows = [json.loads(line) for line in source.read_text(encoding="utf-8").splitlines() if line]
    return [r for r in rows if split is None or r.get("split") == split]


def _json_row(line: str, where: str) -> dict[str, Any]:
    try:
        row = json.loads(line)
    except json.JSONDecodeError as exc:
        return {"__error__": f"{where}: not JSON: {exc}"}
    return row if isinstance(row, dict) else {"__error__": f"{where}: not a JSON object"}


def as_text(value: Any) -> str | None:
    """A completion as text: a string as is, a message list as its assistant turns."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(m, Mapping) for m in value):
        turns = [m for m in value if m.get("role") == "assistant"] or value
        contents = [m.get("content") for m in turns]
        if all(isinstance(c, str) for c in contents):
            return "\n\n".join(c for c in contents if isinstance(c, str))
    return None


def _prompt_text(value: Any) -> str | None:
    if isinstance(value, list) and all(isinstance(m, Mapping) for m in value):
        contents = [m.get("content") for m in value]
        return "\n\n".join(c for c in contents if isinstance(c, str))
    return value if isinstance(value, str) else None


def _check_columns(rows: Any, required: list[str], columns: Mapping[str, str]) -> Any:
    """Raise `MissingColumnError` when the data lacks a required column; return the rows
    as an iterable that still yields the first row."""
    names = getattr(rows, "column_names", None)
    if names is None:
        rows = list(rows) if not isinstance(rows, list) else rows
        names = list(rows[0]) if rows and isinstance(rows[0], Mapping) else []
    for want in required:
        if columns.get(want, want) not in names:
            raise MissingColumnError(
                f"column {columns.get(want, want)!r} (for {want!r}) is missing; the data has "
                f"{sorted(names)}. Map yours with columns={{{want!r}: 'your_column'}}"
            )
    return rows


def preference_pairs(
    rows: Iterable[Mapping[str, Any]], columns: Mapping[str, str] | None = None
) -> Loaded[PreferencePair]:
    """Validate preference rows into `PreferencePair`s; see the module table for bad rows."""
    col = dict(columns or {})
    rows = _check_columns(rows, ["chosen", "rejected"], col)
    kept: list[PreferencePair] = []
    skipped: list[Skipped] = []
    for index, row in enumerate(rows):
        pair_or_reason = _pair(row, col)
        if isinstance(pair_or_reason, str):
            skipped.append(Skipped(index, pair_or_reason))
        else:
            kept.append(pair_or_reason)
    return Loaded(kept, skipped)


def _pair(row: Mapping[str, Any], col: Mapping[str, str]) -> PreferencePair | str:
    if "__error__" in row:
        return f"unreadable: {row['__error__']}"
    keys = ("prompt", "chosen", "rejected", "margin", "subset", "reference")
    name = {k: col.get(k, k) for k in keys}
    if name["chosen"] not in row or name["rejected"] not in row:
        return "missing_field"
    prompt = _prompt_text(row.get(name["prompt"], ""))
    chosen, rejected = as_text(row[name["chosen"]]), as_text(row[name["rejected"]])
    if prompt is None or chosen is None or rejected is None:
        return "not_text"
    if not chosen.strip():
        return "empty_chosen"
    if chosen == rejected:
        return "identical"
    margin = row.get(name["margin"], 0.0)
    if margin is None:
        margin = 0.0
    if isinstance(margin, bool) or not isinstance(margin, int | float) or not math.isfinite(margin):
        return "bad_number"
    subset = row.get(name["subset"]) or "default"
    reference = row.get(name["reference"])
    return PreferencePair(prompt, chosen, rejected, float(margin), str(subset), reference)


def pointwise_examples(
    rows: Iterable[Mapping[str, Any]], columns: Mapping[str, str] | None = None
) -> Loaded[PointwiseExample]:
    """Rows with ``prompt``, ``completion`` and ``label`` (a bool or a number in [0, 1])."""
    col = dict(columns or {})
    rows = _check_columns(rows, ["completion", "label"], col)
    kept: list[PointwiseExample] = []
    skipped: list[Skipped] = []
    for index, row in enumerate(rows):
        prompt = _prompt_text(row.get(col.get("prompt", "prompt"), ""))
        text = as_text(row.get(col.get("completion", "completion")))
        label = _label(row.get(col.get("label", "label")))
        if prompt is None or text is None:
            skipped.append(Skipped(index, "not_text"))
        elif label is None:
            skipped.append(Skipped(index, "bad_number"))
        else:
            kept.append(PointwiseExample(prompt, text, label))
    return Loaded(kept, skipped)


def step_examples(
    rows: Iterable[Mapping[str, Any]], columns: Mapping[str, str] | None = None
) -> Loaded[StepExample]:
    """Rows with ``prompt``, ``steps`` (a list of strings) and ``labels`` (one per step)."""
    col = dict(columns or {})
    rows = _check_columns(rows, ["steps", "labels"], col)
    kept: list[StepExample] = []
    skipped: list[Skipped] = []
    for index, row in enumerate(rows):
        prompt = _prompt_text(row.get(col.get("prompt", "prompt"), ""))
        steps = row.get(col.get("steps", "steps"))
        labels = [_label(x) for x in row.get(col.get("labels", "labels")) or []]
        if (
            prompt is None
            or not isinstance(steps, list)
            or not all(isinstance(s, str) for s in steps)
        ):
            skipped.append(Skipped(index, "not_text"))
        elif not steps or len(labels) != len(steps) or any(x is None for x in labels):
            skipped.append(Skipped(index, "labels_do_not_match_steps"))
        else:
            clean = tuple(float(x) for x in labels if x is not None)
            subset = str(row.get(col.get("subset", "subset")) or "default")
            kept.append(StepExample(prompt, tuple(steps), clean, subset))
    return Loaded(kept, skipped)


def _label(value: Any) -> float | None:
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, int | float) and math.isfinite(value) and 0.0 <= value <= 1.0:
        return float(value)
    return None
