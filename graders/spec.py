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

import difflib
import inspect
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import ValidationError

from rewardsmith.graders import nodes, normalize, shaping, transforms
from rewardsmith.graders._spec_args import (
    _Args,
    _ClipArgs,
    _CosineArgs,
    _GateArgs,
    _GroupArgs,
    _LengthArgs,
    _LinearArgs,
    _OverlongArgs,
    _PenalizeArgs,
    _RepetitionArgs,
    _RunningArgs,
    _ScaleArgs,
    _ShapingArgs,
    _ThresholdArgs,
    _Top,
    _WeightedArgs,
)
from rewardsmith.graders.grader import Grader
from rewardsmith.graders.schedule import Schedule, linear_schedule, piecewise_schedule
from rewardsmith.verifiers import registry

__all__ = ["SpecError", "build", "load_spec"]

Path_ = tuple[str | int, ...]

MAX_DEPTH = 64
"""Blocks nested deeper than this are refused (a spec is never legitimately that deep)."""
MAX_SPEC_CHARS = 1_000_000


class SpecError(ValueError):
    """A reward spec that cannot be built: where, what, and how to fix it."""

    def __init__(self, path: Path_, message: str, line: int | None = None) -> None:
        self.path, self.message, self.line = path, message, line
        super().__init__(str(self))

    def __str__(self) -> str:
        where = _dotted(self.path) or "(top level)"
        at = f"line {self.line}: " if self.line is not None else ""
        return f"{at}{where}: {self.message}"


def _dotted(path: Path_) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _close(word: str, options: Any) -> str:
    close = difflib.get_close_matches(str(word), [str(o) for o in options], n=2)
    return f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""


# --------------------------------------------------------------------------- the builder


class _Builder:
    def __init__(self, definitions: Mapping[str, Any]) -> None:
        self.definitions = definitions
        self.using: list[str] = []
        self.seen: list[int] = []

    def validate(self, model: type[_Args], data: Any, path: Path_) -> Any:
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
                a = self.validate(_LinearArgs, args, (*path, "linear"))
                return linear_schedule(a.start, a.end, a.steps, a.begin)
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
        name = config.pop("verify")
        key = config.pop("key", default_key)
        if not isinstance(name, str) or not (key is None or isinstance(key, str)):
            raise SpecError(
                path, "write {verify: <verifier name>, key: <text>, <setting>: <value>}"
            )
        tasks = config.pop("tasks", None)
        if tasks is not None and not isinstance(tasks, list):
            raise SpecError(
                (*path, "tasks"),
                f"tasks is a list of task names, got {tasks!r}: write tasks: [math, gsm8k]",
            )
        try:
            tasks = nodes.task_list(tasks)
        except (TypeError, ValueError) as exc:
            raise SpecError((*path, "tasks"), str(exc)) from None
        try:
            factory = registry.resolve(name)
        except registry.UnknownVerifierError as exc:
            raise SpecError((*path, "verify"), str(exc)) from None
        try:
            return nodes.verify(name, key=key, tasks=tasks, **config)
        except TypeError as exc:
            settings = _settings(factory)
            known = [*settings.split(", "), "key", "tasks"]
            hints = "".join(_close(k, known) for k in config if k not in known)
            raise SpecError(
                path,
                f"{exc}.{hints} {name!r} accepts: {settings} (and any leaf: key, tasks)",
            ) from None
        except ValueError as exc:
            raise SpecError(path, f"bad settings for {name!r}: {exc}") from None

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
                f"{', '.join(sorted(_BLOCKS))}), or {{verify: <name>, ...}} for a verifier",
            )
        ((kind, args),) = data.items()
        if kind == "use":
            return self.use(args, path)
        if kind not in _BLOCKS:
            raise SpecError((*path, kind), f"unknown block {kind!r}.{_close(kind, _BLOCKS)}")
        self.seen.append(id(data))
        try:
            return _BLOCKS[kind](self, args, (*path, kind))
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


def _settings(factory: Any) -> str:
    try:
        params = [p for p in inspect.signature(factory).parameters if not p.startswith("_")]
    except (TypeError, ValueError):
        return "(unknown)"
    return ", ".join(params) or "(no settings)"


def _from_pydantic(exc: ValidationError, model: type[_Args], path: Path_) -> SpecError:
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


def _simple(model: type[_Args], make: Callable[..., Any]) -> Callable[[_Builder, Any, Path_], Any]:
    def build(b: _Builder, args: Any, path: Path_) -> Any:
        values = dict(b.validate(model, args or {}, path))
        for name in ("factor", "amount"):
            if name in values:
                values[name] = b.weight(values[name], (*path, name))
        try:
            return make(**values)
        except ValueError as exc:
            raise SpecError(path, str(exc)) from None

    return build


_BLOCKS: dict[str, Callable[[_Builder, Any, Path_], Any]] = {
    "chain": _chain,
    "clip": _simple(_ClipArgs, transforms.clip),
    "cosine_length": _simple(_CosineArgs, shaping.cosine_length),
    "gate": _simple(_GateArgs, transforms.gate),
    "group_normalize": _simple(_GroupArgs, normalize.group_normalize),
    "length_penalty": _simple(_LengthArgs, shaping.length_penalty),
    "max": _combine("max"),
    "min": _combine("min"),
    "overlong_penalty": _simple(_OverlongArgs, shaping.overlong_penalty),
    "penalize": _simple(_PenalizeArgs, transforms.penalize),
    "potential_shaping": _simple(_ShapingArgs, shaping.potential_shaping),
    "product": _combine("product"),
    "repetition_penalty": _simple(_RepetitionArgs, shaping.repetition_penalty),
    "running_normalize": _simple(_RunningArgs, normalize.running_normalize),
    "scale": _simple(_ScaleArgs, transforms.scale),
    "threshold": _simple(_ThresholdArgs, transforms.threshold),
    "weighted": _weighted,
}


def build(spec: Mapping[str, Any]) -> Grader:
    """A `Grader` from a parsed spec (a mapping, as from ``yaml.safe_load``)."""
    builder = _Builder({})
    top = builder.validate(_Top, spec, ())
    builder.definitions = top.definitions
    root = builder.source(None, top.grader, ("grader",))
    try:
        return Grader(root, top.on_infra_failure, top.fallback)
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
        return build(data)
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
