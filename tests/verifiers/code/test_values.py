"""The plain-value encoding: exact round trips, forged types refused, hostile data bounded."""

from __future__ import annotations

import json
import math

import pytest

from rewardsmith.verifiers.code.values import (
    DecodeError,
    EncodeError,
    decode,
    encode,
    exact_equal,
)

ROUND_TRIPS = [
    None,
    True,
    0,
    -7,
    10**400,
    2.5,
    -0.0,
    math.inf,
    1e-310,
    3 + 4j,
    "",
    "ünï\0",
    b"\x00\xff",
    [],
    (),
    (1,),
    [1, (2, [3])],
    {1, 2},
    frozenset({"a"}),
    {"k": [1.5, None], 2: (True,)},
]


@pytest.mark.parametrize("value", ROUND_TRIPS, ids=repr)
def test_round_trip_through_json_keeps_types(value: object) -> None:
    back = decode(json.loads(json.dumps(encode(value))))
    assert exact_equal(back, value) and type(back) is type(value)


def test_nan_round_trips_and_equals_nan() -> None:
    assert exact_equal(decode(encode(math.nan)), math.nan)


class AlwaysEqual:
    def __eq__(self, other: object) -> bool:
        return True


class ForgedInt(int):
    def __eq__(self, other: object) -> bool:
        return True

    __hash__ = int.__hash__


class ForgedList(list):  # type: ignore[type-arg]
    def __eq__(self, other: object) -> bool:
        return True


@pytest.mark.parametrize(
    "value",
    [
        AlwaysEqual(),
        ForgedInt(3),
        ForgedList([1]),
        [1, AlwaysEqual()],
        {"k": ForgedInt(1)},
        print,
        type,
        object(),
    ],
    ids=[
        "always-equal",
        "int-subclass",
        "list-subclass",
        "nested",
        "dict-value",
        "builtin-fn",
        "type",
        "object",
    ],
)
def test_only_exact_builtin_types_cross(value: object) -> None:
    with pytest.raises(EncodeError):
        encode(value)


@pytest.mark.parametrize(
    ("got", "want", "equal"),
    [
        (1, True, False),
        (1, 1.0, False),
        ([1], (1,), False),
        ({1: 2}, {1: 2}, True),
        (0.1 + 0.2, 0.3, False),
        ("1", 1, False),
        ({1, 2}, {2, 1}, True),
        (None, None, True),
        ([1, [2.0]], [1, [2.0]], True),
        ({"a": 1}, {"a": 1, "b": 2}, False),
    ],
)
def test_exact_equal_checks_types_all_the_way_down(got: object, want: object, equal: bool) -> None:
    assert exact_equal(got, want) is equal


def test_tolerance_is_opt_in() -> None:
    assert exact_equal(0.1 + 0.2, 0.3, abs_tol=1e-9)
    assert not exact_equal([0.1 + 0.2], [0.4], abs_tol=1e-9)


def _deep(n: int) -> list[object]:
    data: list[object] = ["n"]
    for _ in range(n):
        data = ["l", [data]]
    return data


@pytest.mark.parametrize(
    "data",
    [
        "x",
        [],
        ["i"],
        ["i", 5],
        ["q", 1],
        ["l", "notalist"],
        ["d", [[["i", "1"]]]],
        ["b", 1],
        ["s", 3],
        ["y", "***"],
        ["i", "f" * 200_000],
        _deep(500),
        ["l", [["n"]] * 2_000_000],
    ],
    ids=[
        "str",
        "empty",
        "short",
        "int-not-text",
        "unknown-tag",
        "bad-container",
        "bad-pair",
        "bool-not-bool",
        "str-not-str",
        "bad-base64",
        "huge-int",
        "too-deep",
        "too-many",
    ],
)
def test_malformed_or_huge_data_is_refused(data: object) -> None:
    with pytest.raises(DecodeError):
        decode(data)
