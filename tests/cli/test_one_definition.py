"""Issue 16's case: the same four verdicts (a pass, a fail, a skip, an infrastructure
crash) gave a pass rate of 0.5, 0.333 and 0.25 in three places. Every door now reads one
definition (`rewardsmith.graders.stats`) and reports the same numbers: pass rate 0.5 (the
skip and the crash are not decided), mean reward 0.5 over the two rewarded samples."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from typer.testing import CliRunner

from rewardsmith.cli.diff import compare_runs
from rewardsmith.cli.main import app
from rewardsmith.cli.report import build_report
from rewardsmith.cli.server import ServerConfig, create_app
from rewardsmith.graders import Scorer, batch_stats, build
from rewardsmith.verifiers.types import Sample
from tests.cli.report_cases import install_test_verifiers, write_jsonl

ROWS = [{"id": k, "completion": "x", "reference": k} for k in ("pass", "fail", "skip", "crash")]
OUTCOMES = {"rewarded": 2, "not_applicable": 1, "infra_failure": 1}


@pytest.fixture
def scored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, str, dict]:
    install_test_verifiers(tmp_path / "plugin", monkeypatch)
    monkeypatch.setenv("COLUMNS", "200")
    dump = write_jsonl(tmp_path / "four.jsonl", ROWS)
    out = tmp_path / "scored.jsonl"
    args = ["score", str(dump), "-v", "four_way", "-o", str(out), "--backend", "inline"]
    table = CliRunner().invoke(app, args)
    assert table.exit_code == 0, table.output
    as_json = CliRunner().invoke(app, [*args, "--rescore", "--json"])
    assert as_json.exit_code == 0, as_json.output
    return out, table.output, json.loads(as_json.output)


def test_every_door_reports_the_same_numbers(scored: tuple[Path, str, dict]) -> None:
    out, table, summary = scored
    # The score table.
    row = next(line for line in table.splitlines() if "four_way" in line and "skip 1" in line)
    assert re.search(r"four_way\W+0\.500\W+2\b", row), row  # pass rate, decided
    assert re.search(r"reward\W+2\W+0\.500", table)
    # score --json.
    verifier = summary["counts"]["verifiers"]["four_way"]
    assert (verifier["pass_rate"], summary["reward"]["mean"]) == (0.5, 0.5)
    assert summary["counts"]["outcomes"] == OUTCOMES
    # The report.
    built = build_report(out, "four")
    assert built.stats.pass_rate("four_way") == 0.5 and built.stats.reward.mean == 0.5
    assert "<td>four_way</td>" in built.html
    assert re.search(r"<td>four_way</td>.*?<td class=\"num\">0\.500</td>", built.html)
    assert "mean reward 0.5000" in built.html
    # diff (a run against itself).
    compared = compare_runs(out, out)
    assert compared.pass_rates["four_way"] == (0.5, 0.5)
    assert compared.means["reward"] == (0.5, 0.5)
    text = CliRunner().invoke(app, ["diff", str(out), str(out)]).output
    assert re.search(r"pass rate four_way\W+0\.5000\W+0\.5000", text), text
    # The Scorer itself, and batch_stats.
    samples = [Sample.model_validate(r) for r in ROWS]
    with Scorer(["four_way"], backend="inline") as scorer:
        rewards = scorer.score(samples)
        assert scorer.stats.pass_rate("four_way") == 0.5
        assert scorer.counts["outcomes"] == OUTCOMES
    assert batch_stats(rewards)["verifiers"]["four_way"]["pass_rate"] == 0.5
    # The server's /metrics.
    server = create_app(build(["four_way"]), ServerConfig(backend="inline", lanes=1))
    with TestClient(server) as client:
        assert client.post("/score", json={"samples": ROWS}).status_code == 200
        metrics = client.get("/metrics").text
    assert 'rewardsmith_pass_rate{verifier="four_way"} 0.5\n' in metrics
    assert "rewardsmith_reward_mean 0.5\n" in metrics
    assert 'rewardsmith_samples_by_outcome_total{outcome="not_applicable"} 1\n' in metrics
    assert 'rewardsmith_verdicts_total{verifier="four_way",status="skip"} 1\n' in metrics


def test_metrics_label_values_cannot_forge_lines(tmp_path: Path) -> None:
    from rewardsmith.cli.metrics import ServerMetrics

    metrics = ServerMetrics()
    metrics.observe('/score"} 1\nrewardsmith_fake_total 999\n#', 200, 0.01)
    text = metrics.render()
    assert "\nrewardsmith_fake_total" not in text
    assert r'endpoint="/score\"} 1\nrewardsmith_fake_total 999\n#"' in text
