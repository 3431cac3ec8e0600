"""Plain values across the sandbox wall: a tagged JSON encoding and an exact comparison.

A candidate's return value crosses from its jail to the judge (or to the scoring process)
as data, never as an object: only exact builtin types encode (``type(v) is int``, not a
subclass), so no `__eq__` the candidate wrote ever runs on the trusted side. A numpy
scalar, the stdlib's ``Counter``, ``OrderedDict`` and ``defaultdict``, and named tuples
cross as the builtin value they hold (``item()``, the dict's or tuple's own storage). The decoder
rebuilds fresh builtin objects and checks sizes and depth as it goes.

This module is stdlib-only and self-contained: its source is also shipped into the jail.

    >>> decode(encode({"a": [1, 2.5, (True, None)]}))
    {'a': [1, 2.5, (True, None)]}
    >>> exact_equal(1, True), exact_equal([1.0], [1]), exact_equal({1: "x"}, {1: "x"})
    (False, False, True)
"""

from __future__ import annotations

import base64
import collections
import math
from typing import Any

__all__ = [
    "DecodeError",
    "EncodeError",
    "decode",
    "encode",
    "exact_equal",
    "excerpt",
    "refuse_hash_flood",
]

MAX_DEPTH = 64
MAX_NODES = 1_000_000
MAX_SAME_HASH = 32
"""The most distinct members of one set, or keys of one dict, that may share a hash. Python
hashes an int n as n mod 2**61 - 1, so a program can send any number of distinct ints of
one hash, and a table of N of them costs N**2 / 2 probes to build: 20,000 took 5.6 s here,
and a 16 MiB reply holds about 500,000 (hours of the scoring process, which has no limit of
its own; red team rtcode8). No value a program computes honestly comes near 32."""


class EncodeError(ValueError):
    """A value of a type that cannot cross the wall (a class instance, a subclass, ...)."""


class DecodeError(ValueError):
    """Malformed, too deep or too large encoded data."""


def encode(value: Any) -> Any:
    """`value` as JSON-ready tagged lists, e.g. ``["i", "3"]``; raises EncodeError."""
    budget = [MAX_NODES]
    return _enc(value, 0, budget)


_CONTAINER_TAGS: dict[type, str] = {list: "l", tuple: "t", set: "e", frozenset: "z"}


def _enc(v: Any, depth: int, budget: list[int]) -> Any:
    budget[0] -= 1
    if depth > MAX_DEPTH or budget[0] < 0:
        raise EncodeError("value too deep or too large")
    t = type(v)
    if v is None:
        return ["n"]
    if t is bool:
        return ["b", v]
    if t is int:
        return ["i", format(v, "x")]  # hex: no int-to-str digit limit, no float rounding
    if t is float:
        return ["f", v.hex()]
    if t is complex:
        return ["c", v.real.hex(), v.imag.hex()]
    if t is str:
        return ["s", v]
    if t is bytes:
        return ["y", base64.b64encode(v).decode()]
    if _is_numpy_scalar(t):
        return _enc(v.item(), depth + 1, budget)
    if any(t is m for m in _STDLIB_MAPPINGS):
        return _enc_items(dict.items(v), depth, budget)
    if _is_named_tuple(t):
        return ["t", [_enc(x, depth + 1, budget) for x in tuple.__iter__(v)]]
    tag = _CONTAINER_TAGS.get(t)
    if tag is not None:
        return [tag, [_enc(x, depth + 1, budget) for x in v]]
    if t is dict:
        return _enc_items(v.items(), depth, budget)
    raise EncodeError(f"cannot pass a {t.__module__}.{t.__qualname__} across the sandbox")


def _enc_items(items: Any, depth: int, budget: list[int]) -> Any:
    return ["d", [[_enc(k, depth + 1, budget), _enc(x, depth + 1, budget)] for k, x in items]]


_STDLIB_MAPPINGS = (collections.Counter, collections.OrderedDict, collections.defaultdict)
"""The stdlib's dict subclasses a right program returns (MBPP's own solution to task 88
returns a ``Counter``; its tests compare it with a dict literal, as Python's ``==``
allows). Each crosses as the plain dict it holds, read with ``dict.items`` from the dict's
own storage, so a patched ``items`` or ``__iter__`` claims nothing; a subclass of them is
a class like any other and does not cross (red team rtcode8). The classes are taken when
this module loads, before the candidate's code runs, so rebinding ``collections.Counter``
changes nothing."""


def _is_named_tuple(t: type) -> bool:
    """A ``collections.namedtuple`` or ``typing.NamedTuple`` class: it crosses as the plain
    tuple it holds, read with ``tuple.__iter__`` (the tuple's own storage, whatever its
    class says), as tests compare it with a tuple literal (red team rtcode8). What a
    look-alike class sends is still only the items it holds."""
    return (
        issubclass(t, tuple)
        and isinstance(t.__dict__.get("_fields"), tuple)
        and "_make" in t.__dict__
    )


def _is_numpy_scalar(t: type) -> bool:
    """A numpy scalar (``np.float64``, ``np.int64``, ``np.bool_``): it crosses as the
    builtin its ``item()`` gives, as HumanEval's own harness compares it (red team rtcode3:
    ``return np.mean(xs)`` scored 0). Only the jail encodes a candidate's value, and what
    ``item()`` returns is encoded again, so a class posing as numpy gains nothing."""
    return any(c.__name__ == "generic" and c.__module__ == "numpy" for c in t.__mro__)


def decode(data: Any) -> Any:
    """Rebuild a value from `encode`'s form; raises DecodeError on anything else."""
    budget = [MAX_NODES]
    try:
        return _dec(data, 0, budget)
    except (TypeError, ValueError, KeyError, IndexError, OverflowError) as exc:
        if isinstance(exc, DecodeError):
            raise
        raise DecodeError(f"malformed value: {type(exc).__name__}: {exc}") from None


_SCALARS = {
    "b": lambda d: d[1] if type(d[1]) is bool else _bad(),
    "i": lambda d: int(d[1], 16) if len(d[1]) < 100_000 else _bad(),
    "f": lambda d: float.fromhex(d[1]),
    "c": lambda d: complex(float.fromhex(d[1]), float.fromhex(d[2])),
    "s": lambda d: d[1] if type(d[1]) is str else _bad(),
    "y": lambda d: base64.b64decode(d[1], validate=True),
}


def _bad() -> Any:
    raise DecodeError("malformed scalar")


def _dec(d: Any, depth: int, budget: list[int]) -> Any:
    budget[0] -= 1
    if depth > MAX_DEPTH or budget[0] < 0:
        raise DecodeError("value too deep or too large")
    if type(d) is not list or not d or type(d[0]) is not str:
        raise DecodeError("malformed value")
    tag = d[0]
    if tag == "n":
        return None
    if tag in _SCALARS:
        return _SCALARS[tag](d)
    items = d[1]
    if type(items) is not list:
        raise DecodeError("malformed container")
    if tag == "d":
        pairs = []
        for pair in items:
            if type(pair) is not list or len(pair) != 2:
                raise DecodeError("malformed dict item")
            pairs.append((_dec(pair[0], depth + 1, budget), _dec(pair[1], depth + 1, budget)))
        refuse_hash_flood(k for k, _ in pairs)
        return dict(pairs)
    kind = {"l": list, "t": tuple, "e": set, "z": frozenset}.get(tag)
    if kind is None:
        raise DecodeError(f"unknown tag {tag[:20]!r}")
    members = [_dec(x, depth + 1, budget) for x in items]
    if kind is set or kind is frozenset:
        refuse_hash_flood(members)
    return kind(members)


def refuse_hash_flood(members: Any) -> None:
    """Raise DecodeError when more than `MAX_SAME_HASH` distinct `members` share one hash,
    before anything builds a hash table of them; linear (a member is compared only with the
    few of its own hash already seen). A member that cannot be hashed raises TypeError, as
    building the table would."""
    seen: dict[int, list[Any]] = {}  # keyed by hash values: ints that hash to themselves
    for member in members:
        same = seen.setdefault(hash(member), [])
        if any(member == other for other in same):
            continue
        same.append(member)
        if len(same) > MAX_SAME_HASH:
            raise DecodeError(
                f"more than {MAX_SAME_HASH} distinct keys share one hash (a hash flood)"
            )


def exact_equal(got: Any, want: Any, *, rel_tol: float = 0.0, abs_tol: float = 0.0) -> bool:
    """Equal with identical types all the way down (1 != True != 1.0); floats within the
    tolerances (``math.isclose``), NaN equal to NaN. Both sides must be decoded values."""
    if type(got) is not type(want):
        return False
    if type(want) is float:
        if math.isnan(want):
            return math.isnan(got)
        return got == want or math.isclose(got, want, rel_tol=rel_tol, abs_tol=abs_tol)
    if type(want) in (list, tuple):
        return len(got) == len(want) and all(
            exact_equal(a, b, rel_tol=rel_tol, abs_tol=abs_tol)
            for a, b in zip(got, want, strict=True)
        )
    if type(want) is dict:
        return _typed(got.keys()) == _typed(want.keys()) and all(
            exact_equal(got[k], want[k], rel_tol=rel_tol, abs_tol=abs_tol) for k in want
        )
    if type(want) in (set, frozenset):
        return _typed(got) == _typed(want)
    return bool(got == want)


def _typed(members: Any) -> frozenset[Any]:
    """Set members or dict keys with their types all the way down, so ``{True: 'a'}`` is
    not ``{1: 'a'}`` (red team rtcode3: dict keys were compared by ``==`` only)."""
    return frozenset(_typed_member(x) for x in members)


def _typed_member(x: Any) -> Any:
    if type(x) is tuple:
        return (tuple, tuple(_typed_member(e) for e in x))
    if type(x) is frozenset:
        return (frozenset, _typed(x))
    return (type(x), x)


def excerpt(value: Any, limit: int = 200) -> str:
    """A short repr for evidence and feedback; never raises (an int too long to print in
    decimal is described by its size)."""
    try:
        text = repr(value)
    except ValueError:  # int-to-str digit limit, anywhere inside the value
        text = f"<{type(value).__name__} too large to print>"
    return text if len(text) <= limit else text[: limit - 3] + "..."
