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

import ast
import re
from dataclasses import dataclass

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
class Definition:
    name: str
    params: tuple[str, ...]
    start: int
    """Offset of the definition's first character (its header)."""
    body: tuple[int, int]
    """Offsets of the body between its braces (or of the indented block in Python)."""
    end: int


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
    if language not in _HEADERS and language != "python":
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


# ----------------------------------------------------------------------------- masking

_LINE_COMMENT = {"c": "//", "cpp": "//", "java": "//", "javascript": "//", "go": "//", "rust": "//"}
_QUOTES = {
    "c": "\"'",
    "cpp": "\"'",
    "java": "\"'",
    "javascript": "\"'`",
    "go": "\"'`",
    "rust": '"',
}


def mask(source: str, language: str) -> str:
    """`source` with comments, string and character contents and disabled blocks blanked
    out (newlines kept), so offsets still match the original."""
    out = list(source)
    i, n = 0, len(source)
    line, quotes = _LINE_COMMENT.get(language, "//"), _QUOTES.get(language, "\"'")
    while i < n:
        ch = source[i]
        if source.startswith(line, i):
            end = source.find("\n", i)
            end = n if end < 0 else end
            begin, stop = i, end
        elif source.startswith("/*", i):
            end = _block_comment_end(source, i, nested=language == "rust")
            begin, stop = i, end
        elif ch in quotes and not (language == "rust" and _is_lifetime(source, i)):
            end = _string_end(source, i, ch)
            closed = end > i + 1 and source[end - 1] == ch
            begin, stop = i + 1, end - 1 if closed else end  # keep the quotes themselves
        else:
            i += 1
            continue
        for k in range(begin, stop):
            if out[k] != "\n":
                out[k] = " "
        i = max(end, i + 1)
    text = "".join(out)
    if language in ("c", "cpp"):
        text = _blank_disabled_preprocessor(text)
    elif language == "rust":
        text = _blank_cfg_items(text)
    elif language == "go" and re.search(r"^//go:build\s+ignore\b", source, re.M):
        text = re.sub(r"[^\n]", " ", text)
    return text


def _block_comment_end(s: str, i: int, nested: bool) -> int:
    depth, j = 1, i + 2
    while j < len(s) and depth:
        if nested and s.startswith("/*", j):
            depth, j = depth + 1, j + 2
        elif s.startswith("*/", j):
            depth, j = depth - 1, j + 2
        else:
            j += 1
    return j


def _string_end(s: str, i: int, quote: str) -> int:
    j = i + 1
    while j < len(s):
        if s[j] == "\\" and quote != "`":
            j += 2
            continue
        if s[j] == quote:
            return j + 1
        if s[j] == "\n" and quote != "`":
            return j  # an unterminated literal ends at the line (as compilers recover)
        j += 1
    return len(s)


def _is_lifetime(s: str, i: int) -> bool:
    """Rust: `'a` (a lifetime) is not a character literal; `'a'`, `'\\n'` are."""
    return s[i] == "'" and not re.match(r"'(?:\\.[^']*|[^'\\])'", s[i : i + 12])


_PP = re.compile(r"^[ \t]*#[ \t]*(if|ifdef|ifndef|elif|else|endif)\b(.*)$", re.M)


def _blank_disabled_preprocessor(text: str) -> str:
    """Blank ``#if 0`` / ``#if false`` blocks up to their ``#else``/``#elif``/``#endif``."""
    out = list(text)
    stack: list[tuple[bool, int]] = []  # (disabled, where the disabled part starts)
    for m in _PP.finditer(text):
        kind, rest = m.group(1), m.group(2).strip()
        if kind in ("if", "ifdef", "ifndef"):
            disabled = kind == "if" and rest in ("0", "false", "(0)")
            stack.append((disabled, m.end()))
        elif stack and kind in ("else", "elif", "endif"):
            disabled, begin = stack.pop()
            if disabled:
                _blank(out, begin, m.start())
            if kind != "endif":
                stack.append((False, m.end()))
    for disabled, begin in stack:
        if disabled:
            _blank(out, begin, len(text))
    return "".join(out)


_CFG = re.compile(r"#\[\s*cfg\s*\((?P<pred>[^\]]*)\)\s*\]")
_TRUE_CFG = {
    "unix",
    'target_os = "linux"',
    'target_family = "unix"',
    'target_pointer_width = "64"',
    'target_arch = "x86_64"',
}


def _blank_cfg_items(text: str) -> str:
    """Blank the item after a ``#[cfg(...)]`` that is false here (``any()``, ``test``, an
    unknown name): the compiler never sees it."""
    out = list(text)
    for m in _CFG.finditer(text):
        if " ".join(m.group("pred").split()) in _TRUE_CFG:
            continue
        end = _item_end(text, m.end())
        _blank(out, m.start(), end)
    return "".join(out)


def _item_end(text: str, i: int) -> int:
    brace, semi = text.find("{", i), text.find(";", i)
    if brace < 0 or (0 <= semi < brace):
        return len(text) if semi < 0 else semi + 1
    return _matching(text, brace)


def _blank(out: list[str], begin: int, end: int) -> None:
    for k in range(begin, end):
        if out[k] != "\n":
            out[k] = " "


def _matching(text: str, open_at: int) -> int:
    """Offset just past the brace matching the one at `open_at` (end of text if none)."""
    depth = 0
    for k in range(open_at, len(text)):
        if text[k] == "{":
            depth += 1
        elif text[k] == "}":
            depth -= 1
            if depth == 0:
                return k + 1
    return len(text)


# ----------------------------------------------------------------------------- definitions

_KEYWORDS = {"if", "for", "while", "switch", "catch", "return", "sizeof", "else", "do", "new"}
_KEYWORDS |= {"synchronized", "try", "match", "loop", "unsafe", "defer", "go", "select"}
_C_HEAD = re.compile(
    r"(?P<name>[A-Za-z_]\w*)\s*\((?P<params>[^;{}()]*(?:\([^()]*\)[^;{}()]*)*)\)"
    r"\s*(?:const\b\s*)?(?:noexcept\b\s*)?(?:throws\s+[\w.,\s]+)?\{"
)
_HEADERS = {
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
    pattern = _HEADERS.get(language)
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
        close = _matching(masked, open_at)
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


def _python_fallback(source: str) -> list[Definition]:
    """A source that does not parse: its `def` lines, each body running to the next one."""
    heads = list(
        re.finditer(r"^[ \t]*(?:async[ \t]+)?def[ \t]+(\w+)[ \t]*\(([^)]*)\)", source, re.M)
    )
    found = []
    for i, m in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(source)
        params = tuple(
            p.split(":")[0].split("=")[0].strip() for p in m.group(2).split(",") if p.strip()
        )
        found.append(Definition(m.group(1), params, m.start(), (m.end(), end), end))
    return found


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
    r"throw\s+new\s+[\w.]+\s*\(.*\)\s*;",
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
