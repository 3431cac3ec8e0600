"""One builder for every door: `build(spec | names | mapping) -> Grader`.

- a `Grader`: as it is;
- a YAML path or YAML text (`rewardsmith.graders.spec`);
- a parsed spec: a mapping with a ``grader`` key;
- a list of verifier names, each ``NAME`` or ``NAME:key=value,...`` (``-v`` on the CLI);
- a mapping of verifiers, ``{name: {weight: w, <setting>: <value>, ...}}`` (a trainer's
  ``reward:`` config; ``verify: <name>`` inside makes the outer key a component name).

A list or a mapping of verifiers means one thing everywhere: their **weighted mean**,
``sum_k w_k v_k / sum_k w_k`` over the components that apply (weight 1 unless given), so
``-v a -v b``, ``{a: {}, b: {}}`` and ``["a", "b"]`` build equal graders. Every verifier's
settings are checked through the registry by `make_leaf`, with the same messages on
every door.

    >>> build(["exact_match", "format:required_tags=answer"]) == build(
    ...     {"exact_match": {}, "format": {"required_tags": ["answer"]}})
    True
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rewardsmith.graders._leaf import SpecError, make_leaf, parse_verifier_arg
from rewardsmith.graders.grader import Grader
from rewardsmith.graders.nodes import Verify, weighted

__all__ = ["SpecError", "build", "parse_verifier_arg"]


def build(reward: Any) -> Grader:
    """A `Grader` from any of the forms in the module docstring; `SpecError` otherwise."""
    from rewardsmith.graders.spec import build_spec, load_spec

    if isinstance(reward, Grader):
        return reward
    if isinstance(reward, str | Path):
        return load_spec(reward)
    if isinstance(reward, Mapping):
        return build_spec(reward) if "grader" in reward else _from_mapping(reward)
    if isinstance(reward, Sequence) and all(isinstance(x, str) for x in reward):
        return _from_names(list(reward))
    raise SpecError(
        (),
        f"cannot build a reward from {type(reward).__name__}: give a Grader, a YAML spec "
        "(path or text), a list of verifier names, or a mapping {name: {settings}}",
    )


def _from_names(arguments: list[str]) -> Grader:
    leaves: list[tuple[str, Verify, float]] = []
    for i, argument in enumerate(arguments):
        try:
            name, settings = parse_verifier_arg(argument)
        except ValueError as exc:
            raise SpecError(("verifiers", i), str(exc)) from None
        key = name if all(k != name for k, _, _ in leaves) else f"{name}_{len(leaves) + 1}"
        leaves.append((key, make_leaf(name, settings, ("verifiers", i), key=key), 1.0))
    return _mean(leaves)


def _from_mapping(reward: Mapping[str, Any]) -> Grader:
    leaves: list[tuple[str, Verify, float]] = []
    for key, raw in reward.items():
        path = ("reward", str(key))
        if raw is not None and not isinstance(raw, Mapping):
            raise SpecError(path, f"give the settings as a mapping, got {raw!r}")
        settings = dict(raw or {})
        weight = settings.pop("weight", 1.0)
        if isinstance(weight, bool) or not isinstance(weight, int | float) or weight < 0:
            raise SpecError((*path, "weight"), f"a weight is a number >= 0, got {weight!r}")
        name = settings.pop("verify", key)
        leaves.append((str(key), make_leaf(name, settings, path, key=str(key)), float(weight)))
    return _mean(leaves)


def _mean(leaves: list[tuple[str, Verify, float]]) -> Grader:
    if not leaves:
        raise SpecError((), "name at least one verifier")
    total = sum(w for _, _, w in leaves)
    if total <= 0:
        raise SpecError((), "the weights add up to 0: give at least one a positive weight")
    components = {key: leaf for key, leaf, _ in leaves}
    return Grader(weighted(components, weights={key: w / total for key, _, w in leaves}))
