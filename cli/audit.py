"""``rewardsmith audit``: a reward spec checks itself before anyone trains on it.

Given a spec and a dump of *reference solutions* (rows whose completion is known to be
right), the audit scores three kinds of probes through the same grader and executor:

1. the reference solutions themselves, which must get the full reward;
2. mechanical corruptions of each (emptied, truncated, every number shifted, lines
   reversed, a second conflicting answer appended), which must score strictly less;
3. each verifier's own probes, when it offers them (``verifier.probes(sample)`` yields
   ``(name, completion)`` pairs, e.g. the code runner's hack corpus), which must score no
   more than an empty completion does.

A corruption that leaves the text unchanged is not counted. The audit exits 1 when a
reference solution fails or a verifier probe is rewarded; corruptions that are not caught
are listed (some are legitimately still right, e.g. a truncated tail that was a comment).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from rewardsmith.cli.score import build_grader
from rewardsmith.datasets.dumps import DumpError, DumpReader
from rewardsmith.graders import Executor, Grader
from rewardsmith.verifiers.types import Sample

__all__ = ["CORRUPTIONS", "Probe", "audit", "run_audit"]

_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def _shift_numbers(text: str) -> str:
    return _NUMBER.sub(
        lambda m: (
            str(int(float(m.group()) + 1))
            if "." not in m.group()
            else f"{float(m.group()) + 1.0:g}"
        ),
        text,
    )


CORRUPTIONS: dict[str, Callable[[str], str]] = {
    "empty": lambda text: "",
    "truncated": lambda text: text[: len(text) // 2],
    "numbers_shifted": _shift_numbers,
    "lines_reversed": lambda text: "\n".join(reversed(text.splitlines())),
    "hedged": lambda text: (
        f"{text}\nOr possibly: {_shift_numbers(text) if _NUMBER.search(text) else text[::-1]}"
    ),
}
"""Mechanical corruptions of a right answer; each should lose reward."""


@dataclass(frozen=True)
class Probe:
    kind: str
    """``reference``, ``corruption`` or ``verifier``."""
    name: str
    source_id: str
    sample: Sample


def _probes(grader: Grader, reference: Sample) -> Iterator[Probe]:
    text = reference.completion_text
    yield Probe("reference", "reference", reference.id, reference)
    for name, corrupt in CORRUPTIONS.items():
        changed = corrupt(text)
        if changed != text:
            yield Probe("corruption", name, reference.id, _with(reference, f"{name}", changed))
    yield Probe("baseline", "empty", reference.id, _with(reference, "baseline", ""))
    for verifier in grader.verifiers.values():
        offer = getattr(verifier, "probes", None)
        if callable(offer):
            for name, completion in offer(reference):
                yield Probe(
                    "verifier", name, reference.id, _with(reference, f"probe-{name}", completion)
                )


def _with(sample: Sample, suffix: str, completion: str) -> Sample:
    return sample.model_copy(update={"id": f"{sample.id}~{suffix}", "completion": completion})


@dataclass
class AuditResult:
    references_failed: list[str]
    probes_rewarded: list[str]
    corruptions: dict[str, tuple[int, int]]
    """Per corruption: (caught, tried)."""
    uncaught: list[str]

    @property
    def ok(self) -> bool:
        return not self.references_failed and not self.probes_rewarded


def run_audit(grader: Grader, references: list[Sample], executor: Executor) -> AuditResult:
    probes = [p for ref in references for p in _probes(grader, ref)]
    rewards = grader.score([p.sample for p in probes], executor)
    value = {p.sample.id: r.value for p, r in zip(probes, rewards, strict=True)}
    best = max((v for v in value.values() if v is not None), default=None)
    result = AuditResult([], [], {}, [])
    tally: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for probe in probes:
        got = value[probe.sample.id]
        ref = value[f"{probe.source_id}"]
        if probe.kind == "reference" and (got is None or best is None or got < best):
            result.references_failed.append(f"{probe.source_id}: reward {got}, best seen {best}")
        elif probe.kind == "corruption":
            caught = got is not None and ref is not None and got < ref
            tally[probe.name][0] += caught
            tally[probe.name][1] += 1
            if not caught:
                result.uncaught.append(
                    f"{probe.source_id} {probe.name}: reward {got} vs reference {ref}"
                )
        elif probe.kind == "verifier":
            floor = value[f"{probe.source_id}~baseline"]
            if got is not None and (floor is None or got > floor):
                result.probes_rewarded.append(
                    f"{probe.source_id} {probe.name}: reward {got} > empty {floor}"
                )
    result.corruptions = {k: (v[0], v[1]) for k, v in tally.items()}
    return result


def audit(
    spec: Annotated[Path, typer.Argument(help="The YAML reward spec to audit.")],
    references: Annotated[
        Path, typer.Option("--references", "-r", help="A dump whose completions are right answers.")
    ],
    backend: Annotated[str, typer.Option(help="Executor: pool, ray or inline.")] = "pool",
    limit: Annotated[int, typer.Option(help="Audit at most this many reference rows.")] = 200,
) -> None:
    """Check a spec: right answers pass, corrupted ones lose reward, hacks get nothing."""
    grader = build_grader(spec, [])
    try:
        rows = [row.sample for _, row in zip(range(limit), DumpReader(references), strict=False)]
    except DumpError as exc:
        raise typer.BadParameter(str(exc), param_hint="--references") from exc
    with Executor(backend) as executor:
        result = run_audit(grader, rows, executor)
    _print(result, len(rows))
    raise typer.Exit(0 if result.ok else 1)


def _print(result: AuditResult, references: int) -> None:
    console = Console()
    table = Table(title=f"audit of {references} reference solutions")
    for column in ("probe", "caught / tried", "verdict"):
        table.add_column(column)
    failed = len(result.references_failed)
    table.add_row(
        "references get the full reward",
        f"{references - failed} / {references}",
        "ok" if not failed else "FAIL",
    )
    for name, (caught, tried) in sorted(result.corruptions.items()):
        table.add_row(
            f"corruption: {name}", f"{caught} / {tried}", "ok" if caught == tried else "check"
        )
    table.add_row(
        "verifier probes get nothing",
        f"{len(result.probes_rewarded)} rewarded",
        "ok" if not result.probes_rewarded else "FAIL",
    )
    console.print(table)
    for line in [*result.references_failed, *result.probes_rewarded, *result.uncaught][:30]:
        console.print(f"  {line}", markup=False, highlight=False)
