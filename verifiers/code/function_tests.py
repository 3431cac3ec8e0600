"""Function-call tests for Python: HumanEval `check`, MBPP asserts and structured cases.

Two jails per sample, joined only by a socket: the candidate's code loads in one (the
agent answers calls); the trusted tests run in the other (the judge), where the candidate's
functions are proxies that return rebuilt plain values. The judge writes its report to a
file the scoring process reads back. For structured cases the expected values never enter
either jail: the judge relays the calls and the scoring process compares, with an exact
type check (`values.exact_equal`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from rewardsmith.verifiers.code import check_plan
from rewardsmith.verifiers.code.harness import program_source
from rewardsmith.verifiers.code.harness.wire import MAX_REPLY, loads_bounded
from rewardsmith.verifiers.code.values import DecodeError, decode, exact_equal, excerpt
from rewardsmith.verifiers.sandbox import ForkServer, LimitHit, Limits, Program, SandboxResult

__all__ = ["FunctionRun", "compare_calls", "run_calls", "run_function_tests", "run_planned"]

_AGENT = program_source("agent")
_BATCH = program_source("agent", "batch_main")
_JUDGE = program_source("judge")


@dataclass(frozen=True)
class FunctionRun:
    """What the two jails produced: the judge's report (None if it wrote none) and both
    sandbox results."""

    report: dict[str, Any] | None
    judge: SandboxResult
    candidate: SandboxResult


def run_function_tests(
    server: ForkServer, code: str, spec: dict[str, Any], limits: Limits, call_timeout_s: float
) -> FunctionRun:
    """Load `code` in one jail and run the judge `spec` (format, tests) in another."""
    spec = {**spec, "call_timeout_s": call_timeout_s, "load_timeout_s": limits.wall_s}
    margin = min(5.0, max(1.0, limits.wall_s / 2))  # the candidate's limit comes first
    judge_limits = Limits(
        wall_s=limits.wall_s + margin,
        cpu_s=limits.wall_s + margin,
        memory_bytes=512 << 20,
        processes=16,
        output_bytes=64 << 10,
    )
    tests = {name: src.encode() for name, src in spec.get("files", {}).items()}
    judge = Program(
        python=_JUDGE,
        trusted_code=True,
        readonly_files={"spec.json": json.dumps(spec).encode(), **tests},
        env={"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
        collect=("report.json",),
        limits=judge_limits,
    )
    candidate = Program(
        python=_AGENT, trusted_code=True, files={"solution.py": code.encode()}, limits=limits
    )
    judged, ran = server.run_programs([judge, candidate])
    report = None
    if "report.json" in judged.files:
        try:
            report = json.loads(judged.files["report.json"])
        except ValueError:
            report = None
    return FunctionRun(report if isinstance(report, dict) else None, judged, ran)


def run_calls(server: ForkServer, code: str, spec: dict[str, Any], limits: Limits) -> FunctionRun:
    """Structured cases in one jail: the agent makes the calls (their inputs are not secret)
    and streams one result line per call; `compare_calls` decides here. The report has the
    judge's shape, so the verdict code is shared."""
    candidate = Program(
        python=_BATCH,
        trusted_code=True,
        files={"solution.py": code.encode()},
        readonly_files={"calls.json": json.dumps(spec["calls"]).encode()},
        collect=("results.jsonl",),
        # what the scoring process parses is bounded: a larger file is missing, as if the
        # program had died while loading (its fault, scored 0)
        limits=limits.replace(collect_bytes=MAX_REPLY),
    )
    ran = server.run_programs([candidate])[0]
    lines = ran.files.get("results.jsonl", b"").splitlines()
    hello = _json_line(lines[0]) if lines else None
    if not isinstance(hello, dict) or type(hello.get("loaded")) is not bool:
        reason = "died" if ran.limit_hit is None else "timeout"
        hello = {
            "loaded": False,
            "kind": reason,
            "error": f"the program ended while loading: {ran.describe()}",
        }
    replies: dict[int, dict[str, Any]] = {}
    calls = len(spec["calls"])
    for line in lines[1:]:
        reply = _json_line(line)
        i = reply.get("id") if isinstance(reply, dict) else None
        # Only the ids of this batch's calls: any other int (the multiples of 2**61 - 1
        # share one hash) would make this table a hash flood (red team rtcode8).
        if type(i) is int and 0 <= i < calls:
            replies.setdefault(i, reply)  # the first answer to a call stands
    records = [_record(i, replies.get(i), ran) for i in range(len(spec["calls"]))]
    report = {"hello": hello, "tests": records if hello.get("loaded") else []}
    return FunctionRun(report, ran, ran)


def run_planned(server: ForkServer, code: str, suite: Any, limits: Limits) -> FunctionRun:
    """A HumanEval check that `check_plan` planned: its calls in one batch in the
    candidate's jail (`run_calls`), judged here; the report has the judge's shape."""
    ran = run_calls(server, code, suite.batch, limits)
    report = ran.report or {}
    hello = report.get("hello", {})
    if hello.get("loaded"):
        if suite.entry_point not in hello.get("names", []):
            report["missing_entry_point"] = suite.entry_point
        report["tests"] = check_plan.verdicts(report.get("tests", []), list(suite.planned))
    return ran


def _json_line(line: bytes) -> Any:
    try:
        return loads_bounded(line)
    except ValueError:
        return None


def _record(i: int, reply: dict[str, Any] | None, ran: SandboxResult) -> dict[str, Any]:
    name = f"case {i}"
    if reply is None:
        status = "timeout" if ran.limit_hit in (LimitHit.WALL_TIME, LimitHit.CPU_TIME) else "error"
        return {"name": name, "status": status, "message": f"no result: {ran.describe()}"}
    if "ok" in reply:
        return {"name": name, "status": "returned", "got": reply["ok"]}
    if reply.get("raise") == "!unencodable":
        message = f"returned a value that is not plain data: {reply.get('error')}"
    else:
        message = f"raised {str(reply.get('error', reply.get('raise')))[:500].strip()}"
    return {"name": name, "status": "error", "message": message}


def compare_calls(
    records: list[dict[str, Any]], cases: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """Turn the judge's relayed results into pass/fail by exact comparison, here."""
    out = []
    for record, case in zip(records, cases, strict=False):
        if record.get("status") != "returned":
            out.append(record)
            continue
        try:
            got = decode(record["got"])
        except (DecodeError, KeyError) as exc:
            out.append({"name": record["name"], "status": "error", "message": str(exc)[:300]})
            continue
        want = case["expected"]
        ok = exact_equal(
            got, want, rel_tol=case.get("rel_tol", 0.0), abs_tol=case.get("abs_tol", 0.0)
        )
        entry = {"name": record["name"], "status": "pass" if ok else "fail", "output": excerpt(got)}
        entry["input"] = excerpt(case["args"])
        if not ok:  # `outcome.conceal` drops it where the reference hides expected values
            entry["expected"] = excerpt(want)
        out.append(entry)
    return out
