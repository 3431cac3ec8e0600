"""Compiler, interpreter, type-checker and test diagnostics, and code rewards shaped by them.

The entry point other verifiers call on a failed build or run:

    >>> from rewardsmith.verifiers.diagnostics import parse_log
    >>> [d] = parse_log("error[E0308]: mismatched types\\n --> src/main.rs:2:18\\n")
    >>> d.tool, d.code, d.file, d.line, d.column
    ('rustc', 'E0308', 'src/main.rs', 2, 18)
    >>> sorted(d.to_dict())[:4]
    ['code', 'column', 'context', 'end_column']

See docs/diagnostics.md for the record, each tool's coverage and the shaped rewards.
"""

from rewardsmith.verifiers.diagnostics.feedback import format_feedback
from rewardsmith.verifiers.diagnostics.parse import TOOLS, UnknownToolError, detect_tools, parse_log
from rewardsmith.verifiers.diagnostics.record import Diagnostic, Fix, Location, Severity, Stage
from rewardsmith.verifiers.diagnostics.rewards import CompileGate, DiagnosticsScore, RepairProgress
from rewardsmith.verifiers.diagnostics.sarif import from_sarif, to_sarif
from rewardsmith.verifiers.diagnostics.shaping import potential, repair_gain

__all__ = [
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
]
