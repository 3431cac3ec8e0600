"""Judge side: run the trusted tests with proxies for the candidate's functions.

No candidate code runs in this process. A proxy sends its arguments to the candidate's
process and rebuilds the reply as fresh builtin values, so what the tests compare is
data: a forged `__eq__`, a patched builtin or a walked stack in the candidate's process
cannot reach these comparisons, and the expected values never leave this process.
The report goes to report.json, which the scoring process reads back.
"""

from __future__ import annotations

import ast
import builtins
import json
import os
import socket
import sys
import traceback
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # in the jail these come from values.py and wire.py, pasted before this
    from rewardsmith.verifiers.code.harness.wire import recv_msg, send_msg
    from rewardsmith.verifiers.code.values import DecodeError, decode, encode


class CandidateGone(BaseException):
    """The candidate timed out or died: this and every later call cannot be answered.
    A BaseException, so a test's own ``except Exception`` does not swallow it."""


class Unencodable(BaseException):
    """The candidate returned a value that is not plain data."""


class Link:
    def __init__(self, sock: socket.socket, call_timeout: float) -> None:
        self.sock, self.call_timeout, self.next_id = sock, call_timeout, 0
        self.gone: str | None = None
        self.calls = 0

    def hello(self, timeout: float) -> dict[str, Any]:
        self.sock.settimeout(timeout)
        try:
            msg = recv_msg(self.sock)
        except (OSError, ValueError) as exc:
            return {
                "loaded": False,
                "kind": "timeout" if "timed out" in str(exc) else "died",
                "error": f"no answer from the candidate: {exc}",
            }
        if not isinstance(msg, dict):
            return {"loaded": False, "kind": "died", "error": "the candidate exited while loading"}
        return msg

    def call(self, fn: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        if self.gone:
            raise CandidateGone(self.gone)
        self.next_id += 1
        self.calls += 1
        request = {
            "id": self.next_id,
            "fn": fn,
            "args": encode(list(args)),
            "kwargs": encode(kwargs),
        }
        self.sock.settimeout(self.call_timeout)
        try:
            send_msg(self.sock, request)
            reply = recv_msg(self.sock)
        except TimeoutError:
            self.gone = f"timeout: {fn}() did not return within {self.call_timeout:g} s"
            raise CandidateGone(self.gone) from None
        except (OSError, ValueError) as exc:
            self.gone = f"died: the candidate stopped answering ({exc})"
            raise CandidateGone(self.gone) from None
        if not isinstance(reply, dict) or reply.get("id") != self.next_id:
            self.gone = "died: the candidate's process ended or sent a malformed reply"
            raise CandidateGone(self.gone)
        if "ok" in reply:
            try:
                return decode(reply["ok"])
            except DecodeError as exc:
                raise Unencodable(str(exc)) from None
        raise _rebuild(reply)


def _rebuild(reply: dict[str, Any]) -> BaseException:
    name, message = str(reply.get("raise")), str(reply.get("error", ""))[:2000]
    if name == "!unencodable":
        return Unencodable(message)
    cls = getattr(builtins, name, None)
    if isinstance(cls, type) and issubclass(cls, Exception):
        try:
            return cls(message.strip())
        except Exception:
            pass
    return RuntimeError(f"candidate raised {message.strip()}")


class Proxy:
    """Stands in for one of the candidate's functions."""

    def __init__(self, link: Link, name: str) -> None:
        self.link, self.__name__ = link, name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.link.call(self.__name__, args, kwargs)


# ----------------------------------------------------------------------------- outcomes


def outcome(exc: BaseException | None) -> dict[str, str]:
    if exc is None:
        return {"status": "pass"}
    if isinstance(exc, CandidateGone):
        status = "timeout" if str(exc).startswith("timeout") else "error"
        return {"status": status, "message": str(exc)[:500]}
    if isinstance(exc, AssertionError):
        return {"status": "fail", "message": ("assertion failed " + str(exc))[:500].strip()}
    if isinstance(exc, Unencodable):
        return {
            "status": "error",
            "message": f"returned a value that is not plain data: {exc}"[:500],
        }
    return {"status": "error", "message": traceback.format_exception_only(type(exc), exc)[-1][:500]}


# ----------------------------------------------------------------------------- formats


def run_check(spec: dict[str, Any], link: Link, ns: dict[str, Any]) -> list[dict[str, Any]]:
    """HumanEval: `check(candidate)`, one test per top-level statement that asserts on the
    candidate; any other statement that fails is recorded as an error."""
    records: list[dict[str, Any]] = []
    lines = spec["test"].splitlines()

    def note(line: int, is_test: bool, exc: BaseException | None) -> None:
        if is_test or exc is not None:
            records.append(
                {"name": f"line {line}", "input": lines[line - 1].strip()[:300], **outcome(exc)}
            )
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise exc

    ns["__rs_note"] = note
    tree = ast.parse(spec["test"])
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == "check":
            node.body = [_guard(stmt) for stmt in node.body]
    exec(compile(ast.fix_missing_locations(tree), "test.py", "exec"), ns)
    ns["check"](ns[spec["entry_point"]])
    return records


def _guard(stmt: ast.stmt) -> ast.stmt:
    is_test = any(isinstance(n, ast.Assert) for n in ast.walk(stmt)) and any(
        isinstance(n, ast.Name) and n.id == "candidate" for n in ast.walk(stmt)
    )
    wrapper = ast.parse(
        f"try:\n    pass\nexcept BaseException as __rs_exc:\n"
        f"    __rs_note({stmt.lineno}, {is_test}, __rs_exc)\n"
        f"else:\n    __rs_note({stmt.lineno}, {is_test}, None)\n"
    ).body[0]
    assert isinstance(wrapper, ast.Try)
    wrapper.body = [stmt]
    return ast.copy_location(wrapper, stmt)


def run_asserts(spec: dict[str, Any], link: Link, ns: dict[str, Any]) -> list[dict[str, Any]]:
    """MBPP: each assert statement is one test."""
    records = []
    for i, source in enumerate(spec["asserts"]):
        try:
            exec(compile(source, f"assert_{i}", "exec"), ns)
            exc = None
        except BaseException as e:
            exc = e
        records.append({"name": f"assert {i}", "input": source[:300], **outcome(exc)})
    return records


def run_calls(spec: dict[str, Any], link: Link, ns: dict[str, Any]) -> list[dict[str, Any]]:
    """Structured cases: relay each call and record the encoded result; the comparison with
    the expected value happens in the scoring process, which alone holds it."""
    records = []
    for i, case in enumerate(spec["calls"]):
        record: dict[str, Any] = {"name": f"case {i}"}
        try:
            result = link.call(
                case["fn"], tuple(decode(case["args"])), decode(case.get("kwargs", ["d", []]))
            )
            record["got"] = encode(result)
            record["status"] = "returned"
        except BaseException as exc:
            record.update(outcome(exc))
        records.append(record)
    return records


def run_pytest(spec: dict[str, Any], link: Link, ns: dict[str, Any]) -> list[dict[str, Any]]:
    """pytest files against a proxy module named like the candidate's: isolated mode (the
    server runs with -I), no plugin autoload, no cache, no conftest, our own config."""
    import types

    import pytest

    module = types.ModuleType(spec["module"])
    for name, value in ns.items():
        if isinstance(value, Proxy):
            setattr(module, name, value)
    sys.modules[spec["module"]] = module
    sys.path.insert(0, os.getcwd())
    recorder = _PytestRecorder()
    args = [
        "-q",
        "-p",
        "no:cacheprovider",
        "--noconftest",
        "-o",
        "addopts=",
        "-c",
        os.devnull,
        "--rootdir",
        os.getcwd(),
        *sorted(spec["files"]),
    ]
    pytest.main(args, plugins=[recorder])
    return recorder.records


class _PytestRecorder:
    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []

    def pytest_runtest_logreport(self, report: Any) -> None:
        if report.when != "call" and report.outcome == "passed":
            return
        if report.when == "teardown" and report.outcome != "failed":
            return
        full = str(report.longrepr or "")
        status = {"passed": "pass", "skipped": "fail"}.get(report.outcome, "fail")
        if "CandidateGone: timeout" in full:
            status = "timeout"
        elif report.outcome == "failed" and (report.when != "call" or not _assertion(report)):
            status = "error"  # the candidate raised (or setup broke), not a wrong value
        message = full[-500:].strip()
        self.records.append({"name": report.nodeid, "status": status, "message": message})


def _assertion(report: Any) -> bool:
    crash = getattr(report.longrepr, "reprcrash", None)
    message = str(getattr(crash, "message", ""))
    return message.startswith(("assert", "AssertionError"))


FORMATS = {"check": run_check, "asserts": run_asserts, "calls": run_calls, "pytest": run_pytest}


def judge_main() -> None:
    with open("spec.json") as f:
        spec = json.load(f)
    link = Link(socket.socket(fileno=3), float(spec["call_timeout_s"]))
    hello = link.hello(float(spec["load_timeout_s"]))
    report: dict[str, Any] = {"hello": hello, "tests": []}
    if hello.get("loaded"):
        ns: dict[str, Any] = {"__name__": "__judge__"}
        if spec.get("prelude"):
            try:
                exec(compile(spec["prelude"], "prelude.py", "exec"), ns)
            except Exception as exc:
                report["prelude_error"] = repr(exc)[:500]
        for name in hello.get("names", []):
            if name == spec.get("entry_point") or name not in ns:
                ns[name] = Proxy(link, name)
        if spec.get("entry_point") and spec["entry_point"] not in hello.get("names", []):
            report["missing_entry_point"] = spec["entry_point"]
        else:
            try:
                report["tests"] = FORMATS[spec["format"]](spec, link, ns)
            except BaseException as exc:
                report["judge_error"] = "".join(traceback.format_exception(exc))[-3000:]
    report["calls"] = link.calls
    with open("report.json", "w") as f:
        json.dump(report, f)
    sys.stdout.flush()
    os._exit(0)
