"""The reward server's Prometheus metrics, in the text exposition format.

Requests, latencies and queue gauges are counted here; everything about rewards and
verdicts (samples by outcome, mean reward, pass rate and verdicts by status, failure and
fault per verifier, verifier time) is read from the `Scorer`'s `Stats`, the same numbers
``score``, ``report`` and ``diff`` show. Kept here rather than pulling in a client
library. Label values are escaped as the format requires, so a name cannot forge a line.
"""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass, field

from rewardsmith.graders.stats import Stats

__all__ = ["ServerMetrics", "stats_lines"]

LATENCY_BUCKETS_S = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


@dataclass
class ServerMetrics:
    requests: Counter[tuple[str, int]] = field(default_factory=Counter)
    in_flight: int = 0
    waiting: int = 0
    latency_counts: list[int] = field(default_factory=lambda: [0] * (len(LATENCY_BUCKETS_S) + 1))
    latency_sum: float = 0.0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def observe(self, endpoint: str, status: int, seconds: float) -> None:
        with self._lock:
            self.requests[(endpoint, status)] += 1
            self.latency_sum += seconds
            index = next((i for i, b in enumerate(LATENCY_BUCKETS_S) if seconds <= b), -1)
            self.latency_counts[index] += 1

    def render(self, stats: Stats | None = None) -> str:
        """The exposition text; with ``stats``, the reward and verdict metrics too."""
        with self._lock:
            lines = ["# TYPE rewardsmith_requests_total counter"]
            for (endpoint, status), count in sorted(self.requests.items()):
                labels = _labels(endpoint=endpoint, status=str(status))
                lines.append(f"rewardsmith_requests_total{labels} {count}")
            lines += [
                "# TYPE rewardsmith_requests_in_flight gauge",
                f"rewardsmith_requests_in_flight {self.in_flight}",
                "# TYPE rewardsmith_requests_waiting gauge",
                f"rewardsmith_requests_waiting {self.waiting}",
                "# TYPE rewardsmith_request_seconds histogram",
            ]
            cumulative = 0
            for bound, count in zip((*LATENCY_BUCKETS_S, "+Inf"), self.latency_counts, strict=True):
                cumulative += count
                lines.append(f'rewardsmith_request_seconds_bucket{{le="{bound}"}} {cumulative}')
            lines += [
                f"rewardsmith_request_seconds_sum {self.latency_sum:.6f}",
                f"rewardsmith_request_seconds_count {cumulative}",
            ]
        if stats is not None:
            lines += stats_lines(stats)
        return "\n".join(lines) + "\n"


def stats_lines(stats: Stats) -> list[str]:
    """Reward and verdict metrics from a `Stats`, one family at a time as the format
    requires (no per-task labels: task names come from clients, and a label per name
    would grow without bound)."""
    verifiers = sorted(stats.verifiers.items())
    families: list[tuple[str, str, list[tuple[str, object]]]] = [
        ("samples_total", "counter", [("", stats.samples)]),
        ("infra_failures_total", "counter", [("", stats.infra_failures)]),
        (
            "samples_by_outcome_total",
            "counter",
            [(_labels(outcome=o), n) for o, n in sorted(stats.outcomes.items())],
        ),
        ("reward_mean", "gauge", [("", stats.reward.mean)]),
        (
            "verdicts_total",
            "counter",
            [
                (_labels(verifier=key, status=status), n)
                for key, v in verifiers
                for status, n in sorted(v.statuses.items())
            ],
        ),
        (
            "verdict_failures_total",
            "counter",
            [
                (_labels(verifier=key, failure=failure), n)
                for key, v in verifiers
                for failure, n in sorted(v.failures.items())
            ],
        ),
        (
            "verdicts_by_fault_total",
            "counter",
            [(_labels(fault=f), n) for f, n in sorted(stats.faults.items())],
        ),
        ("pass_rate", "gauge", [(_labels(verifier=key), v.pass_rate) for key, v in verifiers]),
        (
            "verifier_seconds_total",
            "counter",
            [(_labels(verifier=key), v.timing.total_s) for key, v in verifiers],
        ),
    ]
    lines = []
    for name, kind, samples in families:
        lines.append(f"# TYPE rewardsmith_{name} {kind}")
        lines += [
            f"rewardsmith_{name}{labels} {value!r}"
            for labels, value in samples
            if value is not None
        ]
    return lines


def _labels(**values: str) -> str:
    inner = ",".join(f'{name}="{_escape(value)}"' for name, value in values.items())
    return "{" + inner + "}"


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
