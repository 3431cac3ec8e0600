"""The completion as a reader sees it once rendered: what cannot be seen is set apart.

A reward that reads text the reader cannot see pays for an answer nobody was shown. Before
extraction the completion is rendered, roughly as Markdown with MathJax/LaTeX would be:

* **hidden** (kept apart in `Rendered.hidden`): ``\\phantom{..}``, ``\\hphantom``,
  ``\\vphantom``, ``\\scalebox{0}``; text in a colour equal to the (white) background
  (``\\color{white}`` to the end of its group or formula, ``\\textcolor{white}{..}``,
  ``#fff``, ``#FFFFFF``, ``rgb 1,1,1``, ``gray 1``); HTML comments ``<!-- .. -->`` and
  elements styled ``display:none`` or ``hidden``; ``\\iffalse .. \\fi``; LaTeX ``%``
  comments (a ``%`` that starts its line, or that is not after a digit and has a command
  after it on its line: ``25%`` and ``n % 4`` stay text; ``\\%`` is a percent);
* **dropped** (neither seen as an answer nor a hedge): fenced code blocks and inline code
  that holds a box (code is not the final answer);
* **the declared answer**: the content of the last ``<answer>..</answer>`` (R1-style
  templates) is the text the answer is read from;
* **unwrapped**: inline code without a box (``The answer is `12`.``), other colours
  (``\\color{red}``, ``\\textcolor{blue}{13}`` is 13);
* user macros are expanded (`rewardsmith.verifiers.math.macros`) and Unicode digits read
  as printed (`rewardsmith.verifiers.math.glyphs`); either may refuse the text
  (`Rendered.refused`), a format failure.

The verifier reads the answer from `Rendered.visible`; a boxed answer among the hidden
fragments that differs from the visible one is a hedge.

    >>> r = render(r"So $\\boxed{13}$. $\\phantom{\\boxed{12}}$")
    >>> r.visible, r.hidden
    ('So $\\\\boxed{13}$. $$', ('\\\\boxed{12}',))
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rewardsmith.verifiers.math.boxes import matching_braces
from rewardsmith.verifiers.math.glyphs import plain_glyphs
from rewardsmith.verifiers.math.macros import expand_macros

__all__ = ["Rendered", "render"]

_HTML_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
# An HTML element the page does not show: display:none, visibility:hidden, hidden.
_HTML_HIDDEN = re.compile(
    r"<(span|div|p|font)\b[^>]*(?:display\s*:\s*none|visibility\s*:\s*hidden|\shidden\b)"
    r"[^>]*>.*?(?:</\1\s*>|\Z)",
    re.DOTALL | re.IGNORECASE,
)
_IFFALSE = re.compile(r"\\iffalse(?![A-Za-z]).*?(?:\\fi(?![A-Za-z])|\Z)", re.DOTALL)
# A comment: "%" first on its line, or not after a digit (or "\") with a command after it.
_COMMENT = re.compile(r"(?m)^[ \t]*%[^\n]*|(?<![\\\d])(?<!\d )%(?=[^\n]*\\[A-Za-z])[^\n]*")
# A fenced block, wherever its fence starts ("Sure! ```\n...\n```"), to its closing fence.
_FENCE = re.compile(r"(```|~~~).*?(?:\1|\Z)", re.DOTALL)
# Tags that only style text (<b>Answer:</b> 12): removed, a break is a new line.
_HTML_STYLE = re.compile(r"</?(b|strong|em|i|u|p|br|span|div|font|mark|sup|sub)\b[^>]*/?>", re.I)
_INLINE_CODE = re.compile(r"`([^`\n]{1,200})`")
_ANSWER_TAG = re.compile(r"<answer>(.*?)(?:</answer>|\Z)", re.DOTALL | re.IGNORECASE)
_INLINE_CODE_BOX = re.compile(r"`[^`\n]*\\(?:boxed|fbox)[^`\n]*`")
_PHANTOM = re.compile(r"\\[hv]?phantom\s*\{|\\scalebox\s*\{\s*0*\.?0*\s*\}\s*\{")
_TEXTCOLOR = re.compile(r"\\textcolor\s*(?:\[([^\]]*)\])?\s*\{([^{}]*)\}\s*\{")
_COLOR = re.compile(r"\\color\s*(?:\[([^\]]*)\])?\s*\{([^{}]*)\}")
# Where a \color switch ends: its group's "}", the end of its formula, or a blank line.
_SWITCH_END = re.compile(r"\$|\\\)|\\\]|\n\s*\n")
_WHITE_NAMES = {"white", "#fff", "#ffffff", "fff", "ffffff", "transparent"}


@dataclass(frozen=True, slots=True)
class Rendered:
    """The visible text, the hidden fragments, and why the text was refused (or None)."""

    visible: str
    hidden: tuple[str, ...] = ()
    refused: str | None = None


def _white(model: str | None, value: str) -> bool:
    """Whether a colour is the background's (white): by name, hex, or rgb/gray model."""
    value = value.strip().lower().replace(" ", "")
    if not model:
        return value in _WHITE_NAMES
    model, parts = model.strip().lower(), value.split(",")
    if model == "html":
        return value in ("fff", "ffffff")
    if model in ("rgb", "gray"):
        return all(p in ("1", "1.0", "255") for p in parts)
    return False


def _strip_braced(text: str, opener: re.Pattern[str], hidden: list[str]) -> str:
    """Remove ``\\cmd{..}`` spans (the last first, so earlier indices stay valid)."""
    for match in reversed(list(opener.finditer(text))):
        end = matching_braces(text).get(match.end() - 1)
        stop = len(text) if end is None else end + 1
        hidden.append(text[match.end() : stop - 1])
        text = text[: match.start()] + text[stop:]
    return text


def _colours(text: str, hidden: list[str]) -> str:
    for match in reversed(list(_TEXTCOLOR.finditer(text))):
        end = matching_braces(text).get(match.end() - 1)
        stop = len(text) if end is None else end + 1
        inner = text[match.end() : stop - 1]
        if _white(match.group(1), match.group(2)):
            hidden.append(inner)
            inner = ""
        text = text[: match.start()] + inner + text[stop:]
    for match in reversed(list(_COLOR.finditer(text))):
        stop = match.end()
        if _white(match.group(1), match.group(2)):
            stop = _switch_end(text, match.end())
            hidden.append(text[match.end() : stop])
        text = text[: match.start()] + text[stop:]
    return text


def _switch_end(text: str, start: int) -> int:
    """Where a colour switch at `start` stops: the "}" closing its group, or the end of
    its formula or paragraph, whichever comes first."""
    depth = 0
    limit = _SWITCH_END.search(text, start)
    stop = limit.start() if limit else len(text)
    for match in re.finditer(r"\\.|[{}]", text[start:stop], re.DOTALL):
        if match.group() == "{":
            depth += 1
        elif match.group() == "}":
            depth -= 1
            if depth < 0:
                return start + match.start()
    return stop


def render(text: str) -> Rendered:
    """The text as rendered; see the module docstring."""
    text = _FENCE.sub("\n", text)
    text = _INLINE_CODE_BOX.sub(" ", text)
    text = _INLINE_CODE.sub(r"\1", text)
    text = _HTML_STYLE.sub(
        lambda m: "\n" if m.group(1).lower() in ("br", "p") else "", text
    )  # "The answer is `12`." shows 12 in a code font
    answers = list(_ANSWER_TAG.finditer(text))
    if answers and answers[-1].group(1).strip():  # "<answer>12</answer>": the declared answer
        text = "\n" + answers[-1].group(1).strip()
    hidden: list[str] = []
    for pattern in (_HTML_COMMENT, _HTML_HIDDEN, _IFFALSE, _COMMENT):
        hidden += [m.group() for m in pattern.finditer(text)]
        text = pattern.sub(lambda m: "\n" if "\n" in m.group() else " ", text)
    expanded = expand_macros(text)
    if expanded.refused is not None:
        return Rendered(text, tuple(hidden), expanded.refused)
    glyphs = plain_glyphs(expanded.text)
    if glyphs.refused is not None:
        return Rendered(text, tuple(hidden), glyphs.refused)
    text = _strip_braced(glyphs.text, _PHANTOM, hidden)
    text = _colours(text, hidden)
    return Rendered(text, tuple(h for h in hidden if h.strip()))
