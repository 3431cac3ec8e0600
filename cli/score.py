"""``rewardsmith score``: score a dump with a reward spec (or named verifiers) and write
every row back with its reward, its components and its verdicts."""

from __future__ import annotations

import json
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

from rewardsmith.cli import summary
from rewardsmith.datasets.columns import ColumnMap
from rewardsmith.datasets.dumps import DumpError, DumpReader, Row, RowValidationError
from rewardsmith.datasets.mapping import MAPPINGS
from rewardsmith.datasets.scored import (
    SCORE_COLUMN,
    ScoredWriteError,
    ScoredWriter,
    is_infra_failure_row,
    run_record_path,
)
from rewardsmith.graders import Fingerprint, Grader, Reward, Scorer, SpecError, Stats, build

__all__ = ["build_grader", "score"]

console = Console(stderr=True, soft_wrap=True)


def score(
    dump: Annotated[Path, typer.Argument(help="JSONL, Parquet, or a folder saved by HF datasets.")],
    output: Annotated[
        Path, typer.Option("--output", "-o", help="Where the scored rows go (.jsonl or .parquet).")
    ],
    spec: Annotated[Path | None, typer.Option(help="A YAML reward spec.")] = None,
    verifier: Annotated[
        list[str] | None,
        typer.Option(
            "--verifier",
            "-v",
            help="NAME or NAME:key=value,... (repeatable); the reward is their equal-weight "
            "mean. Use instead of --spec.",
        ),
    ] = None,
    mapping: Annotated[str, typer.Option(help=f"Row shape: {', '.join(MAPPINGS)}.")] = "auto",
    column_map: Annotated[
        list[str] | None,
        typer.Option(
            "--map",
            help="FIELD=COLUMN (dots for nested fields) or FIELD:=VALUE (a constant), for "
            "id, prompt, completion, reference or task; repeat a field for a default.",
        ),
    ] = None,
    split: Annotated[
        str | None, typer.Option(help="The split of a saved DatasetDict with several.")
    ] = None,
    backend: Annotated[str, typer.Option(help="Executor: pool, ray or inline.")] = "pool",
    workers: Annotated[int | None, typer.Option(help="Worker processes (default: cores).")] = None,
    timeout: Annotated[float, typer.Option(help="Seconds one verifier may take per row.")] = 60.0,
    chunk_size: Annotated[
        int, typer.Option(help="Rows scored together (group normalisation sees one chunk).")
    ] = 256,
    fail_on_error: Annotated[
        bool, typer.Option(help="Stop at the first bad row instead of skipping and reporting it.")
    ] = False,
    rescore: Annotated[
        bool,
        typer.Option(
            "--rescore",
            "--no-resume",
            help="Start over: replace OUTPUT. By default rows already in OUTPUT are kept "
            "and only the rest is scored, if OUTPUT was scored with the same spec.",
        ),
    ] = False,
    resume_anyway: Annotated[
        bool,
        typer.Option(
            "--resume-anyway",
            help="Keep the rows in OUTPUT even though they were scored with another spec.",
        ),
    ] = False,
    keep_infra_failures: Annotated[
        bool,
        typer.Option(
            "--keep-infra-failures",
            help="On resume, keep rows an infrastructure failure decided (by default they "
            "are scored again: the sandbox or a service may work now).",
        ),
    ] = False,
    limit: Annotated[int | None, typer.Option(help="Score at most this many rows.")] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print a machine-readable summary on stdout.")
    ] = False,
) -> None:
    """Score every row of DUMP and write it to OUTPUT with its reward and verdicts."""
    grader = build_grader(spec, verifier or [])
    if backend not in ("pool", "ray", "inline"):
        raise typer.BadParameter("choose pool, ray or inline", param_hint="--backend")
    if chunk_size < 1:
        raise typer.BadParameter("at least 1", param_hint="--chunk-size")
    if mapping not in MAPPINGS:
        raise typer.BadParameter(f"choose one of {', '.join(MAPPINGS)}", param_hint="--mapping")
    try:
        columns = ColumnMap.parse(column_map or [])
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--map") from exc
    try:
        reader = DumpReader(
            dump,
            mapping=mapping,
            on_error="raise" if fail_on_error else "skip",
            split=split,
            columns=columns,
        )
        redo = None if keep_infra_failures else is_infra_failure_row
        writer = ScoredWriter(output, resume=not rescore, redo=redo)
    except DumpError as exc:
        raise _fail(str(exc)) from exc
    scorer = Scorer(
        grader, backend=backend, workers=workers, timeout_s=timeout, chunk_size=chunk_size
    )
    run = _Run(scorer, writer, {"shape": mapping, "columns": columns.to_dict()})
    try:
        run.resume(resume_anyway)
        _resume_notes(writer)
        writer.commit(run.record())  # before the first row: rows never lack a record
        with scorer, _progress(quiet=as_json) as progress:
            task = progress.add_task("scoring", total=_count_rows(reader, limit))
            run.score(_pending_chunks(reader, writer.done, limit, chunk_size), progress, task)
        writer.close()
    except ScoredWriteError as exc:  # rows committed so far stay; a resume does the rest
        writer.abandon()
        raise _fail(str(exc)) from None
    except (DumpError, RowValidationError) as exc:
        writer.close()
        raise _fail(str(exc)) from exc
    except BaseException:
        writer.abandon()
        raise
    _report(reader, run, dump, output, as_json)


def _resume_notes(writer: ScoredWriter) -> None:
    if writer.dropped_tail:
        console.print(
            f"[yellow]dropped a damaged last line, to score again:[/] {writer.dropped_tail}"
        )
    if writer.redone:
        console.print(
            f"[yellow]{writer.redone} rows an infrastructure failure decided are scored again[/]"
            " (--keep-infra-failures keeps them)"
        )


def build_grader(spec: Path | None, verifiers: list[str]) -> Grader:
    """The grader from a spec file, or the equal-weight mean of named verifiers."""
    if (spec is None) == (not verifiers):
        raise typer.BadParameter(
            "give either --spec or at least one --verifier", param_hint="--spec"
        )
    try:
        return build(spec if spec is not None else list(verifiers))
    except (SpecError, OSError) as exc:
        hint = "--spec" if spec is not None else "--verifier"
        where = f"{spec}: " if spec is not None else ""
        raise typer.BadParameter(f"{where}{exc}", param_hint=hint) from exc


class _Run:
    """One scoring run: the scorer, the writer, the fingerprint, the tallies."""

    def __init__(self, scorer: Scorer, writer: ScoredWriter, mapping: dict[str, Any]) -> None:
        self.scorer, self.writer = scorer, writer
        self.fingerprint = scorer.fingerprint(mapping=mapping)
        self.scored = 0
        self.kept = 0

    def resume(self, anyway: bool) -> None:
        """Continue an earlier run's state, if its fingerprint matches (or ``anyway``)."""
        previous = self.writer.run
        if previous is None:
            if self.writer.done and not anyway:
                raise _fail(
                    f"{self.writer.path} holds {len(self.writer.done)} scored rows but no run "
                    f"record ({run_record_path(self.writer.path).name}), so what scored them is "
                    "unknown: --rescore to start over, or --resume-anyway to keep them"
                )
            return
        before = Fingerprint.from_dict(previous["fingerprint"])
        changes = before.changes(self.fingerprint)
        if changes and not anyway:
            listed = "; ".join(changes[:8]) + ("; ..." if len(changes) > 8 else "")
            raise _fail(
                f"{self.writer.path} was scored with a different reward ({listed}): "
                "--rescore to start over, or --resume-anyway to keep its rows"
            )
        if not changes:
            self.scorer.load_state(previous.get("state", {}))

    def score(self, chunks: Iterator[tuple[list[Row], int]], progress: Progress, task: Any) -> None:
        digest = self.fingerprint.digest
        for chunk, skipped in chunks:
            self.kept += skipped
            progress.advance(task, skipped)
            samples = [row.sample for row in chunk]
            rewards = self.scorer.score(samples, progress=lambda n: progress.advance(task, n))
            for row, reward in zip(chunk, rewards, strict=True):
                self.writer.write(_scored_record(row, reward, digest))
            self.scored += len(chunk)
            if chunk:
                self.writer.commit(self.record())

    def record(self) -> dict[str, Any]:
        return {
            "fingerprint": self.fingerprint.to_dict(),
            "digest": self.fingerprint.digest,
            "state": self.scorer.state,
        }


def _pending_chunks(
    reader: DumpReader, done: set[str], limit: int | None, size: int
) -> Iterator[tuple[list[Row], int]]:
    """Chunks of rows not yet in the output, each with how many done rows it passed over.

    A bad row that stops the run (``--fail-on-error``) first lets the rows read before it
    through, so they are scored and written."""
    rows = iter(reader) if limit is None else islice(reader, limit)
    chunk: list[Row] = []
    skipped = 0
    try:
        for row in rows:
            if row.sample.id in done:
                skipped += 1
                continue
            chunk.append(row)
            if len(chunk) == size:
                yield chunk, skipped
                chunk, skipped = [], 0
    except RowValidationError:
        if chunk or skipped:
            yield chunk, skipped
        raise
    if chunk or skipped:
        yield chunk, skipped


def _scored_record(row: Row, reward: Reward, digest: str) -> dict[str, Any]:
    # The sample's task goes with its reward: a mapped or default task is in no column.
    scored = {**reward.to_dict(), "run": digest, "task": row.sample.task}
    return {**row.record, "id": row.sample.id, SCORE_COLUMN: scored}


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


def _progress(quiet: bool = False) -> Progress:
    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        _RateColumn(),
        TimeRemainingColumn(),
        console=console,
        disable=quiet,
    )


def _report(reader: DumpReader, run: _Run, dump: Path, output: Path, as_json: bool) -> None:
    total = run.scored + run.kept
    stats = run.scorer.stats
    if as_json:
        typer.echo(json.dumps(_summary(reader, run, dump, output), sort_keys=True))
    else:
        out = Console()
        out.print(f"{dump.name}: {run.scored} scored, {run.kept} kept from before")
        out.print(summary.outcome_line(stats), highlight=False)
        out.print(summary.component_table(stats))
        out.print(summary.verifier_table(stats))
        if len(stats.tasks) > 1 or stats.other_tasks.samples:
            out.print(summary.task_table(stats))
        _warnings(reader, stats)
        if total:
            out.print(f"wrote {output}")
    if total == 0:
        raise _fail(f"{dump}: no rows to score")


def _summary(reader: DumpReader, run: _Run, dump: Path, output: Path) -> dict[str, Any]:
    """What ``score --json`` prints: one JSON object."""
    counts = run.scorer.counts
    return {
        "input": str(dump),
        "output": str(output),
        "scored": run.scored,
        "kept": run.kept,
        "bad_rows": [str(e) for e in reader.errors[:100]],
        "bad_row_count": len(reader.errors),
        "fingerprint": run.fingerprint.digest,
        "reward": counts["reward"],
        "counts": counts,
    }


def _warnings(reader: DumpReader, stats: Stats) -> None:
    lost, fallbacks = stats.outcomes["infra_failure"], stats.outcomes["fallback"]
    if lost:
        console.print(f"[yellow]{lost} rows kept out by infrastructure failures[/]")
    if fallbacks:
        console.print(
            f"[yellow]{fallbacks} rows given the fallback for an infrastructure failure[/]"
        )
    data_errors = stats.outcomes["data_error"]
    if data_errors:
        console.print(f"[yellow]{data_errors} rows kept out by data errors (bad references)[/]")
    if reader.errors:
        console.print(f"[yellow]{len(reader.errors)} bad rows skipped:[/yellow]")
        for error in reader.errors[:20]:
            console.print(f"  {error}", markup=False, highlight=False)
        if len(reader.errors) > 20:
            console.print(f"  ... and {len(reader.errors) - 20} more")


def _fail(message: str) -> typer.Exit:
    console.print(f"[red]error:[/red] {message}", highlight=False)
    return typer.Exit(code=1)
