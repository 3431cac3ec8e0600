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
  templates) is the text the answer is read from; the text after its closing tag is
  rendered apart (`Rendered.after_answer`) and read as the text after a box is;
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
from collections.abc import Callable
from dataclasses import dataclass

from rewardsmith.verifiers.math.boxes import matching_braces
from rewardsmith.verifiers.math.endings import declared_answer, earlier_declared
from rewardsmith.verifiers.math.glyphs import plain_glyphs
from rewardsmith.verifiers.math.macros import expand_macros

__all__ = ["Rendered", "render"]

_HTML_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
# An HTML element the page does not show: display:none, visibility:hidden, hidden.
_HTML_OPEN = re.compile(r"<(span|div|p|font)\b([^<>]{0,300})>", re.IGNORECASE)
_HTML_HIDING = re.compile(
    r"display\s*:\s*none|visibility\s*:\s*hidden|\shidden\b|opacity\s*:\s*0*(?:\.0\d*)?\s*(?:[;\"']|$)"
    r"|font-size\s*:\s*0*(?:\.0\d*)?\s*(?:px|pt|em|rem|%)?\s*(?:[;\"']|$)",
    re.I,
)
_HTML_COLOUR = re.compile(r"(?<![-\w])colou?r\s*[:=]\s*[\"']?(rgb)?\(?([^;\"'<>)]{1,40})", re.I)
_IFFALSE = re.compile(r"\\iffalse(?![A-Za-z]).*?(?:\\fi(?![A-Za-z])|\Z)", re.DOTALL)
_LINE_WITH_PERCENT = re.compile(r"[^\n]*%[^\n]*")
_LATEX_COMMAND = re.compile(r"\\[A-Za-z]")
_FENCE = re.compile(r"(```|~~~).*?(?:\1|\Z)", re.DOTALL)
# Tags that only style text (<b>Answer:</b> 12): removed, a break is a new line.
_HTML_STYLE = re.compile(
    r"</?(b|strong|em|i|u|p|br|span|div|font|mark|sup|sub)\b[^<>]{0,300}/?>", re.I
)
_INLINE_CODE = re.compile(r"`([^`\n]{1,200})`")
_INLINE_CODE_BOX = re.compile(r"`[^`\n]*\\(?:boxed|fbox)[^`\n]*`")
# \scalebox below a tenth (0, 0.05, .001) prints nothing a reader can see.
_PHANTOM = re.compile(r"\\[hv]?phantom\s*\{|\\scalebox\s*\{\s*0*(?:\.0\d*)?\s*\}\s*\{")
_TEXTCOLOR = re.compile(r"\\textcolor\s*(?:\[([^\]]*)\])?\s*\{([^{}]*)\}\s*\{")
_COLOR = re.compile(r"\\color\s*(?:\[([^\]]*)\])?\s*\{([^{}]*)\}")
# Where a \color switch ends: its group's "}", the end of its formula, or a blank line.
_SWITCH_END = re.compile(r"\$|\\\)|\\\]|\n\s*\n")
_SWITCH_WINDOW = 5_000
_MAX_COLOUR_ROUNDS = 8
_NEAR_WHITE = 0.9
"""Every channel at least this (``#e6e6e6``): text no reader sees on a white page."""
_NAMED = {
    "white": (1.0, 1.0, 1.0),
    "transparent": (1.0, 1.0, 1.0),
    "black": (0.0, 0.0, 0.0),
    "gray": (0.5, 0.5, 0.5),
    "lightgray": (0.75, 0.75, 0.75),
    "darkgray": (0.25, 0.25, 0.25),
    "red": (1.0, 0.0, 0.0),
    "green": (0.0, 1.0, 0.0),
    "blue": (0.0, 0.0, 1.0),
    "cyan": (0.0, 1.0, 1.0),
    "magenta": (1.0, 0.0, 1.0),
    "yellow": (1.0, 1.0, 0.0),
}
# CSS names of colours a reader cannot tell from a white page.
_CSS_NEAR_WHITE = frozenset(
    {
        "snow",
        "ghostwhite",
        "whitesmoke",
        "ivory",
        "azure",
        "mintcream",
        "aliceblue",
        "floralwhite",
        "seashell",
        "lavenderblush",
        "honeydew",
        "oldlace",
        "linen",
        "cornsilk",
        "lightyellow",
    }
)
_HEX = re.compile(r"#?([0-9a-f]{3}|[0-9a-f]{6})")
_MIX = re.compile(r"([a-z]+)!(\d{1,3}(?:\.\d+)?)(?:!([a-z]+))?")  # xcolor "black!5", "white!95!red"
_STRUCK_COMMAND = re.compile(r"\\(?:sout|st|xout)\s*\{")
_STRUCK_TAG = re.compile(r"<(del|s|strike)\b[^<>]{0,300}>", re.IGNORECASE)
_BOX_OPEN = re.compile(r"\\(?:boxed|fbox)\s*\{")
_CROSS = re.compile(r"(?:\s|\$|\\\)|\\\]|[.,;:])*[✗✘❌❎]")
_TILDES = re.compile(r"~~(?=\S)([^\n]*?\S)~~")


@dataclass(frozen=True, slots=True)
class Rendered:
    """The visible text, the hidden fragments, and why the text was refused (or None)."""

    visible: str
    hidden: tuple[str, ...] = ()
    refused: str | None = None
    after_answer: str = ""
    """The text after the closing ``</answer>`` tag, rendered: read as the text after a
    box is (a retraction, an offer or a doubt there counts)."""
    other_answers: tuple[str, ...] = ()
    """The contents of the ``<answer>`` tags before the declared one (after the reasoning):
    one that differs from the declared answer is a hedge."""


def _white(model: str | None, value: str) -> bool:
    """Whether a colour is (nearly) the background's white: by name, hex, an xcolor mix
    (``black!5``), or an rgb, RGB, gray, cmyk or HTML model."""
    channels = _channels((model or "").strip(), value.strip().lower().replace(" ", ""))
    return channels is not None and min(channels) >= _NEAR_WHITE


def _channels(model: str, value: str) -> tuple[float, ...] | None:
    """A colour's red, green and blue in [0, 1] (a gray's one level); None if unread."""
    numbers = [float(n) for n in re.findall(r"\d+(?:\.\d+)?|\.\d+", value)]
    kind = model.lower()
    if kind in ("rgb", "gray") and numbers:
        scale = 255.0 if model == "RGB" or max(numbers) > 1 else 1.0
        return tuple(n / scale for n in numbers)
    if kind == "cmyk" and len(numbers) == 4:
        c, m, y, k = numbers
        return tuple((1 - v) * (1 - k) for v in (c, m, y))
    if kind not in ("", "html"):
        return None
    return _named_or_hex(value)


def _named_or_hex(value: str) -> tuple[float, ...] | None:
    if value in _NAMED:
        return _NAMED[value]
    if value in _CSS_NEAR_WHITE:
        return (1.0, 1.0, 1.0)
    mix = _MIX.fullmatch(value)
    if mix is not None and mix.group(1) in _NAMED:
        share = min(float(mix.group(2)), 100.0) / 100
        first, second = _NAMED[mix.group(1)], _NAMED.get(mix.group(3) or "white")
        if second is not None:
            return tuple(share * a + (1 - share) * b for a, b in zip(first, second, strict=True))
    hexed = _HEX.fullmatch(value)
    if hexed is None:
        return None
    digits = hexed.group(1)
    digits = "".join(d * 2 for d in digits) if len(digits) == 3 else digits
    return tuple(int(digits[i : i + 2], 16) / 255 for i in (0, 2, 4))


def _rewrite(text: str, opener: re.Pattern[str], keep: Callable[[re.Match[str], str], str]) -> str:
    """Each outermost ``\\cmd{..}`` that `opener` finds, replaced by ``keep(match, inner)``:
    one pass over the text with its braces matched once (linear in the text)."""
    pairs = matching_braces(text)
    out, at = [], 0
    for match in opener.finditer(text):
        if match.start() < at:
            continue  # inside a span already rewritten
        end = pairs.get(match.end() - 1)
        stop = len(text) if end is None else end + 1
        out += [text[at : match.start()], keep(match, text[match.end() : end])]
        at = stop
    return "".join(out) + text[at:]


def _first_unclosed(text: str, opener: re.Pattern[str]) -> str | None:
    """The first ``\\cmd{`` that `opener` finds whose brace never closes, if any."""
    pairs = matching_braces(text)
    for match in opener.finditer(text):
        if pairs.get(match.end() - 1) is None:
            return match.group().strip()
    return None


def _hidden_by(hidden: list[str]) -> Callable[[re.Match[str], str], str]:
    def keep(match: re.Match[str], inner: str) -> str:
        hidden.append(inner)
        return ""

    return keep


def _textcolour_by(hidden: list[str]) -> Callable[[re.Match[str], str], str]:
    def keep(match: re.Match[str], inner: str) -> str:
        if _white(match.group(1), match.group(2)):
            hidden.append(inner)
            return ""
        return inner

    return keep


def _colours(text: str, hidden: list[str]) -> str | None:
    """Text without colour commands (white text hidden); None when they nest too deeply."""
    for _ in range(_MAX_COLOUR_ROUNDS):  # "\\textcolor{red}{\\textcolor{white}{..}}"
        if not _TEXTCOLOR.search(text):
            break
        text = _rewrite(text, _TEXTCOLOR, _textcolour_by(hidden))
    else:
        return None
    out, at = [], 0
    for match in _COLOR.finditer(text):
        if match.start() < at:
            continue
        stop = match.end()
        if _white(match.group(1), match.group(2)):
            stop = _switch_end(text, match.end())
            hidden.append(text[match.end() : stop])
        out.append(text[at : match.start()])
        at = stop
    return "".join(out) + text[at:]


def _switch_end(text: str, start: int) -> int:
    """Where a colour switch at `start` stops: the "}" closing its group, or the end of
    its formula or paragraph, whichever comes first (looked for in a bounded window)."""
    window = text[start : start + _SWITCH_WINDOW]
    limit = _SWITCH_END.search(window)
    stop = limit.start() if limit else len(window)
    depth = 0
    for match in re.finditer(r"\\.|[{}]", window[:stop], re.DOTALL):
        if match.group() == "{":
            depth += 1
        elif match.group() == "}":
            depth -= 1
            if depth < 0:
                return start + match.start()
    return start + stop


def _html_hidden(text: str, hidden: list[str]) -> str:
    """Elements styled ``display:none``, ``visibility:hidden`` or ``hidden`` set apart."""
    out, at = [], 0
    for match in _HTML_OPEN.finditer(text):
        if match.start() < at or not _html_hides(match.group(2)):
            continue
        close = re.compile(rf"</{match.group(1)}\s*>", re.IGNORECASE).search(text, match.end())
        stop = close.end() if close else len(text)
        hidden.append(text[match.start() : stop])
        out += [text[at : match.start()], " "]
        at = stop
    return "".join(out) + text[at:]


def _html_hides(attributes: str) -> bool:
    """An element's attributes hide it: display, visibility, no opacity, no size, or a
    colour (nearly) white."""
    if _HTML_HIDING.search(attributes):
        return True
    colour = _HTML_COLOUR.search(attributes)
    return colour is not None and _white(colour.group(1), colour.group(2))


def _struck_out(text: str) -> str:
    """Struck-out text dropped (``~~..~~`` holding math or a digit, outside math;
    ``\\sout``, ``\\st``, ``\\xout``; ``<del>``, ``<s>``, ``<strike>``): a reader sees it
    crossed out, taken back, so it is neither an answer nor a hedge; so is a box marked
    with a cross."""
    text = _rewrite(text, _STRUCK_COMMAND, lambda match, inner: " ")
    for match in list(_STRUCK_TAG.finditer(text))[::-1]:
        close = re.compile(rf"</{match.group(1)}\s*>", re.I).search(text, match.end())
        stop = close.end() if close else len(text)
        text = text[: match.start()] + " " + text[stop:]

    def tildes(match: re.Match[str]) -> str:
        inside_math = text.count("$", 0, match.start()) % 2 == 1
        holds = re.search(r"[$\d\\]", match.group(1))
        return match.group() if inside_math or not holds else " "

    return _crossed_boxes(_TILDES.sub(tildes, text))


def _crossed_boxes(text: str) -> str:
    """A box followed by a cross ("\\boxed{5}$ ✗") dropped: its writer marked it wrong."""
    if not _CROSS.search(text):
        return text
    pairs = matching_braces(text)
    for box in list(_BOX_OPEN.finditer(text))[::-1]:
        end = pairs.get(box.end() - 1)
        crossed = end is not None and _CROSS.match(text, end + 1)
        if crossed:
            text = text[: box.start()] + " " + text[crossed.end() :]
    return text


def _comments(text: str, hidden: list[str]) -> str:
    """LaTeX ``%`` comments set apart, one pass per line (see the module docstring)."""

    def line(match: re.Match[str]) -> str:
        segment = match.group()
        commands = [m.start() for m in _LATEX_COMMAND.finditer(segment)]
        start = len(segment) - len(segment.lstrip())
        for percent in (m.start() for m in re.finditer("%", segment)):
            first = percent == start
            prev, prev2 = segment[percent - 1 : percent], segment[percent - 2 : percent - 1]
            after_digit = prev == "\\" or prev.isdigit() or (prev == " " and prev2.isdigit())
            if first or (not after_digit and commands and commands[-1] > percent):
                hidden.append(segment[percent:])
                return segment[:percent]
        return segment

    return _LINE_WITH_PERCENT.sub(line, text) if "%" in text else text


def render(text: str) -> Rendered:
    """The text as rendered; see the module docstring."""
    text = _FENCE.sub("\n", text)
    text = _INLINE_CODE_BOX.sub(" ", text)
    text = _INLINE_CODE.sub(r"\1", text)
    hidden: list[str] = []
    text = _html_hidden(text, hidden)  # before the styling tags go, with their styles
    text = _HTML_STYLE.sub(
        lambda m: "\n" if m.group(1).lower() in ("br", "p") else "", text
    )  # "The answer is `12`." shows 12 in a code font
    text = _struck_out(text)
    declared = declared_answer(text)
    after, others = "", earlier_declared(text)
    if declared is not None:  # "<answer>12</answer>": the declared answer
        text, after = "\n" + declared[0], declared[1]
    for pattern in (_HTML_COMMENT, _IFFALSE):
        hidden += [m.group() for m in pattern.finditer(text)]
        text = pattern.sub(lambda m: "\n" if "\n" in m.group() else " ", text)
    text = _comments(text, hidden)
    expanded = expand_macros(text)
    if expanded.refused is not None:
        return Rendered(text, tuple(hidden), expanded.refused)
    glyphs = plain_glyphs(expanded.text)
    if glyphs.refused is not None:
        return Rendered(text, tuple(hidden), glyphs.refused)
    unclosed = _first_unclosed(glyphs.text, _PHANTOM)
    if unclosed is not None:  # it would hide the rest of the text, a retraction included
        return Rendered(text, tuple(hidden), f"an unclosed {unclosed} hides what follows it")
    text = _rewrite(glyphs.text, _PHANTOM, _hidden_by(hidden))
    coloured = _colours(text, hidden)
    if coloured is None:
        return Rendered(text, tuple(hidden), "colour commands nested too deeply")
    shown = Rendered(coloured, tuple(h for h in hidden if h.strip()), other_answers=others)
    if not after.strip():
        return shown
    tail = render(after)  # no answer tag in it: the last one was taken
    if tail.refused is not None:
        return tail
    return Rendered(shown.visible, shown.hidden + tail.hidden, None, tail.visible, others)
