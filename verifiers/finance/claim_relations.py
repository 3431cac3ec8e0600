"""Metamorphic relations of the finance claim verifiers `cross_document` and `chart_claims`
(see `rewardsmith.verifiers.metamorphic`).

A comparison answer ("Globex, higher by 16,849 thousand") is made wrong by writing it as a
key-value answer with the labels swapped ("Higher: Acme. Lower: Globex."), by denying it
("It is not true that ..."), by an "answer:" line naming the other label before it, or
by a second clause naming the other label the higher one ("...; Acme, higher by 16,849"),
or by a relative gap no pair of the values gives written beside it ("(99.9%)").

Claims about a chart are made wrong by one more claim the chart cannot place (a series
with a figure and no year), a denied comparison the chart shows false, "consistently" on
a series that did not move the same way at every step, a comparison stating a wrong gap
("higher than in 2019 by 90" where it is 43.5), or a guess ("probably"): each
must fail the whole answer, since every claim must hold.

Cited figures are made wrong by opening each sentence with the year before the asked one
("In 2023, revenue was 122,445 (p. 1)": another column) or by a guess or a denial
("Revenue was probably 122,445"), or by saying a level was reached by the move the page
does not show ("Revenue rose to 122,445 (p. 1)" where it fell from 150,239), or by a
digit glued after a cited figure ("122,4450": a figure ten times the page's).

    >>> from rewardsmith.verifiers.types import Sample
    >>> rel = {r.name: r for r in cross_document_relations(None)}
    >>> items = [{"label": "Acme", "value": 1}, {"label": "Globex", "value": 2}]
    >>> s = Sample(id="x", completion="<answer>Globex, higher by 1</answer>",
    ...            reference={"ask": "higher", "amount": True, "items": items})
    >>> rel["finance/cross_key_value_swapped"](s, 0).completion
    '<answer>Higher: Acme. Lower: Globex. By 1</answer>'
"""

from __future__ import annotations

import itertools
import random
import re
from typing import Any

from rewardsmith.verifiers.metamorphic import Relation, rewritten
from rewardsmith.verifiers.types import Sample

__all__ = ["chart_relations", "cross_document_relations", "grounding_relations"]

_TAG = re.compile(r"<answer>(.*?)</answer>", re.S)
_AMOUNT = re.compile(r"\$?\d[\d,]*(?:\.\d+)?%?(?:\s*(?:thousand|million|billion))?")

# ----------------------------------------------------------------------------- cross_document


def _labels(sample: Sample) -> tuple[str, str, str] | None:
    """(the label the right answer names first, the other label, the ask), for a two-item
    higher/lower reference answered in a tag."""
    ref = sample.reference
    if not isinstance(ref, dict) or ref.get("ask") not in ("higher", "lower"):
        return None
    items = [i for i in ref.get("items", []) if isinstance(i, dict)]
    labels = [str(i["label"]) for i in items if isinstance(i.get("label"), str)]
    tag = _TAG.search(sample.completion) if isinstance(sample.completion, str) else None
    if len(labels) != 2 or len(items) != 2 or tag is None:
        return None
    named = sorted((tag.group(1).find(lab), lab) for lab in labels if lab in tag.group(1))
    if len(named) != 1:
        return None
    first = named[0][1]
    return first, next(lab for lab in labels if lab != first), str(ref["ask"])


def _on_tag(sample: Sample, content: str) -> Sample:
    tag = _TAG.search(sample.completion)
    assert tag is not None  # _labels found it
    text = sample.completion
    return rewritten(sample, text[: tag.start(1)] + content + text[tag.end(1) :])


def _key_value_swapped(sample: Sample, rng: random.Random) -> Sample | None:
    found = _labels(sample)
    if found is None:
        return None
    right, other, ask = found
    key, opposite = ("Higher", "Lower") if ask == "higher" else ("Lower", "Higher")
    tag = _TAG.search(sample.completion)
    amount = _AMOUNT.search(tag.group(1)) if tag else None
    by = f" By {amount.group(0)}" if amount else ""
    return _on_tag(sample, f"{key}: {other}. {opposite}: {right}.{by}")


def _denied(sample: Sample, rng: random.Random) -> Sample | None:
    if _labels(sample) is None:
        return None
    tag = _TAG.search(sample.completion)
    assert tag is not None
    denial = rng.choice(("It is not true that ", "Not: ", "Never "))
    return _on_tag(sample, denial + tag.group(1))


def _other_answer_line(sample: Sample, rng: random.Random) -> Sample | None:
    found = _labels(sample)
    if found is None:
        return None
    right, other, _ = found
    tag = _TAG.search(sample.completion)
    assert tag is not None
    line = tag.group(1).replace(right, other)
    return rewritten(sample, f"Answer: {line}\n{sample.completion}")


def _both_higher(sample: Sample, rng: random.Random) -> Sample | None:
    """A second clause naming the other label the answer ("Globex, higher by 16,849;
    Acme, higher by 16,849"): each label is claimed, so neither is."""
    found = _labels(sample)
    if found is None:
        return None
    _, other, ask = found
    tag = _TAG.search(sample.completion)
    assert tag is not None
    amount = _AMOUNT.search(tag.group(1))
    by = f" by {amount.group(0)}" if amount else ""
    clause = rng.choice((f"; {other}, {ask}{by}", f". {other} is {ask}{by}.", f"\n{other}: {ask}"))
    return _on_tag(sample, tag.group(1).rstrip(". ") + clause)


def _wrong_relative_gap(sample: Sample, rng: random.Random) -> Sample | None:
    """A relative gap no value pair gives written beside the answer ("Globex, higher by
    16,849 thousand (99.9%)"): a wrong claim, not another kind of fact."""
    if _labels(sample) is None:
        return None
    tag = _TAG.search(sample.completion)
    assert tag is not None
    if "%" in tag.group(1):
        return None
    wrong = rng.choice(("99.9%", "250%", "0.1%", "75%"))
    return _on_tag(sample, f"{tag.group(1)} ({wrong})")


def _not_other(sample: Sample, rng: random.Random) -> Sample | None:
    """The other label denied in passing after the answer's ("Globex (not Acme), higher by
    16,849 thousand"): the same answer, not a denial of it."""
    found = _labels(sample)
    if found is None:
        return None
    right, other, _ = found
    tag = _TAG.search(sample.completion)
    assert tag is not None
    content = tag.group(1)
    at = content.find(right) + len(right)
    rest = content[at:]
    if rng.random() < 0.5:
        said = f" (not {other})"
    else:
        said = f", not {other}" + ("" if rest.startswith(",") else ",")
    return _on_tag(sample, content[:at] + said + rest)


def _symbol(sample: Sample, rng: random.Random) -> Sample | None:
    """The comparison written as a symbol ("Globex > Acme by 16,849 thousand", "Acme <
    Globex ...") or with "beats": the same answer."""
    found = _labels(sample)
    if found is None:
        return None
    right, other, ask = found
    tag = _TAG.search(sample.completion)
    assert tag is not None
    amount = _AMOUNT.search(tag.group(1))
    by = f" by {amount.group(0)}" if amount else ""
    plain = rf"\s*{re.escape(right)},?\s+(?:is\s+)?{ask}(?:\s+than\s+{re.escape(other)})?"
    if not re.fullmatch(plain + re.escape(by) + r"\s*", tag.group(1)):
        return None  # only a plain answer: a rebuilt one would drop what else it says
    forms = (
        ("{r} > {o}", "{o} < {r}", "{r} beats {o}")
        if ask == "higher"
        else ("{r} < {o}", "{o} > {r}")
    )
    return _on_tag(sample, rng.choice(forms).format(r=right, o=other) + by)


def cross_document_relations(verifier: object) -> list[Relation]:
    """The relations of `cross_document`: each makes a right answer wrong (it earns 0)."""
    made = [
        ("cross_key_value_swapped", _key_value_swapped, "the labels swapped under their keys"),
        ("cross_denied", _denied, "the answer denied"),
        ("cross_other_answer_line", _other_answer_line, "an answer line naming the other"),
        ("cross_both_higher", _both_higher, "a second clause naming the other the answer"),
        ("cross_wrong_relative_gap", _wrong_relative_gap, "a wrong percentage gap beside it"),
    ]
    kept = [
        ("cross_not_other", _not_other, "the other label denied in passing"),
        ("cross_symbol", _symbol, "the comparison written as a symbol"),
    ]
    return [Relation(f"finance/{n}", "changing", f, d, limit=0.0) for n, f, d in made] + [
        Relation(f"finance/{n}", "preserving", f, d) for n, f, d in kept
    ]


# ----------------------------------------------------------------------------- chart_claims


def _chart_of(verifier: Any, sample: Sample) -> Any:
    """The chart the sample's claims are about (the verifier's own reading, cached), or
    None where it cannot be read."""
    read = getattr(verifier, "_chart", None)
    if read is None or not isinstance(sample.completion, str):
        return None
    chart = read(sample.reference)
    return chart if hasattr(chart, "values") else None


def _appended(verifier: Any, claim: Any) -> Any:
    """A rewrite appending the sentence `claim(chart, rng)` writes (None: no such claim)."""

    def rewrite(sample: Sample, rng: random.Random) -> Sample | None:
        chart = _chart_of(verifier, sample)
        sentence = None if chart is None else claim(chart, rng)
        return None if sentence is None else rewritten(sample, f"{sample.completion} {sentence}")

    return rewrite


def _unplaced(chart: Any, rng: random.Random) -> str:
    series = rng.choice(list(chart.values))
    top = max(abs(v) for v in chart.values[series].values())
    verb = rng.choice(("reached", "averaged", "was"))
    return f"{series} {verb} {round(top * 3 + 100)}."


def _denied_comparison(chart: Any, rng: random.Random) -> str | None:
    """ "S in A was not higher than in B" where the chart shows A clearly above B."""
    pairs = [
        (s, a, b)
        for s, values in chart.values.items()
        for a in values
        for b in values
        if values[a] - values[b] > 2 * chart.tolerance[s]
    ]
    if not pairs:
        return None
    series, a, b = rng.choice(pairs)
    return f"{series} in {a} was not higher than in {b}."


def _consistently(chart: Any, rng: random.Random) -> str | None:
    """ "S rose consistently from A to B" where it rose overall but fell on some step."""
    options = []
    for series, values in chart.values.items():
        cats = [c for c in chart.categories if c in values]
        steps = [values[b] - values[a] for a, b in itertools.pairwise(cats)]
        overall = values[cats[-1]] - values[cats[0]] if cats else 0.0
        if abs(overall) > chart.tolerance[series] and any(s * overall < 0 for s in steps):
            word = "rose" if overall > 0 else "fell"
            options.append(f"{series} {word} consistently from {cats[0]} to {cats[-1]}.")
    return rng.choice(options) if options else None


def _wrong_gap(chart: Any, rng: random.Random) -> str | None:
    """ "S in A was higher than in B by X" where S is clearly higher in A, but by far less
    than X: the comparison holds, the gap it states does not."""
    options = []
    for series, values in chart.values.items():
        tol = chart.tolerance[series]
        for a, b in itertools.permutations(values, 2):
            gap = values[a] - values[b]
            if gap > 2 * tol:
                wrong = round(gap + rng.choice((4, 6, 10)) * tol + abs(gap))
                options.append(f"{series} in {a} was higher than in {b} by {wrong}.")
    return rng.choice(options) if options else None


def _guessed(sample: Sample, rng: random.Random) -> Sample | None:
    """A claim made a guess: "was probably", or a doubt in a clause of its own ("151; I am
    not sure.")."""
    text = sample.completion
    if not isinstance(text, str) or " was " not in text:
        return None
    if rng.random() < 0.5:
        return rewritten(
            sample, text.replace(" was ", f" was {rng.choice(('probably', 'maybe'))} ", 1)
        )
    stop = text.find(". ")
    stop = len(text.rstrip(". ")) if stop < 0 else stop
    return rewritten(sample, f"{text[:stop]}; I am not sure{text[stop:]}")


_CHART_VALUE = re.compile(r"\b(?:was|were|reached|stood at)\s+\$?\d[\d,]*(?:\.\d+)?(?![\d%])")


def _denied_after(verifier: Any) -> Any:
    """A value no series of the chart comes near denied after a claimed one ("Revenue in
    2021 was 151, not 190"): the claim is still 151, not a denial."""

    def rewrite(sample: Sample, rng: random.Random) -> Sample | None:
        chart = _chart_of(verifier, sample)
        text = sample.completion
        claim = _CHART_VALUE.search(text) if chart is not None else None
        if claim is None:
            return None
        top = max(abs(v) for values in chart.values.values() for v in values.values())
        wrong = round(top * 3 + rng.choice((100, 250, 400)))
        said = rng.choice((f", not {wrong}", f" (not {wrong})"))
        return rewritten(sample, text[: claim.end()] + said + text[claim.end() :])

    return rewrite


# A claimed value: commas only as thousands separators ("151, not 190" claims 151, not "151,").
_CHART_NUMBER = re.compile(r"(?:(?<=\bwas )|(?<=\bwere ))(\$?)(\d+(?:,\d{3})*(?:\.\d+)?)(?![\d%])")


def _sign_mark(sample: Sample, rng: random.Random) -> Sample | None:
    """A claimed value given a sign mark read two ways, or said negative after it
    ("Revenue in 2021 was △151", "[151]", "151 (negative)"): not the positive value."""
    text = sample.completion
    number = _CHART_NUMBER.search(text) if isinstance(text, str) else None
    if number is None or not float(number.group(2).replace(",", "")):
        return None
    value = number.group(0)
    marked = rng.choice((f"△{value}", f"▲ {value}", f"[{value}]", f"{value} (negative)"))
    return rewritten(sample, text[: number.start()] + marked + text[number.end() :])


def _second_value(sample: Sample, rng: random.Random) -> Sample | None:
    """A claimed value offered with a second one ("Revenue in 2021 was 151 / 886"): a hedge
    of two values, which fails (it is never a denial to drop)."""
    text = sample.completion
    number = _CHART_NUMBER.search(text) if isinstance(text, str) else None
    if number is None:
        return None
    other = float(number.group(2).replace(",", "")) * rng.choice((2, 3, 5)) + rng.randint(1, 99)
    said = rng.choice((" / ", " or ", " ")) + f"{other:,.0f}"
    return rewritten(sample, text[: number.end()] + said + text[number.end() :])


def chart_relations(verifier: object) -> list[Relation]:
    """The relations of `chart_claims`: each adds or makes a claim that must fail."""
    made = [
        ("chart_unplaced_claim", _appended(verifier, _unplaced), "a claim with no year"),
        ("chart_denied_comparison", _appended(verifier, _denied_comparison), "a false denial"),
        ("chart_consistently", _appended(verifier, _consistently), "every step claimed"),
        ("chart_guessed", _guessed, "a claim made a guess"),
        ("chart_wrong_gap", _appended(verifier, _wrong_gap), "a comparison by a wrong amount"),
        ("chart_sign_mark", _sign_mark, "a value's sign made unknown or negative"),
        ("chart_second_value", _second_value, "a second value offered beside a claimed one"),
    ]
    kept = [("chart_denied_after", _denied_after(verifier), "a wrong value denied after one")]
    return [Relation(f"finance/{n}", "changing", f, d, limit=0.0) for n, f, d in made] + [
        Relation(f"finance/{n}", "preserving", f, d) for n, f, d in kept
    ]


# ----------------------------------------------------------------------------- grounding

_YEAR = re.compile(r"\b(?:19|20)\d{2}\b")
_COPULA = re.compile(r"\b(was|were)\b")


def _another_year(sample: Sample, rng: random.Random) -> Sample | None:
    """Each sentence opened with the year before the one the question asks about ("In
    2023, revenue was 122,445 (p. 1)" for a 2024 figure, or "In FY23"): the figures cite
    another column."""
    text = sample.completion
    asked = set(_YEAR.findall(str(sample.prompt or "")))
    if not isinstance(text, str) or len(asked) != 1 or _YEAR.search(text):
        return None
    other = int(asked.pop()) - 1
    year = rng.choice((str(other), f"FY{other % 100:02d}", f"FY'{other % 100:02d}"))
    sentences = re.split(r"(?<=\.)\s+(?=[A-Z])", text.strip())
    opened = [f"In {year}, {s[:1].lower()}{s[1:]}" for s in sentences]
    return rewritten(sample, " ".join(opened))


def _doubted(sample: Sample, rng: random.Random) -> Sample | None:
    """A cited figure made a guess or a denial ("Revenue was probably 122,445 (p. 1)")."""
    text = sample.completion
    if not isinstance(text, str) or _COPULA.search(text) is None:
        return None
    word = rng.choice(("probably", "not", "maybe"))
    return rewritten(sample, _COPULA.sub(rf"\1 {word}", text, count=1))


_SUBJECT = re.compile(r"(?P<subject>[A-Z][A-Za-z ()-]{2,60}?)\s+(?:was|were)\b")
_OTHER_QUANTITIES = ("Net income was", "Dividends were", "Debt was", "Cash was")


def _other_quantity(sample: Sample, rng: random.Random) -> Sample | None:
    """The first claim's quantity renamed to one of another kind ("Revenue was 122,445
    (p. 1)" as "Net income was 122,445 (p. 1)"): its digits are on no row of that kind."""
    from rewardsmith.verifiers.finance.grounding import label_words
    from rewardsmith.verifiers.finance.grounding_ties import quantities_named

    text = sample.completion.strip() if isinstance(sample.completion, str) else ""
    match = _SUBJECT.match(text)
    named = quantities_named(label_words(match["subject"])) if match else set()
    if match is None or not named:
        return None
    others = [q for q in _OTHER_QUANTITIES if not quantities_named(label_words(q)) & named]
    return rewritten(sample, rng.choice(others) + text[match.end() :])


def _text_and_pdf(sample: Sample) -> tuple[str, str] | None:
    """A claim sample's text and its PDF's path, or None where either is not a string."""
    text, ref = sample.completion, sample.reference
    pdf = ref.get("pdf") if isinstance(ref, dict) else ref
    return (text, pdf) if isinstance(text, str) and isinstance(pdf, str) else None


def _page_text(verifier: Any, pdf: str, page: int) -> str | None:
    """One page's text of `pdf`, read with the verifier's own extraction limits."""
    from rewardsmith.verifiers.finance.reference import ExtractionLimits, load_document

    limits = getattr(verifier, "limits", ExtractionLimits())
    document = load_document(pdf, [page], tables=False, limits=limits).document
    return document.text.get(page) if document is not None else None


def _reversed_move(verifier: Any) -> Any:
    """A cited level said to be reached by the move the page does not show ("Revenue rose
    to 122,445 (p. 1)" where it fell from 150,239), read with the verifier's own limits."""

    def rewrite(sample: Sample, rng: random.Random) -> Sample | None:
        from rewardsmith.verifiers.finance.grounding import cited_figures, printed_move

        cited = _text_and_pdf(sample)
        if cited is None:
            return None
        text, pdf = cited
        for c in cited_figures(text):
            claim = re.search(rf"\b(?:was|were)\s+(?={re.escape(c.figure.text)})", text)
            if c.page is None or claim is None:
                continue
            page = _page_text(verifier, pdf, c.page)
            moved = printed_move(c, page) if page else 0
            if moved:
                wrong = "fell to " if moved > 0 else "rose to "
                return rewritten(sample, text[: claim.start()] + wrong + text[claim.end() :])
        return None

    return rewrite


_STATED = re.compile(r"\b(?:was|were|is|are|of|at)\s+\$?$")


def _year_labels(verifier: Any) -> Any:
    """A cited figure labelled with its year and its row's figure of another year added
    beside it, as a report's prose writes them ("Revenue was 2024: 122,445 (2023: 150,239)
    (p. 1)"): both are printed, so the claim stays grounded."""

    def rewrite(sample: Sample, rng: random.Random) -> Sample | None:
        from rewardsmith.verifiers.finance.grounding import cited_figures, other_year

        cited = _text_and_pdf(sample)
        if cited is None or _YEAR.search(cited[0]):
            return None
        text, pdf = cited
        for c in cited_figures(text):
            at = text.find(c.figure.text)
            if c.page is None or at < 0 or not _STATED.search(text[:at]):
                continue  # "rose to 2024: 122,445" would hide the move from its reading
            page = _page_text(verifier, pdf, c.page)
            found = other_year(c, page) if page else None
            if found is not None:
                year, other, printed = found
                fy = rng.choice(("", "FY"))
                labelled = f"{fy}{year}: {c.figure.text} ({fy}{other}: {printed.strip('()')})"
                end = at + len(c.figure.text)
                return rewritten(sample, text[:at] + labelled + text[end:])
        return None

    return rewrite


def _prior_is_current(verifier: Any) -> Any:
    """A cited figure of its row's latest year given again as the prior year's ("Revenue
    was 122,445 (PY: 122,445) (p. 1)"): the page prints another figure for that year."""

    def rewrite(sample: Sample, rng: random.Random) -> Sample | None:
        from rewardsmith.verifiers.finance.grounding import cited_figures, other_year

        cited = _text_and_pdf(sample)
        if cited is None:
            return None
        text, pdf = cited
        for c in cited_figures(text):
            at = text.find(c.figure.text)
            if c.page is None or at < 0:
                continue
            page = _page_text(verifier, pdf, c.page)
            found = other_year(c, page) if page else None
            if found is not None and found[0] > found[1]:  # the row's later year
                label = rng.choice(("PY: ", "prior year: ", "last year ", "previous year: "))
                end = at + len(c.figure.text)
                return rewritten(sample, f"{text[:end]} ({label}{c.figure.text}){text[end:]}")
        return None

    return rewrite


_GROUPED = re.compile(r"(?<![\w.,])\d{1,3}(?:,\d{3})+(?![\d,.]\d|\w)")


def _glued_digit(sample: Sample, rng: random.Random) -> Sample | None:
    """A digit glued after the first grouped figure ("122,445" as "122,4450", ten times the
    page's, or "122,445,5"): read as its well-formed start it would still be grounded."""
    text = sample.completion
    match = _GROUPED.search(text) if isinstance(text, str) else None
    if match is None:
        return None
    glued = match.group(0) + rng.choice(("0", "5", ",5", "9"))
    return rewritten(sample, text[: match.start()] + glued + text[match.end() :])


def _decimal_comma(sample: Sample, rng: random.Random) -> Sample | None:
    """An invented figure written with a decimal comma added to the first claim ("Revenue
    was 122,445 (p. 1), up 97,3%."): read as nothing, it would never be checked."""
    text = sample.completion
    if not isinstance(text, str) or _GROUPED.search(text) is None:
        return None
    end = re.search(r"(?<!\bp)(?<!\bpp)\.(?=\s|$)", text)  # not the stop of "(p. 1)"
    stop = end.start() if end else len(text.rstrip(" "))
    added = rng.choice(("up {0},{1}%", "down {0},{1}%", "a margin of {0},{1}%", "{0},{1} million"))
    invented = added.format(rng.randint(91, 98), rng.randint(1, 9))
    return rewritten(sample, f"{text[:stop]}, {invented}{text[stop:]}")


def _scale_before(sample: Sample, rng: random.Random) -> Sample | None:
    """A scale written apart from the first grouped figure, before it or in parentheses
    after it ("trillion 122,445", "122,445 (in trillions)"): no page of a report is in
    trillions, so the claim states a quantity no page prints."""
    text = sample.completion
    match = _GROUPED.search(text) if isinstance(text, str) else None
    if match is None or re.match(
        r"\s*(?:thousand|million|billion|trillion|[kmb]n?\b)", text[match.end() :]
    ):
        return None
    if rng.random() < 0.5:
        before = rng.choice(("trillion ", "$ trillions ", "USD trillion "))
        return rewritten(sample, text[: match.start()] + before + text[match.start() :])
    after = rng.choice((" (in trillions)", " ($ trillion)"))
    return rewritten(sample, text[: match.end()] + after + text[match.end() :])


def grounding_relations(verifier: object) -> list[Relation]:
    """The relations of `grounding`: each makes a right answer's claims wrong (it earns 0)."""
    made = [
        ("grounding_another_year", _another_year, "every claim put in the year before"),
        ("grounding_doubted", _doubted, "a claim made a guess or a denial"),
        ("grounding_reversed_move", _reversed_move(verifier), "a level reached the other way"),
        ("grounding_other_quantity", _other_quantity, "a claim's figure given another quantity"),
        ("glued_digit", _glued_digit, "a digit glued after a cited figure"),
        ("grounding_decimal_comma", _decimal_comma, "an invented decimal-comma figure added"),
        ("grounding_scale_before", _scale_before, "a wrong scale written apart from a figure"),
        ("grounding_prior_is_current", _prior_is_current(verifier), "PY given the current"),
    ]
    kept = [("grounding_year_labels", _year_labels(verifier), "figures labelled with years")]
    return [Relation(f"finance/{n}", "changing", f, d, limit=0.0) for n, f, d in made] + [
        Relation(f"finance/{n}", "preserving", f, d) for n, f, d in kept
    ]
