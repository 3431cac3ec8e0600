"""Scored output: resume without loss or duplication, a torn last line dropped."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from rewardsmith.datasets.scored import ScoredWriter


def test_jsonl_resume_skips_done_ids_and_cuts_a_torn_line(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    with ScoredWriter(out) as writer:
        writer.write({"id": "a", "v": 1})
        writer.write({"id": "b", "v": 2})
    with open(out, "ab") as handle:  # what a process killed mid-write leaves
        handle.write(b'{"id": "c", "v"')
    with ScoredWriter(out) as writer:
        assert writer.done == {"a", "b"}
        writer.write({"id": "c", "v": 3})
        with pytest.raises(ValueError, match="already"):
            writer.write({"id": "a", "v": 9})
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    assert [r["id"] for r in rows] == ["a", "b", "c"]


def test_no_resume_starts_over(tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    with ScoredWriter(out) as writer:
        writer.write({"id": "a"})
    with ScoredWriter(out, resume=False) as writer:
        assert writer.done == set()
        writer.write({"id": "a"})
    assert len(out.read_text().splitlines()) == 1


def test_parquet_parts_survive_an_interruption_and_combine(tmp_path: Path) -> None:
    out = tmp_path / "out.parquet"
    writer = ScoredWriter(out, part_rows=2)
    for i in range(5):
        writer.write({"id": str(i), "rewardsmith": {"verdicts": {"x": {"score": i / 10}}}})
    # Simulate a crash: no close(), so the buffered fifth row is lost but parts remain.
    del writer
    resumed = ScoredWriter(out, part_rows=2)
    assert resumed.done == {"0", "1", "2", "3"}
    resumed.write({"id": "4", "rewardsmith": {"verdicts": {}}})
    resumed.close()
    table = pq.read_table(out)
    assert sorted(table["id"].to_pylist()) == ["0", "1", "2", "3", "4"]
    assert json.loads(table["rewardsmith"][1].as_py())["verdicts"]["x"]["score"] == 0.1
    assert not out.with_name("out.parquet.parts").exists()
