"""Finding the program in a completion: the last fenced block of the language, else all of it."""

from __future__ import annotations

import re

__all__ = ["extract_code"]

_FENCE = re.compile(r"```[ \t]*([\w+#-]*)[^\n]*\n(.*?)(?:```|\Z)", re.DOTALL)


def extract_code(text: str, language: str) -> str:
    """The last fenced block tagged `language` (or untagged); the whole text when none.

    >>> extract_code("Here:\\n```python\\nprint(1)\\n```\\nDone.", "python")
    'print(1)\\n'
    """
    aliases = _ALIASES.get(language, {language})
    blocks = [(tag.lower(), body) for tag, body in _FENCE.findall(text)]
    tagged = [body for tag, body in blocks if tag in aliases]
    untagged = [body for tag, body in blocks if not tag]
    if tagged:
        return tagged[-1]
    if untagged:
        return untagged[-1]
    return text


_ALIASES = {
    "python": {"python", "py", "python3"},
    "cpp": {"cpp", "c++", "cc", "cxx"},
    "c": {"c"},
    "rust": {"rust", "rs"},
    "java": {"java"},
    "javascript": {"javascript", "js", "node"},
}
