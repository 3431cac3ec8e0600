"""User macros, expanded as LaTeX would before the answer is read, or refused.

A completion may define its own commands: ``\\newcommand{\\ans}{12}`` then
``\\boxed{\\ans}`` shows 12. Read without expansion, the box says ``\\ans`` (no answer),
and a macro named ``\\answer`` looked like an answer phrase. So definitions are taken out
of the text (they render as nothing) and uses are replaced by their bodies:

* ``\\newcommand``, ``\\renewcommand``, ``\\providecommand`` (``{\\name}`` or ``\\name``,
  with ``[n]`` arguments), ``\\def\\name{..}`` and ``\\def\\name#1#2{..}``, and
  ``\\DeclareMathOperator{\\name}{text}`` (an operator name);
* arguments are brace groups or single tokens; expansion repeats until nothing changes.

Refused, as a format failure (``Expansion.refused``): what cannot be expanded simply
(``\\let``, ``\\edef``, ``\\gdef``, ``\\xdef``, ``\\csname``, ``\\expandafter``,
``\\catcode``, an optional argument's default), a redefinition of a command the reading
depends on (``\\boxed``, ``\\color``, ``\\phantom``, ``\\text``, ``\\frac``, ...), and an
expansion that does not end or grows past a bound (``\\newcommand{\\x}{\\x\\x}``).

    >>> expand_macros(r"\\newcommand{\\ans}{12} So \\boxed{\\ans}.").text
    ' So \\\\boxed{12}.'
    >>> expand_macros(r"\\def\\boxed#1{13} \\boxed{12}").refused
    'the completion redefines \\\\boxed'
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rewardsmith.verifiers.math.boxes import matching_braces

__all__ = ["Expansion", "expand_macros"]

_DEFINITION = re.compile(
    r"\\(?:(?:(?:re)?new|provide)command\*?\s*(?:\{\s*\\([A-Za-z]+)\s*\}|\\([A-Za-z]+))"
    r"\s*(?:\[(\d)\])?\s*(\[)?"
    r"|def\s*\\([A-Za-z]+)((?:#\d)*)\s*"
    r"|DeclareMathOperator\*?\s*\{\s*\\([A-Za-z]+)\s*\}\s*)\{"
)
_UNSUPPORTED = re.compile(
    r"\\(let|edef|gdef|xdef|csname|expandafter|catcode|futurelet)(?![A-Za-z])"
)
_PROTECTED = frozenset((
    "boxed", "fbox", "color", "textcolor", "phantom", "hphantom", "vphantom", "iffalse",
    "fi", "text", "textbf", "mathrm", "mbox", "frac", "dfrac", "tfrac", "sqrt", "left",
    "right", "begin", "end", "def", "newcommand", "renewcommand", "overline", "dot", "cdot",
    "times", "pm", "infty", "pi", "operatorname", "ldots", "dots",
))  # fmt: skip
_MAX_ROUNDS = 16
_MAX_MACROS = 64
_MAX_GROWTH = 4


@dataclass(frozen=True, slots=True)
class Expansion:
    text: str
    refused: str | None = None


@dataclass(frozen=True, slots=True)
class _Macro:
    arity: int
    body: str


def _definitions(text: str) -> tuple[str, dict[str, _Macro]] | str:
    """The text without its definitions, and the macros; or why it is refused. One pass,
    braces matched once."""
    macros: dict[str, _Macro] = {}
    pairs = matching_braces(text)
    out, at = [], 0
    for match in _DEFINITION.finditer(text):
        if match.start() < at:
            return "the completion defines a macro inside a macro's body"
        name = match.group(1) or match.group(2) or match.group(5) or match.group(7)
        if match.group(4):
            return "the completion defines a macro with an optional argument"
        if name in _PROTECTED:
            return f"the completion redefines \\{name}"
        end = pairs.get(match.end() - 1)
        if end is None:
            return f"the definition of \\{name} never closes"
        if len(macros) >= _MAX_MACROS:
            return f"the completion defines more than {_MAX_MACROS} macros"
        body = text[match.end() : end]
        if match.group(7):
            body = rf"\operatorname{{{body}}}"
        arity = int(match.group(3) or 0) or len(match.group(6) or "") // 2
        macros.setdefault(name, _Macro(arity, body))  # the first definition wins, as read
        out.append(text[at : match.start()])
        at = end + 1
    return "".join(out) + text[at:], macros


def _argument(text: str, at: int, pairs: dict[int, int]) -> tuple[str, int] | None:
    """The argument starting at `at` (a brace group or one token) and where it ends."""
    while at < len(text) and text[at] in " \t\n":
        at += 1
    if at >= len(text):
        return None
    if text[at] == "{":
        end = pairs.get(at)
        return None if end is None else (text[at + 1 : end], end + 1)
    command = re.match(r"\\[A-Za-z]+|\\.|.", text[at : at + 64], re.DOTALL)
    assert command is not None
    return command.group(), at + command.end()


def _expand_once(text: str, macros: dict[str, _Macro]) -> str:
    names = "|".join(sorted(map(re.escape, macros), key=len, reverse=True))
    pattern = re.compile(rf"\\({names})(?![A-Za-z])")
    pairs = matching_braces(text) if any(m.arity for m in macros.values()) else {}
    out, at = [], 0
    for match in pattern.finditer(text):
        if match.start() < at:
            continue
        macro, end, args = macros[match.group(1)], match.end(), []
        for _ in range(macro.arity):
            found = _argument(text, end, pairs)
            if found is None:
                break
            args.append(found[0])
            end = found[1]
        body = macro.body
        for i, arg in enumerate(args, start=1):
            body = body.replace(f"#{i}", arg)
        out += [text[at : match.start()], f"{{{body}}}" if macro.arity else body]
        at = end
    return "".join(out) + text[at:]


def expand_macros(text: str) -> Expansion:
    """The text with user macros expanded (see the module docstring), or why not."""
    if "\\" not in text:
        return Expansion(text)
    unsupported = _UNSUPPORTED.search(text)
    if unsupported:
        return Expansion(text, f"the completion uses \\{unsupported.group(1)}")
    found = _definitions(text)
    if isinstance(found, str):
        return Expansion(text, found)
    text, macros = found
    bound = _MAX_GROWTH * len(text) + 10_000
    for _ in range(_MAX_ROUNDS if macros else 0):
        expanded = _expand_once(text, macros)
        if expanded == text:
            return Expansion(text)
        if len(expanded) > bound:
            break
        text = expanded
    else:
        if not macros:
            return Expansion(text)
    return Expansion(text, "the completion's macros do not finish expanding")
