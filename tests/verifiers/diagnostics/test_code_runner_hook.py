"""End to end: the code test-runner's compile failures carry our parsed diagnostics.

`code_tests` (verifiers/code, issue 3) calls `parse_log(stderr, tool=...)` on a failed
build and stores the records in ``evidence["compile"]["diagnostics"]``; this pins that the
records arrive, located and staged, through the real sandboxed compile.
"""

from __future__ import annotations

import json
import shutil

import pytest

from rewardsmith.verifiers import Failure, Sample, create
from rewardsmith.verifiers.diagnostics import Diagnostic, Stage


@pytest.mark.sandbox
def test_compile_failure_evidence_holds_parsed_diagnostics():
    if shutil.which("gcc") is None:
        pytest.skip("gcc is not installed on this machine")
    runner = create("code_tests", language="c")
    reference = {"format": "stdio", "language": "c", "cases": [{"input": "", "output": "3"}]}
    verdict = runner(Sample(id="1", completion="int main(void) { return y }", reference=reference))
    assert verdict.failure is Failure.COMPILE_ERROR
    records = [Diagnostic.from_dict(d) for d in verdict.evidence["compile"]["diagnostics"]]
    assert [(d.tool, d.line, d.column, d.stage) for d in records] == [
        ("gcc", 1, 25, Stage.TYPE),
        ("gcc", 1, 26, Stage.PARSE),
    ]
    assert [f.replacement for f in records[1].fixes] == [";"]
    json.dumps(verdict.to_dict())
