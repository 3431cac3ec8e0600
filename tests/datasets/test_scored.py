"""Scored output: resume without loss or duplication, a torn last line dropped."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from rewardsmith.datasets.scored import (
    SCORE_COLUMN,
    ScoredWriteError,
    ScoredWriter,
    is_infra_failure_row,
)


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
    # A crash: no close(), so the buffered fifth row is lost but parts remain; the kernel
    # closes the dead process's descriptors (its lock with them), as _release does.
    writer._release()
    resumed = ScoredWriter(out, part_rows=2)
    assert resumed.done == {"0", "1", "2", "3"}
    resumed.write({"id": "4", "rewardsmith": {"verdicts": {}}})
    resumed.close()
    table = pq.read_table(out)
    assert sorted(table["id"].to_pylist()) == ["0", "1", "2", "3", "4"]
    assert json.loads(table["rewardsmith"][1].as_py())["verdicts"]["x"]["score"] == 0.1
    assert not out.with_name("out.parquet.parts").exists()


@pytest.mark.parametrize("name", ["out.jsonl", "out.parquet"])
def test_rows_after_the_last_commit_are_dropped_on_resume(tmp_path: Path, name: str) -> None:
    """What a killed run leaves mid-chunk is rescored, with the state of the last commit."""
    out = tmp_path / name
    writer = ScoredWriter(out, part_rows=100)
    for i in range(3):
        writer.write({"id": str(i), "rewardsmith": {"value": i}})
    writer.commit({"state": {"after": 3}})
    for i in range(3, 5):  # the chunk being written when the process was killed
        writer.write({"id": str(i), "rewardsmith": {"value": i}})
    writer.abandon()
    resumed = ScoredWriter(out, part_rows=100)
    assert resumed.done == {"0", "1", "2"} and resumed.run == {"state": {"after": 3}}
    for i in range(3, 5):
        resumed.write({"id": str(i), "rewardsmith": {"value": i}})
    resumed.commit({"state": {"after": 5}})
    resumed.close()
    assert ScoredWriter(out).done == {"0", "1", "2", "3", "4"}
    assert json.loads(out.with_name(name + ".run.json").read_text())["record"]["state"] == {
        "after": 5
    }


@pytest.mark.parametrize(("name", "kind"), [("a.jsonl", "jsonl"), ("a.json", "jsonl"),
                                            ("a.ndjson", "jsonl"), ("a.parquet", "parquet"),
                                            ("a.pq", "parquet")])  # fmt: skip
def test_the_output_format_is_the_one_the_reader_reads(tmp_path: Path, name: str, kind: str):
    from rewardsmith.datasets.dumps import DumpReader
    from rewardsmith.datasets.scored import scored_format

    assert scored_format(tmp_path / name) == kind
    with ScoredWriter(tmp_path / name) as writer:
        writer.write({"id": "1", "completion": "x"})
    assert DumpReader(tmp_path / name).format == kind
    assert [row.sample.id for row in DumpReader(tmp_path / name)] == ["1"]


def test_a_folder_or_unknown_suffix_is_refused(tmp_path: Path) -> None:
    from rewardsmith.datasets.dumps import DumpError

    with pytest.raises(DumpError, match="unknown dump format"):
        ScoredWriter(tmp_path / "out.csv")
    with pytest.raises(DumpError, match="folder"):
        ScoredWriter(tmp_path)


# ---------------------------------------------------------------- safety (issue 34)


def test_a_second_writer_of_a_held_output_fails_at_once_and_touches_nothing(
    tmp_path: Path,
) -> None:
    out = tmp_path / "out.jsonl"
    first = ScoredWriter(out)
    first.write({"id": "a"})
    for resume in (True, False):  # False is --rescore: it must not unlink the held file
        with pytest.raises(ScoredWriteError, match="another run is writing it"):
            ScoredWriter(out, resume=resume)
    first.write({"id": "b"})
    first.close()
    assert [json.loads(x)["id"] for x in out.read_text().splitlines()] == ["a", "b"]
    with ScoredWriter(out) as again:  # released on close
        assert again.done == {"a", "b"}


def test_short_writes_are_continued_and_lines_stay_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    real_write = os.write
    monkeypatch.setattr(os, "write", lambda fd, data: real_write(fd, bytes(data[:7])))
    out = tmp_path / "out.jsonl"
    with ScoredWriter(out) as writer:
        for i in range(20):
            writer.write({"id": str(i), "text": "x" * i})
    monkeypatch.undo()
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert [r["id"] for r in rows] == [str(i) for i in range(20)]


def test_a_failed_write_cuts_back_to_the_last_whole_line_and_says_which_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno
    import os

    out = tmp_path / "out.jsonl"
    writer = ScoredWriter(out)
    writer.write({"id": "kept"})
    writer.commit({"state": {}})
    real_write = os.write

    def half_then_full(fd: int, data: bytes) -> int:  # what a filling disk does
        if len(data) > 10:
            return real_write(fd, bytes(data[: len(data) // 2]))
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr(os, "write", half_then_full)
    with pytest.raises(ScoredWriteError) as caught:
        writer.write({"id": "lost", "text": "y" * 100})
    monkeypatch.undo()
    writer.abandon()
    message = str(caught.value)
    assert str(out) in message and "No space left on device" in message
    assert "1 rows written before it are intact" in message and "\n" not in message
    assert out.read_bytes().endswith(b"\n")
    with ScoredWriter(out) as resumed:
        assert resumed.done == {"kept"}


@pytest.mark.parametrize("where", ["middle", "last"])
def test_a_damaged_line_with_its_newline(tmp_path: Path, where: str) -> None:
    out = tmp_path / "out.jsonl"
    with ScoredWriter(out) as writer:
        for i in range(4):
            writer.write({"id": str(i)})
    lines = out.read_text().splitlines(keepends=True)
    number = 2 if where == "middle" else 4
    lines[number - 1] = '{"id": "2", "trunc\n'
    out.write_text("".join(lines))
    if where == "middle":
        with pytest.raises(ScoredWriteError) as caught:
            ScoredWriter(out)
        message = str(caught.value)
        assert message.startswith(f"{out}:2: not a JSON row") and "head -n 1" in message
        assert "--rescore" in message
    else:
        with ScoredWriter(out) as resumed:
            assert resumed.done == {"0", "1", "2"}
            assert resumed.dropped_tail is not None and resumed.dropped_tail.startswith(f"{out}:4:")
        assert len(out.read_text().splitlines()) == 3


@pytest.mark.parametrize("name", ["out.jsonl", "out.parquet"])
def test_rows_redo_wants_are_removed_to_be_scored_again(tmp_path: Path, name: str) -> None:
    out = tmp_path / name
    with ScoredWriter(out) as writer:
        writer.commit({"state": {}})
        for i in range(5):
            failed = {"infra_failure": "crash"} if i % 2 else {}
            writer.write({"id": str(i), SCORE_COLUMN: {"value": None, **failed}})
    with ScoredWriter(out, redo=is_infra_failure_row) as resumed:
        assert resumed.done == {"0", "2", "4"} and resumed.redone == 2
        for i in (1, 3):
            resumed.write({"id": str(i), SCORE_COLUMN: {"value": 1.0}})
    with ScoredWriter(out, redo=is_infra_failure_row) as final:
        assert final.done == {str(i) for i in range(5)} and final.redone == 0
