"""Shared helpers for grader tests: build samples from per-leaf scores and grade them."""

from __future__ import annotations

from typing import Any

from grader_testkit import MetaScore

from rewardsmith.graders import Executor, Grader, Reward, verify
from rewardsmith.verifiers.types import Sample

A = verify(MetaScore("a"), key="a")
B = verify(MetaScore("b"), key="b")
C = verify(MetaScore("c"), key="c")


def samples(metas: list[dict[str, Any]], prompt: str = "p", completion: str = "x") -> list[Sample]:
    return [
        Sample(
            id=str(i),
            prompt=m.pop("prompt", prompt),
            completion=m.pop("completion", completion),
            meta=m,
        )
        for i, m in enumerate(dict(m) for m in metas)
    ]


def grade(root: Any, metas: list[dict[str, Any]], step: int = 0, **policy: Any) -> list[Reward]:
    with Executor("inline", cache=False) as ex:
        return Grader(root, **policy).score(samples(metas), ex, step=step)


def values(root: Any, metas: list[dict[str, Any]], step: int = 0) -> list[float | None]:
    return [r.value for r in grade(root, metas, step)]
