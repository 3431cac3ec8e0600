"""Parse ``--verifier`` arguments: ``NAME``, ``NAME:key=value,key=value`` or ``NAME:{yaml}``.

Values are read as YAML scalars, so ``threshold=0.5`` is a float and ``strict=true`` a bool:

    >>> parse_verifier_arg("format:required_tags=answer,max_chars=5000")
    ('format', {'required_tags': 'answer', 'max_chars': 5000})
    >>> parse_verifier_arg("format:{required_tags: [think, answer]}")
    ('format', {'required_tags': ['think', 'answer']})
"""

from __future__ import annotations

from typing import Any

import yaml

__all__ = ["parse_verifier_arg"]


def parse_verifier_arg(text: str) -> tuple[str, dict[str, Any]]:
    name, _, settings = text.partition(":")
    name = name.strip()
    if not name:
        raise ValueError(f"--verifier {text!r}: give a verifier name, e.g. exact_match")
    settings = settings.strip()
    if not settings:
        return name, {}
    if settings.startswith("{"):
        config = yaml.safe_load(settings)
        if not isinstance(config, dict):
            raise ValueError(f"--verifier {text!r}: the settings must be a YAML mapping")
        return name, config
    config = {}
    for pair in settings.split(","):
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ValueError(f"--verifier {text!r}: settings are key=value pairs split by commas")
        config[key.strip()] = yaml.safe_load(value)
    return name, config
