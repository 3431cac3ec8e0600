"""YAML reward specs: the same graders as the Python API, from a file.

    >>> grader = load_spec('''
    ... grader:
    ...   chain:
    ...     - weighted:
    ...         components:
    ...           correct: exact_match
    ...           fmt: {verify: format, required_tags: [answer]}
    ...         weights: {correct: 0.8, fmt: 0.2}
    ...     - gate: {on: fmt}
    ... ''')
    >>> sorted(grader.verifiers)
    ['correct', 'fmt']

A block is a mapping with one key, its kind (``weighted``, ``chain``, ``gate``, ...), whose
value holds its arguments, named as in the Python function of the same name. A verifier
leaf is ``{verify: <registered name>, key: <optional>, tasks: <optional list>,
<setting>: <value>, ...}``, or just the name where a component is expected; with
``tasks: [math, gsm8k]`` it runs only on samples of those tasks (a SKIP on the others).
``definitions`` names blocks for reuse with ``{use: <name>}``. Weights and amounts take a
number or a schedule: ``{linear: {start: 1.0, end: 0.0, steps: 1000}}`` or
``{piecewise: {0: 1.0, 500: 0.2}}``.

Every mistake is a `SpecError` naming the line (when read from YAML), the place in the
spec, and the fix: an unknown block or verifier (with the closest names), a misspelt key,
a wrong type, a ``use`` cycle.
"""

from __future__ import annotations

import dataclasses
import functools
import operator
import re
import typing
from collections.abc import Callable, Mapping
from pathlib import Path
from types import UnionType
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError, create_model

from rewardsmith.graders import evidence_block, nodes, normalize, shaping, transforms
from rewardsmith.graders._leaf import SpecError, close_matches, make_leaf
from rewardsmith.graders.grader import Grader
from rewardsmith.graders.nodes import Ref, Verify
from rewardsmith.graders.schedule import LinearSchedule, Schedule, piecewise_schedule

__all__ = ["BLOCKS", "SpecError", "build_spec", "load_spec"]

Path_ = tuple[str | int, ...]

MAX_DEPTH = 64
"""Blocks nested deeper than this are refused (a spec is never legitimately that deep)."""
MAX_SPEC_CHARS = 1_000_000

_close = close_matches


class _Args(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class _Top(_Args):
    grader: Any
    definitions: dict[str, Any] = {}
    on_infra_failure: Literal["drop", "fallback"] = "drop"
    fallback: float | None = None
    default_task: str | None = None
    version: Literal[1] = 1


class _WeightedArgs(_Args):
    """The arguments of `nodes.weighted` (a structural block: its dataclass holds parts)."""

    components: dict[str, Any]
    weights: dict[str, Any] = {}
    renormalize: bool = True


BLOCKS: dict[str, type] = {
    "clip": transforms.Clip,
    "cosine_length": shaping.CosineLength,
    "evidence": evidence_block.Evidence,
    "gate": transforms.Gate,
    "group_normalize": normalize.GroupNormalize,
    "length_penalty": shaping.LengthPenalty,
    "overlong_penalty": shaping.OverlongPenalty,
    "penalize": transforms.Penalize,
    "potential_shaping": shaping.PotentialShaping,
    "repetition_penalty": shaping.RepetitionPenalty,
    "running_normalize": normalize.RunningNormalize,
    "scale": transforms.Scale,
    "threshold": transforms.Threshold,
}
"""Settings blocks by YAML kind. Each is declared once, as its dataclass: the YAML
arguments are its fields (names, types, defaults), validated by a model made from them."""


def _members(hint: Any) -> tuple[Any, ...]:
    return typing.get_args(hint) if isinstance(hint, UnionType) else (hint,)


def _yaml_type(hint: Any) -> tuple[Any, str]:
    """The type a field takes in YAML, and how it is then turned into the stored value:
    ``ref`` (a leaf named by key), ``weight`` (a number or a schedule) or ``plain``."""
    members = _members(hint)
    if Verify in members or Ref in members:
        return str, "ref"
    if Schedule in members:
        return Any, "weight"
    plain = [m for m in members if typing.get_origin(m) is not Callable and m is not Callable]
    if len(plain) < len(members):  # a callable is Python-only: YAML names a key
        return functools.reduce(operator.or_, plain), "plain"
    return hint, "plain"


@functools.cache
def _block_model(cls: type) -> tuple[type[_Args], dict[str, str]]:
    """The argument model of a settings block, made from its dataclass fields."""
    hints = typing.get_type_hints(cls)
    fields: dict[str, Any] = {}
    kinds: dict[str, str] = {}
    for f in _fields(cls):
        yaml_type, kinds[f.name] = _yaml_type(hints[f.name])
        default = f.default if f.default is not _MISSING else ...
        fields[f.name] = (yaml_type, default)
    return create_model(f"{cls.__name__}Args", __base__=_Args, **fields), kinds


def _fields(cls: type) -> list[Any]:
    return [f for f in dataclasses.fields(cls) if f.init]


_MISSING: Any = dataclasses.MISSING


# --------------------------------------------------------------------------- the builder


class _Builder:
    def __init__(self, definitions: Mapping[str, Any]) -> None:
        self.definitions = definitions
        self.using: list[str] = []
        self.seen: list[int] = []

    def validate(self, model: type[BaseModel], data: Any, path: Path_) -> Any:
        try:
            return model.model_validate(data)
        except ValidationError as exc:
            raise _from_pydantic(exc, model, path) from None

    def weight(self, value: Any, path: Path_) -> float | Schedule:
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
        if isinstance(value, Mapping) and len(value) == 1:
            ((kind, args),) = value.items()
            if kind == "linear":
                return self.settings_block(LinearSchedule, args, (*path, "linear"))
            if kind == "piecewise" and isinstance(args, Mapping) and args:
                try:
                    return piecewise_schedule({int(k): float(v) for k, v in args.items()})
                except (TypeError, ValueError) as exc:
                    raise SpecError(
                        (*path, "piecewise"), f"{exc}; write {{step: value, ...}}"
                    ) from None
        raise SpecError(
            path,
            f"a weight is a number or a schedule, got {value!r}. Write 0.5, "
            "{linear: {start: 1.0, end: 0.0, steps: 1000}} or {piecewise: {0: 1.0, 500: 0.2}}",
        )

    def source(self, key: str | None, value: Any, path: Path_) -> Any:
        """A component: a verifier name, or a block that makes a value."""
        if isinstance(value, str):
            return self.leaf({"verify": value, "key": key}, path)
        node = self.block(value, path, default_key=key)
        if not node.source:
            raise SpecError(
                (*path, next(iter(value))),
                f"{type(node).__name__} changes a value but makes none: "
                "put it in a chain after a source",
            )
        return node

    def leaf(self, data: Mapping[str, Any], path: Path_, default_key: str | None = None) -> Any:
        config = dict(data)
        return make_leaf(config.pop("verify"), config, path, key=default_key)

    def settings_block(self, cls: type, args: Any, path: Path_) -> Any:
        """A settings block (or a schedule) from its YAML arguments, by its dataclass."""
        model, kinds = _block_model(cls)
        values = dict(self.validate(model, {} if args is None else args, path))
        for name, kind in kinds.items():
            if kind == "ref":
                values[name] = Ref(values[name])
            elif kind == "weight":
                values[name] = self.weight(values[name], (*path, name))
        try:
            return cls(**values)
        except (TypeError, ValueError) as exc:
            raise SpecError(path, str(exc)) from None

    def block(self, data: Any, path: Path_, default_key: str | None = None) -> Any:
        if id(data) in self.seen:
            raise SpecError(path, "the spec refers to itself (a YAML alias cycle): remove the loop")
        if len(self.seen) >= MAX_DEPTH:
            raise SpecError(path, f"blocks nest deeper than {MAX_DEPTH}: flatten the spec")
        if isinstance(data, Mapping) and "verify" in data:
            return self.leaf(data, path, default_key)
        if not isinstance(data, Mapping) or len(data) != 1:
            raise SpecError(
                path,
                "a block is a mapping with exactly one key, its kind (one of "
                f"{', '.join(sorted([*_STRUCTURE, *BLOCKS]))}), or {{verify: <name>, ...}} "
                "for a verifier",
            )
        ((kind, args),) = data.items()
        if kind == "use":
            return self.use(args, path)
        if kind not in _STRUCTURE and kind not in BLOCKS:
            known = [*_STRUCTURE, *BLOCKS]
            raise SpecError((*path, kind), f"unknown block {kind!r}.{_close(kind, known)}")
        self.seen.append(id(data))
        try:
            if kind in BLOCKS:
                return self.settings_block(BLOCKS[kind], args, (*path, kind))
            return _STRUCTURE[kind](self, args, (*path, kind))
        finally:
            self.seen.pop()

    def use(self, name: Any, path: Path_) -> Any:
        if name not in self.definitions:
            raise SpecError(
                (*path, "use"), f"no definition named {name!r}.{_close(name, self.definitions)}"
            )
        if name in self.using:
            loop = " -> ".join([*self.using[self.using.index(name) :], name])
            raise SpecError((*path, "use"), f"definitions form a cycle ({loop}): break it")
        self.using.append(name)
        try:
            return self.block(self.definitions[name], ("definitions", name))
        finally:
            self.using.pop()


def _from_pydantic(exc: ValidationError, model: type[BaseModel], path: Path_) -> SpecError:
    error = exc.errors()[0]
    loc = tuple(error["loc"])
    if error["type"] == "extra_forbidden":
        fields = list(model.model_fields)
        allowed = ", ".join(model.model_fields)
        message = f"unknown key {loc[-1]!r}.{_close(str(loc[-1]), fields)} Allowed: {allowed}"
    elif error["type"] == "missing":
        message = f"missing required key {loc[-1]!r}"
    elif error["type"] == "model_type":
        message = (
            f"expected a mapping with keys {', '.join(model.model_fields)}, got {error['input']!r}"
        )
    else:
        message = f"{error['msg']} (got {error.get('input')!r})"
    return SpecError((*path, *loc), message)


def _combine(op: Literal["min", "max", "product"]) -> Callable[[_Builder, Any, Path_], Any]:
    def make(b: _Builder, args: Any, path: Path_) -> Any:
        if not isinstance(args, Mapping) or not args:
            raise SpecError(
                path,
                f"{op} takes a mapping of components, e.g. {{a: exact_match, b: format_block}}",
            )
        return nodes.Combine(
            op, tuple((str(k), b.source(str(k), v, (*path, k))) for k, v in args.items())
        )

    return make


def _weighted(b: _Builder, args: Any, path: Path_) -> Any:
    a = b.validate(_WeightedArgs, args, path)
    unknown = set(a.weights) - set(a.components)
    if unknown:
        k = sorted(unknown)[0]
        raise SpecError(
            (*path, "weights", k), f"weight for unknown component {k!r}.{_close(k, a.components)}"
        )
    parts = tuple(
        (
            k,
            b.source(k, v, (*path, "components", k)),
            b.weight(a.weights.get(k, 1.0), (*path, "weights", k)),
        )
        for k, v in a.components.items()
    )
    if not parts:
        raise SpecError((*path, "components"), "weighted needs at least one component")
    return nodes.Weighted(parts, a.renormalize)


def _chain(b: _Builder, args: Any, path: Path_) -> Any:
    if not isinstance(args, list) or not args:
        raise SpecError(path, "chain takes a list of blocks: a source first, then transforms")
    first = b.source(None, args[0], (*path, 0))
    rest = [
        b.source(None, x, (*path, i)) if isinstance(x, str) else b.block(x, (*path, i))
        for i, x in enumerate(args[1:], start=1)
    ]
    for i, node in enumerate(rest, start=1):
        if node.source:
            raise SpecError(
                (*path, i),
                "only the first block of a chain makes a value: "
                "move this one into a weighted or min block",
            )
    return nodes.Chain((first, *rest))


_STRUCTURE: dict[str, Callable[[_Builder, Any, Path_], Any]] = {
    "chain": _chain,
    "max": _combine("max"),
    "min": _combine("min"),
    "product": _combine("product"),
    "weighted": _weighted,
}
"""Blocks that hold other blocks (built by hand: their arguments are blocks)."""


def build_spec(spec: Mapping[str, Any]) -> Grader:
    """A `Grader` from a parsed spec (a mapping, as from ``yaml.safe_load``)."""
    builder = _Builder({})
    top = builder.validate(_Top, spec, ())
    builder.definitions = top.definitions
    root = builder.source(None, top.grader, ("grader",))
    try:
        return Grader(root, top.on_infra_failure, top.fallback, top.default_task)
    except ValueError as exc:
        raise SpecError((), str(exc)) from None


class _SpecLoader(yaml.SafeLoader):
    """YAML 1.2 booleans: only true/false. YAML 1.1 reads the key ``on`` (as in
    ``gate: {on: tests}``) and the words yes/no/off as booleans, a classic trap."""


_SpecLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:bool"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_SpecLoader.add_implicit_resolver(
    "tag:yaml.org,2002:bool",
    re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$"),
    list("tTfF"),
)


def load_spec(path_or_text: str | Path) -> Grader:
    """A `Grader` from a YAML file path or YAML text; errors name the line."""
    text = str(path_or_text)
    if isinstance(path_or_text, Path) or (
        "\n" not in text and Path(text).suffix in (".yaml", ".yml")
    ):
        text = Path(path_or_text).read_text()
    if len(text) > MAX_SPEC_CHARS:
        raise SpecError((), f"the spec has {len(text)} characters; the limit is {MAX_SPEC_CHARS}")
    try:
        root_node = yaml.compose(text, Loader=_SpecLoader)
        data = yaml.load(text, Loader=_SpecLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        raise SpecError((), f"not valid YAML: {exc}", mark.line + 1 if mark else None) from None
    except RecursionError:
        raise SpecError((), "the YAML nests too deeply to read: flatten the spec") from None
    if not isinstance(data, Mapping):
        raise SpecError((), "a reward spec is a mapping with a 'grader' key", 1)
    try:
        return build_spec(data)
    except SpecError as exc:
        raise SpecError(exc.path, exc.message, _line_of(root_node, exc.path)) from None


def _line_of(node: Any, path: Path_) -> int | None:
    """The 1-based line of the deepest YAML node the path reaches."""
    line = node.start_mark.line + 1 if node is not None else None
    for part in path:
        if isinstance(node, yaml.MappingNode):
            match = [(k, v) for k, v in node.value if k.value == str(part)]
            if not match:
                break
            key, node = match[0]
            line = key.start_mark.line + 1
        elif (
            isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value)
        ):
            node = node.value[part]
            line = node.start_mark.line + 1
        else:
            break
    return line
