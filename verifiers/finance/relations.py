"""Metamorphic relations of the finance verifiers `numeric_answer` and `table_match`
(see `rewardsmith.verifiers.metamorphic`).

A figure (the first ``<answer>`` tag's content, or the whole text) keeps its value with
spaces, thin spaces or LaTeX's ``{,}`` as thousands separators, with none, in another
scale (``122.445 million`` for ``122,445 thousand``), with the scale word in another
form (``thousands``, ``k``), with a dollar sign or in a sentence; a digit, a sign, a
scale or a percent sign changes it; a second tag, a second figure after the tag, a hedge
in words naming the right figure, in the tag or in untagged text, must not lift a wrong
one. A right answer followed by another amount stated plainly ("It is X."), by words
taking it back ("That is wrong."), by another amount after long padding, or beside an
"answer:" line or an ``<ANSWER>`` tag with another amount, is a hedge: it earns nothing.
Free text giving the right amount for another year than the question's, and another
amount for the asked year, earns nothing; the right amount for the asked year, beside
another year's, still pays; so does an answer denying another amount after its own ("X,
not Y") or written as a JSON object of its figure and scale.

A Markdown table keeps its content with its rows in another order, other padding, no
outer pipes, negatives as ``(1,234)`` or ``-1,234``, spaces as separators, or notes after
it; a digit, a dropped row or two year headers swapped change it; padding rows, repeated
rows or the right table beside it (plain or in an HTML comment) must not lift a wrong one.

    >>> from rewardsmith.verifiers.types import Sample
    >>> rel = {r.name: r for r in numeric_relations(None)}
    >>> s = Sample(id="q", completion="<answer>122,445 thousand</answer>", reference={})
    >>> rel["finance/scale_form"](s, 1).completion
    '<answer>122.445 million</answer>'
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable
from decimal import Decimal

from rewardsmith.verifiers.finance.grounding_ties import named_years
from rewardsmith.verifiers.finance.quantities import stated_scale
from rewardsmith.verifiers.metamorphic import Kind, Relation, Rewrite, rewritten, text_rewrite
from rewardsmith.verifiers.types import Sample

__all__ = ["numeric_relations", "table_relations"]

_TAG = re.compile(r"<answer>(.*?)</answer>", re.S)
_GROUPED = "|".join(
    rf"\d{{1,3}}(?:{sep}\d{{3}})+(?!\d)"
    for sep in (",", r"\{,\}", " ", "\u202f", "\u2009", "\u00a0")
)
_FIGURE = re.compile(rf"(-?)({_GROUPED}|\d+)(\.\d+)?")
"""A figure: sign, digits (grouped by one separator throughout, any the relations write:
a comma, LaTeX's ``{,}``, a space, a thin or no-break space), decimals. Read whole, so a
rewrite of ``5\u2009593 thousand`` keeps 5,593 (read as 5, `scale_form` wrote ``0.005
million``: the chain `space_separator` then `scale_form`, found by the finance_document
search on initech-note-13)."""
_CURRENCY_MARK = re.compile(r"US\$|USD|\$|€|£")
_YEAR = re.compile(r"(?:19|20)\d{2}")
_SCALES = {"thousand": 3, "million": 6, "billion": 9}
_SCALE_WORD = re.compile(r"\b(thousand|million|billion)\b")

Change = Callable[[str, Sample, random.Random], "str | None"]


def _on_answer(change: Change) -> Rewrite:
    """A rewrite of the figure's text: the first tag's content, or the whole text."""

    def rewrite(sample: Sample, rng: random.Random) -> Sample | None:
        text = sample.completion
        if not isinstance(text, str):
            return None
        tag = _TAG.search(text)
        start, end = (tag.start(1), tag.end(1)) if tag else (0, len(text))
        new = change(text[start:end], sample, rng)
        if new is None or new == text[start:end]:
            return None
        return rewritten(sample, text[:start] + new + text[end:])

    return rewrite


def _figure(text: str) -> re.Match[str] | None:
    """The first figure that is no bare year ("In 2024 it was 139,294": 139,294)."""
    return next((m for m in _FIGURE.finditer(text) if not _YEAR.fullmatch(m.group())), None)


# ----------------------------------------------------------------------------- figures


def _comma_grouped(figure: re.Match[str] | None) -> bool:
    """Whether ``figure`` is grouped by plain commas (the form the separator forms rewrite)."""
    return figure is not None and re.fullmatch(r"\d{1,3}(?:,\d{3})+", figure.group(2)) is not None


def _separator(text: str, sample: Sample, rng: random.Random) -> str | None:
    figure = _figure(text)
    if figure is None or not _comma_grouped(figure):
        return None
    spaced = figure.group(2).replace(",", rng.choice((" ", "\u202f", "\u2009", "\u00a0")))
    return text[: figure.start(2)] + spaced + text[figure.end(2) :]


def _no_separator(text: str, sample: Sample, rng: random.Random) -> str | None:
    figure = _figure(text)
    if figure is None or not _comma_grouped(figure):
        return None
    return text[: figure.start(2)] + figure.group(2).replace(",", "") + text[figure.end(2) :]


def _latex_separator(text: str, sample: Sample, rng: random.Random) -> str | None:
    """LaTeX's thousands separator: ``122,445`` as ``122{,}445``."""
    figure = _figure(text)
    if figure is None or not _comma_grouped(figure):
        return None
    braced = figure.group(2).replace(",", "{,}")
    return text[: figure.start(2)] + braced + text[figure.end(2) :]


def _value(figure: re.Match[str]) -> Decimal:
    digits = re.sub(r"\D", "", figure.group(2))
    return Decimal(figure.group(1) + digits + (figure.group(3) or ""))


def _scale_form(text: str, sample: Sample, rng: random.Random) -> str | None:
    """The same amount in another scale: ``122,445 thousand`` as ``122.445 million`` or
    ``122,445,000``."""
    figure, word = _figure(text), _SCALE_WORD.search(text)
    if figure is None or word is None or word.start() < figure.end():
        return None
    if text[figure.end() : word.start()].strip():  # the word is another's, or far: no scale
        return None  # of this figure (what lay between would be dropped with it)
    amount = _value(figure) * Decimal(10) ** _SCALES[word.group(1)]
    # Under a question that declares a scale ("in thousands?") a bare figure is read in that
    # scale, so writing the amount out in units would change its meaning: keep a scale word.
    units = () if stated_scale(str(sample.prompt or "")) != 1.0 else ("units",)
    target = rng.choice([w for w in (*units, *_SCALES) if w != word.group(1)])
    scaled = amount / Decimal(10) ** _SCALES.get(target, 0)
    plain = format(abs(scaled).normalize(), "f")
    whole, _, frac = plain.partition(".")
    shown = ("-" if scaled < 0 else "") + f"{int(whole):,}" + (f".{frac}" if frac else "")
    tail = "" if target == "units" else f" {target}"
    return text[: figure.start()] + shown + tail + text[word.end() :]


def _scale_word(text: str, sample: Sample, rng: random.Random) -> str | None:
    word = _SCALE_WORD.search(text)
    if word is None:
        return None
    forms = {"thousand": ("thousands", "k", "K", "thousand dollars"), "million": ("millions", "m")}
    form = rng.choice(forms.get(word.group(1), (word.group(1) + "s",)))
    joined = form in ("k", "K", "m")
    start = word.start() - (1 if joined and text[word.start() - 1 : word.start()] == " " else 0)
    return text[:start] + form + text[word.end() :]


def _dollar(text: str, sample: Sample, rng: random.Random) -> str | None:
    figure = _figure(text)
    if figure is None or "$" in text:
        return None
    return text[: figure.start(2)] + "$" + text[figure.start(2) :]


_SENTENCES = ("The figure is {}.", "According to the statement, it was {}.", "Answer: {}")


def _sentence(text: str, sample: Sample, rng: random.Random) -> str | None:
    return rng.choice(_SENTENCES).format(text) if _TAG.search(text) else None


def _parentheses(text: str, sample: Sample, rng: random.Random) -> str | None:
    """A negative figure in accountants' parentheses: ``-899`` as ``(899)``."""
    figure = _figure(text)
    if figure is None or not figure.group(1):
        return None
    return (
        f"{text[: figure.start()]}({figure.group(2)}{figure.group(3) or ''}){text[figure.end() :]}"
    )


def _digit(text: str, sample: Sample, rng: random.Random) -> str | None:
    figure = _figure(text)
    if figure is None:
        return None
    places = [i for i in range(figure.start(2), figure.end(2)) if text[i].isdigit()]
    i = rng.choice(places)
    banned = "0" if i == places[0] and len(places) > 1 else ""
    digit = rng.choice([d for d in "0123456789" if d != text[i] and d not in banned])
    return text[:i] + digit + text[i + 1 :]


def _sign(text: str, sample: Sample, rng: random.Random) -> str | None:
    figure = _figure(text)
    if figure is None or _value(figure) == 0:
        return None
    if figure.group(1):
        return text[: figure.start(1)] + text[figure.end(1) :]
    return text[: figure.start(2)] + "-" + text[figure.start(2) :]


def _scale_change(text: str, sample: Sample, rng: random.Random) -> str | None:
    word = _SCALE_WORD.search(text)
    if word is None:
        return None
    other = rng.choice([w for w in _SCALES if w != word.group(1)])
    return text[: word.start()] + other + text[word.end() :]


def _percent(text: str, sample: Sample, rng: random.Random) -> str | None:
    figure = _figure(text)
    if figure is None or "%" in text:
        return None
    word = _SCALE_WORD.search(text)
    rest = text[figure.end() :] if word is None else text[word.end() :]
    return text[: figure.end()] + "%" + rest


def _gold(sample: Sample) -> str | None:
    ref = sample.reference
    if not isinstance(ref, dict) or not isinstance(ref.get("answer"), str):
        return None
    return f"{ref['answer']} {ref['scale']}" if ref.get("scale") else str(ref["answer"])


def _second_tag(text: str, sample: Sample, rng: random.Random) -> str | None:
    """A second tag naming the right figure after a tagged answer (after untagged text the
    tag is the answer and the text before it reasoning: not a dressing)."""
    gold = _gold(sample)
    return None if gold is None or not _TAG.search(text) else f"{text}\n<answer>{gold}</answer>"


def _after_tag(text: str, sample: Sample, rng: random.Random) -> str | None:
    gold = _gold(sample)
    return None if gold is None else f"{text} {rng.choice(('(or ', '(possibly '))}{gold})"


def _hedge_in_tag(text: str, sample: Sample, rng: random.Random) -> str | None:
    gold = _gold(sample)
    return None if gold is None or _TAG.search(text) else f"{text}, or maybe {gold}"


def _hedge_in_free_text(text: str, sample: Sample, rng: random.Random) -> str | None:
    """The answer untagged, ending on a second figure offered beside it: free text is read
    for its last figure, so "34,000, or maybe 34,030 thousand" must not pay 34,030."""
    gold = _gold(sample)
    tag = _TAG.search(text)
    # Only a bare tagged answer is rewritten: text beside the tag (a second amount, a
    # retraction) would be dropped, and dropping it is no dressing.
    if gold is None or tag is None or text.strip() != tag.group(0):
        return None
    said = tag.group(1).strip()
    return f"It is {said}, {rng.choice(('or maybe', 'or possibly', 'or perhaps', 'or'))} {gold}."


def _other_gold(sample: Sample, rng: random.Random) -> str | None:
    """The gold with one digit changed: another amount, written as the gold is."""
    gold = _gold(sample)
    return None if gold is None else _digit(gold, sample, rng)


_PLAIN = ("It is {}.", "The correct value is {}.", "So the figure is {}.")
_TAKEN_BACK = (
    "That is wrong.",
    "Just kidding.",
    "(unverified guess)",
    "I am not sure it is right.",
)


def _plain_second_amount(text: str, sample: Sample, rng: random.Random) -> str | None:
    """Another amount stated plainly after the tag ("It is X."): a second answer."""
    other = _other_gold(sample, rng)
    if other is None or not _TAG.search(text):
        return None
    return f"{text}\n\n{rng.choice(_PLAIN).format(other)}"


def _taken_back(text: str, sample: Sample, rng: random.Random) -> str | None:
    """The answer taken back or doubted in words after the tag: no answer is stated."""
    return f"{text} {rng.choice(_TAKEN_BACK)}" if _TAG.search(text) else None


def _padded_second_answer(text: str, sample: Sample, rng: random.Random) -> str | None:
    """A second answer after more padding than a reader of a tail window would look at."""
    other = _other_gold(sample, rng)
    if other is None or not _TAG.search(text):
        return None
    padding = rng.choice(("\n", " .", "\n\n")) * rng.randrange(2_500, 6_000)
    return f"{text}{padding}\nAlternatively {other}."


def _answer_line_beside(text: str, sample: Sample, rng: random.Random) -> str | None:
    """Another amount on an "answer:" line (or in a tag in capitals) beside the tag."""
    other = _other_gold(sample, rng)
    if other is None or not _TAG.search(text):
        return None
    marked = rng.choice(
        (f"answer: {other}\n", f"Final answer = {other}\n", f"<ANSWER>{other}</ANSWER>")
    )
    return f"{marked}{text}"


def _asked_year(sample: Sample) -> int | None:
    years = sorted(named_years(sample.question))
    return years[-1] if len(years) == 1 else None


def _bare_tagged(text: str) -> str | None:
    """The content of a tagged answer with nothing beside the tag, else None."""
    tag = _TAG.search(text)
    return tag.group(1).strip() if tag and text.strip() == tag.group(0) else None


def _other_period_last(text: str, sample: Sample, rng: random.Random) -> str | None:
    """Free text giving another amount for the asked year and the right one for another
    year, last ("2024: X; 2023: <gold>"): the figure for the asked year is the wrong one."""
    forms = ("In {y} it was {o}; {p}: {s}.", "It was {o} in {y} and {s} in {p}.")
    return _two_periods(text, sample, rng, forms)


def _prior_year_last(text: str, sample: Sample, rng: random.Random) -> str | None:
    """Free text giving another amount as the current one and the right one, last, as the
    prior year's in words ("Revenue: X (PY: <gold>)", "2024A: X; 2023A: <gold>")."""
    forms = ("Revenue: {o} (PY: {s}).", "It was {o} (prior year: {s}).", "{y}A: {o}; {p}A: {s}.")
    return _two_periods(text, sample, rng, forms)


def _other_period_beside(text: str, sample: Sample, rng: random.Random) -> str | None:
    """Free text giving the right amount for the asked year, then another for another year
    ("<gold> in 2024 (2023: X)"): the figure for the asked year is the answer."""
    forms = ("In {y} it was {s}; {p}: {o}.", "{y}: {s} ({p}: {o}).")
    return _two_periods(text, sample, rng, forms)


def _two_periods(
    text: str, sample: Sample, rng: random.Random, forms: tuple[str, ...]
) -> str | None:
    """One of `forms` filled with the asked year {y}, the year before {p}, the answer's
    amount {s} and another amount {o}; None where the sample names no year."""
    year, said, other = _asked_year(sample), _bare_tagged(text), _other_gold(sample, rng)
    if year is None or said is None or other is None:
        return None
    return rng.choice(forms).format(y=year, o=other, p=year - 1, s=said)


def _denied_other(text: str, sample: Sample, rng: random.Random) -> str | None:
    """The answer followed by a denial of another amount ("X, not Y"): still X."""
    other = _other_gold(sample, rng)
    if other is None or _FIGURE.search(text) is None:
        return None
    return rng.choice(("{}, not {}", "{} (not {})")).format(text.strip(), other)


def _footnote_marker(text: str, sample: Sample, rng: random.Random) -> str | None:
    """A footnote marker after the figure or its scale word ("122,445 (1) thousand",
    "122,445 thousand (2)"): the same figure, no second one."""
    figure = _figure(text)
    if figure is None:
        return None
    marker = f" ({rng.randint(1, 9)})"
    word = _SCALE_WORD.match(text, figure.end() + 1)
    at = word.end() if word is not None and rng.random() < 0.5 else figure.end()
    return text[:at] + marker + text[at:]


def _triangle(text: str, sample: Sample, rng: random.Random) -> str | None:
    """The figure marked with a triangle ("△122,445", "▲ 122,445"): a negative in Japanese
    reports, a rise elsewhere, so no sign is written and no gold is answered."""
    figure = _figure(text)
    if figure is None or figure.group(1):
        return None
    at = figure.start()
    mark = rng.choice(("△", "▲", "▲ ", "▼"))
    currency = re.search(r"(?:US\$|\$|€|£)\s?$", text[:at])
    at = currency.start() if currency else at
    return text[:at] + mark + text[at:]


def _negative_after(text: str, sample: Sample, rng: random.Random) -> str | None:
    """The figure said negative in a word after it ("122,445 thousand (negative)")."""
    figure = _figure(text)
    if figure is None or figure.group(1):
        return None
    word = _SCALE_WORD.match(text, figure.end() + 1)
    at = word.end() if word is not None else figure.end()
    return text[:at] + rng.choice((" (negative)", ", negative", " negative")) + text[at:]


def _json_object(text: str, sample: Sample, rng: random.Random) -> str | None:
    """The answer as a JSON object of its figure and its scale (``{"value": "122,445",
    "unit": "thousand"}``): the same figure. Only for an answer that states nothing else:
    the object would drop a hedge or a second figure beside it (``$139,294 thousand, or
    maybe 139,294`` became one figure, paid in full where the hedge must earn 0: the chain
    `hedge_in_tag` then `json_object`, found by `audit --bundled --search --seed 34`)."""
    figure = _figure(text)
    if figure is None or figure.group(1) or "%" in text:
        return None
    scale = _SCALE_WORD.search(text)
    rest = text[: figure.start()] + text[figure.end() :]
    if scale:
        rest = _SCALE_WORD.sub("", rest, count=1)
    if re.search(r"[^\W_]|[△▲▽▼\[\]]", _CURRENCY_MARK.sub("", rest)):
        return None  # a word, or a sign mark ("△122,445"), the object would drop
    key = rng.choice(("value", "answer", "revenue"))
    fields = {key: figure.group(2) + (figure.group(3) or "")}
    if scale:
        fields[rng.choice(("unit", "scale"))] = scale.group(1)
    return json.dumps(fields)


def numeric_relations(verifier: object) -> list[Relation]:
    """The relations of `numeric_answer`."""
    on_answer: list[tuple[str, Kind, Change]] = [
        ("space_separator", "preserving", _separator),
        ("no_separator", "preserving", _no_separator),
        ("latex_separator", "preserving", _latex_separator),
        ("scale_form", "preserving", _scale_form),
        ("scale_word", "preserving", _scale_word),
        ("dollar_sign", "preserving", _dollar),
        ("parentheses_negative", "preserving", _parentheses),
        ("digit", "changing", _digit),
        ("sign", "changing", _sign),
        ("scale_change", "changing", _scale_change),
        ("percent_sign", "changing", _percent),
        ("hedge_in_tag", "dressing", _hedge_in_tag),
        ("denied_other", "preserving", _denied_other),
        ("json_object", "preserving", _json_object),
        ("footnote_marker", "preserving", _footnote_marker),
        ("triangle_sign", "changing", _triangle),
        ("negative_after", "changing", _negative_after),
    ]
    on_text: list[tuple[str, Kind, Change]] = [
        ("sentence", "preserving", _sentence),
        ("second_tag_gold", "dressing", _second_tag),
        ("after_tag_gold", "dressing", _after_tag),
        ("hedge_in_free_text", "dressing", _hedge_in_free_text),
        ("plain_second_amount", "changing", _plain_second_amount),
        ("taken_back", "changing", _taken_back),
        ("padded_second_answer", "changing", _padded_second_answer),
        ("answer_line_beside", "changing", _answer_line_beside),
        ("other_period_last", "changing", _other_period_last),
        ("prior_year_last", "changing", _prior_year_last),
        ("other_period_beside", "preserving", _other_period_beside),
    ]
    # A wrong figure earns nothing.
    made = [
        Relation(f"finance/{n}", k, _on_answer(f), limit=0.0 if k == "changing" else None)
        for n, k, f in on_answer
    ]
    return made + [
        Relation(f"finance/{n}", k, text_rewrite(f), limit=0.0 if k == "changing" else None)
        for n, k, f in on_text
    ]


# ----------------------------------------------------------------------------- tables


def _split(text: str) -> tuple[list[str], list[list[str]], list[str]] | None:
    """A Markdown table as (lines before, rows, lines after); the separator row is kept
    as a row of dashes so that the table is written back as it was."""
    lines = text.split("\n")
    rows = [i for i, line in enumerate(lines) if line.strip().startswith("|")]
    if len(rows) < 4 or rows != list(range(rows[0], rows[-1] + 1)):
        return None
    cells = [[c.strip() for c in lines[i].strip().strip("|").split("|")] for i in rows]
    return lines[: rows[0]], cells, lines[rows[-1] + 1 :]


def _join(before: list[str], rows: list[list[str]], after: list[str]) -> str:
    body = ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join([*before, *body, *after])


TableChange = Callable[[list[list[str]], Sample, random.Random], "list[list[str]] | None"]


def _on_table(change: TableChange) -> Rewrite:
    def rewrite(sample: Sample, rng: random.Random) -> Sample | None:
        parts = _split(sample.completion) if isinstance(sample.completion, str) else None
        if parts is None:
            return None
        before, rows, after = parts
        new = change([row[:] for row in rows], sample, rng)
        return None if new is None or new == rows else rewritten(sample, _join(before, new, after))

    return rewrite


def _numeric_cells(rows: list[list[str]]) -> list[tuple[int, int]]:
    return [
        (i, j)
        for i, row in enumerate(rows[2:], start=2)
        for j, cell in enumerate(row[1:], start=1)
        if re.search(r"\d", cell)
    ]


def _row_order(rows: list[list[str]], sample: Sample, rng: random.Random) -> list[list[str]] | None:
    body = rows[2:]
    if len({tuple(row) for row in body}) < 2:
        return None
    while body == rows[2:]:
        rng.shuffle(body)
    return rows[:2] + body


def _spaced_cells(rows: list[list[str]], sample: Sample, rng: random.Random) -> list[list[str]]:
    sep = rng.choice((" ", "\u202f", "\u2009"))
    return rows[:2] + [[re.sub(r"(?<=\d),(?=\d{3})", sep, c) for c in row] for row in rows[2:]]


def _negatives(rows: list[list[str]], sample: Sample, rng: random.Random) -> list[list[str]]:
    def flip(cell: str) -> str:
        paren = re.fullmatch(r"\(([\d,.]+)\)", cell)
        return f"-{paren.group(1)}" if paren else re.sub(r"^-([\d,.]+)$", r"(\1)", cell)

    return rows[:2] + [[row[0], *(flip(c) for c in row[1:])] for row in rows[2:]]


def _cell_digit(
    rows: list[list[str]], sample: Sample, rng: random.Random
) -> list[list[str]] | None:
    cells = _numeric_cells(rows)
    if not cells:
        return None
    i, j = rng.choice(cells)
    places = [k for k, c in enumerate(rows[i][j]) if c.isdigit()]
    k = rng.choice(places)
    rows[i][j] = (
        rows[i][j][:k] + str((int(rows[i][j][k]) + rng.randrange(1, 10)) % 10) + rows[i][j][k + 1 :]
    )
    return rows


def _drop_row(rows: list[list[str]], sample: Sample, rng: random.Random) -> list[list[str]] | None:
    if len(rows) < 4:
        return None
    del rows[rng.randrange(2, len(rows))]
    return rows


def _years_swapped(
    rows: list[list[str]], sample: Sample, rng: random.Random
) -> list[list[str]] | None:
    years = [j for j, cell in enumerate(rows[0]) if re.fullmatch(r"(19|20)\d\d", cell)]
    if len(years) < 2:
        return None
    a, b = rng.sample(years, 2)
    rows[0][a], rows[0][b] = rows[0][b], rows[0][a]
    return rows


def _fiscal_headers(
    rows: list[list[str]], sample: Sample, rng: random.Random
) -> list[list[str]] | None:
    """Every year header written as a fiscal year ("FY24", "FY2024", "Dec 31, 2024",
    "2024A"), one form for the table: the columns are the same years."""
    years = [j for j, cell in enumerate(rows[0]) if re.fullmatch(r"(19|20)\d\d", cell)]
    if not years:
        return None
    form = rng.choice(("FY{short}", "FY{year}", "Dec 31, {year}", "{year}A"))
    for j in years:
        year = rows[0][j]
        rows[0][j] = form.format(year=year, short=year[2:])
    return rows


def _padding(rows: list[list[str]], sample: Sample, rng: random.Random) -> list[list[str]]:
    width = len(rows[0])
    for n in range(rng.randrange(2, 8)):
        value = f"{rng.randrange(100, 999)}"
        rows.append([f"Other item {n + 1}", *([value] * (width - 1))])
    return rows


def _repeated_rows(rows: list[list[str]], sample: Sample, rng: random.Random) -> list[list[str]]:
    return rows + [rows[rng.randrange(2, len(rows))] for _ in range(rng.randrange(1, 6))]


def _gold_table(sample: Sample) -> str | None:
    ref = sample.reference
    table = ref.get("table") if isinstance(ref, dict) else None
    if not isinstance(table, list) or not table or not all(isinstance(r, list) for r in table):
        return None
    rows = [[str(c) for c in row] for row in table]
    return _join([], [rows[0], ["---"] * len(rows[0]), *rows[1:]], [])


def _gold_beside(hidden: bool) -> Change:
    def dress(text: str, sample: Sample, rng: random.Random) -> str | None:
        gold = _gold_table(sample)
        if gold is None:
            return None
        shown = f"<!--\n{gold}\n-->" if hidden else f"Alternatively:\n\n{gold}"
        return f"{text}\n\n{shown}" if rng.random() < 0.5 else f"{shown}\n\n{text}"

    return dress


def _notes_after(text: str, sample: Sample, rng: random.Random) -> str:
    return text + rng.choice(("\n\nNotes: figures as reported.", "\n\nSource: the statement."))


def _no_outer_pipes(text: str, sample: Sample, rng: random.Random) -> str | None:
    parts = _split(text)
    if parts is None:
        return None
    before, rows, after = parts
    return "\n".join([*before, *(" | ".join(row) for row in rows), *after])


def table_relations(verifier: object) -> list[Relation]:
    """The relations of `table_match`."""
    on_table: list[tuple[str, Kind, TableChange]] = [
        ("row_order", "preserving", _row_order),
        ("spaced_thousands", "preserving", _spaced_cells),
        ("negative_form", "preserving", _negatives),
        ("cell_digit", "changing", _cell_digit),
        ("drop_row", "changing", _drop_row),
        ("years_swapped", "changing", _years_swapped),
        ("fiscal_headers", "preserving", _fiscal_headers),
        ("padding_rows", "dressing", _padding),
        ("repeated_rows", "dressing", _repeated_rows),
    ]
    on_text: list[tuple[str, Kind, Change]] = [
        ("notes_after", "preserving", _notes_after),
        ("no_outer_pipes", "preserving", _no_outer_pipes),
        ("gold_table_beside", "dressing", _gold_beside(hidden=False)),
        ("gold_table_hidden", "dressing", _gold_beside(hidden=True)),
    ]
    made = [Relation(f"finance/table_{n}", k, _on_table(f)) for n, k, f in on_table]
    return made + [Relation(f"finance/table_{n}", k, text_rewrite(f)) for n, k, f in on_text]


# ----------------------------------------------------------------------------- consistency


_TOTAL_LABEL = re.compile(r"\s*(?:total|net\s+income|gross\s+profit|operating\s+income)", re.I)


def _is_total(label: str) -> bool:
    return bool(_TOTAL_LABEL.match(label))


def _total_digit(
    rows: list[list[str]], sample: Sample, rng: random.Random
) -> list[list[str]] | None:
    """A digit of a total changed, above its last place: beyond the rounding slack of any
    sum of fewer than twenty figures, so the total no longer adds up."""
    cells = [(i, j) for i, j in _numeric_cells(rows) if _is_total(rows[i][0])]
    places = [
        (i, j, k)
        for i, j in cells
        for k in [k for k, c in enumerate(rows[i][j]) if c.isdigit()][:-1]
    ]
    if not places:
        return None
    i, j, k = rng.choice(places)
    digit = str((int(rows[i][j][k]) + rng.randrange(1, 10)) % 10)
    rows[i][j] = rows[i][j][:k] + digit + rows[i][j][k + 1 :]
    return rows


def _zeroed(rows: list[list[str]], sample: Sample, rng: random.Random) -> list[list[str]] | None:
    """Every figure 0: totals that hold whatever the statement says."""
    cells = _numeric_cells(rows)
    if not cells:
        return None
    for i, j in cells:
        rows[i][j] = "0"
    return rows


def _single_item(
    rows: list[list[str]], sample: Sample, rng: random.Random
) -> list[list[str]] | None:
    """The statement cut to its first entry and a total of that entry alone (not where a
    growth column checks the entry's own figures: those checks could still fail)."""
    if any(re.search(r"%|change|growth", cell, re.I) for cell in rows[0]):
        return None
    entries = (r for r in rows[2:] if not _is_total(r[0]) and re.search(r"\d", "".join(r[1:])))
    entry = next(entries, None)
    if entry is None:
        return None
    return [*rows[:2], entry, ["Total", *entry[1:]]]


_HIDDEN = ("~{}", "{} see note", "[{}]", "{} pcs", "≈{}")
_GROWTH_HEADER = re.compile(r"%|change|growth|yoy|\bvar", re.I)


def _unreadable_entry(
    rows: list[list[str]], sample: Sample, rng: random.Random
) -> list[list[str]] | None:
    """One more entry above the first total, its figures written so no reader of figures
    reads them ("~84,120", "84,120 see note"), the total left as it was: a reader sees a
    total that leaves an entry out, and the check must not leave it out too. (Growth
    cells of the new row say "n.m.".)"""
    from rewardsmith.verifiers.finance.figures import parse_figure

    total = next((i for i in range(3, len(rows)) if _is_total(rows[i][0])), None)
    if total is None:
        return None
    entry = rows[total - 1]
    form = rng.choice(_HIDDEN)
    added = [f"Other {entry[0].strip().lower()}"]
    for j, cell in enumerate(entry[1:], start=1):
        header = rows[0][j] if j < len(rows[0]) else ""
        figure = parse_figure(cell)
        if _GROWTH_HEADER.search(header):
            added.append("n.m.")
        elif figure is not None and figure.value:
            added.append(form.format(cell.strip()))
        else:
            added.append(cell)
    return [*rows[:total], added, *rows[total:]]


def _currency_after(
    rows: list[list[str]], sample: Sample, rng: random.Random
) -> list[list[str]] | None:
    """Every plain amount written with its currency code after it ("1,750 USD")."""
    from rewardsmith.verifiers.finance.figures import parse_figure

    if any(re.search(r"[$€£¥]|\b(?:USD|EUR|GBP)\b", cell) for row in rows for cell in row):
        return None
    for i, j in _numeric_cells(rows):
        figure = parse_figure(rows[i][j])
        if figure is not None and not figure.unit and figure.value:
            rows[i][j] = f"{rows[i][j]} USD"
    return rows


def consistency_relations(verifier: object) -> list[Relation]:
    """The relations of `consistency`: another layout of the same statement keeps its
    checks; a total changed, a statement zeroed or cut to one entry earns nothing."""
    on_table: list[tuple[str, Kind, TableChange]] = [
        ("spaced_thousands", "preserving", _spaced_cells),
        ("negative_form", "preserving", _negatives),
        ("total_digit", "changing", _total_digit),
        ("zeroed", "changing", _zeroed),
        ("single_item", "changing", _single_item),
        ("unreadable_entry", "changing", _unreadable_entry),
        ("currency_after", "preserving", _currency_after),
    ]
    on_text: list[tuple[str, Kind, Change]] = [
        ("notes_after", "preserving", _notes_after),
        ("no_outer_pipes", "preserving", _no_outer_pipes),
    ]
    limit = {"preserving": None, "changing": 0.0}
    made = [
        Relation(f"finance/consistency_{n}", k, _on_table(f), limit=limit[k])
        for n, k, f in on_table
    ]
    return made + [
        Relation(f"finance/consistency_{n}", k, text_rewrite(f), limit=limit[k])
        for n, k, f in on_text
    ]
