"""`rewardsmith audit --search`: the search finds what breaks a relation, shrinks it to a
minimal witness, stays in its budget and replays the same way; CI runs it on every bundled
task set (and the seed sets beside this file) and finds nothing but the known holes."""

from __future__ import annotations

import json
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import pytest
from typer.testing import CliRunner

from rewardsmith.cli.audit import bundled_task_sets, load_task_set
from rewardsmith.cli.audit import score as audit_score
from rewardsmith.cli.audit_search import SearchResult, Witness, run_search
from rewardsmith.cli.audit_search_io import load_witnesses, recheck, replay, save_witnesses
from rewardsmith.cli.main import app
from rewardsmith.graders import Executor, Grader, weighted
from rewardsmith.verifiers.metamorphic import Expectation, Relation, text_rewrite
from rewardsmith.verifiers.protocol import Cost
from rewardsmith.verifiers.types import Sample, Verdict

HERE = Path(__file__).parent
ROOT = HERE.parents[1]
SEED_SETS = sorted(p.parent for p in (HERE / "search_sets").glob("*/audit.yaml"))
KNOWN_HOLES = HERE / "search_known_holes.json"
WITNESSES = HERE / "search_witnesses"
CI = {"budget": 40, "seconds": 600.0, "seed": 0, "depth": 3}
"""The CI search: fixed seed, small budget (rewrites scored per leaf verifier); the time
limit is far above what it takes, so that load never cuts it short (it would change what
is found)."""


def _bump(text: str, sample: Sample, rng: object) -> str | None:
    return (
        str(int(text.split()[0]) + 1) + text[len(text.split()[0]) :] if text[:1].isdigit() else None
    )


TOY_RELATIONS = [
    Relation("toy/spaced", "preserving", text_rewrite(lambda t, s, r: f" {t} ")),
    Relation("toy/bump", "changing", text_rewrite(_bump), limit=0.0),
    Relation("toy/noted", "dressing", text_rewrite(lambda t, s, r: f"{t} (note {r.random():.3f})")),
    Relation("toy/gold_after", "dressing", text_rewrite(lambda t, s, r: f"{t} [{s.reference}]")),
]


@dataclass(frozen=True)
class Gullible:
    """Pays for any answer that contains the reference: "43 [42]" passes."""

    name: ClassVar[str] = "gullible"
    version: ClassVar[str] = "1"
    cost: ClassVar[Cost] = Cost.CHEAP

    def __call__(self, sample: Sample) -> Verdict:
        ok = str(sample.reference) in sample.completion_text
        return Verdict.graded(self.name, self.version, 1.0 if ok else 0.0)

    def relations(self) -> list[Relation]:
        return TOY_RELATIONS


@dataclass(frozen=True)
class Careful(Gullible):
    """Pays only for the reference itself, spaces aside."""

    name: ClassVar[str] = "careful"

    def __call__(self, sample: Sample) -> Verdict:
        ok = sample.completion_text.strip() == str(sample.reference)
        return Verdict.graded(self.name, self.version, 1.0 if ok else 0.0)


RIGHT = [Sample(id=f"q{n}", completion=str(n), reference=str(n)) for n in (42, 7, 19)]


def _search(verifier: object, **settings: object) -> SearchResult:
    with Executor("inline") as ex:
        return run_search(Grader(weighted({"g": verifier})), RIGHT, ex, **settings)  # type: ignore[arg-type]


# ----------------------------------------------------------------------------- the search


def test_the_search_finds_gold_dressing_on_a_wrong_answer_and_shrinks_it() -> None:
    result = _search(Gullible(), budget=60, seed=3)
    assert not result.ok
    # the wrong answer dressed with the gold, or a dressed right answer (gold after it, or
    # repeated) changed in its first figure only: two steps, every other one dropped
    assert "toy/gold_after" in {w.relation for w in result.witnesses}
    for witness in result.witnesses:
        names = sorted(name for name, _ in witness.chain)
        assert names in (["toy/bump", "toy/gold_after"], ["any/repeated", "toy/bump"]), names
        assert witness.score == 1.0 and witness.violation == 1.0
        assert witness.reference["completion"] in witness.rewritten["completion"]
    for row in result.rows:  # each witness is counted once, in its last relation's row
        mine = [w for w in result.witnesses if w.relation == row.relation]
        assert row.violations == len(mine) and (row.worst is None) == (not mine)


def test_every_witness_is_minimal_no_step_can_be_dropped() -> None:
    grader = Grader(weighted({"g": Gullible()}))
    result = _search(Gullible(), budget=80, seed=5)
    by_name = {r.name: r for r in TOY_RELATIONS}
    for witness in result.witnesses:
        for drop in range(len(witness.chain)):
            kept = [step for i, step in enumerate(witness.chain) if i != drop]
            assert not _breaks(grader, witness, kept, by_name), (witness.chain, drop)


def _breaks(grader: Grader, witness: Witness, chain: list, by_name: dict) -> bool:
    sample = Sample.model_validate(witness.reference)
    expect: Expectation | None = Expectation.of_right(witness.right)
    score: float | None = witness.right
    for name, seed in chain:
        made = by_name[name](sample, seed)
        if made is None or expect is None:
            return False
        expect = expect.then(by_name[name].kind, score, by_name[name].limit)
        with Executor("inline") as ex:
            sample, score = made, audit_score(grader, [made], ex)[0].value
    return expect is not None and expect.violation(score) > 0


def test_a_verifier_that_reads_carefully_breaks_no_relation() -> None:
    result = _search(Careful(), budget=60, seed=3)
    assert result.ok and result.witnesses == []
    assert sum(row.tries for row in result.rows) > 20
    assert {row.relation for row in result.rows} >= {"toy/bump", "toy/gold_after"}


def test_the_same_seed_finds_the_same_witnesses_and_the_budget_holds() -> None:
    first, again = _search(Gullible(), budget=30, seed=9), _search(Gullible(), budget=30, seed=9)
    assert [w.chain for w in first.witnesses] == [w.chain for w in again.witnesses]
    # the budget counts rewrites (shrinking included); the right answers are scored first
    assert first.scored <= len(RIGHT) + 30 + 4 * len(first.witnesses) + 16


@pytest.mark.parametrize("setting", [{"budget": 0}, {"depth": 0}, {"batch": 0}])
def test_a_search_with_nothing_to_spend_is_refused(setting: dict[str, int]) -> None:
    with pytest.raises(ValueError, match=">= 1"):
        _search(Gullible(), **setting)


def test_witnesses_are_saved_loaded_and_replayed(tmp_path: Path) -> None:
    result = _search(Gullible(), budget=40, seed=3)
    path = save_witnesses(result.witnesses, tmp_path, "toy")
    loaded = load_witnesses(path)
    assert [w.chain for w in loaded] == [w.chain for w in result.witnesses]
    grader = Grader(weighted({"g": Gullible()}))
    for witness in loaded:
        again = replay(witness, grader)
        assert again is not None and again.completion == witness.rewritten["completion"]


# ----------------------------------------------------------------------------- the command


def test_the_command_reports_relations_and_writes_json_and_witnesses(tmp_path: Path) -> None:
    out, saved = tmp_path / "search.json", tmp_path / "witnesses"
    args = ["audit", "--task-set", str(ROOT / "datasets" / "samples"), "--search"]
    args += ["--budget", "12", "--seed", "4", "--backend", "inline", "--json", str(out)]
    run = CliRunner().invoke(app, [*args, "--save-witnesses", str(saved)])
    payload = json.loads(out.read_text())
    (result,) = payload.values()
    assert run.exit_code == (0 if result["ok"] else 1), run.output
    assert {row["relation"] for row in result["relations"]} >= {"any/repeated"}
    assert all(row["tries"] >= 0 for row in result["relations"])
    assert (saved / "samples.jsonl").exists() and "audit --search" in run.output


# ----------------------------------------------------------------------------- CI


def _known() -> dict[tuple[str, str, str], int]:
    rows = json.loads(KNOWN_HOLES.read_text())["holes"]
    return {(r["task_set"], r["leaf"], r["relation"]): r["issue"] for r in rows}


def _all_sets() -> list[Path]:
    return [*bundled_task_sets(), *SEED_SETS]


def _ci_search(folder: Path) -> SearchResult:
    grader, rows = load_task_set(folder)
    with Executor("inline") as ex:
        return run_search(grader, rows, ex, **CI)  # type: ignore[arg-type]


@pytest.mark.slow
@pytest.mark.parametrize("folder", _all_sets(), ids=lambda p: p.name)
def test_ci_search_finds_no_violation_but_the_known_holes(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)  # the seed sets name their files from the repo root
    result = _ci_search(folder)
    known = {k for k in _known() if k[0] == folder.name}
    found = {(folder.name, w.leaf, w.relation) for w in result.witnesses}
    new = sorted(found - known)
    assert not new, "new violations:\n" + "\n".join(
        w.describe() for w in result.witnesses if (folder.name, w.leaf, w.relation) in new
    )
    stale = sorted(known - found)
    if stale:  # a warning, not a failure: a hole this budget missed may still be open
        message = f"not found (fixed? remove them from {KNOWN_HOLES.name}): {stale}"
        warnings.warn(message, stacklevel=2)


def _saved() -> Iterator[tuple[Path, Witness]]:
    for path in sorted(WITNESSES.glob("*.jsonl")):
        for witness in load_witnesses(path):
            yield path, witness


@pytest.mark.parametrize(
    ("path", "witness"),
    list(_saved()),
    ids=lambda v: v.stem if isinstance(v, Path) else "-".join(n for n, _ in v.chain),
)
def test_saved_witnesses_replay_and_break_only_while_their_hole_is_known(
    path: Path, witness: Witness, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)
    folder = next(p for p in _all_sets() if p.name == path.stem)
    grader, _ = load_task_set(folder)
    again = replay(witness, grader)
    assert again is not None
    if not str(again.completion).endswith(".stl"):  # meshes are named by content, not kept
        assert again.completion == witness.rewritten["completion"]
    with Executor("inline") as ex:
        broken = recheck(witness, grader, ex)
    hole = (path.stem, witness.leaf, witness.relation) in _known()
    assert (broken > 0) == hole, f"{witness.describe()}: now breaks it by {broken}"
