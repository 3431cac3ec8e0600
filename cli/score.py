"""``rewardsmith score``: score a dump with named verifiers and write the scored rows."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from rewardsmith.cli.summary import VerdictStats, summary_table
from rewardsmith.cli.verifier_args import parse_verifier_arg
from rewardsmith.datasets.dumps import DumpError, DumpReader, Row, RowValidationError
from rewardsmith.datasets.mapping import MAPPINGS
from rewardsmith.datasets.scored import SCORE_COLUMN, ScoredWriter
from rewardsmith.verifiers import Verdict, Verifier, create, run_verifier
from rewardsmith.verifiers.registry import UnknownVerifierError

__all__ = ["score"]

console = Console(stderr=True, soft_wrap=True)


def score(
    dump: Annotated[Path, typer.Argument(help="JSONL, Parquet, or a folder saved by HF datasets.")],
    verifier: Annotated[
        list[str],
        typer.Option("--verifier", "-v", help="NAME or NAME:key=value,... (repeatable)."),
    ],
    output: Annotated[Path, typer.Option("--output", "-o", help="Where the scored rows go.")],
    mapping: Annotated[str, typer.Option(help=f"Row shape: {', '.join(MAPPINGS)}.")] = "auto",
    fail_on_error: Annotated[
        bool, typer.Option(help="Stop at the first bad row instead of skipping and reporting it.")
    ] = False,
    resume: Annotated[
        bool, typer.Option(help="Keep rows already in OUTPUT and score only the rest.")
    ] = True,
    limit: Annotated[int | None, typer.Option(help="Score at most this many rows.")] = None,
) -> None:
    """Score every row of DUMP with the given verifiers; write rows with their verdicts."""
    verifiers = _build_verifiers(verifier)
    try:
        reader = DumpReader(dump, mapping=mapping, on_error="raise" if fail_on_error else "skip")
    except DumpError as exc:
        raise _fail(str(exc)) from exc
    stats = {name: VerdictStats() for name in verifiers}
    resumed = scored = 0
    with ScoredWriter(output, resume=resume) as writer, _progress() as progress:
        task = progress.add_task("scoring", total=_count_rows(reader, limit))
        try:
            for row in reader:
                if limit is not None and resumed + scored >= limit:
                    break
                if row.sample.id in writer.done:
                    resumed += 1
                else:
                    verdicts = {name: run_verifier(v, row.sample) for name, v in verifiers.items()}
                    writer.write(_scored_record(row, verdicts))
                    for name, verdict in verdicts.items():
                        stats[name].add(verdict)
                    scored += 1
                progress.advance(task)
        except (DumpError, RowValidationError) as exc:
            raise _fail(str(exc)) from exc
    _report(reader, stats, dump, output, scored, resumed)


def _build_verifiers(arguments: list[str]) -> dict[str, Verifier]:
    built: dict[str, Verifier] = {}
    for argument in arguments:
        try:
            name, config = parse_verifier_arg(argument)
            instance = create(name, **config)
        except UnknownVerifierError as exc:
            raise typer.BadParameter(str(exc), param_hint="--verifier") from exc
        except (TypeError, ValueError) as exc:
            raise typer.BadParameter(f"{argument}: {exc}", param_hint="--verifier") from exc
        key = name if name not in built else f"{name}#{len(built) + 1}"
        built[key] = instance
    return built


def _scored_record(row: Row, verdicts: dict[str, Verdict]) -> dict[str, Any]:
    return {
        **row.record,
        "id": row.sample.id,
        SCORE_COLUMN: {"verdicts": {name: v.to_dict() for name, v in verdicts.items()}},
    }


def _count_rows(reader: DumpReader, limit: int | None) -> int | None:
    """A total for the progress bar where it is cheap to know (never loads the dump)."""
    path = Path(reader.path)
    total: int | None = None
    if reader.format == "jsonl":
        with open(path, "rb") as handle:
            total = sum(chunk.count(b"\n") for chunk in iter(lambda: handle.read(1 << 20), b""))
    elif reader.format == "parquet":
        import pyarrow.parquet as pq

        try:
            total = pq.ParquetFile(path).metadata.num_rows
        except Exception:  # reported properly when the reader opens it
            total = None
    if limit is not None:
        return limit if total is None else min(limit, total)
    return total


class _RateColumn(ProgressColumn):
    def render(self, task: Task) -> Text:
        return Text(f"{task.speed:.0f} rows/s" if task.speed else "")


def _progress() -> Progress:
    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        _RateColumn(),
        TimeRemainingColumn(),
        console=console,
        transient=False,
    )


def _report(
    reader: DumpReader,
    stats: dict[str, VerdictStats],
    dump: Path,
    output: Path,
    scored: int,
    resumed: int,
) -> None:
    out = Console()
    out.print(
        summary_table(stats, title=f"{dump.name}: {scored} scored, {resumed} kept from before")
    )
    if reader.errors:
        console.print(f"[yellow]{len(reader.errors)} bad rows skipped:[/yellow]")
        for error in reader.errors[:20]:
            console.print(f"  {error}", markup=False, highlight=False)
        if len(reader.errors) > 20:
            console.print(f"  ... and {len(reader.errors) - 20} more")
    if scored + resumed == 0:
        raise _fail(f"{dump}: no rows to score")
    out.print(f"wrote {output}")


def _fail(message: str) -> typer.Exit:
    console.print(f"[red]error:[/red] {message}", highlight=False)
    return typer.Exit(code=1)
