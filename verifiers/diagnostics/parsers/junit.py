"""JUnit XML, as pytest writes it with ``--junitxml``: one record per failed or errored test.

    <testcase classname="test_m" name="test_add" time="0.001">
      <failure message="assert 3 == 4">def test_add(): ...
    test_m.py:2: AssertionError</failure>
    </testcase>

A ``<failure>`` (an assertion failed) and an ``<error>`` (setup or teardown broke) are both
test-stage errors; the code is ``failure`` or ``error`` plus the exception type when the
report names one. The location is the last ``path.py:N: ExcType`` line of pytest's report (or the
testcase's ``file`` attribute, without a line: xunit1's ``line`` is 0-based). Passing and
skipped tests produce no record.

The XML is untrusted: a document with a DTD (``<!DOCTYPE``/``<!ENTITY``) is refused before
parsing, which rules out entity-expansion bombs and external entities.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

from rewardsmith.verifiers.diagnostics.cleaning import Line
from rewardsmith.verifiers.diagnostics.record import Diagnostic, Severity, Stage

__all__ = ["parse_junit"]

_START = re.compile(r"<\?xml|<testsuites?[\s>]")
_END = re.compile(r"</testsuites?>")
_REPORT_LINE = re.compile(
    r"^(?P<file>[^\s:][^:\n]{0,1000}?\.py):(?P<line>\d+): (?P<exc>[\w.]+)$", re.M
)


def parse_junit(lines: list[Line], tool: str = "pytest-junit") -> list[Diagnostic]:
    """Records for the failed and errored test cases of the JUnit document in `lines`."""
    text = "\n".join(line.text for line in lines)
    start = _START.search(text)
    ends = list(_END.finditer(text))
    if start is None or not ends or "<!DOCTYPE" in text or "<!ENTITY" in text:
        return []
    try:
        root = ET.fromstring(text[start.start() : ends[-1].end()])
    except ET.ParseError:
        return []
    offset = lines[0].offset if lines else 0
    out: list[Diagnostic] = []
    for case in root.iter("testcase"):
        for kind in ("failure", "error"):
            for problem in case.findall(kind):
                out.append(_record(case, problem, kind, tool, offset + len(out)))
    return out


def _record(case: ET.Element, problem: ET.Element, kind: str, tool: str, offset: int) -> Diagnostic:
    report = problem.text or ""
    located = list(_REPORT_LINE.finditer(report))
    last = located[-1] if located else None
    exc = problem.get("type") or (last["exc"] if last else None)
    # pytest's own report line first: the xunit1 `line` attribute is 0-based.
    file = last["file"] if last else case.get("file")
    line = last["line"] if last else None
    name = "::".join(p for p in (case.get("classname"), case.get("name")) if p)
    return Diagnostic(
        tool=tool,
        severity=Severity.ERROR,
        message=problem.get("message") or _last_line(report) or kind,
        code=f"{kind}:{exc}" if exc else kind,
        file=file,
        line=int(line) if line and str(line).isdigit() else None,
        stage=Stage.TEST,
        context=name or None,
        excerpt=report[-1500:] or None,
        raw=report,
        offset=offset,
    )


def _last_line(text: str) -> str:
    stripped = text.strip()
    return stripped.splitlines()[-1] if stripped else ""
