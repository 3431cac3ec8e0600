"""What determines a run's rewards, recorded with what it writes, so a resume can refuse to
mix rewards from two different specs.

A `Fingerprint` holds the grader's blocks (their kinds and settings), each leaf's
verifier (name, version, a hash of its source, settings, tasks), the failure policy and
the dump's column mapping. Two runs with equal fingerprints compute equal rewards for equal samples;
`changes` says in words what differs.

    >>> from rewardsmith.graders.build import build
    >>> a = Fingerprint.of(build(["exact_match"]))
    >>> b = Fingerprint.of(build(["format:required_tags=answer"]))
    >>> a.digest == b.digest
    False
    >>> a.changes(b)[0]
    "verifier 'exact_match' removed"
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from rewardsmith.graders.cache import code_digest
from rewardsmith.graders.grader import Grader
from rewardsmith.graders.nodes import Ref, Verify
from rewardsmith.verifiers.protocol import verifier_config

__all__ = ["Fingerprint"]


def _plain(value: Any) -> Any:
    """JSON types only, deterministically (tuples as lists, anything else by repr)."""
    return json.loads(json.dumps(value, sort_keys=True, default=repr))


def _describe(node: Any) -> Any:
    """A block tree as plain data: kind and settings; leaves by key."""
    if isinstance(node, Verify):
        return {"verify": node.key}
    if isinstance(node, Ref):
        return {"ref": node.key}
    if dataclasses.is_dataclass(node) and not isinstance(node, type):
        fields = {f.name: _describe(getattr(node, f.name)) for f in dataclasses.fields(node)}
        return {type(node).__name__: fields}
    if isinstance(node, tuple | list):
        return [_describe(x) for x in node]
    if isinstance(node, Mapping):
        return {str(k): _describe(v) for k, v in node.items()}
    if callable(node):
        return f"{getattr(node, '__module__', '?')}.{getattr(node, '__qualname__', repr(node))}"
    return _plain(node)


@dataclass(frozen=True)
class Fingerprint:
    """See the module docstring; `to_dict`/`from_dict` round-trip it through JSON."""

    blocks: Any
    verifiers: dict[str, dict[str, Any]]
    policy: dict[str, Any]
    mapping: Any = None

    @classmethod
    def of(
        cls, grader: Grader, *, fallback: float | None = None, mapping: Any = None
    ) -> Fingerprint:
        verifiers = {
            key: {
                "name": getattr(verifier, "name", type(verifier).__name__),
                "version": str(getattr(verifier, "version", "?")),
                "code": code_digest(type(verifier).__module__)[:16],  # a fix beside the version
                "settings": _plain(verifier_config(verifier)),
                "tasks": list(grader.tasks[key]) if grader.tasks[key] is not None else None,
            }
            for key, verifier in sorted(grader.verifiers.items())
        }
        policy = {
            "on_infra_failure": "fallback" if fallback is not None else grader.on_infra_failure,
            "fallback": fallback,
            "default_task": grader.default_task,
        }
        return cls(_describe(grader.root), verifiers, policy, _plain(mapping))

    @property
    def digest(self) -> str:
        """A short hash of the whole fingerprint (written on every scored row)."""
        text = json.dumps(self.to_dict(), sort_keys=True)
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def to_dict(self) -> dict[str, Any]:
        return {
            "blocks": self.blocks,
            "verifiers": self.verifiers,
            "policy": self.policy,
            "mapping": self.mapping,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Fingerprint:
        return cls(
            data["blocks"], dict(data["verifiers"]), dict(data["policy"]), data.get("mapping")
        )

    def changes(self, other: Fingerprint) -> list[str]:
        """What ``other`` (the new run) changes from this one (the old), in words."""
        out: list[str] = []
        for key in sorted(set(self.verifiers) | set(other.verifiers)):
            old, new = self.verifiers.get(key), other.verifiers.get(key)
            if new is None:
                out.append(f"verifier {key!r} removed")
            elif old is None:
                out.append(f"verifier {key!r} added ({new['name']} v{new['version']})")
            else:
                out += [f"verifier {key!r}: {d}" for d in _differences(old, new)]
        if self.blocks != other.blocks:
            out.append("the grader's blocks (weights, gates, shaping, normalisation) changed")
        out += [f"policy: {d}" for d in _differences(self.policy, other.policy)]
        if self.mapping != other.mapping:
            out.append(f"column mapping: {self.mapping!r} -> {other.mapping!r}")
        return out


def _differences(old: Mapping[str, Any], new: Mapping[str, Any], prefix: str = "") -> list[str]:
    out = []
    for key in sorted(set(old) | set(new)):
        a, b = old.get(key), new.get(key)
        if a == b:
            continue
        if isinstance(a, Mapping) and isinstance(b, Mapping):
            out += _differences(a, b, f"{prefix}{key}.")
        else:
            out.append(f"{prefix}{key} {a!r} -> {b!r}")
    return out
