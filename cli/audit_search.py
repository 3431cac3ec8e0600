"""``rewardsmith audit --search``: look for holes in a reward that nobody wrote down.

Where the plain audit runs a fixed catalogue of exploits, the search composes each leaf
verifier's metamorphic relations (`rewardsmith.verifiers.metamorphic`) into chains of up to
``depth`` rewrites of the right answers, and scores every variant through the same `Scorer`
as the audit (`rewardsmith.cli.audit.score`). A variant whose score breaks what its chain
expects (a preserved answer that loses reward, a changed one that keeps it, dressing that
raises it) is a **violation**; its chain is shrunk to a **witness** from which no rewrite
can be dropped, as Hypothesis shrinks a failing example.

What to try next is chosen by what moved the score, within a budget of scored samples and
seconds per leaf verifier:

- which relation: UCB1 over relations, rewarded by how far each one moved the score (a
  violation counts double), so relations that bite are tried more and none is starved;
- which sample to extend: a right answer, or (hill-climbing) a variant already scored,
  chosen in proportion to how far its last step moved the score.

Every choice draws from one `random.Random(seed)`; with an inline or pool executor the
same seed and budget give the same witnesses.
"""

from __future__ import annotations

import hashlib
import json
import math
import random
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from rewardsmith.graders import Executor, Grader
from rewardsmith.verifiers.metamorphic import Expectation, Relation, relations_for
from rewardsmith.verifiers.types import Sample

__all__ = ["RelationRow", "SearchResult", "Witness", "run_search"]

Chain = tuple[tuple[Relation, int], ...]


@dataclass
class Witness:
    """The smallest rewrite chain found that shows one violation."""

    leaf: str
    verifier: str
    relation: str
    """The chain's last relation: the one whose contract broke."""
    kind: str
    chain: list[tuple[str, int]]
    """``(relation, seed)`` steps, replayed in order from ``reference``."""
    reference: dict[str, Any]
    rewritten: dict[str, Any]
    score: float | None
    right: float
    """What the right answer earned."""
    expected: str
    violation: float
    found_after: int
    """Rewrites this leaf had scored when the violation was found, shrinking included (the
    budget it took)."""
    task_set: str = ""

    def describe(self) -> str:
        steps = " then ".join(name for name, _ in self.chain)
        return f"{self.reference['id']}: {steps} earned {self.score} ({self.expected})"


@dataclass
class RelationRow:
    leaf: str
    verifier: str
    relation: str
    kind: str
    tries: int = 0
    violations: int = 0
    worst: Witness | None = None

    def to_dict(self) -> dict[str, Any]:
        out = {k: v for k, v in asdict(self).items() if k != "worst"}
        out["worst"] = None if self.worst is None else asdict(self.worst)
        return out


@dataclass
class SearchResult:
    references: int
    rows: list[RelationRow] = field(default_factory=list)
    witnesses: list[Witness] = field(default_factory=list)
    scored: int = 0
    seconds: float = 0.0
    skipped: list[str] = field(default_factory=list)
    """Leaves not searched, and why (no relations, no right answer earning reward)."""

    @property
    def ok(self) -> bool:
        return not self.witnesses

    def to_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "references": self.references,
            "scored": self.scored,
            "seconds": round(self.seconds, 3),
            "relations": [row.to_dict() for row in self.rows],
            "witnesses": [asdict(w) for w in self.witnesses],
            "skipped": self.skipped,
        }


# ----------------------------------------------------------------------------- scoring


def content_key(sample: Sample) -> str:
    """What makes two samples the same for the search: everything but the id."""
    blob = json.dumps(sample.model_dump(mode="json", exclude={"id"}), sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()


ScoreMany = Callable[[list[Sample]], list["float | None"]]
"""Samples in, their rewards out, in order: what the search scores with (the audit's
`Scorer` for a grader; played episodes for an environment, `cli.audit_env_search`)."""


class _Scores:
    """Scores by ``score_many``, each distinct sample once; ``scored`` counts them (the
    budget)."""

    def __init__(self, score_many: ScoreMany) -> None:
        self.score_many = score_many
        self.known: dict[str, float | None] = {}
        self.scored = 0

    @classmethod
    def of_grader(cls, grader: Grader, executor: Executor) -> _Scores:
        """Through the audit's one scoring call (`rewardsmith.cli.audit.score`)."""
        from rewardsmith.cli.audit import score

        return cls(lambda samples: [r.value for r in score(grader, samples, executor)])

    def many(self, samples: list[Sample]) -> list[float | None]:
        keys = [content_key(s) for s in samples]
        todo = {k: s for k, s in zip(keys, samples, strict=True) if k not in self.known}
        if todo:
            values = self.score_many(list(todo.values()))
            self.known.update(zip(todo, values, strict=True))
            self.scored += len(todo)
        return [self.known[k] for k in keys]

    def one(self, sample: Sample) -> float | None:
        return self.many([sample])[0]


@dataclass
class _Node:
    root: Sample
    sample: Sample
    chain: Chain
    expect: Expectation
    score: float | None
    moved: float = 0.0
    dead: set[str] = field(default_factory=set)
    """Relations that do not apply to this node's sample (or have nothing new for it)."""
    repeats: dict[str, int] = field(default_factory=dict)


def _evaluate(
    root: Sample, right: float, chain: Chain, scores: _Scores
) -> tuple[Sample, float | None, Expectation] | None:
    """Replay ``chain`` on ``root`` step by step: the last sample, its score and what it
    should earn; None when a step does not apply or nothing can be expected."""
    current, expect = root, Expectation.of_right(right)
    current_score: float | None = right
    for relation, seed in chain:
        following = relation(current, seed)
        nxt = (
            None if following is None else expect.then(relation.kind, current_score, relation.limit)
        )
        if following is None or nxt is None:
            return None
        current, expect = following, nxt
        current_score = scores.one(current)
    return current, current_score, expect


def _shrunk(root: Sample, right: float, chain: Chain, scores: _Scores) -> Chain:
    """Drop steps while the shorter chain still breaks its expectation: the result is a
    witness from which no single rewrite can be dropped."""
    shrinking = True
    while shrinking and len(chain) > 1:
        shrinking = False
        for i in range(len(chain)):
            shorter = chain[:i] + chain[i + 1 :]
            got = _evaluate(root, right, shorter, scores)
            if got is not None and got[2].violation(got[1]) > 0:
                chain, shrinking = shorter, True
                break
    return chain


# ----------------------------------------------------------------------------- the search


@dataclass
class _Bandit:
    """UCB1 over relations; a relation's reward is how far it moved the score."""

    pulls: dict[str, int] = field(default_factory=dict)
    gain: dict[str, float] = field(default_factory=dict)

    def pick(self, names: list[str], rng: random.Random) -> str:
        fresh = [n for n in names if n not in self.pulls]
        if fresh:
            return rng.choice(fresh)
        total = sum(self.pulls[n] for n in names)

        def ucb(n: str) -> float:
            mean = self.gain[n] / self.pulls[n]
            return mean + math.sqrt(2 * math.log(total) / self.pulls[n]) + rng.random() * 1e-9

        return max(names, key=ucb)

    def update(self, name: str, reward: float) -> None:
        self.pulls[name] = self.pulls.get(name, 0) + 1
        self.gain[name] = self.gain.get(name, 0.0) + reward


@dataclass
class _Leaf:
    """The search state of one leaf verifier."""

    key: str
    verifier: str
    relations: dict[str, Relation]
    roots: list[_Node]
    scores: _Scores
    depth: int
    rng: random.Random
    base: int = 0
    """Samples scored before this leaf's search began (its right answers among them)."""
    bandit: _Bandit = field(default_factory=_Bandit)
    frontier: list[_Node] = field(default_factory=list)
    rows: dict[str, RelationRow] = field(default_factory=dict)
    witnesses: dict[tuple[str, ...], Witness] = field(default_factory=dict)

    def row(self, relation: Relation) -> RelationRow:
        if relation.name not in self.rows:
            self.rows[relation.name] = RelationRow(
                self.key, self.verifier, relation.name, relation.kind
            )
        return self.rows[relation.name]

    def pick_node(self) -> _Node:
        if not self.frontier or self.rng.random() < 0.4:
            return self.rng.choice(self.roots)
        weights = [0.05 + min(node.moved, 1.0) for node in self.frontier]
        return self.rng.choices(self.frontier, weights)[0]

    def propose(self, pending: set[str], tries: int = 50) -> _Proposal | None:
        """A node, a relation that applies to it and the rewrite it made (with its seed)."""
        for _ in range(tries):
            node = self.pick_node()
            names = [n for n in self.relations if n not in node.dead]
            if not names:
                continue
            relation = self.relations[self.bandit.pick(names, self.rng)]
            expect = node.expect.then(relation.kind, node.score, relation.limit)
            seed = self.rng.randrange(2**31)
            made = None if expect is None else relation(node.sample, seed)
            if made is None or expect is None:
                node.dead.add(relation.name)
                continue
            key = content_key(made)
            if key in self.scores.known or key in pending:
                # Seen before: no news. A rewrite that keeps making the same sample from
                # this node (it draws no randomness) is done with it.
                node.repeats[relation.name] = node.repeats.get(relation.name, 0) + 1
                if node.repeats[relation.name] >= 3:
                    node.dead.add(relation.name)
                continue
            pending.add(key)
            return _Proposal(node, (*node.chain, (relation, seed)), made, expect)
        return None


@dataclass(frozen=True)
class _Proposal:
    node: _Node
    chain: Chain
    made: Sample
    expect: Expectation


def _step(leaf: _Leaf, batch: int) -> int:
    """Propose, score and judge one batch; the number of new samples scored."""
    pending: set[str] = set()
    proposals = [p for p in (leaf.propose(pending) for _ in range(batch)) if p is not None]
    if not proposals:
        return 0
    before = leaf.scores.scored
    values = leaf.scores.many([p.made for p in proposals])
    for proposal, value in zip(proposals, values, strict=True):
        _judge(leaf, proposal, value)
    return leaf.scores.scored - before


def _judge(leaf: _Leaf, proposal: _Proposal, value: float | None) -> None:
    node, relation = proposal.node, proposal.chain[-1][0]
    moved = 1.0 if value is None or node.score is None else abs(value - node.score)
    broken = proposal.expect.violation(value)
    leaf.bandit.update(relation.name, moved + 2 * broken)
    leaf.row(relation).tries += 1
    if broken > 0:
        _record(leaf, node.root, proposal.expect.right, proposal.chain)
    elif len(proposal.chain) < leaf.depth:
        leaf.frontier.append(
            _Node(node.root, proposal.made, proposal.chain, proposal.expect, value, moved)
        )


def _record(leaf: _Leaf, root: Sample, right: float, chain: Chain) -> None:
    chain = _shrunk(root, right, chain, leaf.scores)
    got = _evaluate(root, right, chain, leaf.scores)
    key = (root.id, *(relation.name for relation, _ in chain))
    if got is None or key in leaf.witnesses:
        return
    sample, value, expect = got
    last = chain[-1][0]
    witness = Witness(
        leaf.key,
        leaf.verifier,
        last.name,
        last.kind,
        [(relation.name, seed) for relation, seed in chain],
        root.model_dump(mode="json"),
        sample.model_dump(mode="json"),
        value,
        right,
        _expected(expect),
        expect.violation(value),
        leaf.scores.scored - leaf.base,
    )
    leaf.witnesses[key] = witness
    row = leaf.row(last)
    row.violations += 1
    if row.worst is None or (witness.violation, -len(witness.chain)) > (
        row.worst.violation,
        -len(row.worst.chain),
    ):
        row.worst = witness


def _expected(expect: Expectation) -> str:
    return "must earn " + expect.describe()


def _leaf(
    key: str, grader: Grader, refs: list[Sample], scores: _Scores, depth: int, seed: int
) -> _Leaf | str:
    verifier = grader.verifiers[key]
    name = str(getattr(verifier, "name", key))
    tasks = grader.tasks[key]
    routed = [r for r in refs if tasks is None or r.task in tasks]
    if not routed:
        return f"{key} ({name}): no reference routed to it"
    return new_leaf(key, name, relations_for(verifier), routed, scores, depth, seed)


def new_leaf(
    key: str,
    name: str,
    relations: list[Relation],
    refs: list[Sample],
    scores: _Scores,
    depth: int,
    seed: int,
    keeps: Callable[[Sample, float | None], bool] | None = None,
) -> _Leaf | str:
    """The search state of one leaf (a verifier, or an environment): its right answers
    ``refs`` scored, those that earn reward its roots (those ``keeps`` keeps, where
    given); a string saying why not."""
    if not relations:
        return f"{key} ({name}): no relations"
    keep = keeps or (lambda ref, value: value is not None and value > 0)
    roots = [
        _Node(ref, ref, (), Expectation.of_right(value), value)
        for ref, value in zip(refs, scores.many(refs), strict=True)
        if value is not None and keep(ref, value)
    ]
    if not roots:
        return f"{key} ({name}): no right answer earns reward (see the plain audit)"
    rng = random.Random(f"{seed}:{key}")
    by_name = {r.name: r for r in relations}
    return _Leaf(key, name, by_name, roots, scores, depth, rng, base=scores.scored)


def run_search(
    grader: Grader,
    references: list[Sample],
    executor: Executor,
    *,
    budget: int = 200,
    seconds: float = 120.0,
    seed: int = 0,
    depth: int = 3,
    batch: int = 16,
) -> SearchResult:
    """Search each leaf verifier of ``grader`` for violations of its relations, starting
    from ``references`` (right answers), scoring about ``budget`` new samples (shrinking a
    violation found in the last batch may replay a few shorter chains on top) and spending
    at most ``seconds`` per leaf."""
    if budget < 1 or depth < 1 or batch < 1:
        raise ValueError(f"need budget, depth and batch >= 1, got {budget}, {depth}, {batch}")
    result = SearchResult(len(references))
    started = time.monotonic()
    scores = _Scores.of_grader(grader, executor)
    for key in sorted(grader.verifiers):
        leaf = _leaf(key, grader, references, scores, depth, seed)
        if isinstance(leaf, str):
            result.skipped.append(leaf)
            continue
        search_leaf(leaf, budget, time.monotonic() + seconds, batch, result)
    result.scored, result.seconds = scores.scored, time.monotonic() - started
    return result


def search_leaf(
    leaf: _Leaf, budget: int, deadline: float, batch: int, result: SearchResult
) -> None:
    """Search one leaf until its budget, its deadline or a stall; add its rows and
    witnesses to ``result``."""
    _search(leaf, budget, deadline, batch)
    result.rows += sorted(leaf.rows.values(), key=lambda r: r.relation)
    result.witnesses += leaf.witnesses.values()


def _search(leaf: _Leaf, budget: int, deadline: float, batch: int) -> None:
    spent, stalled = 0, 0
    while spent < budget and time.monotonic() < deadline and stalled < 20:
        new = _step(leaf, min(batch, budget - spent))
        spent += new
        stalled = 0 if new else stalled + 1
