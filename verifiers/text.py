"""Two cheap text verifiers: normalised exact match, and format (tags, regex, JSON schema).

Both read model text, which is hostile: they cap its length before any work, and the
JSON check bounds nesting depth, so a huge or pathological completion ends in a clear
verdict instead of a hang.

    >>> from rewardsmith.verifiers.types import Sample
    >>> ExactMatch()(Sample(id="1", completion="  The Answer: PARIS. ", reference="paris")).status
    <Status.FAIL: 'fail'>
    >>> ExactMatch(strip_prefixes=("the answer:",))(
    ...     Sample(id="1", completion="  The Answer: PARIS. ", reference="paris")).status
    <Status.PASS: 'pass'>
"""

from __future__ import annotations

import json
import re
import string
import unicodedata
from dataclasses import dataclass, field
from typing import Any, ClassVar

import jsonschema

from rewardsmith.verifiers.protocol import Cost
from rewardsmith.verifiers.types import Failure, Sample, Verdict

__all__ = ["ExactMatch", "FormatCheck", "normalise_text"]

_PUNCTUATION = str.maketrans("", "", string.punctuation)
_WHITESPACE = re.compile(r"\s+")


def normalise_text(
    text: str, *, case_sensitive: bool = False, strip_punctuation: bool = True
) -> str:
    """NFKC, optional case folding and punctuation removal, whitespace collapsed."""
    text = unicodedata.normalize("NFKC", text)
    if not case_sensitive:
        text = text.casefold()
    if strip_punctuation:
        text = text.translate(_PUNCTUATION)
    return _WHITESPACE.sub(" ", text).strip()


def _too_long(name: str, version: str, length: int, limit: int) -> Verdict:
    return Verdict.failed(
        name,
        version,
        Failure.INPUT_TOO_LARGE,
        evidence={"length": length, "limit": limit},
        feedback=f"completion has {length} characters; the limit is {limit}",
    )


@dataclass(frozen=True)
class ExactMatch:
    """Pass when the completion equals the reference (or one of a list of references)
    after normalisation."""

    name: ClassVar[str] = "exact_match"
    version: ClassVar[str] = "1"
    cost: ClassVar[Cost] = Cost.CHEAP

    case_sensitive: bool = False
    """Compare letter case too."""
    strip_punctuation: bool = True
    """Remove ASCII punctuation before comparing."""
    strip_prefixes: tuple[str, ...] = ()
    """Leading phrases to drop from the completion, matched after normalisation."""
    max_chars: int = 100_000
    """Longer completions fail as too large without being normalised."""

    def __call__(self, sample: Sample) -> Verdict:
        references = sample.reference
        if isinstance(references, str | int | float) and not isinstance(references, bool):
            references = [references]
        if not isinstance(references, list) or not references:
            return Verdict.errored(
                self.name,
                self.version,
                Failure.BAD_REFERENCE,
                "exact_match needs `reference`: a string or a non-empty list of strings",
            )
        text = sample.completion_text
        if len(text) > self.max_chars:
            return _too_long(self.name, self.version, len(text), self.max_chars)
        got = self._normalise(text)
        for prefix in self.strip_prefixes:
            p = self._normalise(prefix)
            if p and got.startswith(p):
                got = got[len(p) :].strip()
        golds = [self._normalise(str(r)) for r in references]
        evidence = {"normalised": got[:500], "references": [g[:500] for g in golds]}
        if got in golds:
            return Verdict.passed(self.name, self.version, evidence=evidence)
        return Verdict.failed(
            self.name, self.version, evidence=evidence, feedback="answer does not match"
        )

    def _normalise(self, text: str) -> str:
        return normalise_text(
            text, case_sensitive=self.case_sensitive, strip_punctuation=self.strip_punctuation
        )


@dataclass(frozen=True)
class FormatCheck:
    """Pass when the completion has the required form; the score is the fraction of
    requirements met.

    Requirements: every tag in `required_tags` appears as one ``<tag>...</tag>`` pair (in
    that order); every pattern in `patterns` matches (``re.search``, DOTALL); and when
    `json_schema` is set, the completion (or the content of `json_tag`) is JSON that
    validates against it.
    """

    name: ClassVar[str] = "format"
    version: ClassVar[str] = "1"
    cost: ClassVar[Cost] = Cost.CHEAP

    required_tags: tuple[str, ...] = ()
    """Tag names such as ("think", "answer"): each must appear exactly once, in order."""
    patterns: tuple[str, ...] = ()
    """Regular expressions the completion must contain. Written by the reward designer."""
    json_schema: dict[str, Any] | None = None
    """A JSON Schema the answer must validate against."""
    json_tag: str | None = None
    """Validate the JSON found inside this tag rather than the whole completion."""
    max_chars: int = 100_000
    """Longer completions fail as too large without being parsed."""
    max_json_depth: int = 64
    """Deeper JSON nesting fails as malformed (it is never legitimate and costs stack)."""
    _compiled: tuple[re.Pattern[str], ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # From YAML or the command line a single tag or pattern arrives as a string.
        for name in ("required_tags", "patterns"):
            value = getattr(self, name)
            object.__setattr__(self, name, (value,) if isinstance(value, str) else tuple(value))
        if not (self.required_tags or self.patterns or self.json_schema is not None):
            raise ValueError("format needs at least one of required_tags, patterns, json_schema")
        if self.json_tag is not None and self.json_schema is None:
            raise ValueError("json_tag is set but json_schema is not: set both")
        for tag in self.required_tags:
            if not re.fullmatch(r"[A-Za-z_][\w.-]*", tag):
                raise ValueError(f"tag name {tag!r} is not a plain XML name such as 'answer'")
        if self.json_schema is not None:
            jsonschema.validators.validator_for(self.json_schema).check_schema(self.json_schema)
        compiled = tuple(re.compile(p, re.DOTALL) for p in self.patterns)  # fails early if bad
        object.__setattr__(self, "_compiled", compiled)

    def __getstate__(self) -> dict[str, Any]:
        # Compiled patterns pickle fine, but the config is what defines the verifier.
        return {k: v for k, v in self.__dict__.items() if k != "_compiled"}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self.__post_init__()

    def __call__(self, sample: Sample) -> Verdict:
        text = sample.completion_text
        if len(text) > self.max_chars:
            return _too_long(self.name, self.version, len(text), self.max_chars)
        problems: list[str] = []
        checks = 0
        for tag in self.required_tags:
            checks += 1
            problem = _tag_problem(text, tag)
            if problem:
                problems.append(problem)
        if self.required_tags and not problems and not _in_order(text, self.required_tags):
            problems.append(f"tags are not in the order {', '.join(self.required_tags)}")
        for pattern in self._compiled:
            checks += 1
            if not pattern.search(text):
                problems.append(f"no match for pattern {pattern.pattern!r}")
        if self.json_schema is not None:
            checks += 1
            problem = self._json_problem(text)
            if problem:
                problems.append(problem)
        score = 1.0 - len(problems) / checks
        evidence = {"problems": problems, "checks": checks}
        verdict = Verdict.graded(
            self.name, self.version, score, evidence=evidence, feedback="; ".join(problems)
        )
        if verdict.status.value == "fail":
            return Verdict.failed(
                self.name,
                self.version,
                Failure.FORMAT,
                evidence=evidence,
                feedback=verdict.feedback,
            )
        return verdict

    def _json_problem(self, text: str) -> str | None:
        if self.json_tag is not None:
            inner = _tag_content(text, self.json_tag)
            if inner is None:
                return f"no <{self.json_tag}> element holding the JSON answer"
            text = inner
        if _nesting_depth(text) > self.max_json_depth:
            return f"JSON nests deeper than {self.max_json_depth} levels"
        try:
            value = json.loads(text)
        except (json.JSONDecodeError, RecursionError) as exc:
            return f"not valid JSON: {exc}"[:300]
        assert self.json_schema is not None
        validator = jsonschema.validators.validator_for(self.json_schema)(self.json_schema)
        error = jsonschema.exceptions.best_match(validator.iter_errors(value))
        if error is not None:
            where = "/".join(str(p) for p in error.absolute_path) or "(root)"
            return f"JSON does not match the schema at {where}: {error.message}"[:300]
        return None


def _tag_problem(text: str, tag: str) -> str | None:
    opens = text.count(f"<{tag}>")
    closes = text.count(f"</{tag}>")
    if opens == 0 and closes == 0:
        return f"missing <{tag}>...</{tag}>"
    if opens != 1 or closes != 1:
        return f"<{tag}> must appear exactly once (found {opens} opening, {closes} closing)"
    if text.index(f"<{tag}>") > text.index(f"</{tag}>"):
        return f"</{tag}> comes before <{tag}>"
    return None


def _in_order(text: str, tags: tuple[str, ...]) -> bool:
    positions = [text.index(f"<{tag}>") for tag in tags]
    return positions == sorted(positions)


def _tag_content(text: str, tag: str) -> str | None:
    start, end = text.find(f"<{tag}>"), text.find(f"</{tag}>")
    if start < 0 or end < start:
        return None
    return text[start + len(tag) + 2 : end]


def _nesting_depth(text: str) -> int:
    """The deepest bracket nesting, ignoring brackets inside strings (approximately)."""
    depth = deepest = 0
    for char in text:
        if char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest
