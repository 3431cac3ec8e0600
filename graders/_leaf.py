"""A verifier leaf from a name and settings, the same way from every door, and the errors
that say how to fix one (`SpecError`).

A YAML spec (``{verify: format, required_tags: [answer]}``), a ``-v format:required_tags=
answer`` argument, a trainer's ``{format: {required_tags: [answer]}}`` and an adapter's list
of names all become a leaf through `make_leaf`, so a misspelt setting gives the same
message on every door:

    >>> parse_verifier_arg("format:required_tags=answer,max_chars=5000")
    ('format', {'required_tags': 'answer', 'max_chars': 5000})
    >>> parse_verifier_arg("format:{required_tags: [think, answer]}")
    ('format', {'required_tags': ['think', 'answer']})
"""

from __future__ import annotations

import difflib
import inspect
from collections.abc import Mapping
from typing import Any

import yaml

from rewardsmith.graders import nodes
from rewardsmith.verifiers import registry

__all__ = ["SpecError", "close_matches", "make_leaf", "parse_verifier_arg"]

Path_ = tuple[str | int, ...]


class SpecError(ValueError):
    """A reward that cannot be built: where, what, and how to fix it."""

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


def close_matches(word: str, options: Any) -> str:
    """`` Did you mean 'x'?`` for the closest options, or nothing."""
    close = difflib.get_close_matches(str(word), [str(o) for o in options], n=2)
    return f" Did you mean {' or '.join(repr(c) for c in close)}?" if close else ""


def make_leaf(name: Any, settings: Mapping[str, Any], path: Path_, key: Any = None) -> nodes.Verify:
    """A `Verify` leaf for the registered verifier ``name``; ``settings`` may hold the
    leaf's own ``key`` and ``tasks`` beside the verifier's settings. Every problem is a
    `SpecError` at ``path`` naming the fix."""
    config = dict(settings)
    key = config.pop("key", key)
    if not isinstance(name, str) or not (key is None or isinstance(key, str)):
        raise SpecError(path, "write {verify: <verifier name>, key: <text>, <setting>: <value>}")
    tasks = config.pop("tasks", None)
    if tasks is not None and not isinstance(tasks, list | tuple):
        raise SpecError(
            (*path, "tasks"),
            f"tasks is a list of task names, got {tasks!r}: write tasks: [math, gsm8k]",
        )
    try:
        checked = nodes.task_list(list(tasks) if tasks is not None else None)
    except (TypeError, ValueError) as exc:
        raise SpecError((*path, "tasks"), str(exc)) from None
    try:
        factory = registry.resolve(name)
    except registry.UnknownVerifierError as exc:
        raise SpecError((*path, "verify"), str(exc)) from None
    try:
        return nodes.verify(name, key=key, tasks=checked, **config)
    except TypeError as exc:
        accepted = _settings(factory)
        known = [*accepted.split(", "), "key", "tasks"]
        hints = "".join(close_matches(k, known) for k in config if k not in known)
        raise SpecError(
            path, f"{exc}.{hints} {name!r} accepts: {accepted} (and any leaf: key, tasks)"
        ) from None
    except (ValueError, KeyError) as exc:
        raise SpecError(path, f"bad settings for {name!r}: {exc}") from None


def _settings(factory: Any) -> str:
    try:
        params = [p for p in inspect.signature(factory).parameters if not p.startswith("_")]
    except (TypeError, ValueError):
        return "(unknown)"
    return ", ".join(params) or "(no settings)"


def parse_verifier_arg(text: str) -> tuple[str, dict[str, Any]]:
    """``NAME``, ``NAME:key=value,key=value`` or ``NAME:{yaml mapping}``; values are read as
    YAML scalars, so ``threshold=0.5`` is a float and ``strict=true`` a bool."""
    name, _, settings = text.partition(":")
    name = name.strip()
    if not name:
        raise ValueError(f"{text!r}: give a verifier name, e.g. exact_match")
    settings = settings.strip()
    if not settings:
        return name, {}
    if settings.startswith("{"):
        try:
            config = yaml.safe_load(settings)
        except yaml.YAMLError as exc:
            raise ValueError(f"{text!r}: the settings are not a YAML mapping ({exc})") from None
        if not isinstance(config, dict):
            raise ValueError(f"{text!r}: the settings must be a YAML mapping")
        return name, config
    config = {}
    for pair in settings.split(","):
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"{text!r}: settings are key=value pairs split by commas")
        try:
            config[key.strip()] = yaml.safe_load(value)
        except yaml.YAMLError:
            config[key.strip()] = value
    return name, config
