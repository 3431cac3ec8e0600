"""Judge side: run the trusted tests with proxies for the candidate's functions.

No candidate code runs in this process. A proxy sends its arguments to the candidate's
process and rebuilds the reply as fresh builtin values, so what the tests compare is
data: a forged `__eq__`, a patched builtin or a walked stack in the candidate's process
cannot reach these comparisons, and the expected values never leave this process.
The report goes to report.json, which the scoring process reads back.

Nothing the candidate sends may steer the tests' control flow. An exception it raised
comes back as the builtin error of that name only when the class is an ordinary error (a
test may expect a ValueError); StopIteration, StopAsyncIteration (which end a `map`, a
`for`, an `async for`) and anything that is not a builtin error come back as
`CandidateRaised`, a plain error. Its hello is checked field by field. The tests see the
candidate only through the names the reference declares (`spec["candidate_names"]`: the
entry point, ``provides``, what a pytest file names from the module); of those, only the
entry point may shadow anything, the others never a builtin (a candidate's `abs` must not
become the test's), a dunder, or a name the trusted code defined. A pytest module exposes
the declared names only, and `import *` exports `spec["star_names"]` less what the test's
other star imports bind (``from math import *``: `spec["star_modules"]`) unless
``provides`` names it, so a helper a test imported (``approx``, ``Counter``,
``isclose``) keeps its binding in any import order. Standard modules
the tests read without importing (`spec["modules"]`) are imported here, never taken from
the candidate.
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
    from rewardsmith.verifiers.code.harness.wire import MAX_REPLY, recv_msg, send_msg
    from rewardsmith.verifiers.code.values import DecodeError, decode, encode


class CandidateGone(BaseException):
    """The candidate timed out or died: this and every later call cannot be answered.
    A BaseException, so a test's own ``except Exception`` does not swallow it."""


class Unencodable(BaseException):
    """The candidate returned a value that is not plain data."""


class CandidateRaised(Exception):
    """An exception the candidate raised, rebuilt as a plain error: its class could change
    the tests' control flow (StopIteration ends a `map`) or is not a builtin error."""


_CONTROL_FLOW = (StopIteration, StopAsyncIteration)
"""Errors the interpreter acts on; the BaseExceptions (SystemExit, ...) never come back."""
MAX_NAMES = 10_000


class Link:
    def __init__(self, sock: socket.socket, call_timeout: float) -> None:
        self.sock, self.call_timeout, self.next_id = sock, call_timeout, 0
        self.gone: str | None = None
        self.calls = 0

    def hello(self, timeout: float) -> dict[str, Any]:
        self.sock.settimeout(timeout)
        try:
            msg = recv_msg(self.sock, MAX_REPLY)
        except (OSError, ValueError) as exc:
            return {
                "loaded": False,
                "kind": "timeout" if "timed out" in str(exc) else "died",
                "error": f"no answer from the candidate: {exc}",
            }
        return checked_hello(msg)

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
            reply = recv_msg(self.sock, MAX_REPLY)
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


def checked_hello(msg: Any) -> dict[str, Any]:
    """The candidate's hello, rebuilt from the fields a judge reads, each checked."""
    if not isinstance(msg, dict) or type(msg.get("loaded")) is not bool:
        return {"loaded": False, "kind": "died", "error": "the candidate sent no valid hello"}
    if not msg["loaded"]:
        kind = msg.get("kind")
        return {
            "loaded": False,
            "kind": kind if kind in ("syntax", "runtime", "timeout") else "died",
            "error": str(msg.get("error", ""))[:2000],
        }
    names = msg.get("names")
    if (
        not isinstance(names, list)
        or len(names) > MAX_NAMES
        or not all(isinstance(n, str) and len(n) < 256 for n in names)
    ):
        return {"loaded": False, "kind": "died", "error": "the candidate's hello is malformed"}
    return {"loaded": True, "names": names}


def _rebuild(reply: dict[str, Any]) -> BaseException:
    name, message = str(reply.get("raise"))[:100], str(reply.get("error", ""))[:2000].strip()
    if name == "!unencodable":
        return Unencodable(message)
    cls = getattr(builtins, name, None)
    if isinstance(cls, type) and issubclass(cls, Exception) and not issubclass(cls, _CONTROL_FLOW):
        try:
            return cls(message)
        except Exception:
            pass
    return CandidateRaised(f"candidate raised {message or name}")


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


def run_check(
    spec: dict[str, Any], ns: dict[str, Any], candidate: dict[str, Any]
) -> list[dict[str, Any]]:
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


def run_asserts(
    spec: dict[str, Any], ns: dict[str, Any], candidate: dict[str, Any]
) -> list[dict[str, Any]]:
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


def run_pytest(
    spec: dict[str, Any], ns: dict[str, Any], candidate: dict[str, Any]
) -> list[dict[str, Any]]:
    """pytest files against a proxy module named like the candidate's: isolated mode (the
    server runs with -I), no plugin autoload, no cache, no conftest, our own config."""
    import types

    import pytest

    module = types.ModuleType(spec["module"])
    for name, value in candidate.items():  # declared names only (`bind_candidate`)
        setattr(module, name, value)
    theirs = _star_exports(spec.get("star_modules", [])) - set(spec.get("provides", []))
    module.__all__ = [  # type: ignore[attr-defined]
        n for n in spec.get("star_names", []) if n in candidate and n not in theirs
    ]
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


def _star_exports(modules: list[str]) -> set[str]:
    """What ``from m import *`` binds for each of `modules` (trusted: the tests import
    them too; one that fails to import fails the tests the same way)."""
    import importlib

    names: set[str] = set()
    for name in modules:
        try:
            found = importlib.import_module(name)
        except Exception:
            continue
        public = [n for n in vars(found) if not n.startswith("_")]
        names.update(getattr(found, "__all__", public))
    return names


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


FORMATS = {"check": run_check, "asserts": run_asserts, "pytest": run_pytest}


def bind_candidate(
    ns: dict[str, Any], names: list[str], spec: dict[str, Any], make: Any
) -> dict[str, Any]:
    """Put the candidate's functions that the reference declares (`names` are those the
    candidate offers), each made by `make(name)`, into the tests' namespace where they
    shadow nothing (see the module doc); return them all by name (a pytest module exposes
    them, builtin names only to a test that asks by name)."""
    entry_point = spec.get("entry_point")
    declared = set(spec.get("candidate_names", [])) | ({entry_point} if entry_point else set())
    offered = {}
    for name in names:
        if name not in declared or not name.isidentifier() or name.startswith("__"):
            continue
        offered[name] = function = make(name)
        if name == entry_point or (name not in ns and not hasattr(builtins, name)):
            ns[name] = function
    return offered


def _prelude(spec: dict[str, Any], report: dict[str, Any]) -> dict[str, Any]:
    ns: dict[str, Any] = {"__name__": "__judge__"}
    for name in spec.get("modules", []):
        try:
            ns[name] = __import__(name)
        except Exception as exc:
            report["prelude_error"] = repr(exc)[:500]
    if spec.get("prelude"):
        try:
            exec(compile(spec["prelude"], "prelude.py", "exec"), ns)
        except Exception as exc:
            report["prelude_error"] = repr(exc)[:500]
    return ns


class _Capped:
    """A text stream that passes on its first `limit` characters and drops the rest: tests
    that print a candidate's huge value must not push the judge past its output limit."""

    def __init__(self, stream: Any, limit: int = 16_000) -> None:
        self.stream, self.left = stream, limit

    def write(self, text: str) -> int:
        if self.left > 0:
            self.stream.write(text[: self.left])
        self.left -= len(text)
        return len(text)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


def judge_main() -> None:
    sys.stdout, sys.stderr = _Capped(sys.stdout), _Capped(sys.stderr)
    with open("spec.json") as f:
        spec = json.load(f)
    link = Link(socket.socket(fileno=3), float(spec["call_timeout_s"]))
    hello = link.hello(float(spec["load_timeout_s"]))
    report: dict[str, Any] = {"hello": hello, "tests": []}
    if hello.get("loaded"):
        ns = _prelude(spec, report)
        entry = spec.get("entry_point")
        candidate = bind_candidate(ns, hello.get("names", []), spec, lambda n: Proxy(link, n))
        if entry and entry not in hello.get("names", []):
            report["missing_entry_point"] = entry
        else:
            try:
                report["tests"] = FORMATS[spec["format"]](spec, ns, candidate)
            except BaseException as exc:
                report["judge_error"] = "".join(traceback.format_exception(exc))[-3000:]
    report["calls"] = link.calls
    with open("report.json", "w") as f:
        json.dump(report, f)
    sys.stdout.flush()
    os._exit(0)
