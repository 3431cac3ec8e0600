"""SARIF 2.1.0 export of real diagnostics, and the way back."""

from __future__ import annotations

import json

import pytest

from rewardsmith.verifiers.diagnostics import (
    Diagnostic,
    Fix,
    Location,
    Severity,
    Stage,
    from_sarif,
    parse_log,
    to_sarif,
)

RECORDS = [
    Diagnostic(
        "gcc",
        Severity.ERROR,
        "expected ';' before '}' token",
        file="a.c",
        line=3,
        column=9,
        stage=Stage.PARSE,
        context="In function 'main'",
        fixes=(Fix(";", "a.c", 3, 9, message="insert ';'"),),
        excerpt="    3 |   x = 1",
    ),
    Diagnostic(
        "gcc",
        Severity.WARNING,
        "unused variable 'x'",
        code="-Wunused-variable",
        file="a.c",
        line=2,
        column=7,
        related=(Location("a.c", 1, 1, message="declared here"),),
    ),
    Diagnostic(
        "python",
        Severity.ERROR,
        "division by zero",
        code="ZeroDivisionError",
        file="p.py",
        line=2,
        stage=Stage.RUN,
        notes=("KeyError: 'k'",),
    ),
    Diagnostic("tsc", Severity.ERROR, "Unknown compiler option 'x'.", code="TS5023"),
]


def test_structure():
    doc = json.loads(json.dumps(to_sarif(RECORDS)))
    assert doc["version"] == "2.1.0" and doc["$schema"].endswith("sarif-2.1.0.json")
    assert [run["tool"]["driver"]["name"] for run in doc["runs"]] == ["gcc", "python", "tsc"]
    gcc = doc["runs"][0]
    assert gcc["tool"]["driver"]["rules"] == [{"id": "-Wunused-variable"}]
    first = gcc["results"][0]
    assert first["level"] == "error" and "ruleId" not in first
    region = first["locations"][0]["physicalLocation"]["region"]
    assert region == {"startLine": 3, "startColumn": 9, "snippet": {"text": "    3 |   x = 1"}}
    change = first["fixes"][0]["artifactChanges"][0]
    assert change["replacements"][0]["insertedContent"] == {"text": ";"}
    assert gcc["results"][1]["relatedLocations"][0]["message"] == {"text": "declared here"}
    assert "locations" not in doc["runs"][2]["results"][0]  # no file: no location


def test_round_trip_through_sarif():
    back = from_sarif(to_sarif(RECORDS))
    strip = lambda d: d.with_(raw="", offset=-1)  # noqa: E731
    assert [strip(d) for d in back] == [strip(d) for d in RECORDS]


def test_parse_log_reads_a_sarif_document():
    records = parse_log(json.dumps(to_sarif(RECORDS), indent=2))
    assert [(d.tool, d.line, d.code) for d in records] == [
        (d.tool, d.line, d.code) for d in RECORDS
    ]


@pytest.mark.parametrize(
    "doc",
    [
        {"runs": "x"},
        {"runs": [1, None, {"results": [{"level": 5}]}]},
        {"runs": [{"tool": [], "results": [{"locations": [{"physicalLocation": 3}]}]}]},
    ],
)
def test_malformed_sarif_is_skipped_not_fatal(doc):
    for record in from_sarif(doc):
        assert isinstance(record, Diagnostic)
