"""From per-test records and sandbox results to one `Verdict`.

score = passed / total (the fraction of tests passed; HumanEval's pass@1 counts a sample
correct only at score 1, i.e. status PASS). A failure names its most telling cause: a
resource limit the candidate hit, else a timeout, else a runtime error when every failing
test errored, else a wrong answer.
"""

from __future__ import annotations

import re
from typing import Any

from rewardsmith.verifiers.sandbox import LimitHit, SandboxResult
from rewardsmith.verifiers.types import Failure, Status, Verdict

__all__ = ["LIMIT_FAILURES", "candidate_evidence", "conceal", "from_records", "text_excerpt"]

LIMIT_FAILURES = {
    LimitHit.WALL_TIME: Failure.TIME_LIMIT,
    LimitHit.CPU_TIME: Failure.TIME_LIMIT,
    LimitHit.MEMORY: Failure.MEMORY_LIMIT,
    LimitHit.OUTPUT: Failure.OUTPUT_LIMIT,
    LimitHit.PROCESSES: Failure.RESOURCE_LIMIT,
    LimitHit.FILE_SIZE: Failure.RESOURCE_LIMIT,
    LimitHit.DISK: Failure.RESOURCE_LIMIT,
}
MAX_RECORDS = 50


def text_excerpt(data: bytes | str, limit: int = 2000) -> str:
    text = data.decode("utf-8", errors="replace") if isinstance(data, bytes) else data
    return text if len(text) <= limit else text[: limit // 2] + "\n...\n" + text[-limit // 2 :]


def candidate_evidence(result: SandboxResult) -> dict[str, Any]:
    return {
        "exit_code": result.exit_code,
        "signal": result.signal_name,
        "limit_hit": result.limit_hit.value if result.limit_hit else None,
        "stdout": text_excerpt(result.stdout, 1000),
        "stderr": text_excerpt(result.stderr, 2000),
        "wall_s": round(result.wall_s, 4),
        "peak_memory_bytes": result.peak_memory_bytes,
    }


def from_records(
    name: str,
    version: str,
    records: list[dict[str, Any]],
    *,
    limit: LimitHit | None,
    evidence: dict[str, Any],
) -> Verdict:
    total = len(records)
    passed = sum(r.get("status") == "pass" for r in records)
    evidence = {**evidence, "passed": passed, "total": total, "tests": records[:MAX_RECORDS]}
    if total == 0:
        return Verdict.failed(name, version, evidence=evidence, feedback="no test ran")
    score = passed / total
    feedback = _feedback(records, passed, total)
    if passed == total:
        return Verdict.passed(name, version, evidence=evidence, feedback=feedback)
    failure = _failure(records, limit)
    if passed:
        return Verdict(name, version, Status.PARTIAL, score, failure, evidence, feedback)
    if failure is Failure.TIME_LIMIT:
        return Verdict.timed_out(name, version, failure, feedback, evidence=evidence)
    if failure is Failure.WRONG_ANSWER:
        return Verdict.failed(name, version, failure, evidence=evidence, feedback=feedback)
    return Verdict.errored(name, version, failure, feedback, evidence=evidence)


def _failure(records: list[dict[str, Any]], limit: LimitHit | None) -> Failure:
    if limit is not None:
        return LIMIT_FAILURES[limit]
    failing = [r.get("status") for r in records if r.get("status") != "pass"]
    if "timeout" in failing:
        return Failure.TIME_LIMIT
    if failing and all(s == "error" for s in failing):
        return Failure.RUNTIME_ERROR
    return Failure.WRONG_ANSWER


def _feedback(records: list[dict[str, Any]], passed: int, total: int) -> str:
    text = f"{passed}/{total} tests passed"
    first = next((r for r in records if r.get("status") != "pass"), None)
    if first is not None:
        detail = first.get("message") or ""
        if "expected" in first:
            detail = f"got {first.get('output', '?')}, expected {first['expected']}"
        text += f"; first failure: {first.get('name')} ({first.get('status')}) {detail}".rstrip()
        if first.get("input"):
            text += f" on {first['input'][:200]}"
    return text[:1000]


_ERROR_NAME = re.compile(r"\b([A-Z]\w*(?:Error|Exception|Exit|Interrupt|Raised|Gone))\b")


def conceal(records: list[dict[str, Any]], shown: dict[str, str]) -> list[dict[str, Any]]:
    """Records for a reference with ``hide_expected``: no expected value, no test source
    (an assert's text holds its expected value; `shown` gives its calls instead), no
    assertion message; an error keeps only its class name, a timeout its own words."""
    out = []
    for record in records:
        kept = {k: v for k, v in record.items() if k not in ("expected", "message", "input")}
        name, status = str(record.get("name", "")), record.get("status")
        if name in shown:
            if shown[name]:
                kept["input"] = shown[name]
        elif "input" in record:  # calls and stdio: the input is not secret
            kept["input"] = record["input"]
        message = str(record.get("message", ""))
        if status == "fail":
            kept["message"] = "wrong answer (expected values are hidden)"
        elif status == "timeout":
            kept["message"] = "timed out"
        elif status == "error":
            found = _ERROR_NAME.search(message)
            kept["message"] = f"raised {found.group(1)}" if found else "error"
        out.append(kept)
    return out
