"""One path: the same dump and spec through every door gives the same rewards.

`rewardsmith score` (chunked, and resumed after a stop), the server's ``/score`` and
``/get_reward``, the trainer's reward source, `TRLReward` and veRL's ``compute_score``
all hold a `Scorer`. The spec has group and running normalisation, so the rewards depend
on the chunks and on the state carried from chunk to chunk; every door gets the same
chunks in the same order and, half way, is rebuilt from the saved state (a resume).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from fastapi.testclient import TestClient

from rewardsmith.cli.server import ServerConfig, create_app
from rewardsmith.graders import Scorer, build
from rewardsmith.graders.integrations import TRLReward, VerlScore
from rewardsmith.trainer.rewards import GraderReward

SPEC = """
grader:
  chain:
    - weighted:
        components:
          correct: exact_match
          tagged: {verify: format, patterns: ["^A:"]}
        weights: {correct: 0.7, tagged: 0.3}
    - group_normalize: {by: prompt, scale: mean_std}
    - running_normalize: {window: 20}
"""
CHUNK = 12
ROWS = [
    {
        "id": f"r{i}",
        "prompt": f"question {i // 4}? ",
        "completion": ["A: paris", "paris", "A: lyon", "rome"][(i * 7 + i // 4) % 4],
        "reference": "A: paris",
    }
    for i in range(48)
]
Door = Callable[[list[dict[str, Any]]], list[float | None]]


def _chunks() -> list[list[dict[str, Any]]]:
    return [ROWS[i : i + CHUNK] for i in range(0, len(ROWS), CHUNK)]


def _through(make: Callable[[dict[str, Any] | None], tuple[Door, Callable[[], dict]]]) -> list:
    """Score the chunks through a door built by ``make(state)``; rebuild it half way from
    the state the first one saved."""
    values: list[float | None] = []
    chunks = _chunks()
    door, state = make(None)
    for chunk in chunks[:2]:
        values += door(chunk)
    door, _ = make(state())
    for chunk in chunks[2:]:
        values += door(chunk)
    return values


def _scorer(state: dict[str, Any] | None) -> Scorer:
    return Scorer(SPEC, backend="inline", state=state)


def _cli(tmp_path: Path) -> list[float | None]:
    dump, out = tmp_path / "dump.jsonl", tmp_path / "scored.jsonl"
    dump.write_text("".join(json.dumps(row) + "\n" for row in ROWS))
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC)
    command = [sys.executable, "-m", "rewardsmith.cli.main", "score", str(dump),
               "--spec", str(spec), "-o", str(out), "--backend", "inline",
               "--chunk-size", str(CHUNK)]  # fmt: skip
    first = subprocess.run([*command, "--limit", str(2 * CHUNK)], capture_output=True, timeout=300)
    assert first.returncode == 0, first.stderr
    rest = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert rest.returncode == 0 and "24 scored, 24 kept from before" in rest.stdout, rest
    by_id = {
        row["id"]: row["rewardsmith"]["value"]
        for row in map(json.loads, out.read_text().splitlines())
    }
    return [by_id[row["id"]] for row in ROWS]


def _server(endpoint: str) -> Callable[[dict[str, Any] | None], tuple[Door, Callable[[], dict]]]:
    def make(state: dict[str, Any] | None) -> tuple[Door, Callable[[], dict]]:
        scorer = _scorer(state)
        client = TestClient(create_app(scorer, ServerConfig(lanes=1, backend="inline")))
        client.__enter__()

        def door(chunk: list[dict[str, Any]]) -> list[float | None]:
            if endpoint == "/score":
                reply = client.post("/score", json={"samples": chunk}).json()
                return [r["value"] for r in reply["rewards"]]
            body = {
                "query": [r["prompt"] + r["completion"] for r in chunk],
                "prompts": [r["prompt"] for r in chunk],
                "labels": [r["reference"] for r in chunk],
            }
            return client.post("/get_reward", json=body).json()["rewards"]

        def saved() -> dict[str, Any]:
            snapshot = scorer.state
            client.__exit__(None, None, None)
            return snapshot

        return door, saved

    return make


def _trainer(state: dict[str, Any] | None) -> tuple[Door, Callable[[], dict]]:
    from rewardsmith.verifiers.types import Sample

    source = GraderReward(_scorer(state))
    return (lambda chunk: source.score([Sample(**r) for r in chunk]).values), (lambda: source.state)


def _trl(state: dict[str, Any] | None) -> tuple[Door, Callable[[], dict]]:
    reward = TRLReward(_scorer(state))

    def door(chunk: list[dict[str, Any]]) -> list[float | None]:
        return reward(
            prompts=[r["prompt"] for r in chunk],
            completions=[r["completion"] for r in chunk],
            reference=[r["reference"] for r in chunk],
        )

    return door, lambda: reward.scorer.state


def _verl(state: dict[str, Any] | None) -> tuple[Door, Callable[[], dict]]:
    compute_score = VerlScore(_scorer(state))

    def door(chunk: list[dict[str, Any]]) -> list[float | None]:
        # veRL's batch reward manager convention; the prompt travels in extra_info.
        results = compute_score(
            data_sources=[None] * len(chunk),
            solution_strs=[r["completion"] for r in chunk],
            ground_truths=[r["reference"] for r in chunk],
            extra_infos=[{"prompt": r["prompt"]} for r in chunk],
        )
        return [r["score"] for r in results]

    return door, lambda: compute_score.scorer.state


def test_every_door_gives_the_same_rewards(tmp_path: Path) -> None:
    offline = _cli(tmp_path)
    assert len(set(offline)) > 4  # the normalisation makes them differ
    doors = {
        "server /score": _through(_server("/score")),
        "server /get_reward": _through(_server("/get_reward")),
        "trainer reward source": _through(_trainer),
        "TRLReward": _through(_trl),
        "veRL compute_score": _through(_verl),
    }
    for name, values in doors.items():
        assert values == offline, name


def test_without_the_saved_state_a_resume_would_differ() -> None:
    """The check above can fail: dropping the state at the resume changes the rewards."""
    from rewardsmith.verifiers.types import Sample

    chunks = _chunks()
    kept, dropped = _scorer(None), _scorer(None)
    for chunk in chunks[:2]:
        kept.score([Sample(**r) for r in chunk])
        dropped.score([Sample(**r) for r in chunk])
    dropped = _scorer(None)
    later = [Sample(**r) for r in chunks[2]]
    assert [r.value for r in kept.score(later)] != [r.value for r in dropped.score(later)]
    assert build(SPEC) == kept.grader


def test_nothing_but_the_scorer_calls_a_graders_halves_or_starts_an_executor() -> None:
    """The doors hold a Scorer; only it (and the grader's one-off shortcuts, which make one)
    calls ``jobs``/``combine`` or starts an executor for rewards."""
    import re

    root = Path(__file__).resolve().parents[1]
    allowed = {
        "graders/scorer.py",  # the one object
        "graders/grader.py",  # defines the halves; its shortcuts open a one-off Scorer
        "graders/executor.py",
        "cli/audit.py",  # the exploits engineer's; moved onto the Scorer at merge
    }
    pattern = re.compile(r"\.(jobs|combine)\(|\bExecutor\(")
    offenders = []
    for folder in ("graders", "cli", "trainer", "datasets", "reward_models", "environments"):
        for path in sorted((root / folder).rglob("*.py")):
            relative = path.relative_to(root).as_posix()
            if relative in allowed:
                continue
            for n, line in enumerate(path.read_text().splitlines(), start=1):
                code = line.split("#")[0]
                if pattern.search(code) and ">>>" not in line and "..." not in line[:8]:
                    offenders.append(f"{relative}:{n}: {line.strip()}")
    assert offenders == []
