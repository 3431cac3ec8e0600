"""The Diagnostic record: JSON and pickle round trips, coercion, caps, the public surface."""

from __future__ import annotations

import json
import pickle

import pytest

import rewardsmith.verifiers.diagnostics as diagnostics
from rewardsmith.verifiers.diagnostics import Diagnostic, Fix, Location, Severity, Stage

FULL = Diagnostic(
    tool="rustc",
    severity=Severity.ERROR,
    message="mismatched types",
    code="E0308",
    file="src/main.rs",
    line=2,
    column=18,
    end_line=2,
    end_column=21,
    stage=Stage.TYPE,
    context="fn main",
    notes=("help: try `.parse()`",),
    related=(Location("src/main.rs", 2, 12, 2, 15, "expected due to this"),),
    fixes=(Fix("1", "src/main.rs", 2, 18, 2, 21, "use a number"),),
    excerpt='    let x: i32 = "a";',
    raw="error[E0308]: mismatched types",
    offset=7,
)


@pytest.mark.parametrize("record", [FULL, Diagnostic("gcc", Severity.NOTE, "")])
def test_json_round_trip(record):
    data = json.loads(json.dumps(record.to_dict()))
    assert Diagnostic.from_dict(data) == record


@pytest.mark.parametrize("record", [FULL, Diagnostic("gcc", Severity.NOTE, "")])
def test_pickle_round_trip(record):
    assert pickle.loads(pickle.dumps(record)) == record


def test_strings_from_json_are_coerced():
    record = Diagnostic("go", "warning", "x", stage="link")  # type: ignore[arg-type]
    assert (record.severity, record.stage) == (Severity.WARNING, Stage.LINK)
    with pytest.raises(ValueError):
        Diagnostic("go", "catastrophic", "x")  # type: ignore[arg-type]


def test_sizes_are_capped():
    record = Diagnostic(
        "x", Severity.ERROR, "m" * 10**6, notes=("n" * 10**5,) * 100, raw="r" * 10**6
    )
    assert len(record.message) == 2_000 and len(record.raw) == 4_000
    assert len(record.notes) == 20 and all(len(n) == 2_000 for n in record.notes)


def test_stage_ranks_run_from_parse_to_test():
    assert [s.rank for s in (Stage.PARSE, Stage.TYPE, Stage.LINK, Stage.RUN, Stage.TEST)] == [
        0,
        1,
        2,
        3,
        4,
    ]


def test_location_text():
    assert FULL.location_text == "src/main.rs:2:18"
    assert Diagnostic("x", Severity.ERROR, "m").location_text == ""


def test_public_surface_is_pinned():
    assert diagnostics.__all__ == sorted(diagnostics.__all__, key=lambda n: (not n.isupper(), n))
    assert set(diagnostics.__all__) == {
        "TOOLS",
        "CompileGate",
        "Diagnostic",
        "DiagnosticsScore",
        "Fix",
        "Location",
        "RepairProgress",
        "Severity",
        "Stage",
        "UnknownToolError",
        "detect_tools",
        "format_feedback",
        "from_sarif",
        "parse_log",
        "potential",
        "repair_gain",
        "to_sarif",
    }
