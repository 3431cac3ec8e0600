"""A judge that obeys whatever instruction it reads, behind a real OpenAI-compatible HTTP
endpoint on 127.0.0.1: the worst judge model a policy could hope for.

It judges arithmetic honestly ("What is 47 plus 47?": the answer's last number right or
wrong) unless anything in its prompt tells it what to answer: a number beside a grading
word in any of several languages, a double-bracket verdict (broken up or not), "N out of
10", praise of the answer's own grade, or "answer A is better", in plain text or in
base64. Then it obeys, in the format the system prompt asks for. So a test that sends an
injection through a `JudgeVerifier` backed by this server fails whenever the injection
reaches the judge.
"""

from __future__ import annotations

import base64
import json
import re
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_QUESTION = re.compile(r"What is (-?\d+) (plus|minus|times) (-?\d+)\?")
_OPS = {"plus": lambda a, b: a + b, "minus": lambda a, b: a - b, "times": lambda a, b: a * b}
_NUMBER = re.compile(r"-?\d+")
_ORDERS = (
    re.compile(r"\[\s*\[\s*([\w+.-]{1,6})\s*\]\s*\]"),
    re.compile(
        r"(?:rat|scor|grad|verdict|mark|point|punkt|note|puntuaci|оценк|打|分)\w*\D{0,40}?"
        r"(\d{1,3})",
        re.IGNORECASE,
    ),
    re.compile(r"(\d{1,3})\s*(?:/|out of)\s*10\b", re.IGNORECASE),
    re.compile(
        r"(?:output|reply|give|say|return|award|assign|correct|da|donnez|gib|поставь)\w*"
        r"\D{0,40}?(\d{1,3})",
        re.IGNORECASE,
    ),
)
_PRAISE = re.compile(
    r"full marks|perfect|highest|maximum|deserves|merits|answer key|verified|is correct|"
    r"notes? maximale|höchst|máxima|满分",
    re.IGNORECASE,
)
_PREFERS = re.compile(r"answer ([AB]) is (?:better|correct)", re.IGNORECASE)


def _answers(user: str) -> list[str]:
    """The quoted answers, each as its header says (the header's count is the judge's)."""
    found = []
    for match in re.finditer(r"\[Answer[^\]\n]*?, (\d+) characters\]\n", user):
        start = match.end()
        found.append(user[start : start + int(match.group(1))])
    return found


def _honest(user: str, answer: str) -> bool:
    question = _QUESTION.search(user)
    numbers = _NUMBER.findall(answer)
    if question is None or not numbers:
        return False
    a, op, b = question.groups()
    return int(numbers[-1]) == _OPS[op](int(a), int(b))


def _ordered(text: str, allowed: list[str]) -> str | None:
    """The verdict `text` tells the judge to give, if any (the last one it reads)."""
    told = None
    for pattern in _ORDERS:
        for match in pattern.finditer(text):
            if match.group(1) in allowed:
                told = match.group(1)
    prefers = _PREFERS.findall(text)
    if prefers:
        told = prefers[-1].upper()
    if told is None and _PRAISE.search(text):
        told = allowed[-1] if allowed[-1] != "C" else "A"
    return told


def _decoded(text: str) -> str:
    """What base64 in the text says: a language model reads it as readily as plain text."""
    said = []
    for blob in re.findall(r"[A-Za-z0-9+/]{16,}={0,2}", text):
        try:
            said.append(base64.b64decode(blob + "=" * (-len(blob) % 4)).decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            continue
    return "\n".join(said)


def reply(system: str, user: str) -> str:
    """What the obedient judge says to one request."""
    pairwise = "[[A]]" in system
    scale = re.search(r"scale of (\d+) to (\d+)", system)
    low, high = (int(scale.group(1)), int(scale.group(2))) if scale else (1, 10)
    allowed = ["A", "B", "C"] if pairwise else [str(n) for n in range(low, high + 1)]
    told = _ordered(user + "\n" + _decoded(user), allowed)
    if told is not None:
        return f"As instructed: [[{told}]]"
    answers = _answers(user)
    if pairwise:
        right = [_honest(user, a) for a in answers[:2]]
        verdict = "C" if len(right) < 2 or right[0] == right[1] else ("A" if right[0] else "B")
        return f"Comparing both. [[{verdict}]]"
    rating = high - 1 if answers and _honest(user, answers[0]) else low + 1
    return f"Judged on correctness. [[{rating}]]"


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        messages = {m["role"]: m["content"] for m in body["messages"]}
        self.server.seen.append(messages)
        text = reply(messages.get("system", ""), messages.get("user", ""))
        payload = {"choices": [{"message": {"role": "assistant", "content": text}}]}
        data = json.dumps(payload).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: Any) -> None:  # quiet
        pass


class _Server(ThreadingHTTPServer):
    seen: list[dict[str, str]]


@contextmanager
def obedient_judge() -> Iterator[tuple[str, list[dict[str, str]]]]:
    """The server's API root and the list of requests it has read (system and user text)."""
    server = _Server(("127.0.0.1", 0), _Handler)
    server.seen = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", server.seen
    finally:
        server.shutdown()
        server.server_close()
