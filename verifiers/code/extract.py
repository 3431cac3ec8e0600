"""Finding the program in a completion.

Fenced blocks are found in both CommonMark forms (```` ``` ```` and ``~~~``, three or
more, closed by the same character at least as long). Blocks tagged with the language (or
an alias: ``py3``, ``ipython``, ``golang``, ...) count first, then untagged ones; a C task
also takes a block tagged as C++ and the other way round when nothing closer is there.

Which blocks make the program: when the names the tests call are known (a Python function
task), the last block that defines one of them at its top level is the program, with the
earlier blocks that only define things (imports, functions, classes, constants) put before
it: a helper given in its own block first is kept, and an "example usage" or test block
after the solution no longer replaces it. Otherwise (stdio programs, HumanEval function
bodies) the last block that is a program (not an example input or output, not comments
only), preferring one that reads stdin (Python) or has a `main`; with no block, the whole
text.

    >>> extract_code("Here:\\n```python\\nprint(1)\\n```\\nDone.", "python")
    'print(1)\\n'
    >>> text = "```python\\ndef f():\\n    return 1\\n```\\nUsage:\\n```python\\nprint(f())\\n```"
    >>> extract_code(text, "python", ["f"])
    'def f():\\n    return 1\\n'
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence

__all__ = ["extract_code"]

_FENCE = re.compile(
    r"(?:^(?P<indent>[ \t]*))?(?P<fence>`{3,}+|~{3,}+)[ \t]*\{?\.?(?P<tag>[^\s`{}]*)"
    r"[^\n]*+(?:(?P<eol>\n)|\Z)"
    r"(?P<body>.*?)(?:(?:(?<!`)(?=`)|(?<!~)(?=~))(?P=fence)[`~]*+[ \t]*+(?=\n|\Z)|\Z)",
    re.DOTALL | re.MULTILINE,
)
"""A fenced block. It closes at a fence that ends its line (a line of its own, or the
last line of code followed by the fence), never at one inside a line (a string or a
comment holding three backticks); an indented fence (in a list item) records its indent,
which `_body` removes from each line as CommonMark does.

Each run is read once (red team rtcode8: these were quadratic in a run's length, 14 to 104 s
on 30,000 to 40,000 characters): the opening fence is its whole run (CommonMark's); an
opening line with no newline, the text's last, ends the match at the end of the text (no
block: ``eol`` is empty, and no block could start there anyway); a closing fence starts
where its run of that character starts (from inside the run it would end the same way)."""
_BOM = "\ufeff"
"""A byte-order mark some editors and models put first: `compile` refuses it in text."""

_ALIASES = {
    "python": {"python", "py", "python3", "py3", "ipython", "ipython3", "python2"},
    "cpp": {"cpp", "c++", "cc", "cxx", "hpp"},
    "c": {"c", "h"},
    "rust": {"rust", "rs"},
    "java": {"java"},
    "javascript": {"javascript", "js", "node", "nodejs", "mjs"},
    "go": {"go", "golang"},
}
_KIN = {"c": "cpp", "cpp": "c"}
"""A C program tagged ``cpp`` (or the reverse) is still the program when nothing closer is."""


def extract_code(text: str, language: str, names: Sequence[str] = ()) -> str:
    """The program in `text` for `language` (see the module doc); `names`: the functions
    the tests call, when known."""
    text = text.removeprefix(_BOM)
    blocks = [
        (_tag(m["tag"]), _body(m["body"], m["indent"] or ""))
        for m in _FENCE.finditer(text)
        if m["eol"]
    ]
    chosen = _of_language(blocks, language)
    if not chosen:
        return text
    if language == "python" and names:
        program = _around_definition(chosen, set(names))
        if program is not None:
            return program
    return _last_program(chosen, language)


_READS_STDIN = re.compile(
    r"\binput\s*\(|sys\.stdin|open\(\s*0|fileinput|readline|scanf|cin\b|stdin"
)
_MAIN = re.compile(r"\bmain\b")


def _last_program(blocks: list[str], language: str) -> str:
    """The last block that is a program, not data or a note: an example input or output
    (`1 2`, `3`), comments only, a bare name. Among programs, the last that reads stdin
    (Python) or has a `main` (compiled languages) is preferred: a test or run harness
    after the solution is not it."""
    programs = [b for b in blocks if _program_like(b, language)]
    if not programs:
        return blocks[-1]
    marker = _READS_STDIN if language == "python" else _MAIN
    preferred = [b for b in programs if marker.search(b)]
    return (preferred or programs)[-1]


def _program_like(body: str, language: str) -> bool:
    code = [
        line
        for line in body.splitlines()
        if line.strip() and not line.lstrip().startswith(("#", "//", "/*", "*", "$", ">>>"))
    ]
    if not code:
        return False
    if language != "python":
        return re.search(r"[(){};=]", "\n".join(code)) is not None
    tree = _parse(body)
    if tree is None:
        return False
    return any(
        not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant | ast.Name))
        for stmt in tree.body
    )


def _tag(tag: str) -> str:
    """The language an info string names, in the alias table's form: ``Python3.11`` ->
    ``python``, ``python:solution.py`` and ``language-python`` -> ``python``,
    ``rust,ignore`` -> ``rust`` (a file name, a class prefix or an option is not a
    language of its own)."""
    tag = re.split(r"[:,;=]", tag.lower())[0]
    tag = re.sub(r"^(?:language|lang)-", "", tag)
    known = set().union(*_ALIASES.values())
    if tag in known:
        return tag
    end = len(tag)  # ``re.sub(r"[\d.]+$", ...)`` tried every start: quadratic (rtcode8)
    while end and (tag[end - 1] == "." or tag[end - 1].isdecimal()):
        end -= 1
    return tag[:end]


def _body(body: str, indent: str) -> str:
    """A block's code: without a leading byte-order mark, and without up to the opening
    fence's indentation on each line (a fence in a list item indents its code with it)."""
    if indent:
        width = len(indent)
        body = "\n".join(_outdent(line, width) for line in body.split("\n"))
    return body.removeprefix(_BOM)


def _outdent(line: str, width: int) -> str:
    cut = 0
    while cut < width and cut < len(line) and line[cut] in " \t":
        cut += 1
    return line[cut:]


def _of_language(blocks: list[tuple[str, str]], language: str) -> list[str]:
    own = _ALIASES.get(language, {language})
    for tags in (own, {""}, _ALIASES.get(_KIN.get(language, ""), set())):
        found = [body for tag, body in blocks if tag in tags]
        if found:
            return found
    return []


def _around_definition(blocks: list[str], names: set[str]) -> str | None:
    trees = [_parse(b) for b in blocks]
    defining = [i for i, t in enumerate(trees) if t is not None and _defines(t, names)]
    if not defining:
        return None
    last = defining[-1]
    before = [  # helpers and imports; an earlier draft of a tested function is not kept
        b
        for b, t in zip(blocks[:last], trees[:last], strict=True)
        if _only_definitions(t) and t is not None and not _defines(t, names)
    ]
    return "\n".join([*before, blocks[last]])


def _parse(source: str) -> ast.Module | None:
    try:
        return ast.parse(source)
    except (SyntaxError, ValueError, MemoryError, RecursionError):
        # The parser's own stack: 40,000 ``~`` before a name raised MemoryError here, a
        # crash of the scoring process (no reward) where a wrong program earns 0 (rtcode8).
        return None


def _defines(tree: ast.Module, names: set[str]) -> bool:
    for stmt in tree.body:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            bound = {stmt.name}
        elif isinstance(stmt, ast.Assign):
            bound = {t.id for t in stmt.targets if isinstance(t, ast.Name)}
        else:
            continue
        if bound & names:
            return True
    return False


_DEFINITIONS = (
    ast.Import,
    ast.ImportFrom,
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
    ast.Assign,
    ast.AnnAssign,
)


def _only_definitions(tree: ast.Module | None) -> bool:
    """A block that runs nothing at load but definitions (a docstring aside)."""
    if tree is None or not tree.body:
        return False
    for stmt in tree.body:
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
            continue
        if not isinstance(stmt, _DEFINITIONS):
            return False
        if isinstance(stmt, ast.Assign | ast.AnnAssign) and _calls(stmt):
            return False
    return True


def _calls(stmt: ast.stmt) -> bool:
    return any(isinstance(n, ast.Call) for n in ast.walk(stmt))
