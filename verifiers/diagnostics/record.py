"""The `Diagnostic` record: one message from a compiler, interpreter, type checker or test run.

Shaped like an LSP ``Diagnostic`` and a SARIF ``result`` so it converts to both without loss:
a severity, a code (``E0308``, ``TS2322``, ``-Wunused-variable``, ``NameError``), a message, a
primary location with an optional end, related locations, notes, suggested fixes where the
tool gives them, the source excerpt the tool printed, and the raw text it came from.

It adds one thing neither format has: the `Stage` of the pipeline that failed (parse, type
check, link, run, tests), because a program that parses but fails to link is closer to
working than one that does not parse, and the shaped rewards say so.

    >>> d = Diagnostic(tool="gcc", severity=Severity.ERROR, message="expected ';'",
    ...                file="a.c", line=3, column=9, stage=Stage.PARSE)
    >>> Diagnostic.from_dict(d.to_dict()) == d
    True
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields, replace
from enum import StrEnum
from typing import Any

__all__ = ["Diagnostic", "Fix", "Location", "Severity", "Stage"]

# Caps keep one hostile log from producing megabyte-sized records.
MAX_MESSAGE = 2_000
MAX_RAW = 4_000
MAX_NOTES = 20


class Severity(StrEnum):
    """How bad a diagnostic is. SARIF levels ``error``/``warning``/``note``."""

    ERROR = "error"
    """Stops the build or the run (fatal errors, exceptions and failed tests too)."""
    WARNING = "warning"
    NOTE = "note"
    """Notes, help, info and hints: context for another diagnostic."""


class Stage(StrEnum):
    """The pipeline stage a diagnostic belongs to, earliest first."""

    PARSE = "parse"
    """Lexing and parsing: the text is not a program yet."""
    TYPE = "type"
    """Name resolution, type checking, borrow checking: any other compile-time error."""
    LINK = "link"
    """Linking: every unit compiled but symbols are missing or clash."""
    RUN = "run"
    """Running: an exception, a panic, a crash."""
    TEST = "test"
    """Tests: the program ran but a test failed."""

    @property
    def rank(self) -> int:
        """0 for parse up to 4 for tests: later stages are closer to working."""
        return _STAGE_ORDER.index(self)


_STAGE_ORDER = list(Stage)


@dataclass(frozen=True, slots=True)
class Location:
    """A place in a file, 1-based lines and columns, with an optional end and label."""

    file: str | None = None
    line: int | None = None
    column: int | None = None
    end_line: int | None = None
    end_column: int | None = None
    message: str = ""
    """What this place has to do with the diagnostic (for related locations)."""


@dataclass(frozen=True, slots=True)
class Fix:
    """A suggested edit: replace the range with `replacement` (an insertion if it is empty)."""

    replacement: str
    file: str | None = None
    line: int | None = None
    column: int | None = None
    end_line: int | None = None
    end_column: int | None = None
    message: str = ""


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One diagnostic. Only `tool`, `severity` and `message` are always known."""

    tool: str
    """Which tool said it: gcc, g++, clang, rustc, javac, tsc, node, python, mypy, ..."""
    severity: Severity
    message: str
    code: str | None = None
    """The tool's identifier for the kind of problem, when it has one."""
    file: str | None = None
    line: int | None = None
    column: int | None = None
    end_line: int | None = None
    end_column: int | None = None
    stage: Stage = Stage.TYPE
    context: str | None = None
    """The enclosing scope the tool named, e.g. gcc's ``In function 'main'``."""
    notes: tuple[str, ...] = ()
    """Child notes and help lines, in order."""
    related: tuple[Location, ...] = ()
    fixes: tuple[Fix, ...] = ()
    excerpt: str | None = None
    """The source line(s) the tool quoted, when it quoted any."""
    raw: str = ""
    """The text this record was parsed from (capped)."""
    offset: int = -1
    """Character offset of the record in the cleaned log: orders interleaved output."""

    def __post_init__(self) -> None:
        # Coerce strings from JSON; cap sizes so a hostile log cannot bloat records.
        if not isinstance(self.severity, Severity):
            object.__setattr__(self, "severity", Severity(self.severity))
        if not isinstance(self.stage, Stage):
            object.__setattr__(self, "stage", Stage(self.stage))
        object.__setattr__(self, "message", self.message[:MAX_MESSAGE])
        object.__setattr__(self, "raw", self.raw[:MAX_RAW])
        object.__setattr__(self, "notes", tuple(n[:MAX_MESSAGE] for n in self.notes[:MAX_NOTES]))

    @property
    def is_error(self) -> bool:
        return self.severity is Severity.ERROR

    @property
    def location_text(self) -> str:
        """``file:line:col`` with whatever parts are known, or ``""``."""
        parts = [str(p) for p in (self.file, self.line, self.column) if p is not None]
        return ":".join(parts)

    def with_(self, **changes: Any) -> Diagnostic:
        """A copy with some fields changed."""
        return replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-serialisable dict; `from_dict` reverses it."""
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name in ("related", "fixes"):
                value = [_plain(v) for v in value]
            elif f.name == "notes":
                value = list(value)
            elif isinstance(value, StrEnum):
                value = value.value
            out[f.name] = value
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Diagnostic:
        known = {f.name for f in fields(cls)}
        kw = {k: v for k, v in data.items() if k in known}
        kw["notes"] = tuple(kw.get("notes", ()))
        kw["related"] = tuple(Location(**r) for r in kw.get("related", ()))
        kw["fixes"] = tuple(Fix(**x) for x in kw.get("fixes", ()))
        return cls(**kw)


def _plain(obj: Location | Fix) -> dict[str, Any]:
    return {f.name: getattr(obj, f.name) for f in fields(obj)}
