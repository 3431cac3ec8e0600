"""``rewardsmith audit``: how can a policy game this reward? Measured before anyone trains.

Given a reward spec and a dump of *reference solutions* (rows whose completion is known
to be right), or a bundled task set (``--task-set DIR`` / ``--bundled``: every
``datasets/*/audit.yaml``), the audit scores, through the same `Scorer` as every other door
(``rewardsmith score``, the server, the trainer):

1. the reference solutions, which must get the full reward;
2. every leaf verifier's **exploits** of each reference (`verifier.exploits(sample)`, see
   `rewardsmith.verifiers.exploits`): adversarial variants, each with its class and the
   most it may earn, ``max_fraction`` x the reference's reward. A variant whose reward is
   over that limit, or that gets no reward at all (an escape from a 0), fails the audit;
3. mechanical corruptions (emptied, truncated, every number shifted, lines reversed, a
   second conflicting answer appended), reported as caught / tried: some are legitimately
   still right (a truncated tail that was a comment), so they inform and do not fail.

It prints a table per exploit class (verifier, class, variants, worst reward, its limit),
writes it as JSON with ``--json PATH``, and exits 1 when a reference fails or an exploit
earns more than its limit.

With ``--search`` it looks for what no generator names instead: the leaf verifiers'
metamorphic relations, composed and guided by the score (`rewardsmith.cli.audit_search`;
its output in `rewardsmith.cli.audit_search_io`). ``--env NAME --search`` runs the same
search over an environment's episodes (`rewardsmith.cli.audit_env_search`).
"""

from __future__ import annotations

import itertools
import json
import re
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Annotated, Any

import typer
import yaml
from rich.console import Console
from rich.table import Table

from rewardsmith.cli.score import build_grader
from rewardsmith.datasets.dumps import DumpError, DumpReader
from rewardsmith.graders import Executor, Grader, Reward, Scorer, load_spec
from rewardsmith.graders.spec import SpecError
from rewardsmith.verifiers.exploits import Exploit, ExploitGenerator, exploits_of
from rewardsmith.verifiers.types import Sample

__all__ = ["CORRUPTIONS", "AuditResult", "ClassRow", "audit", "load_task_set", "run_audit"]

BUNDLED = Path(__file__).resolve().parents[1] / "datasets"
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


def score(grader: Grader, samples: Sequence[Sample], executor: Executor) -> list[Reward]:
    """The one scoring call of the audit: the `Scorer` every door uses (so the spec's
    fallback for infrastructure failures applies as in training), on the audit's executor;
    no cache, so every variant is checked."""
    with Scorer(grader, executor=executor, cache=False) as scorer:
        return scorer.score(samples)


# ----------------------------------------------------------------------------- results


@dataclass
class ClassRow:
    """One exploit class of one leaf verifier, over every reference."""

    leaf: str
    verifier: str
    exploit_class: str
    variants: int = 0
    over: int = 0
    """Variants that earned more than their limit, or no reward at all."""
    worst_reward: float | None = 0.0
    """The reward of the variant closest to (or furthest past) its limit."""
    worst_limit: float = 0.0
    worst_id: str = ""
    worst_description: str = ""
    _excess: float = field(default=float("-inf"), repr=False)

    def add(self, exploit: Exploit, reward: float | None, limit: float) -> None:
        self.variants += 1
        excess = float("inf") if reward is None else reward - limit
        self.over += excess > 1e-9
        if excess > self._excess:
            self._excess = excess
            self.worst_reward, self.worst_limit = reward, limit
            self.worst_id, self.worst_description = exploit.sample.id, exploit.description

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if not k.startswith("_")}


@dataclass
class AuditResult:
    references: int
    references_failed: list[str] = field(default_factory=list)
    exploits: list[ClassRow] = field(default_factory=list)
    corruptions: dict[str, tuple[int, int]] = field(default_factory=dict)
    """Per corruption: (caught, tried)."""
    uncaught: list[str] = field(default_factory=list)
    generator_errors: list[str] = field(default_factory=list)
    """Exploit generators that raised: what they would have made is not measured."""

    @property
    def ok(self) -> bool:
        clean = not self.references_failed and not self.generator_errors
        return clean and not any(row.over for row in self.exploits)

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "references": self.references,
            "references_failed": self.references_failed,
            "exploits": [row.to_dict() for row in self.exploits],
            "corruptions": {k: {"caught": c, "tried": t} for k, (c, t) in self.corruptions.items()},
            "uncaught": self.uncaught,
            "generator_errors": self.generator_errors,
        }


# ----------------------------------------------------------------------------- the audit


@dataclass(frozen=True)
class _Probe:
    kind: str
    """``reference``, ``corruption`` or ``exploit``."""
    source_id: str
    sample: Sample
    leaf: str = ""
    exploit: Exploit | None = None


def _generators(verifier: object) -> list[ExploitGenerator]:
    """A verifier's exploit generators: one per class where it offers them
    (``exploit_generators()``), else its composed ``exploits``."""
    offered = getattr(verifier, "exploit_generators", None)
    if callable(offered):
        return list(offered().values())
    return [lambda sample: exploits_of(verifier, sample)]


def _capped(made: Iterable[Exploit], per_class: int | None) -> Iterator[Exploit]:
    for _, group in itertools.groupby(made, key=lambda e: e.exploit_class):
        yield from itertools.islice(group, per_class)


def _leaf_exploits(
    grader: Grader, reference: Sample, per_class: int | None, errors: list[str]
) -> Iterator[_Probe]:
    for key, verifier in sorted(grader.verifiers.items()):
        tasks = grader.tasks[key]
        if tasks is not None and reference.task not in tasks:
            continue
        for generate in _generators(verifier):
            try:
                made = list(_capped(generate(reference), per_class))
            except Exception as exc:  # an audit reports a broken generator; it goes on
                errors.append(f"{reference.id} {key}: {type(exc).__name__}: {exc}"[:500])
                continue
            for exploit in made:
                yield _Probe("exploit", reference.id, exploit.sample, key, exploit)


def _probes(
    grader: Grader, reference: Sample, per_class: int | None, errors: list[str]
) -> Iterator[_Probe]:
    yield _Probe("reference", reference.id, reference)
    text = reference.completion_text
    if isinstance(reference.completion, str):
        for name, corrupt in CORRUPTIONS.items():
            changed = corrupt(text)
            if changed != text:
                update = {"id": f"{reference.id}~{name}", "completion": changed}
                yield _Probe("corruption", reference.id, reference.model_copy(update=update))
    yield from _leaf_exploits(grader, reference, per_class, errors)


def run_audit(
    grader: Grader,
    references: Iterable[Sample],
    executor: Executor,
    per_class: int | None = None,
) -> AuditResult:
    """Audit `grader` on right answers; ``per_class`` caps the variants per class and
    reference (all of them by default)."""
    refs = list(references)
    errors: list[str] = []
    probes = [p for ref in refs for p in _probes(grader, ref, per_class, errors)]
    rewards = score(grader, [p.sample for p in probes], executor)
    value = {p.sample.id: r.value for p, r in zip(probes, rewards, strict=True)}
    best = max((v for v in value.values() if v is not None), default=None)
    result = AuditResult(len(refs), generator_errors=errors)
    tally: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    rows: dict[tuple[str, str], ClassRow] = {}
    for probe, reward in zip(probes, rewards, strict=True):
        got, ref = reward.value, value[probe.source_id]
        if probe.kind == "reference" and (got is None or best is None or got < best):
            result.references_failed.append(f"{probe.source_id}: reward {got}, best seen {best}")
        elif probe.kind == "corruption":
            name = probe.sample.id.rsplit("~", 1)[1]
            caught = got is not None and ref is not None and got < ref
            tally[name][0] += caught
            tally[name][1] += 1
            if not caught:
                result.uncaught.append(f"{probe.source_id} {name}: reward {got} vs reference {ref}")
        elif probe.kind == "exploit" and probe.exploit is not None:
            row = rows.get((probe.leaf, probe.exploit.exploit_class))
            if row is None:
                verifier = getattr(grader.verifiers[probe.leaf], "name", probe.leaf)
                row = rows[(probe.leaf, probe.exploit.exploit_class)] = ClassRow(
                    probe.leaf, verifier, probe.exploit.exploit_class
                )
            row.add(probe.exploit, got, probe.exploit.max_fraction * (ref or 0.0))
    result.corruptions = {k: (v[0], v[1]) for k, v in tally.items()}
    result.exploits = sorted(rows.values(), key=lambda r: (r.leaf, r.exploit_class))
    return result


# ----------------------------------------------------------------------------- task sets


def load_task_set(folder: Path) -> tuple[Grader, list[Sample]]:
    """A task set's grader and reference solutions, from its ``audit.yaml``:
    ``spec`` (a spec file, relative to the folder), ``references`` (a dump of right
    answers) and optionally ``completion_from: reference`` (each row's reference is its
    right completion, as for exact answers)."""
    path = folder / "audit.yaml"
    try:
        config = yaml.safe_load(path.read_text())
        grader = load_spec(folder / config["spec"])
        dump = folder / config["references"]
        if config.get("completion_from") == "reference":
            rows = [_answered(line) for line in dump.read_text().splitlines() if line.strip()]
        else:
            rows = [row.sample for row in DumpReader(dump)]
    except (OSError, KeyError, TypeError, ValueError, yaml.YAMLError, SpecError, DumpError) as exc:
        raise typer.BadParameter(f"{path}: {exc}", param_hint="--task-set") from exc
    return grader, rows


def _answered(line: str) -> Sample:
    """A task row (no completion yet) answered with its own reference."""
    row = json.loads(line)
    return Sample.model_validate({**row, "completion": str(row["reference"])})


def bundled_task_sets() -> list[Path]:
    return sorted(p.parent for p in BUNDLED.glob("*/audit.yaml"))


# ----------------------------------------------------------------------------- the command


def audit(
    spec: Annotated[
        Path | None, typer.Argument(help="The YAML reward spec to audit (with --references).")
    ] = None,
    references: Annotated[
        Path | None,
        typer.Option("--references", "-r", help="A dump whose completions are right answers."),
    ] = None,
    task_set: Annotated[
        list[Path] | None,
        typer.Option("--task-set", help="A task-set folder with an audit.yaml (repeatable)."),
    ] = None,
    bundled: Annotated[
        bool, typer.Option("--bundled", help="Audit every bundled task set under datasets/.")
    ] = False,
    json_path: Annotated[
        Path | None, typer.Option("--json", help="Write the table here as JSON.")
    ] = None,
    per_class: Annotated[
        int | None, typer.Option(help="At most this many variants per class and reference.")
    ] = None,
    backend: Annotated[str, typer.Option(help="Executor: pool, ray or inline.")] = "pool",
    limit: Annotated[int, typer.Option(help="Audit at most this many reference rows.")] = 200,
    search: Annotated[
        bool,
        typer.Option(
            "--search",
            help="Search the verifiers' metamorphic relations for violations (with --env: "
            "the environment's episode relations).",
        ),
    ] = False,
    budget: Annotated[
        int,
        typer.Option(
            min=1,
            help="--search: rewrites scored per leaf verifier (with --env: episodes played), "
            "at most.",
        ),
    ] = 200,
    seconds: Annotated[
        float, typer.Option(help="--search: seconds spent per leaf verifier, at most.")
    ] = 120.0,
    seed: Annotated[int, typer.Option(help="--search: the seed of every choice.")] = 0,
    depth: Annotated[int, typer.Option(min=1, help="--search: rewrites per chain, at most.")] = 3,
    save_witnesses: Annotated[
        Path | None,
        typer.Option(help="--search: write each task set's witnesses here (JSONL)."),
    ] = None,
    env: Annotated[
        str | None, typer.Option("--env", help="Play an environment's episode exploits.")
    ] = None,
) -> None:
    """Check a reward: right answers pass, exploits earn no more than their limits; with
    --search, rewrites of right answers keep, lose or do not gain reward as they must; with
    --env, an environment's scripted hostile episodes earn no more than their limits (with
    --env and --search, rewrites of its expert and lazy episodes keep, lose or do not gain
    return as they must)."""
    if env is not None and search:
        from rewardsmith.cli.audit_env import search_environment

        settings = {"budget": budget, "seconds": seconds, "seed": seed, "depth": depth}
        ok = search_environment(env, limit, settings, json_path, save_witnesses)
        raise typer.Exit(0 if ok else 1)
    if env is not None:
        from rewardsmith.cli.audit_env import audit_environment

        raise typer.Exit(0 if audit_environment(env, limit) else 1)
    runs = _runs(spec, references, task_set or [], bundled, limit)
    if search:
        settings = {"budget": budget, "seconds": seconds, "seed": seed, "depth": depth}
        from rewardsmith.cli.audit_search_io import search_command

        with Executor(backend) as executor:
            ok = search_command(runs, executor, settings, json_path, save_witnesses)
        raise typer.Exit(0 if ok else 1)
    results: dict[str, AuditResult] = {}
    with Executor(backend) as executor:
        for name, (grader, rows) in runs.items():
            results[name] = run_audit(grader, rows, executor, per_class)
    for name, result in results.items():
        _print(name, result)
    if json_path is not None:
        payload = {name: result.to_dict() for name, result in results.items()}
        json_path.write_text(json.dumps(payload, indent=2))
    raise typer.Exit(0 if all(r.ok for r in results.values()) else 1)


def _runs(
    spec: Path | None, references: Path | None, task_sets: list[Path], bundled: bool, limit: int
) -> dict[str, tuple[Grader, list[Sample]]]:
    folders = [*task_sets, *(bundled_task_sets() if bundled else [])]
    if spec is None and not folders:
        raise typer.BadParameter("give a SPEC with --references, --task-set DIR or --bundled")
    runs: dict[str, tuple[Grader, list[Sample]]] = {}
    for folder in folders:
        grader, rows = load_task_set(folder)
        runs[str(folder)] = (grader, rows[:limit])
    if spec is not None:
        if references is None:
            raise typer.BadParameter("a SPEC needs --references", param_hint="--references")
        grader = build_grader(spec, [])
        try:
            rows = [r.sample for _, r in zip(range(limit), DumpReader(references), strict=False)]
        except DumpError as exc:
            raise typer.BadParameter(str(exc), param_hint="--references") from exc
        runs[str(spec)] = (grader, rows)
    return runs


def _fmt(value: float | None) -> str:
    return "no reward" if value is None else f"{value:.4g}"


def _print(name: str, result: AuditResult) -> None:
    console = Console()
    table = Table(title=f"audit of {name}: {result.references} reference solutions")
    for column in ("verifier", "exploit class", "variants", "worst reward", "its limit", ""):
        table.add_column(column)
    failed = len(result.references_failed)
    table.add_row(
        "(all)",
        "references get the full reward",
        str(result.references),
        f"{result.references - failed} passed",
        "",
        "ok" if not failed else "FAIL",
    )
    for row in result.exploits:
        verdict = "ok" if not row.over else f"FAIL ({row.over} over)"
        table.add_row(
            f"{row.leaf} ({row.verifier})",
            row.exploit_class,
            str(row.variants),
            _fmt(row.worst_reward),
            _fmt(row.worst_limit),
            verdict,
        )
    for corruption, (caught, tried) in sorted(result.corruptions.items()):
        table.add_row("(all)", f"corruption: {corruption}", str(tried), f"{caught} caught", "", "")
    console.print(table)
    over = [r for r in result.exploits if r.over]
    lines = [*result.references_failed, *result.generator_errors]
    lines += [f"{r.worst_id}: {r.worst_description} earned {_fmt(r.worst_reward)}" for r in over]
    for line in lines[:30]:
        console.print(f"  {line}", markup=False, highlight=False)
