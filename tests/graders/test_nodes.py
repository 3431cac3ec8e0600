"""Each combinator on a table of hand-computed cases, through a real inline executor."""

from __future__ import annotations

import pickle

import pytest
from grader_helpers import A, B, C, grade, values

from rewardsmith.graders import (
    Grader,
    chain,
    clip,
    gate,
    linear_schedule,
    maximum,
    minimum,
    penalize,
    product,
    scale,
    threshold,
    weighted,
)
from rewardsmith.verifiers.registry import UnknownVerifierError

W = {"a": 0.8, "b": 0.2}


@pytest.mark.parametrize(
    ("a", "b", "renormalize", "expected"),
    [
        (1.0, 0.0, True, 0.8),
        (0.5, 1.0, True, 0.6),  # 0.8*0.5 + 0.2*1
        (0.0, 0.0, True, 0.0),  # a real 0: both checked and wrong
        (None, 1.0, True, 1.0),  # a drops out; 0.2*1 scaled by 1.0/0.2
        (None, 1.0, False, 0.2),  # a drops out, no rescaling
        (0.5, None, True, 0.5),  # 0.8*0.5 * 1.0/0.8
        (None, None, True, None),  # nothing applies: not applicable, never 0
    ],
)
def test_weighted_table(a, b, renormalize, expected):
    root = weighted({"a": A, "b": B}, weights=W, renormalize=renormalize)
    (got,) = values(root, [{"a": a, "b": b}])
    assert got == pytest.approx(expected) if expected is not None else got is None


def test_weighted_records_raw_and_weighted_components():
    (reward,) = grade(weighted({"a": A, "b": B}, weights=W), [{"a": 0.5, "b": None}])
    assert reward.components["a"].to_dict() == {"raw": 0.5, "weight": 0.8, "weighted": 0.4}
    assert reward.components["b"].to_dict() == {"raw": None, "weight": 0.2, "weighted": None}
    assert set(reward.verdicts) == {"a", "b"}


def test_negative_weight_is_a_penalty_term():
    root = weighted({"a": A, "b": B}, weights={"a": 1.0, "b": -0.5}, renormalize=False)
    assert values(root, [{"a": 1.0, "b": 1.0}, {"a": 1.0, "b": 0.0}]) == [0.5, 1.0]


@pytest.mark.parametrize(
    ("make", "scores", "expected"),
    [
        (minimum, (1.0, 0.25, 0.5), 0.25),
        (maximum, (1.0, 0.25, 0.5), 1.0),
        (product, (1.0, 0.25, 0.5), 0.125),
        (minimum, (None, 0.25, 0.5), 0.25),
        (maximum, (None, None, 0.5), 0.5),
        (product, (None, 0.5, 0.5), 0.25),
        (product, (None, None, None), None),
    ],
)
def test_min_max_product_table(make, scores, expected):
    root = make({"a": A, "b": B, "c": C})
    (got,) = values(root, [dict(zip("abc", scores, strict=True))])
    assert got == expected


@pytest.mark.parametrize(
    ("a", "b", "kwargs", "expected"),
    [
        (0.7, "pass", {}, 0.7),  # b passed: a counts
        (0.7, 0.5, {}, 0.0),  # b only partial: no pass, gate closed
        (0.7, 0.5, {"threshold": 0.5}, 0.7),  # partial clears the threshold
        (0.7, 0.4, {"threshold": 0.5}, 0.0),
        (0.7, 0.0, {"otherwise": -1.0}, -1.0),
        (0.7, None, {}, 0.0),  # b did not apply: closed, never let through unchecked
        (None, "pass", {}, None),  # nothing to let through
    ],
)
def test_gate_table(a, b, kwargs, expected):
    (got,) = values(chain(A, gate(B, **kwargs)), [{"a": a, "b": b}])
    assert got == expected


def test_gate_records_whether_it_was_open():
    open_, closed = grade(chain(A, gate(B)), [{"a": 1.0, "b": "pass"}, {"a": 1.0, "b": 0.0}])
    assert open_.components["gate.b"].raw == 1.0
    assert closed.components["gate.b"].raw == 0.0


@pytest.mark.parametrize(
    ("block", "a", "expected"),
    [
        (threshold(0.5), 0.5, 1.0),
        (threshold(0.5), 0.49, 0.0),
        (threshold(0.9, above=2.0, below=-1.0), 0.95, 2.0),
        (clip(0.2, 0.6), 0.1, 0.2),
        (clip(0.2, 0.6), 0.9, 0.6),
        (clip(0.2, 0.6), 0.4, 0.4),
        (scale(3.0), 0.5, 1.5),
        (scale(-1.0), 0.25, -0.25),
    ],
)
def test_transform_table(block, a, expected):
    assert values(chain(A, block), [{"a": a}]) == [pytest.approx(expected)]


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        (1.0, 1.0, 1.0),  # format fine: no penalty
        (1.0, 0.0, 0.5),  # format broken: 1 - 0.5 * (1 - 0)
        (1.0, 0.5, 0.75),
        (1.0, None, 1.0),  # format check did not apply: costs nothing
    ],
)
def test_penalize_table(a, b, expected):
    assert values(chain(A, penalize(B, 0.5)), [{"a": a, "b": b}]) == [expected]


def test_scheduled_weight_follows_the_step():
    root = weighted(
        {"a": A, "b": B}, weights={"b": linear_schedule(1.0, 0.0, steps=10)}, renormalize=False
    )
    row = [{"a": 1.0, "b": 1.0}]
    assert [values(root, row, step=s)[0] for s in (0, 5, 10, 99)] == [2.0, 1.5, 1.0, 1.0]


def test_transforms_compose_in_order():
    # (0.8*1 + 0.2*0) = 0.8 -> gate on a: open -> penalty 0.5*(1-0) -> 0.3 -> clip at 0.25
    root = chain(
        weighted({"a": A, "b": B}, weights=W), gate("a"), penalize("b", 0.5), clip(0.0, 0.25)
    )
    assert values(root, [{"a": "pass", "b": 0.0}]) == [pytest.approx(0.25)]


def test_nested_components_are_prefixed_by_their_parent():
    root = weighted({"inner": minimum({"a": A, "b": B}), "c": C})
    (reward,) = grade(root, [{"a": 0.5, "b": 1.0, "c": 1.0}])
    assert reward.value == pytest.approx(1.5)
    assert reward.components["inner.a"].raw == 0.5
    assert reward.components["inner"].raw == 0.5


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: chain(gate("a")), "must start with a source"),
        (lambda: chain(A, B), "only the first block"),
        (lambda: Grader(clip(0, 1)), "root must make a value"),
        (lambda: weighted({}), "at least one component"),
        (lambda: weighted({"a": A}, weights={"z": 1.0}), "unknown components"),
        (lambda: weighted({"a": 3}), "must be a verifier name"),
        (lambda: clip(1, 0), "above high"),
        (lambda: Grader(A, on_infra_failure="fallback"), "set fallback"),
        (lambda: Grader(weighted({"x": "exact_match", "y": "format"})), "required_tags"),
    ],
)
def test_bad_compositions_say_how_to_fix(build, message):
    with pytest.raises((ValueError, TypeError), match=message):
        build()


def test_one_key_two_verifiers_is_an_error():
    from grader_testkit import MetaScore

    from rewardsmith.graders import verify

    with pytest.raises(ValueError, match="share the key 'a'"):
        Grader(weighted({"x": A, "y": verify(MetaScore("other"), key="a")}))


def test_gate_on_an_unknown_name_is_an_error():
    with pytest.raises(UnknownVerifierError, match="neither a component key"):
        Grader(chain(A, gate("no_such_check")))


def test_gate_on_a_registered_name_adds_that_verifier():
    grader = Grader(chain(A, gate("exact_match")))
    assert sorted(grader.verifiers) == ["a", "exact_match"]


def test_every_block_pickles():
    root = chain(
        weighted({"a": A, "b": minimum({"c": C})}, weights={"a": linear_schedule(1, 0, 5)}),
        gate("a", threshold=0.5),
        penalize("c", 0.1),
        threshold(0.2),
        clip(0, 1),
        scale(2.0),
    )
    grader = Grader(root)
    assert pickle.loads(pickle.dumps(grader)) == grader
