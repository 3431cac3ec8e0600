"""``rewardsmith score``: score a dump with a reward spec (or named verifiers) and write
every row back with its reward, its components and its verdicts."""

from __future__ import annotations

from collections.abc import Iterator
from itertools import islice
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

from rewardsmith.cli.summary import RunStats
from rewardsmith.cli.verifier_args import parse_verifier_arg
from rewardsmith.datasets.dumps import DumpError, DumpReader, Row, RowValidationError
from rewardsmith.datasets.mapping import MAPPINGS
from rewardsmith.datasets.scored import SCORE_COLUMN, ScoredWriter
from rewardsmith.graders import Executor, Grader, Reward, SpecError, load_spec, weighted
from rewardsmith.verifiers import create
from rewardsmith.verifiers.registry import UnknownVerifierError

__all__ = ["build_grader", "score"]

console = Console(stderr=True, soft_wrap=True)


def score(
    dump: Annotated[Path, typer.Argument(help="JSONL, Parquet, or a folder saved by HF datasets.")],
    output: Annotated[Path, typer.Option("--output", "-o", help="Where the scored rows go.")],
    spec: Annotated[Path | None, typer.Option(help="A YAML reward spec.")] = None,
    verifier: Annotated[
        list[str] | None,
        typer.Option(
            "--verifier",
            "-v",
            help="NAME or NAME:key=value,... (repeatable); the reward is their mean. "
            "Use instead of --spec.",
        ),
    ] = None,
    mapping: Annotated[str, typer.Option(help=f"Row shape: {', '.join(MAPPINGS)}.")] = "auto",
    backend: Annotated[str, typer.Option(help="Executor: pool, ray or inline.")] = "pool",
    workers: Annotated[int | None, typer.Option(help="Worker processes (default: cores).")] = None,
    timeout: Annotated[float, typer.Option(help="Seconds one verifier may take per row.")] = 60.0,
    chunk_size: Annotated[
        int, typer.Option(help="Rows scored together (group normalisation sees one chunk).")
    ] = 256,
    fail_on_error: Annotated[
        bool, typer.Option(help="Stop at the first bad row instead of skipping and reporting it.")
    ] = False,
    resume: Annotated[
        bool, typer.Option(help="Keep rows already in OUTPUT and score only the rest.")
    ] = True,
    limit: Annotated[int | None, typer.Option(help="Score at most this many rows.")] = None,
) -> None:
    """Score every row of DUMP and write it to OUTPUT with its reward and verdicts."""
    grader = build_grader(spec, verifier or [])
    try:
        reader = DumpReader(dump, mapping=mapping, on_error="raise" if fail_on_error else "skip")
    except DumpError as exc:
        raise _fail(str(exc)) from exc
    if backend not in ("pool", "ray", "inline"):
        raise typer.BadParameter("choose pool, ray or inline", param_hint="--backend")
    stats = RunStats()
    resumed = scored = 0
    with (
        ScoredWriter(output, resume=resume) as writer,
        Executor(backend, workers=workers, timeout_s=timeout) as executor,
        _progress() as progress,
    ):
        task = progress.add_task("scoring", total=_count_rows(reader, limit))
        try:
            for chunk, skipped in _pending_chunks(reader, writer.done, limit, chunk_size):
                resumed += skipped
                progress.advance(task, skipped)
                rewards = _score_chunk(grader, executor, chunk, progress, task)
                for row, reward in zip(chunk, rewards, strict=True):
                    writer.write(_scored_record(row, reward))
                    stats.add(reward)
                scored += len(chunk)
        except (DumpError, RowValidationError) as exc:
            raise _fail(str(exc)) from exc
    _report(reader, stats, dump, output, scored, resumed)


def build_grader(spec: Path | None, verifiers: list[str]) -> Grader:
    """The grader from a spec file, or the equal-weight mean of named verifiers."""
    if (spec is None) == (not verifiers):
        raise typer.BadParameter(
            "give either --spec or at least one --verifier", param_hint="--spec"
        )
    if spec is not None:
        try:
            return load_spec(spec)
        except (SpecError, OSError) as exc:
            raise typer.BadParameter(f"{spec}: {exc}", param_hint="--spec") from exc
    components: dict[str, Any] = {}
    for argument in verifiers:
        try:
            name, config = parse_verifier_arg(argument)
            instance = create(name, **config)
        except UnknownVerifierError as exc:
            raise typer.BadParameter(str(exc), param_hint="--verifier") from exc
        except (TypeError, ValueError) as exc:
            raise typer.BadParameter(f"{argument}: {exc}", param_hint="--verifier") from exc
        key = name if name not in components else f"{name}_{len(components) + 1}"
        components[key] = instance
    equal = 1.0 / len(components)
    return Grader(weighted(components, weights={key: equal for key in components}))


def _pending_chunks(
    reader: DumpReader, done: set[str], limit: int | None, size: int
) -> Iterator[tuple[list[Row], int]]:
    """Chunks of rows not yet in the output, each with how many done rows it passed over."""
    rows = iter(reader) if limit is None else islice(reader, limit)
    chunk: list[Row] = []
    skipped = 0
    for row in rows:
        if row.sample.id in done:
            skipped += 1
            continue
        chunk.append(row)
        if len(chunk) == size:
            yield chunk, skipped
            chunk, skipped = [], 0
    if chunk or skipped:
        yield chunk, skipped


def _score_chunk(
    grader: Grader, executor: Executor, rows: list[Row], progress: Progress, task: Any
) -> list[Reward]:
    samples = [row.sample for row in rows]
    jobs = grader.jobs(samples)
    verdicts: list[Any] = [None] * len(jobs)
    per_job = len(samples) / len(jobs) if jobs else 0.0
    for result in executor.stream(jobs):
        verdicts[result.index] = result.verdict
        progress.advance(task, per_job)
    if not jobs:  # nothing applied to these rows: they still count as done
        progress.advance(task, len(samples))
    return grader.combine(samples, verdicts)[0]


def _scored_record(row: Row, reward: Reward) -> dict[str, Any]:
    return {**row.record, "id": row.sample.id, SCORE_COLUMN: reward.to_dict()}


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
    )


def _report(
    reader: DumpReader, stats: RunStats, dump: Path, output: Path, scored: int, resumed: int
) -> None:
    out = Console()
    out.print(f"{dump.name}: {scored} scored, {resumed} kept from before")
    out.print(stats.component_table())
    out.print(stats.verifier_table())
    if stats.infra_failures:
        console.print(f"[yellow]{stats.infra_failures} rows kept out by infrastructure failures[/]")
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
