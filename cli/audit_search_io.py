"""What `rewardsmith audit --search` writes: its table, its JSON, and its witnesses as
regression cases, saved as JSONL (``--save-witnesses DIR``), loaded and replayed by a
table test.

A witness stores the right answer it started from and its chain of ``(relation, seed)``
steps, so it is made again from those (not read back from the rewritten sample): while the
relations are unchanged, `replay` gives back ``witness.rewritten``; once the verifier is
fixed, the replayed sample no longer breaks its relation.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from rewardsmith.cli.audit_search import SearchResult, Witness, _evaluate, _Scores, run_search
from rewardsmith.graders import Executor, Grader
from rewardsmith.verifiers.metamorphic import Relation, relations_for
from rewardsmith.verifiers.types import Sample

__all__ = [
    "load_witnesses",
    "print_search",
    "recheck",
    "recheck_with",
    "replay",
    "replay_with",
    "save_witnesses",
    "search_command",
]


def save_witnesses(witnesses: list[Witness], folder: Path, name: str) -> Path:
    """Write ``witnesses`` to ``folder/<name>.jsonl`` (one JSON object a line; the file is
    replaced), the regression cases a table test replays."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.jsonl"
    lines = [json.dumps(asdict(witness), sort_keys=True) + "\n" for witness in witnesses]
    path.write_text("".join(lines), encoding="utf-8")
    return path


def load_witnesses(path: Path) -> list[Witness]:
    rows = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    return [Witness(**{**row, "chain": [tuple(step) for step in row["chain"]]}) for row in rows]


def replay(witness: Witness, grader: Grader) -> Sample | None:
    """The witness's rewritten sample, made again from its reference and chain with the
    relations of ``grader``'s leaf (equal to ``witness.rewritten`` while the relations are
    unchanged)."""
    return replay_with(witness, relations_for(grader.verifiers[witness.leaf]))


def replay_with(witness: Witness, relations: Iterable[Relation]) -> Sample | None:
    """`replay` with the leaf's ``relations`` given (an environment's, say)."""
    by_name = {r.name: r for r in relations}
    current: Sample | None = Sample.model_validate(witness.reference)
    for name, seed in witness.chain:
        current = None if current is None else by_name[name](current, seed)
    return current


def recheck(witness: Witness, grader: Grader, executor: Executor) -> float:
    """Score the witness's chain again, step by step, and say how far it now breaks its
    relation (0 once the verifier is fixed)."""
    relations = relations_for(grader.verifiers[witness.leaf])
    return recheck_with(witness, relations, _Scores.of_grader(grader, executor))


def recheck_with(witness: Witness, relations: Iterable[Relation], scores: _Scores) -> float:
    """`recheck` with the leaf's ``relations`` and what scores its samples given."""
    by_name = {r.name: r for r in relations}
    chain = tuple((by_name[name], seed) for name, seed in witness.chain)
    got = _evaluate(Sample.model_validate(witness.reference), witness.right, chain, scores)
    return 0.0 if got is None else got[2].violation(got[1])


def search_command(
    runs: dict[str, tuple[Grader, list[Sample]]],
    executor: Executor,
    settings: dict[str, Any],
    json_path: Path | None,
    witnesses: Path | None,
) -> bool:
    """``audit --search`` over ``runs`` (name -> grader and right answers) on the audit's
    executor: print, write what was asked for; True when nothing broke a relation."""
    results = {name: run_search(*run, executor, **settings) for name, run in runs.items()}
    for name, result in results.items():
        for witness in result.witnesses:
            witness.task_set = name
        print_search(name, result)
        if witnesses is not None:
            save_witnesses(result.witnesses, witnesses, Path(name).name or "spec")
    if json_path is not None:
        payload = {name: result.to_dict() for name, result in results.items()}
        json_path.write_text(json.dumps(payload, indent=2))
    return all(r.ok for r in results.values())


def print_search(name: str, result: SearchResult) -> None:
    """The search's table: per leaf verifier and relation, tries, violations and the
    worst witness; then every witness, one line each."""
    console = Console()
    title = (
        f"audit --search of {name}: {result.references} right answers, "
        f"{result.scored} samples scored in {result.seconds:.1f} s"
    )
    table = Table(title=title)
    for column in ("verifier", "relation", "kind", "tries", "violations", "worst witness"):
        table.add_column(column)
    for row in result.rows:
        worst = "" if row.worst is None else row.worst.describe()
        shown = str(row.violations) if not row.violations else f"FAIL {row.violations}"
        table.add_row(
            f"{row.leaf} ({row.verifier})", row.relation, row.kind, str(row.tries), shown, worst
        )
    console.print(table)
    for line in [*result.skipped, *(w.describe() for w in result.witnesses)][:40]:
        console.print(f"  {line}", markup=False, highlight=False)
