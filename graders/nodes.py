"""The grader's building blocks: leaves that read a verifier's verdict, and combinators.

Read these the way you read optax: each block is tiny, frozen and picklable, and blocks
compose with `chain`. There are two kinds:

- a **source** makes a value per sample from verdicts (`verify`, `weighted`, `minimum`,
  `maximum`, `product`, a `chain`);
- a **transform** changes the value it is given (`gate`, `threshold`, `clip`, `scale`,
  `penalize` in `transforms`; length and repetition penalties and potential-based shaping
  in `shaping`; normalisation in `normalize`).

A chain starts with a source and continues with transforms:
``chain(weighted({"correct": "exact_match", "fmt": fmt}), gate("fmt", threshold=0.5))``.

Every block works on the whole batch at once (``values[i]`` belongs to ``samples[i]``),
because group normalisation needs the batch. A value of None means "not applicable" and
passes through transforms unchanged; samples with an infrastructure failure read as None
from every leaf, so they never leak into a group's statistics.
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal, Protocol

from rewardsmith.graders.reward import Component
from rewardsmith.graders.schedule import Schedule, weight_at
from rewardsmith.verifiers import registry
from rewardsmith.verifiers.protocol import Verifier
from rewardsmith.verifiers.types import Sample, Verdict

__all__ = [
    "Chain",
    "Combine",
    "Context",
    "Node",
    "Ref",
    "Values",
    "Verify",
    "Weighted",
    "chain",
    "decode_json_reference",
    "map_values",
    "maximum",
    "minimum",
    "product",
    "task_list",
    "verify",
    "weighted",
]

Values = list[float | None]


@dataclass
class Context:
    """What blocks read while a batch is graded: samples, verdicts, the step, state.

    Blocks write their terms with `record`; `path` names a block's place in the tree (the
    key of its explicit state) and `prefix` is prepended to component names.
    """

    samples: Sequence[Sample]
    verdicts: Sequence[Mapping[str, Verdict]]
    excluded: Sequence[bool]
    step: int = 0
    components: list[dict[str, Component]] = field(default_factory=list)
    state_in: Mapping[str, Any] = field(default_factory=dict)
    state_out: dict[str, Any] = field(default_factory=dict)
    path: str = "root"
    prefix: str = ""

    def __post_init__(self) -> None:
        if not self.components:
            self.components = [{} for _ in self.samples]

    def child(self, part: str, name: str | None = None) -> Context:
        """The same batch, seen from a child block (shares components and state)."""
        prefix = f"{self.prefix}{name}." if name is not None else self.prefix
        return dataclasses.replace(self, path=f"{self.path}/{part}", prefix=prefix)

    def record(self, i: int, name: str, component: Component) -> None:
        self.components[i][self.prefix + name] = component

    def score(self, i: int, key: str) -> float | None:
        """Leaf ``key``'s score for sample ``i``; None if skipped or the sample is excluded."""
        if self.excluded[i]:
            return None
        return self.verdicts[i][key].score

    def verdict(self, i: int, key: str) -> Verdict | None:
        return None if self.excluded[i] else self.verdicts[i][key]

    def __len__(self) -> int:
        return len(self.samples)


class Node(Protocol):
    """A block of a grader: ``apply(values, ctx) -> values`` over the batch."""

    source: ClassVar[bool]

    def children(self) -> tuple[Node, ...]: ...

    def apply(self, values: Values | None, ctx: Context) -> Values: ...


def map_values(values: Values | None, fn: Callable[[int, float], float]) -> Values:
    """``fn(i, v)`` for each value; None (not applicable) passes through unchanged."""
    assert values is not None, "a transform needs an incoming value (use it inside chain)"
    return [None if v is None else fn(i, v) for i, v in enumerate(values)]


# --------------------------------------------------------------------------- leaves


@dataclass(frozen=True)
class Verify:
    """A leaf: the score of one verifier, stored under ``key`` in the reward's verdicts."""

    source: ClassVar[bool] = True
    key: str
    verifier: Verifier
    named: bool = field(default=True, compare=False)
    """False when ``key`` defaulted to the verifier's name: a parent may rename it."""
    tasks: tuple[str, ...] | None = None
    """The `Sample.task` values this leaf applies to, sorted (None: every sample). On any
    other sample the verifier does not run and the leaf reads a SKIP verdict."""

    def children(self) -> tuple[Node, ...]:
        return ()

    def applies_to(self, task: str | None) -> bool:
        """Whether the verifier runs on a sample of ``task`` (one of ``tasks``)."""
        return self.tasks is None or task in self.tasks

    def not_applicable(self, task: str | None) -> Verdict:
        """The SKIP verdict (score None) of a sample whose task this leaf does not cover."""
        name = getattr(self.verifier, "name", type(self.verifier).__name__)
        version = getattr(self.verifier, "version", "?")
        tasks = ", ".join(self.tasks or ())
        reason = f"not applicable: task {task!r} is not one of this leaf's ({tasks})"
        return Verdict.skipped(name, version, reason)

    def prepared(self, sample: Sample) -> Sample:
        """``sample`` as this leaf's verifier reads it: a reference stored as JSON text
        (Parquet and HF datasets often hold nested fields that way) is decoded when the
        verifier takes a structured reference (``takes_structured_reference``)."""
        if not getattr(self.verifier, "takes_structured_reference", False):
            return sample
        decoded = decode_json_reference(sample.reference)
        if decoded is sample.reference:
            return sample
        return sample.model_copy(update={"reference": decoded})

    def apply(self, values: Values | None, ctx: Context) -> Values:
        return [ctx.score(i, self.key) for i in range(len(ctx))]


@dataclass(frozen=True)
class Ref:
    """A leaf named by key: a leaf of that key elsewhere in the tree, else the registered
    verifier of that name with default settings."""

    source: ClassVar[bool] = True
    key: str

    def children(self) -> tuple[Node, ...]:
        return ()

    def apply(self, values: Values | None, ctx: Context) -> Values:
        return [ctx.score(i, self.key) for i in range(len(ctx))]


MAX_REFERENCE_JSON_CHARS = 64 * 1024 * 1024
"""JSON-text references longer than this are left as text (the verifier then says why)."""


def decode_json_reference(reference: Any) -> Any:
    """A JSON object or array held as text, decoded; anything else as it is.

    Only text that is a whole JSON object (``{...}``) or array (``[...]``) is decoded: a
    plain answer such as ``"4"`` or ``"Paris"`` stays text. Text that looks like JSON but
    does not parse stays text, so the verifier reports it as a bad reference."""
    if not isinstance(reference, str) or len(reference) > MAX_REFERENCE_JSON_CHARS:
        return reference
    text = reference.strip()
    if (text[:1], text[-1:]) not in (("{", "}"), ("[", "]")):
        return reference
    try:
        decoded = json.loads(text)
    except (ValueError, RecursionError):
        return reference
    return decoded if isinstance(decoded, dict | list) else reference


def _tupled(config: Mapping[str, Any]) -> dict[str, Any]:
    # YAML and JSON give lists where verifier configs use tuples (hashable, frozen): make
    # the two spellings build equal verifiers.
    return {k: tuple(v) if isinstance(v, list) else v for k, v in config.items()}


def task_list(tasks: Any) -> tuple[str, ...] | None:
    """``tasks`` checked and made canonical (sorted, without repeats), so that the same set
    written in any order, from Python or YAML, builds equal leaves. None stays None."""
    if tasks is None:
        return None
    if isinstance(tasks, str) or not isinstance(tasks, list | tuple | set | frozenset):
        raise TypeError(
            f"tasks must be a list of task names, got {tasks!r}: write tasks=['math', 'gsm8k'] "
            "(in YAML, tasks: [math, gsm8k])"
        )
    if not tasks:
        raise ValueError(
            "tasks is empty, so the verifier would never run: name at least one task, "
            "or leave tasks out to run it on every sample"
        )
    for task in tasks:
        if not isinstance(task, str) or not task:
            raise TypeError(f"each task is a non-empty name (text), got {task!r} in {tasks!r}")
    return tuple(sorted(set(tasks)))


def verify(
    name: str | Verifier,
    key: str | None = None,
    *,
    tasks: Sequence[str] | None = None,
    **config: Any,
) -> Verify:
    """A leaf from a registered verifier name (plugins included) and its settings.

    Its verdicts are stored under ``key``: by default the component name it is given in
    `weighted` and friends, else the verifier's name. With ``tasks``, the verifier runs
    only on samples whose `Sample.task` is one of them; on the others the leaf is a SKIP
    verdict (not applicable: it drops out of a weighted sum) and nothing runs.
    ``tasks`` belongs to the leaf: it never reaches the verifier's constructor.

    >>> verify("exact_match", key="correct").key
    'correct'
    >>> verify("math", tasks=["math", "gsm8k"]).tasks
    ('gsm8k', 'math')
    """
    checked = task_list(tasks)
    if isinstance(name, str):
        verifier = registry.create(name, **_tupled(config))
    elif config:
        raise TypeError("settings go to the verifier's constructor; pass a name, not an instance")
    else:
        verifier = name
    key_ = key if key is not None else verifier.name
    return Verify(key_, verifier, named=key is not None, tasks=checked)


def _as_source(key: str | None, child: Any) -> Node:
    """Children of `weighted` and friends: a name, a verifier, or a block.

    ``key`` names the leaf a bare name or verifier becomes (None: the verifier's name).
    """
    if isinstance(child, str):
        return verify(child, key=key)
    if isinstance(child, Verifier):
        return Verify(key if key is not None else child.name, child)
    if isinstance(child, Verify) and not child.named and key is not None:
        # weighted({"correct": verify("exact_match")}): the leaf is called "correct".
        return dataclasses.replace(child, key=key, named=True)
    if getattr(child, "source", None) is True:
        return child
    raise TypeError(
        f"component {key!r} must be a verifier name, a verifier, or a source block "
        f"(verify, weighted, chain, ...), got {type(child).__name__}"
    )


def _as_ref(on: str | Verify | Verifier) -> Verify | Ref:
    if isinstance(on, str):
        return Ref(on)
    if isinstance(on, Verify):
        return on
    return Verify(on.name, on)


# --------------------------------------------------------------------------- sources


@dataclass(frozen=True)
class Weighted:
    """Weighted sum of components; components that do not apply (None) drop out.

    With ``renormalize`` (the default) the remaining weights are scaled up so the sum keeps
    its scale: for applicable set A,
    ``value = sum_{k in A} w_k v_k * sum_k |w_k| / sum_{k in A} |w_k|``; without it,
    ``value = sum_{k in A} w_k v_k``. None when no component applies.
    """

    source: ClassVar[bool] = True
    parts: tuple[tuple[str, Node, float | Schedule], ...]
    renormalize: bool = True

    def children(self) -> tuple[Node, ...]:
        return tuple(node for _, node, _ in self.parts)

    def apply(self, values: Values | None, ctx: Context) -> Values:
        weights = [weight_at(w, ctx.step) for _, _, w in self.parts]
        columns = [node.apply(None, ctx.child(key, key)) for key, node, _ in self.parts]
        out: Values = []
        for i in range(len(ctx)):
            total = applicable = acc = 0.0
            any_applies = False
            for (key, _, _), w, col in zip(self.parts, weights, columns, strict=True):
                v = col[i]
                total += abs(w)
                weighted_v = None if v is None else w * v
                ctx.record(i, key, Component(v, w, weighted_v))
                if v is not None:
                    any_applies = True
                    applicable += abs(w)
                    acc += w * v
            if not any_applies:
                out.append(None)
            elif self.renormalize and applicable > 0:
                out.append(acc * total / applicable)
            else:
                out.append(acc)
        return out


def weighted(
    components: Mapping[str, Any],
    weights: Mapping[str, float | Schedule] | None = None,
    renormalize: bool = True,
) -> Weighted:
    """Weighted sum of named components (weight 1 unless given; weights may be schedules).

    >>> w = weighted({"correct": "exact_match"}, weights={"correct": 2.0})
    >>> [key for key, _, _ in w.parts]
    ['correct']
    """
    weights = dict(weights or {})
    unknown = set(weights) - set(components)
    if unknown:
        raise ValueError(f"weights for unknown components {sorted(unknown)}")
    parts = tuple(
        (key, _as_source(key, child), weights.get(key, 1.0)) for key, child in components.items()
    )
    if not parts:
        raise ValueError("weighted needs at least one component")
    return Weighted(parts, renormalize)


_OPS: dict[str, Callable[[list[float]], float]] = {"min": min, "max": max, "product": math.prod}


@dataclass(frozen=True)
class Combine:
    """min, max or product of components; those that do not apply drop out (None if all)."""

    source: ClassVar[bool] = True
    op: Literal["min", "max", "product"]
    parts: tuple[tuple[str, Node], ...]

    def children(self) -> tuple[Node, ...]:
        return tuple(node for _, node in self.parts)

    def apply(self, values: Values | None, ctx: Context) -> Values:
        columns = [node.apply(None, ctx.child(key, key)) for key, node in self.parts]
        out: Values = []
        for i in range(len(ctx)):
            present: list[float] = []
            for (key, _), col in zip(self.parts, columns, strict=True):
                ctx.record(i, key, Component(col[i], 1.0, col[i]))
                value = col[i]
                if value is not None:
                    present.append(value)
            out.append(float(_OPS[self.op](present)) if present else None)
        return out


def _combine(op: Literal["min", "max", "product"], components: Mapping[str, Any]) -> Combine:
    if not components:
        raise ValueError(f"{op} needs at least one component")
    return Combine(op, tuple((k, _as_source(k, c)) for k, c in components.items()))


def minimum(components: Mapping[str, Any]) -> Combine:
    """The smallest applicable component (all must be good for a high reward)."""
    return _combine("min", components)


def maximum(components: Mapping[str, Any]) -> Combine:
    """The largest applicable component (any one good answer is enough)."""
    return _combine("max", components)


def product(components: Mapping[str, Any]) -> Combine:
    """The product of applicable components (a soft AND of scores in [0, 1])."""
    return _combine("product", components)


@dataclass(frozen=True)
class Chain:
    """A source followed by transforms, applied in order (optax's ``chain``)."""

    source: ClassVar[bool] = True
    blocks: tuple[Node, ...]

    def children(self) -> tuple[Node, ...]:
        return self.blocks

    def apply(self, values: Values | None, ctx: Context) -> Values:
        out: Values | None = None
        for index, block in enumerate(self.blocks):
            out = block.apply(out, ctx.child(str(index)))
        assert out is not None
        return out


def chain(*blocks: Any) -> Chain:
    """Compose: the first block makes the value, the others transform it in order."""
    if not blocks:
        raise ValueError("chain needs at least one block")
    first = blocks[0] if hasattr(blocks[0], "apply") else _as_source(None, blocks[0])
    if not first.source:
        raise ValueError(
            f"chain must start with a source (verify, weighted, minimum, ...), not "
            f"{type(first).__name__}: a transform needs a value to change"
        )
    for block in blocks[1:]:
        if getattr(block, "source", True):
            raise ValueError(
                f"only the first block of a chain makes a value; {type(block).__name__} is a "
                f"source: put it inside weighted({{...}}) or minimum({{...}}) instead"
            )
    return Chain((first, *blocks[1:]))
