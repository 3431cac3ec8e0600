"""The functions a source defines, found in its active code (see `masking`).

Regular expressions per language over the masked text (C, C++, Java, Rust, Go,
JavaScript) with brace matching for the body; Python's own parser, or its ``def`` lines
when the source does not parse.

    >>> [(d.name, d.params) for d in definitions("int add(int a, int b) { return a + b; }", "c")]
    [('add', ('a', 'b'))]
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from rewardsmith.verifiers.diagnostics.masking import mask, matching

__all__ = ["HEADERS", "Definition", "definitions"]


@dataclass(frozen=True)
class Definition:
    name: str
    params: tuple[str, ...]
    start: int
    """Offset of the definition's first character (its header)."""
    body: tuple[int, int]
    """Offsets of the body between its braces (or of the indented block in Python)."""
    end: int


_KEYWORDS = {"if", "for", "while", "switch", "catch", "return", "sizeof", "else", "do", "new"}
_KEYWORDS |= {"synchronized", "try", "match", "loop", "unsafe", "defer", "go", "select"}
_C_HEAD = re.compile(
    r"(?P<name>[A-Za-z_]\w*)\s*\((?P<params>[^;{}()]*(?:\([^()]*\)[^;{}()]*)*)\)"
    r"\s*(?:const\b\s*)?(?:noexcept\b\s*)?(?:throws\s+[\w.,\s]+)?\{"
)
HEADERS = {
    "c": _C_HEAD,
    "cpp": _C_HEAD,
    "java": _C_HEAD,
    "rust": re.compile(
        r"\bfn\s+(?P<name>[A-Za-z_]\w*)\s*(?:<[^>{]*>)?\s*\((?P<params>[^)]*)\)[^{;]*\{"
    ),
    "go": re.compile(
        r"\bfunc\s+(?:\([^)]*\)\s*)?(?P<name>[A-Za-z_]\w*)\s*\((?P<params>[^)]*)\)[^{]*\{"
    ),
    "javascript": re.compile(
        r"(?:\bfunction\s*\*?\s*(?P<name>[A-Za-z_$][\w$]*)\s*\((?P<params>[^)]*)\)\s*\{)"
        r"|(?:\b(?P<name2>[A-Za-z_$][\w$]*)\s*=\s*(?:async\s*)?\((?P<params2>[^)]*)\)\s*=>\s*\{)"
    ),
}


def definitions(source: str, language: str) -> list[Definition]:
    """The functions `source` defines in its active code, in order."""
    if language == "python":
        return _python_definitions(source)
    pattern = HEADERS.get(language)
    if pattern is None:
        return []
    masked = mask(source, language)
    found = []
    for m in pattern.finditer(masked):
        name = m.group("name") or m.groupdict().get("name2")
        if not name or name in _KEYWORDS:
            continue
        params_text = m.group("params") if m.group("name") else m.group("params2")
        open_at = m.end() - 1
        close = matching(masked, open_at)
        found.append(
            Definition(
                name,
                _param_names(params_text or "", language),
                m.start(),
                (open_at + 1, close - 1),
                close,
            )
        )
    return found


def _param_names(text: str, language: str) -> tuple[str, ...]:
    names = []
    for part in text.split(","):
        part = part.strip()
        if not part or part == "void":
            continue
        if language == "rust":
            part = part.split(":")[0]
        elif language == "go":
            part = part.split()[0]
        else:
            part = re.split(r"[=\[]", part)[0]
        words = re.findall(r"[A-Za-z_$][\w$]*", part)
        if words:
            names.append(words[0] if language in ("rust", "go", "javascript") else words[-1])
    return tuple(names)


def _python_definitions(source: str) -> list[Definition]:
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return _python_fallback(source)
    offsets = [0]
    for line in source.splitlines(keepends=True):
        offsets.append(offsets[-1] + len(line))

    def at(line: int, col: int) -> int:
        return offsets[line - 1] + col

    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and _python_active(tree, node):
            first, last = node.body[0], node.body[-1]
            end = at(last.end_lineno or last.lineno, last.end_col_offset or 0)
            params = tuple(a.arg for a in node.args.args if a.arg not in ("self", "cls"))
            found.append(
                Definition(
                    node.name,
                    params,
                    at(node.lineno, 0),
                    (at(first.lineno, first.col_offset), end),
                    end,
                )
            )
    return found


def _python_active(tree: ast.Module, target: ast.AST) -> bool:
    """False for a def inside ``if False:`` / ``if 0:``."""
    for node in ast.walk(tree):
        dead = isinstance(node, ast.If) and isinstance(node.test, ast.Constant)
        if dead and not node.test.value and _contains(node.body, target):  # type: ignore[attr-defined]
            return False
    return True


def _contains(body: list[ast.stmt], target: ast.AST) -> bool:
    return any(child is target for stmt in body for child in ast.walk(stmt))


_DEAD_IF = re.compile(r"^([ \t]*)if[ \t]+(?:False|0|None)[ \t]*:", re.M)


def _python_fallback(source: str) -> list[Definition]:
    """A source that does not parse: its `def` lines outside ``if False:`` blocks and
    comments, each body running to the next one."""
    dead = _dead_ranges(source)
    heads = [
        m
        for m in re.finditer(
            r"^[ \t]*(?:async[ \t]+)?def[ \t]+(\w+)[ \t]*\(([^)]*)\)", source, re.M
        )
        if not any(a <= m.start() < b for a, b in dead)
    ]
    found = []
    for i, m in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(source)
        params = tuple(
            p.split(":")[0].split("=")[0].strip() for p in m.group(2).split(",") if p.strip()
        )
        found.append(Definition(m.group(1), params, m.start(), (m.end(), end), end))
    return found


def _dead_ranges(source: str) -> list[tuple[int, int]]:
    """Offsets of the blocks under ``if False:`` (by indentation, for text that does not
    parse)."""
    ranges = []
    for m in _DEAD_IF.finditer(source):
        indent, end = len(m.group(1).expandtabs()), len(source)
        for line in re.finditer(r"^([ \t]*)\S.*$", source[m.end() :], re.M):
            if line.start() and len(line.group(1).expandtabs()) <= indent:
                end = m.end() + line.start()
                break
        ranges.append((m.end(), end))
    return ranges
