"""A few Prometheus metrics for the reward server, in the text exposition format.

Kept here rather than pulling in a client library: four counters and one histogram.
"""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass, field

__all__ = ["ServerMetrics"]

LATENCY_BUCKETS_S = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)


@dataclass
class ServerMetrics:
    requests: Counter[tuple[str, int]] = field(default_factory=Counter)
    samples: int = 0
    infra_failures: int = 0
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

    def scored(self, samples: int, infra_failures: int) -> None:
        with self._lock:
            self.samples += samples
            self.infra_failures += infra_failures

    def render(self) -> str:
        with self._lock:
            lines = ["# TYPE rewardsmith_requests_total counter"]
            for (endpoint, status), count in sorted(self.requests.items()):
                lines.append(
                    f'rewardsmith_requests_total{{endpoint="{endpoint}",status="{status}"}} {count}'
                )
            lines += [
                "# TYPE rewardsmith_samples_total counter",
                f"rewardsmith_samples_total {self.samples}",
                "# TYPE rewardsmith_infra_failures_total counter",
                f"rewardsmith_infra_failures_total {self.infra_failures}",
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
        return "\n".join(lines) + "\n"
