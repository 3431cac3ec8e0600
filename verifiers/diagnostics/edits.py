"""What an attempt did to the source: definitions removed or stubbed, warnings silenced.

A build log cannot tell a repair from a retreat: deleting the broken function, commenting
it out, wrapping it in ``#if 0`` or reducing it to ``return 0;`` also makes the errors go
away. The rewards compare the attempt's source with the one the task started from:

- **removed**: a function defined in the original is no longer in the *active* code (the
  code a compiler sees: comments, string contents, ``#if 0`` blocks, Rust items under a
  ``#[cfg(...)]`` that is false on this machine and Go files under ``//go:build ignore``
  are not active);
- **stubbed**: its body became a stub (empty, ``return`` of a literal or of one of its
  parameters, ``todo!()``, ``throw new UnsupportedOperationException()``, ``pass``, ...)
  while it was not one before;
- **silenced**: directives that silence warnings (``#pragma GCC diagnostic ignored``,
  ``#[allow(...)]``, ``@SuppressWarnings``, ``# type: ignore``, ``//nolint``, ...) were
  added.

Heuristic by design (regular expressions over masked text, no compiler): it errs toward
missing an edit, never toward inventing one in code that defines the same functions.

    >>> before = "int sum(int n) { int s = 0; for (int i = 1; i <= n; i++) s += i return s; }"
    >>> compare(before, "int sum(int n) { return 0; }", "c").stubbed
    ('sum',)
    >>> compare(before, "#if 0\\n" + before + "\\n#endif\\n", "c").removed
    ('sum',)
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rewardsmith.verifiers.diagnostics.definitions import HEADERS, Definition, definitions
from rewardsmith.verifiers.diagnostics.masking import mask

__all__ = ["LANGUAGE_OF_TOOL", "Definition", "EditReport", "compare", "definitions", "mask"]

LANGUAGE_OF_TOOL = {
    "gcc": "c",
    "clang": "c",
    "g++": "cpp",
    "clang++": "cpp",
    "rustc": "rust",
    "cargo": "rust",
    "javac": "java",
    "java": "java",
    "go": "go",
    "go-vet": "go",
    "node": "javascript",
    "tsc": "javascript",
    "python": "python",
    "mypy": "python",
    "pyright": "python",
}
"""The language of the sources a tool's log is about."""


@dataclass(frozen=True)
class EditReport:
    removed: tuple[str, ...] = ()
    stubbed: tuple[str, ...] = ()
    silenced: int = 0
    """How many warning-silencing directives were added."""

    @property
    def retreated(self) -> bool:
        """Whether the attempt removed or stubbed code the task started with."""
        return bool(self.removed or self.stubbed)

    def to_dict(self) -> dict[str, object]:
        return {
            "removed": list(self.removed),
            "stubbed": list(self.stubbed),
            "silenced": self.silenced,
        }


def compare(before: str, after: str, language: str) -> EditReport:
    """What `after` did to the functions of `before` (both whole sources)."""
    if language not in HEADERS and language != "python":
        return EditReport()
    old = {d.name: d for d in definitions(before, language)}
    new = {d.name: d for d in definitions(after, language)}
    removed = tuple(name for name in old if name not in new)
    stubbed = tuple(
        name
        for name, d in new.items()
        if name in old
        and _is_stub(after, d, language)
        and not _is_stub(before, old[name], language)
    )
    silenced = max(0, _suppressions(after, language) - _suppressions(before, language))
    return EditReport(removed, stubbed, silenced)


# ----------------------------------------------------------------------------- stubs

_LITERAL = "|".join(
    [
        r"-?\s*(?:0x[0-9a-fA-F]+|\d+(?:\.\d*)?(?:[eE][-+]?\d+)?)[uUlLfF]*",
        r"true|false|null|nullptr|NULL|None|nil|True|False",
        r"'\s*'|\"\s*\"|`\s*`|\(\)|\[\]|\{\}",  # literals whose contents mask() blanked
        r"Default::default\(\)|String::new\(\)|Vec::new\(\)",
    ]
)
_STUB_BODIES = [
    r"",
    r"return\s*;?",
    r"return\s+(?:{value})\s*;?",
    r"(?:{value})",  # a Rust or Go tail expression
    r"(?:todo|unimplemented|unreachable|panic)!\s*\(.*\)\s*;?",
    r"throw\b[^;]*;",  # throw new X(...); (Java, JS), throw "x"; throw std::logic_error(...) (C++)
    r"panic\s*\(.*\)",
    r"(?:abort|exit|_exit)\s*\(.*\)\s*;",
    r"(?:(?:std::)?process::exit|System\.exit|os\.Exit|sys\.exit|process\.exit|"
    r"Runtime\.getRuntime\(\)\.halt)\s*\(.*?\)\s*;?(?:\s*return\b[^;]*;?)?",
    r"pass",
    r"\.\.\.",
    r"raise\s+NotImplementedError\b.*",
]


def _is_stub(source: str, d: Definition, language: str) -> bool:
    start, end = d.body
    if language == "python":
        body = _python_body(source[start:end])
    else:
        body = " ".join(mask(source, language)[start:end].split())
    params = "|".join(re.escape(p) for p in d.params)
    value = f"(?:{_LITERAL})" + (f"|(?:{params})" if params else "")
    return any(re.fullmatch(p.format(value=value), body, re.S) for p in _STUB_BODIES)


def _python_body(text: str) -> str:
    lines = [
        ln.strip() for ln in text.splitlines() if ln.strip() and not ln.strip().startswith("#")
    ]
    if lines and re.fullmatch(r"[rbuRBU]?('''|\"\"\"|'|\").*", lines[0]) and len(lines) > 1:
        lines = lines[1:]  # a docstring is not a body
    return " ".join(lines)


# ----------------------------------------------------------------------------- silencing

_SUPPRESSIONS = {
    "c": r"#\s*pragma\s+(?:GCC|clang)\s+diagnostic\s+ignored|#\s*pragma\s+warning\s*\(\s*disable"
    r"|#\s*pragma\s+GCC\s+system_header",
    "rust": r"#!?\[\s*allow\s*\(",
    "java": r"@SuppressWarnings\b",
    "go": r"//\s*nolint\b|//\s*lint:ignore\b",
    "javascript": r"@ts-ignore|@ts-nocheck|@ts-expect-error|eslint-disable",
    "python": r"#\s*type:\s*ignore|#\s*noqa\b|#\s*pyright:\s*ignore"
    r"|warnings\.(?:filterwarnings|simplefilter)\s*\(\s*[\"']ignore",
}
_SUPPRESSIONS["cpp"] = _SUPPRESSIONS["c"]


def _suppressions(source: str, language: str) -> int:
    pattern = _SUPPRESSIONS.get(language)
    return len(re.findall(pattern, source)) if pattern else 0
