"""Shared cases for the report, diff and statistics tests: test verifiers installed as a
real plugin, hostile model text, a multi-turn trajectory, and scoring through the real
``score`` command (in this process, inline executor)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from rewardsmith.cli.score import score
from tests.support.plugin import install_plugin
from tests.support.trajectories import weather_episode

PLUGIN = "rs_report_verifiers"
MODULE = '''
from dataclasses import dataclass
from typing import ClassVar

from rewardsmith.verifiers import Cost, Failure, Sample, Verdict


@dataclass(frozen=True)
class FourWay:
    """The verdict the reference names: pass, fail, skip or crash (an infrastructure
    failure, as a verifier bug gives)."""

    name: ClassVar[str] = "four_way"
    version: ClassVar[str] = "1"
    cost: ClassVar[Cost] = Cost.CHEAP

    def __call__(self, sample: Sample) -> Verdict:
        kind = str(sample.reference)
        if kind == "pass":
            return Verdict.passed(self.name, self.version)
        if kind == "skip":
            return Verdict.skipped(self.name, self.version, "not for this sample")
        if kind == "crash":
            return Verdict.errored(self.name, self.version, Failure.VERIFIER_CRASH, "bug")
        return Verdict.failed(self.name, self.version)


@dataclass(frozen=True)
class Echo:
    """Passes when the completion equals the reference; otherwise fails and, as code
    verifiers do with a program's output, puts the model's text in its evidence and
    feedback."""

    name: ClassVar[str] = "echo"
    version: ClassVar[str] = "1"
    cost: ClassVar[Cost] = Cost.CHEAP

    def __call__(self, sample: Sample) -> Verdict:
        text = sample.completion_text
        if text == str(sample.reference):
            return Verdict.passed(self.name, self.version)
        failure = Failure.COMPILE_ERROR if text.startswith("def ") else Failure.WRONG_ANSWER
        evidence = {"stdout": text, "stderr": "Traceback: " + text[:200]}
        return Verdict.failed(self.name, self.version, failure, evidence=evidence,
                              feedback="got: " + text[:300])
'''


def install_test_verifiers(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``four_way`` and ``echo`` as an installed plugin (a real dist-info on sys.path)."""
    install_plugin(root, PLUGIN, MODULE, {"four_way": "FourWay", "echo": "Echo"})
    monkeypatch.syspath_prepend(str(root))
    sys.modules.pop(PLUGIN, None)


# Model text that would run, restyle, redirect or spoof the page if it were not escaped.
# The scripts compute their marker ("PW" + "NED"), so the marker appears on a page only
# if one of them ran.
HOSTILE = [
    '<script>document.title = "PW" + "NED"</script>',
    "\"><img src=x onerror=\"document.body.setAttribute('data-x', 'PW' + 'NED')\">",
    "</pre></details></div></table><script>document.write('PW' + 'NED')</script>",
    "<svg onload=\"document.title='PW'+'NED'\"><circle r=9 /></svg>",
    "<iframe src=\"javascript:parent.document.title='PW'+'NED'\"></iframe>",
    "<!-- a comment that never closes",
    "<style>body { display: none }</style>",
    '<meta http-equiv="refresh" content="0; url=https://example.com/">',
    '<base href="https://example.com/"><link rel=stylesheet href=x.css>',
    "<a href=\"javascript:document.title='PW'+'NED'\">click me</a>",
    "\u202ereversed text\u202c and {title} {body} %s",
    "<textarea><plaintext><xmp>",
]

TRAJECTORY = weather_episode(
    location="<script>Paris</script>",
    result="22.0 <img src=x onerror=\"document.title='PW'+'NED'\">",
    answer="It is 21 degrees in Paris.",
)


def hostile_rows() -> list[dict[str, Any]]:
    """Rows for `echo`: hostile completions (and ids, tasks, references), a multi-turn
    trajectory, a trajectory of steps, a compile error, a huge answer and passes."""
    rows: list[dict[str, Any]] = [
        {"id": f"evil-{i}", "completion": text, "reference": "safe", "task": "hostile"}
        for i, text in enumerate(HOSTILE)
    ]
    rows += [
        {"id": "<b>id</b>", "completion": "x", "reference": "<i>ref</i>", "task": "<u>t</u>"},
        {"id": "pass-1", "completion": "Paris", "reference": "Paris", "task": "capitals"},
        {"id": "pass-2", "completion": "Rome", "reference": "Rome", "task": "capitals"},
        {"id": "broken-code", "completion": "def f(:\n  return", "reference": "x", "task": "code"},
        {"id": "huge", "completion": "9" * 200_000, "reference": "1", "task": "math"},
        {"id": "weather", "messages": TRAJECTORY, "answer": "22", "task": "tools"},
        {
            "id": "steps",
            "completion": [
                {"action": "import os", "observation": "ok"},
                {"action": "print(open('/etc/passwd').read())", "observation": "<denied>"},
            ],
            "reference": "done",
            "task": "agent",
        },
    ]
    return rows


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def score_file(dump: Path, output: Path, *verifiers: str, **options: Any) -> None:
    """Run the real ``rewardsmith score`` command in this process (inline executor)."""
    score(
        dump,
        output,
        verifier=list(verifiers),
        backend="inline",
        rescore=True,
        **options,
    )
