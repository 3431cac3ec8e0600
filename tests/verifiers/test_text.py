"""exact_match and format on real-looking, wrong, malformed, huge and adversarial input."""

from __future__ import annotations

import pickle

import pytest

from rewardsmith.verifiers import Failure, Sample, Status, run_verifier
from rewardsmith.verifiers.text import ExactMatch, FormatCheck


def _sample(completion: str, reference: object = None) -> Sample:
    return Sample(id="s", completion=completion, reference=reference)


@pytest.mark.parametrize(
    ("completion", "reference", "status"),
    [
        ("Paris", "paris", Status.PASS),
        ("  PARIS. ", "Paris", Status.PASS),
        ("Paris!", ["Lyon", "Paris"], Status.PASS),
        ("Ｐａｒｉｓ", "Paris", Status.PASS),  # full-width letters, NFKC
        ("Paris, France", "Paris", Status.FAIL),
        ("", "Paris", Status.FAIL),
        ("42", 42, Status.PASS),
        ("42.0", 42, Status.FAIL),  # exact match is not numeric equivalence
        ("New   York", "new york", Status.PASS),
    ],
)
def test_exact_match_table(completion: str, reference: object, status: Status) -> None:
    assert ExactMatch()(_sample(completion, reference)).status is status


def test_exact_match_options() -> None:
    assert ExactMatch(case_sensitive=True)(_sample("paris", "Paris")).status is Status.FAIL
    assert ExactMatch(strip_punctuation=False)(_sample("Paris.", "Paris")).status is Status.FAIL
    check = ExactMatch(strip_prefixes=("the answer is",))
    assert check(_sample("The answer is: Paris", "paris")).status is Status.PASS


@pytest.mark.parametrize("reference", [None, [], {"a": 1}, True])
def test_exact_match_bad_reference_is_infrastructure_not_model(reference: object) -> None:
    verdict = ExactMatch()(_sample("Paris", reference))
    assert verdict.failure is Failure.BAD_REFERENCE and verdict.score is None


def test_exact_match_huge_completion_is_a_clear_failure() -> None:
    verdict = ExactMatch(max_chars=1000)(_sample("a" * 5_000_000, "a"))
    assert verdict.failure is Failure.INPUT_TOO_LARGE and verdict.score == 0.0


@pytest.mark.parametrize(
    ("completion", "score"),
    [
        ("<think>hm</think><answer>4</answer>", 1.0),
        ("<answer>4</answer><think>hm</think>", 0.5),  # wrong order
        ("<think>hm</think>", 0.5),
        ("<think>a</think><answer>4</answer><answer>5</answer>", 0.5),  # hedging: two answers
        ("</answer>4<answer>", 0.0),
        ("just 4", 0.0),
    ],
)
def test_format_tags(completion: str, score: float) -> None:
    verdict = FormatCheck(required_tags=("think", "answer"))(_sample(completion))
    assert verdict.score == pytest.approx(score)
    if score == 0.0:
        assert verdict.failure is Failure.FORMAT


SCHEMA = {
    "type": "object",
    "properties": {"revenue": {"type": "number"}, "year": {"type": "integer"}},
    "required": ["revenue", "year"],
}


@pytest.mark.parametrize(
    ("completion", "status"),
    [
        ('{"revenue": 12.5, "year": 2023}', Status.PASS),
        ('{"revenue": "12.5", "year": 2023}', Status.FAIL),
        ('{"revenue": 12.5}', Status.FAIL),
        ("{revenue: 12.5}", Status.FAIL),
        ("[" * 100_000 + "]" * 100_000, Status.FAIL),  # deep nesting never reaches json
        ("", Status.FAIL),
    ],
)
def test_format_json_schema(completion: str, status: Status) -> None:
    verdict = FormatCheck(json_schema=SCHEMA)(_sample(completion))
    assert verdict.status is status


def test_format_json_inside_a_tag() -> None:
    check = FormatCheck(json_schema=SCHEMA, json_tag="answer")
    good = 'Let me see. <answer>{"revenue": 1, "year": 2020}</answer>'
    assert check(_sample(good)).status is Status.PASS
    assert "no <answer>" in check(_sample("no tag")).feedback


def test_format_patterns_and_single_string_settings() -> None:
    check = FormatCheck(patterns=r"^Final: \d+$", required_tags="answer")  # type: ignore[arg-type]
    assert check.patterns == (r"^Final: \d+$",) and check.required_tags == ("answer",)
    assert check(_sample("<answer>1</answer>")).score == 0.5


@pytest.mark.parametrize(
    "settings",
    [{}, {"json_tag": "answer"}, {"required_tags": ("no spaces allowed",)}, {"patterns": ("(",)},
     {"json_schema": {"type": 12}}],
)  # fmt: skip
def test_format_rejects_bad_settings_at_construction(settings: dict) -> None:
    with pytest.raises(Exception):  # noqa: B017 - ValueError, re.error or SchemaError
        FormatCheck(**settings)


@pytest.mark.parametrize(
    "verifier",
    [ExactMatch(strip_prefixes=("a",)), FormatCheck(patterns=("x+",), json_schema=SCHEMA)],
)
def test_verifiers_pickle(verifier: object) -> None:
    clone = pickle.loads(pickle.dumps(verifier))
    assert clone == verifier
    sample = _sample('{"revenue": 1, "year": 2}x', "a")
    first, second = run_verifier(clone, sample), run_verifier(verifier, sample)
    assert (first.status, first.score, first.evidence) == (
        second.status,
        second.score,
        second.evidence,
    )


class _Crashing:
    name = "crashing"
    version = "0"
    cost = "cheap"

    def __call__(self, sample: Sample) -> object:
        raise RuntimeError("bug in verifier")


def test_a_crashing_verifier_becomes_an_infrastructure_verdict() -> None:
    verdict = run_verifier(_Crashing(), _sample("x"))  # type: ignore[arg-type]
    assert verdict.failure is Failure.VERIFIER_CRASH and verdict.score is None
    assert "bug in verifier" in verdict.feedback and "traceback" in verdict.evidence
