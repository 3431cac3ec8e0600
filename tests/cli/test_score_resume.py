"""`rewardsmith score` refuses to mix rewards from two specs, and says what changed."""

from __future__ import annotations

import json
from pathlib import Path

from rewardsmith.cli.runs import RunReader
from tests.cli.test_score import DEMO, _run


def _verdict_keys(path: Path) -> set[str]:
    return {
        k
        for line in path.read_text().splitlines()
        for k in json.loads(line)["rewardsmith"]["verdicts"]
    }


def test_a_changed_spec_refuses_to_resume_and_names_the_change(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    assert _run("score", DEMO, "-v", "exact_match", "-o", out).returncode == 0
    stale = _run("score", DEMO, "-v", "format:required_tags=answer", "-o", out)
    assert stale.returncode == 1
    assert "verifier 'exact_match' removed" in stale.stderr
    assert "verifier 'format' added" in stale.stderr and "--rescore" in stale.stderr
    assert _verdict_keys(out) == {"exact_match"}  # nothing was mixed in
    fresh = _run("score", DEMO, "-v", "format:required_tags=answer", "-o", out, "--rescore")
    assert fresh.returncode == 0 and "24 scored, 0 kept" in fresh.stdout
    assert _verdict_keys(out) == {"format"}


def test_a_changed_setting_is_named_with_both_values(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    assert _run("score", DEMO, "-v", "format:required_tags=answer", "-o", out).returncode == 0
    changed = _run("score", DEMO, "-v", "format:required_tags=think", "-o", out)
    assert changed.returncode == 1
    assert "settings.required_tags ['answer'] -> ['think']" in changed.stderr


def test_the_same_spec_resumes_and_resume_anyway_keeps_rows(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    assert _run("score", DEMO, "-v", "exact_match", "-o", out, "--limit", "10").returncode == 0
    again = _run("score", DEMO, "-v", "exact_match", "-o", out)
    assert again.returncode == 0 and "14 scored, 10 kept from before" in again.stdout
    anyway = _run("score", DEMO, "-v", "format:required_tags=answer", "-o", out, "--resume-anyway")
    assert anyway.returncode == 0 and "0 scored, 24 kept from before" in anyway.stdout


def test_rows_without_a_run_record_are_not_trusted(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    assert _run("score", DEMO, "-v", "exact_match", "-o", out).returncode == 0
    out.with_name("out.jsonl.run.json").unlink()
    refused = _run("score", DEMO, "-v", "exact_match", "-o", out)
    assert refused.returncode == 1 and "no run record" in refused.stderr


def test_json_output_is_json_lines_that_report_reads(tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    assert _run("score", DEMO, "-v", "exact_match", "-o", out).returncode == 0
    assert out.read_bytes()[:1] == b"{"  # JSON text, not Parquet's PAR1
    reader = RunReader(out)
    assert len(list(reader)) == 24 and reader.bad_rows == 0
    assert _run("report", out, "-o", tmp_path / "r.html").returncode == 0


def test_an_unknown_output_suffix_is_refused(tmp_path: Path) -> None:
    result = _run("score", DEMO, "-v", "exact_match", "-o", tmp_path / "out.csv")
    assert result.returncode == 1 and "unknown dump format '.csv'" in result.stderr


def test_score_json_prints_a_machine_readable_summary(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    result = _run("score", DEMO, "-v", "exact_match", "-v", "format:required_tags=answer",
                  "-o", out, "--json")  # fmt: skip
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["scored"] == 24 and summary["kept"] == 0
    assert summary["reward"]["mean"] == 0.5
    assert summary["counts"]["outcomes"] == {"rewarded": 24}
    assert summary["counts"]["verifiers"]["exact_match"]["statuses"] == {"fail": 16, "pass": 8}
    row = json.loads(out.read_text().splitlines()[0])
    assert row["rewardsmith"]["run"] == summary["fingerprint"]
