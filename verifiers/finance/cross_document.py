"""Cross-document comparison: which report, company or year is higher, and by how much.

The reference lists the items compared and what is asked:

    {"ask": "higher",              # or "lower", "difference", "ratio", "change_pct"
     "amount": true,               # for higher/lower: the answer must also say by how much
     "items": [
        {"label": "Acme", "pdf": "acme.pdf", "row": "Total revenue", "column": "2024"},
        {"label": "Globex", "value": "1,234", "scale": "thousand"}]}

A PDF item is read from the reference extraction: the first table whose row label
(first column) starts with `row` and whose header has a column containing `column`; the
page's declared scale ("in thousands") applies. The gold answer is computed from the items:
``higher``/``lower`` name a label (and the difference ``|v₁ − v₂|``); ``difference`` is
``v₁ − v₂``; ``ratio`` is ``v₁ / v₂``; ``change_pct`` is ``(v₂ − v₁) / |v₁| × 100``.

The model's answer (inside ``<answer>`` when present) must say which label is higher (or
lower), read by meaning (`winner`: "Globex is higher than Acme", "Acme is lower than
Globex", "Globex, by 16,849"); every other tag and the text after the closing tag must say
the same, so naming the other company there, or in a second tag, fails. Its figure is
compared with `numeric.same_quantity` under `policy`, read as `numeric_answer` reads it
(scale, separators, hedges). Every part must hold: the score is the worst part's (the
label alone, when an amount is asked, earns 0).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar

from rewardsmith.verifiers.exploits import Exploit
from rewardsmith.verifiers.finance.figures import (
    Figure,
    find_figure_spans,
    parse_figure,
    scale_from_header,
)
from rewardsmith.verifiers.finance.numeric import (
    COUNT_UNITS,
    HedgedAnswer,
    TolerancePolicy,
    all_tagged,
    answer_figure,
    answer_lines,
    gold_figure,
    same_quantity,
)
from rewardsmith.verifiers.finance.quantities import currency_of, model_text
from rewardsmith.verifiers.finance.reference import ExtractionLimits, load_document
from rewardsmith.verifiers.protocol import Cost
from rewardsmith.verifiers.types import Failure, Sample, Verdict

__all__ = ["CrossDocument", "item_value"]

_ASKS = ("higher", "lower", "difference", "ratio", "change_pct")
MAX_ANSWER_CHARS = 100_000


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().casefold()


def item_value(item: dict[str, Any], limits: ExtractionLimits) -> float | str:
    """An item's absolute value, or a message saying why it has none."""
    if "value" in item:
        gold = gold_figure({"answer": item["value"], "scale": item.get("scale")})
        return gold.absolute if gold else f"item {item.get('label')!r}: unreadable value"
    path, row, column = item.get("pdf"), item.get("row"), item.get("column")
    if not (isinstance(path, str) and isinstance(row, str) and isinstance(column, str)):
        return f"item {item.get('label')!r} needs `value`, or `pdf`, `row` and `column`"
    page = item.get("page")
    result = load_document(path, [page] if isinstance(page, int) else None, limits=limits)
    if result.document is None:
        return result.problem
    for table in result.document.tables:
        grid = table.table.grid()
        found = _lookup(grid, row, column)
        if found is not None:
            text = " ".join(result.document.text.get(p, "") for p in table.pages)
            return found.absolute * scale_from_header(text)
    return f"no table in {path} has row {row!r} and column {column!r}"


_MORE = re.compile(
    r"\b(?:higher|greater|more|larger|bigger|exceed(?:s|ed)?|above|ahead|outperform(?:s|ed)?|"
    r"beat(?:s|en)?|tops?|topped)\b|(?<![\w/<-])>(?![=\w>])",
    re.I,
)
_LESS = re.compile(
    r"\b(?:lower|less|smaller|below|behind|trail(?:s|ed)?|lag(?:s|ged)?|fewer)\b"
    r"|(?<![\w<])<(?![=\w/<-])",
    re.I,
)
"""Comparison words, and the symbols "Globex > Acme", "Acme < Globex" (a tag's brackets,
"<answer>", "</answer>", touch a letter or a slash and are no comparison)."""


_CITED = re.compile(r"[(\[]?\b(?:p\.|pp\.|pg\.|page)\s*\d{1,5}\b[)\]]?", re.I)
_COMPARED = re.compile(
    r"\b(?:higher|greater|more|larger|bigger|lower|less|smaller|fewer)(?:\s+than)?\b", re.I
)


def _currency(ref: dict[str, Any], limits: ExtractionLimits) -> str:
    """The currency the compared figures are in: ``"currency"`` in the reference, else the
    one the first PDF item's pages name ("in thousands of dollars")."""
    if ref.get("currency"):
        return currency_of(str(ref["currency"]))
    for item in ref["items"]:
        if isinstance(item.get("pdf"), str):
            page = item.get("page")
            found = load_document(item["pdf"], [page] if isinstance(page, int) else None,
                                  tables=False, limits=limits)  # fmt: skip
            if found.document is not None:
                found_currency = currency_of(" ".join(found.document.text.values()))
                return "" if found_currency == "?" else found_currency
    return ""


def _names(text: str, labels: list[str]) -> list[tuple[int, str]]:
    found = []
    for lab in labels:
        found += [
            (m.start(), lab) for m in re.finditer(rf"(?<!\w){re.escape(lab)}(?!\w)", text, re.I)
        ]
    return sorted(found)


def _comparison(text: str) -> int:
    more, less = bool(_MORE.search(text)), bool(_LESS.search(text))
    return 1 if more and not less else -1 if less and not more else 0


_DENIAL = re.compile(r"\b(?:not|never|no|nor|neither|cannot)\b|n't\b", re.I)
"""A denial anywhere in the answer ("Not Globex", "Globex isn't higher than Acme"): which
label it affirms is not written, so it names none (a label is read by what it affirms)."""


def _headed(text: str, labels: list[str]) -> list[tuple[int, str]]:
    """Labels headed by a comparison word, as a list or a key-value answer writes them
    ("Higher: Globex. Lower: Acme."): (+1 or -1, label) for each."""
    names = "|".join(re.escape(lab) for lab in labels)
    found = re.finditer(rf"\b(\w+)\s*[:=\u2013\u2014-]+\s*({names})(?!\w)", text, re.I)
    by_name = {lab.casefold(): lab for lab in labels}
    out = []
    for m in found:
        direction = _comparison(m.group(1))
        if direction:
            out.append((direction, by_name[m.group(2).casefold()]))
    return out


_CLAUSE = re.compile(r"[;\n]|(?<!\d)\.(?!\d)|\.(?=\s)")
"""Where one clause of an answer ends: a semicolon, a line break, or a full stop that is no
decimal point ("Globex, higher by 16,849.5 thousand; Acme, higher")."""


def _without_denied_labels(text: str, labels: list[str]) -> str:
    """`text` without the other labels denied right after a label ("Globex (not Acme),
    higher by ..." and "Globex, not Acme, is higher" affirm Globex): a correction in
    passing, not a denial of the answer. A label denied after itself ("Globex (not
    Globex)") is kept, and stays the denial it is."""
    names = "|".join(re.escape(lab) for lab in labels)
    denied = re.compile(
        rf"(?<!\w)({names})(?!\w)(\s*\(\s*not\s+({names})\s*\)|\s*,\s*not\s+({names})\s*(?=,))",
        re.I,
    )

    def keep(m: re.Match[str]) -> str:
        other = m.group(3) or m.group(4)
        same = other.casefold() == m.group(1).casefold()
        return m.group(0) if same else m.group(1) + " " * len(m.group(2))

    return denied.sub(keep, text)


def winner(text: str, labels: list[str], ask: str) -> str | None:
    """The label `text` says is the `ask` one (`one_winner`), where every clause of it that
    names a label beside a comparison word names the same one: "Globex, higher by 16,849;
    Acme, higher by 16,849" names both, so it names none (None). A clause naming a label
    with no comparison ("Acme is second") says nothing either way."""
    pick = one_winner(text, labels, ask)
    if pick is None:
        return None
    claims = [
        c
        for c in _CLAUSE.split(text)
        if _names(c, labels) and (_headed(c, labels) or _comparison(c))
    ]
    return pick if all(one_winner(c, labels, ask) == pick for c in claims) else None


def one_winner(text: str, labels: list[str], ask: str) -> str | None:
    """The label `text` says is the `ask` (higher or lower) one, read by meaning: "Globex
    is higher than Acme" and "Acme is lower than Globex" both say Globex is higher; one
    label named alone is the one meant ("Globex, by 16,849"); a label headed by its
    comparison ("Higher: Globex") is read with that comparison; two named with no
    comparison between them ("Globex or Acme") and a denial ("Not Acme") say nothing
    (None)."""
    if _DENIAL.search(text):
        return None
    want = 1 if ask == "higher" else -1
    headed = _headed(text, labels)
    if headed:
        picks = {lab if d == want else _other(lab, labels) for d, lab in headed}
        return picks.pop() if len(picks) == 1 else None
    named = _names(text, labels)
    distinct = list(dict.fromkeys(lab for _, lab in named))
    if len(distinct) == 1:
        direction = _comparison(text[named[0][0] :])
        if direction in (0, want):
            return distinct[0]
        return _other(distinct[0], labels)
    if len(distinct) == 2:
        first = named[0][1]
        second_at = next(at for at, lab in named if lab != first)
        direction = _comparison(text[named[0][0] : second_at])
        if direction == 0:
            return None
        return first if direction == want else next(lab for lab in distinct if lab != first)
    return None


def _gaps(values: list[float]) -> str:
    low, high = sorted(abs(v) for v in values)
    gap = high - low
    return " nor ".join(f"{g:.4g}%" for g in (gap / low * 100 if low else 0, gap / high * 100))


def _relative_gaps(text: str, values: list[float]) -> tuple[str, list[str]]:
    """`text` with its percentages blanked, and those that state no relative gap between
    the two values: the gap over the lower value ("Globex is 13.8% higher") or over the
    higher one ("Acme is 12.1% lower"), each to the precision written ("14%" for 13.76%).
    A wrong percentage beside the right amount is a wrong claim, not another kind of fact."""
    low, high = sorted(abs(v) for v in values)
    gap = high - low
    truths = [gap / high * 100] + ([gap / low * 100] if low else [])
    wrong = []
    for figure, start, end in reversed(find_figure_spans(text)):
        if figure.unit not in ("%", "bp"):
            continue
        value = abs(figure.value) / (100 if figure.unit == "bp" else 1)
        slack = 0.5 * 10.0**-figure.decimals + 1e-9
        if not any(abs(value - t) <= slack for t in truths):
            wrong.append(figure.text)
        text = text[:start] + " " * (end - start) + text[end:]
    return text, wrong[::-1]


def _other(label: str, labels: list[str]) -> str | None:
    """The one label that is not `label`, or None where there are several."""
    others = [lab for lab in labels if lab != label]
    return others[0] if len(others) == 1 else None


def _lookup(grid: list[list[str]], row: str, column: str) -> Figure | None:
    for h, header in enumerate(grid[:3]):
        cols = [c for c, text in enumerate(header) if _norm(column) in _norm(text)]
        for col in cols:
            for line in grid[h + 1 :]:
                if col < len(line) and _norm(line[0]).startswith(_norm(row)):
                    figure = parse_figure(line[col])
                    if figure is not None:
                        return figure
    return None


@dataclass(frozen=True)
class CrossDocument:
    """Grade a comparison across reports against the figures in the reports themselves."""

    name: ClassVar[str] = "cross_document"
    version: ClassVar[str] = "3"
    cost: ClassVar[Cost] = Cost.CPU
    takes_structured_reference: ClassVar[bool] = True  # JSON-text references are decoded

    policy: TolerancePolicy = field(default_factory=lambda: TolerancePolicy(rel_tol=0.005))
    """Tolerance on the amount (derived figures are rounded by the model: 0.5 % by default)."""
    limits: ExtractionLimits = field(default_factory=ExtractionLimits)
    """Limits for reading each PDF."""

    def __call__(self, sample: Sample) -> Verdict:
        ref = sample.reference
        if not (
            isinstance(ref, dict)
            and ref.get("ask") in _ASKS
            and isinstance(ref.get("items"), list)
            and len(ref["items"]) >= 2
            and all(isinstance(i, dict) and isinstance(i.get("label"), str) for i in ref["items"])
        ):
            return Verdict.errored(
                self.name,
                self.version,
                Failure.BAD_REFERENCE,
                f"cross_document needs `reference` with `ask` in {_ASKS} and "
                "two or more `items`, each with a `label`",
            )
        values = []
        for item in ref["items"]:
            value = item_value(item, self.limits)
            if isinstance(value, str):
                return Verdict.errored(self.name, self.version, Failure.BAD_REFERENCE, value)
            values.append(value)
        text = sample.completion_text
        if len(text) > MAX_ANSWER_CHARS:
            return Verdict.failed(
                self.name, self.version, Failure.INPUT_TOO_LARGE, feedback="answer too long"
            )
        return self._grade(ref, [i["label"] for i in ref["items"]], values, text)

    def exploits(self, sample: Sample) -> Iterator[Exploit]:
        """Every label named, a hedged amount, a wrong scale or sign."""
        from rewardsmith.verifiers.finance.exploits import figure_exploits

        ref = sample.reference
        items = ref.get("items", []) if isinstance(ref, dict) else []
        labels = tuple(i["label"] for i in items if isinstance(i, dict) and "label" in i)
        named = isinstance(ref, dict) and ref.get("ask") in ("higher", "lower")
        yield from figure_exploits(sample, labels)
        if named:
            from rewardsmith.verifiers.finance.claim_exploits import other_label_exploits

            yield from other_label_exploits(sample, labels)

    def _grade(
        self, ref: dict[str, Any], labels: list[str], values: list[float], text: str
    ) -> Verdict:
        text = _without_denied_labels(model_text(text), labels)
        tags = all_tagged(text)
        answer = tags[-1] if tags else text
        after = text[text.rfind("</answer>") + len("</answer>") :] if tags else ""
        ask = ref["ask"]
        evidence: dict[str, Any] = {"values": dict(zip(labels, values, strict=True)), "ask": ask}
        parts: list[float] = []
        feedback = []
        rest = answer
        if ask in ("higher", "lower"):
            pick = max if ask == "higher" else min
            gold_label = labels[values.index(pick(values))]
            named = winner(answer, labels, ask)
            others = [*tags[:-1], *answer_lines(text, tags), after]
            elsewhere = [winner(t, labels, ask) for t in others if _names(t, labels)]
            ok = named == gold_label and all(w == named for w in elsewhere)
            parts.append(float(ok))
            evidence.update(gold_label=gold_label, named=named, named_elsewhere=elsewhere)
            if not ok:
                feedback.append(
                    f"expected {gold_label}, the answer names {named or 'no one label'}"
                    + (f" and elsewhere {elsewhere}" if elsewhere else "")
                )
            for lab in labels:
                rest = re.sub(re.escape(lab), " ", rest, flags=re.I)
            gold_amount = max(values) - min(values) if len(values) == 2 else None
            if gold_amount is not None:  # "(13.8%)", "14% higher": the gap relative to either
                rest, wrong = _relative_gaps(rest, values)
                if wrong:
                    parts.append(0.0)
                    evidence["relative_gap"] = wrong
                    feedback.append(f"relative gap {wrong[0]} is neither {_gaps(values)}")
            if not ref.get("amount") or gold_amount is None:
                return self._verdict(parts, evidence, feedback)
        else:
            a, b = values[0], values[1]
            if (ask in ("ratio", "change_pct") and a == 0) or (ask == "ratio" and b == 0):
                return Verdict.errored(
                    self.name,
                    self.version,
                    Failure.BAD_REFERENCE,
                    f"{ask} is undefined: a value is 0",
                )
            gold_amount = {
                "difference": a - b,
                "ratio": a / b if b else 0.0,
                "change_pct": (b - a) / abs(a) * 100 if a else 0.0,
            }[ask]
        # Every tag and the text after the last one are read too: a different amount
        # stated there is a hedge.
        earlier = "".join(f"<answer>{t}</answer>" for t in tags[:-1])
        rest = _COMPARED.sub(" ", _CITED.sub(" ", rest))  # "higher than", "(p. 1)" say no amount
        try:
            got = answer_figure(f"{earlier}<answer>{rest}</answer>{_CITED.sub(' ', after)}")
        except HedgedAnswer as hedge:
            got = None
            evidence["hedged"] = hedge.figures
        expected = _currency(ref, self.limits)
        given = currency_of(rest)
        if got is not None and expected and given and given != expected:
            evidence["currency"] = f"{given} given, {expected} expected"
            got = None
        if got is not None and COUNT_UNITS.search(rest):  # "16,849 thousand shares": no amount
            evidence["unit"] = "a count, not an amount"
            got = None
        unit = "%" if ask == "change_pct" else ""
        ok = got is not None and same_quantity(
            got, Figure(gold_amount, unit=unit, decimals=12), self.policy
        )
        parts.append(float(ok))
        evidence.update(gold_amount=gold_amount, answer_amount=got.absolute if got else None)
        if not ok:
            feedback.append(
                f"amount: expected {gold_amount:.6g}, got {got.absolute:.6g}"
                if got
                else "no amount found"
            )
        return self._verdict(parts, evidence, feedback)

    def _verdict(
        self, parts: list[float], evidence: dict[str, Any], feedback: list[str]
    ) -> Verdict:
        return Verdict.graded(
            self.name,
            self.version,
            min(parts),  # every part must hold: the worst one is the score
            evidence=evidence,
            feedback="; ".join(feedback),
        )
