"""The worst samples of a run for each failure kind, in bounded memory.

A sample belongs to a kind for each verdict that is not a pass or a skip: the verdict's
failure (``wrong_answer``, ``compile_error``, ``verifier_crash``, ...), else its status
(``partial``, ``fail``). A sample whose verdicts all pass, or all skip, belongs to none:
passes are never shown as bad, and skips are not failures. Within a kind the lowest
rewards come first (no reward at all first of all), earlier rows before later ones.
Each kind keeps at most ``per_kind`` samples, rendered when they enter, so memory does
not grow with the rows.
"""

from __future__ import annotations

import heapq
import math
from collections import Counter
from collections.abc import Callable
from itertools import count

from rewardsmith.cli.runs import RunRow
from rewardsmith.graders.reward import Reward
from rewardsmith.verifiers.types import Status

__all__ = ["WorstSamples", "kinds_of"]


def kinds_of(reward: Reward) -> set[str]:
    """The failure kinds a sample shows (see the module doc)."""
    kinds = set()
    for verdict in reward.verdicts.values():
        if verdict.status in (Status.PASS, Status.SKIP):
            continue
        kinds.add(verdict.failure.value if verdict.failure is not None else verdict.status.value)
    return kinds


class WorstSamples:
    """Keep the ``per_kind`` worst samples of each kind; `offer` every row."""

    def __init__(self, render: Callable[[RunRow], str], per_kind: int = 5) -> None:
        self.render, self.per_kind = render, per_kind
        self.seen: Counter[str] = Counter()
        """Samples of each kind, shown or not."""
        self._heaps: dict[str, list[tuple[float, int, int, str]]] = {}
        self._order = count()

    def offer(self, row: RunRow) -> None:
        kinds = kinds_of(row.reward)
        if not kinds or self.per_kind < 1:
            return
        value = row.reward.value
        badness = -math.inf if value is None or not math.isfinite(value) else value
        # Each heap's top is its least bad sample (highest reward, latest row): it leaves
        # first. A row no worse than every top is not even rendered.
        key = (-badness, -row.line)
        rendered: str | None = None
        for kind in sorted(kinds):
            self.seen[kind] += 1
            heap = self._heaps.setdefault(kind, [])
            if len(heap) >= self.per_kind and key <= heap[0][:2]:
                continue
            rendered = rendered if rendered is not None else self.render(row)
            item = (key[0], key[1], next(self._order), rendered)
            if len(heap) < self.per_kind:
                heapq.heappush(heap, item)
            else:
                heapq.heapreplace(heap, item)

    def kinds(self) -> list[tuple[str, int, list[str]]]:
        """(kind, samples of that kind, the rendered worst ones, worst first), most
        common kind first."""
        out = []
        for kind, seen in self.seen.most_common():
            ranked = sorted(self._heaps[kind], key=lambda item: (-item[0], -item[1]))
            out.append((kind, seen, [item[3] for item in ranked]))
        return out
