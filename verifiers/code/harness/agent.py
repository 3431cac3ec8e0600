"""Candidate side: load the candidate's module, then answer calls until the judge hangs up.

Everything here runs in the candidate's own process, so the candidate can change any of
it; that gains nothing, because all it can send back is plain data for the judge to check.
"""

from __future__ import annotations

import json
import os
import socket
import sys
import traceback
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # in the jail these come from values.py and wire.py, pasted before this
    from rewardsmith.verifiers.code.harness.wire import recv_msg, send_msg
    from rewardsmith.verifiers.code.values import EncodeError, decode, encode


def agent_main() -> None:
    sock = socket.socket(fileno=3)
    with open("solution.py", encoding="utf-8", errors="replace") as f:
        source = f.read()
    namespace: dict[str, Any] = {"__name__": "solution", "__builtins__": __builtins__}
    hello = _load(source, namespace)
    send_msg(sock, hello)
    if not hello["loaded"]:
        return
    while True:
        request = recv_msg(sock)
        if request is None:
            return
        send_msg(sock, _answer(namespace, request))


def _load(source: str, namespace: dict[str, Any]) -> dict[str, Any]:
    """Run the candidate's module; what a judge needs to know about it."""
    sys.modules["solution"] = module = type(sys)("solution")
    try:
        code = compile(source, "solution.py", "exec")
    except (SyntaxError, ValueError) as exc:
        return {"loaded": False, "kind": "syntax", "error": _describe(exc)}
    try:
        exec(code, namespace)
    except BaseException as exc:  # SystemExit too: loading must finish to be tested
        return {"loaded": False, "kind": "runtime", "error": _describe(exc)}
    module.__dict__.update(namespace)
    names = sorted(k for k, v in namespace.items() if callable(v) and not k.startswith("__"))
    return {"loaded": True, "names": names}


def _answer(namespace: dict[str, Any], request: dict[str, Any]) -> dict[str, Any]:
    reply: dict[str, Any] = {"id": request.get("id")}
    try:
        args, kwargs = decode(request["args"]), decode(request["kwargs"])
        result = namespace[request["fn"]](*args, **kwargs)
        reply["ok"] = encode(result)
    except EncodeError as exc:
        reply["raise"] = "!unencodable"
        reply["error"] = str(exc)
    except BaseException as exc:
        reply["raise"] = type(exc).__name__ if isinstance(exc, Exception) else "BaseException"
        reply["error"] = _describe(exc)
    return reply


def _describe(exc: BaseException) -> str:
    lines = traceback.format_exception_only(type(exc), exc)
    return "".join(lines)[-2000:]


def batch_main() -> None:
    """Structured calls without a judge: the inputs are not secret, so the agent makes every
    call itself and appends one result line per call to results.jsonl; the scoring process
    compares. Forging a line gains nothing over returning that value: the expected values
    are not in this jail."""
    out = os.open("results.jsonl", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)

    def emit(obj: dict[str, Any]) -> None:
        os.write(out, (json.dumps(obj, separators=(",", ":")) + "\n").encode())

    with open("calls.json") as f:
        calls = json.load(f)
    with open("solution.py", encoding="utf-8", errors="replace") as f:
        source = f.read()
    namespace: dict[str, Any] = {"__name__": "solution", "__builtins__": __builtins__}
    hello = _load(source, namespace)
    emit(hello)
    if not hello["loaded"]:
        return
    for i, call in enumerate(calls):
        if call["fn"] not in namespace:
            emit({"id": i, "raise": "NameError", "error": f"{call['fn']} is not defined"})
            continue
        emit(_answer(namespace, {**call, "id": i}))
