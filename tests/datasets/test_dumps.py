"""Reading dumps: every bad-input case names file, line and field; good rows are kept."""

from __future__ import annotations

import json
import tracemalloc
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from rewardsmith.datasets.dumps import DumpError, DumpReader, RowValidationError

GOOD = {"id": "a", "prompt": "2+2?", "completion": "4", "reference": "4"}


def _jsonl(path: Path, lines: list[bytes | str | dict]) -> Path:
    with open(path, "wb") as handle:
        for line in lines:
            if isinstance(line, dict):
                line = json.dumps(line)
            handle.write((line.encode() if isinstance(line, str) else line) + b"\n")
    return path


@pytest.mark.parametrize(
    ("bad_line", "field", "problem"),
    [
        ('{"id": "b", "completion": ', "(line)", "malformed JSON"),
        ('{"id": "b"}', "completion", "Field required"),
        ('{"id": "b", "completion": 12}', "completion", ""),
        ('{"id": ["b"], "completion": "x"}', "id", ""),
        ('["not", "an", "object"]', "(row)", "expected an object"),
        (b'{"id": "b", "completion": "caf\xe9"}', "(line)", "not UTF-8: byte 0xe9"),
        ('{"id": "a", "completion": "dup"}', "id", "duplicate of the id on line 1"),
        ("[" * 50_000 + "]" * 50_000, "(line)", ""),
    ],
)
def test_bad_row_is_reported_with_file_line_field(
    tmp_path: Path, bad_line: str | bytes, field: str, problem: str
) -> None:
    path = _jsonl(tmp_path / "d.jsonl", [GOOD, bad_line, {**GOOD, "id": "c"}])
    reader = DumpReader(path, on_error="skip")
    assert [row.sample.id for row in reader] == ["a", "c"]
    [error] = reader.errors
    assert (error.line, error.field) == (2, field) and problem in error.problem
    assert str(error).startswith(f"{path}:2: {field}: ")


def test_stop_at_first_bad_row_keeps_the_rows_before(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "d.jsonl", [GOOD, "{oops", {**GOOD, "id": "c"}])
    seen = []
    with pytest.raises(RowValidationError, match=r"d.jsonl:2: \(line\): malformed JSON"):
        for row in DumpReader(path):
            seen.append(row.sample.id)
    assert seen == ["a"]


def test_empty_file_and_blank_lines(tmp_path: Path) -> None:
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    assert list(DumpReader(empty)) == []
    blanks = _jsonl(tmp_path / "b.jsonl", ["", GOOD, "   "])
    assert len(list(DumpReader(blanks))) == 1


def test_huge_line_is_skipped_without_reading_it_whole(tmp_path: Path) -> None:
    path = tmp_path / "huge.jsonl"
    with open(path, "wb") as handle:
        handle.write(json.dumps(GOOD).encode() + b"\n")
        handle.write(b'{"id": "h", "completion": "' + b"x" * (32 * 1024 * 1024) + b'"}\n')
        handle.write(json.dumps({**GOOD, "id": "c"}).encode() + b"\n")
    reader = DumpReader(path, on_error="skip", max_line_bytes=1024 * 1024)
    tracemalloc.start()
    ids = [row.sample.id for row in reader]
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert (
        ids == ["a", "c"] and reader.errors[0].line == 2 and "over the" in reader.errors[0].problem
    )
    assert peak < 8 * 1024 * 1024  # the 32 MB line was never held


def test_jsonl_streams_rather_than_loading(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    row = json.dumps({"completion": "y" * 2000})
    path.write_text((row + "\n") * 20_000)  # about 40 MB
    tracemalloc.start()
    count = sum(1 for _ in DumpReader(path))
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert count == 20_000
    # The id set for duplicate detection grows with the dump; the rows themselves do not.
    assert peak < path.stat().st_size / 8


def test_missing_ids_become_stable_file_line_ids(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "run1.jsonl", [{"completion": "x"}, {"completion": "y"}])
    assert [r.sample.id for r in DumpReader(path)] == ["run1:1", "run1:2"]


def test_parquet_round_trip_and_streaming(tmp_path: Path) -> None:
    path = tmp_path / "d.parquet"
    rows = [{**GOOD, "id": str(i)} for i in range(1500)]
    pq.write_table(pa.Table.from_pylist(rows), path, row_group_size=500)
    reader = DumpReader(path)
    assert [r.sample.id for r in reader][-1] == "1499" and reader.rows_read == 1500


def test_truncated_parquet_is_a_file_level_error(tmp_path: Path) -> None:
    path = tmp_path / "d.parquet"
    pq.write_table(pa.Table.from_pylist([GOOD] * 100), path)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(DumpError, match="not a readable Parquet file"):
        list(DumpReader(path))


def test_parquet_with_a_wrong_type_column(tmp_path: Path) -> None:
    path = tmp_path / "d.parquet"
    pq.write_table(pa.Table.from_pylist([{"id": "a", "completion": 5}]), path)
    reader = DumpReader(path, on_error="skip")
    assert list(reader) == [] and reader.errors[0].field == "completion"


def test_hf_dataset_saved_to_disk(tmp_path: Path) -> None:
    import datasets

    rows = {"prompt": ["q1", "q2"], "completion": ["a1", "a2"], "answer": ["a1", "b"]}
    datasets.Dataset.from_dict(rows).save_to_disk(str(tmp_path / "ds"))
    samples = [r.sample for r in DumpReader(tmp_path / "ds")]
    assert [s.reference for s in samples] == ["a1", "b"] and samples[0].id == "ds:1"
    datasets.DatasetDict(
        {"train": datasets.Dataset.from_dict(rows), "test": datasets.Dataset.from_dict(rows)}
    ).save_to_disk(str(tmp_path / "dd"))
    with pytest.raises(DumpError, match="several splits"):
        list(DumpReader(tmp_path / "dd"))
    assert len(list(DumpReader(tmp_path / "dd", split="test"))) == 2


@pytest.mark.parametrize("path_name", ["missing.jsonl", "notes.txt"])
def test_unreadable_paths(tmp_path: Path, path_name: str) -> None:
    (tmp_path / "notes.txt").write_text("hi")
    with pytest.raises(DumpError):
        DumpReader(tmp_path / path_name)


def test_a_byte_order_mark_on_line_one_is_not_part_of_the_row(tmp_path: Path) -> None:
    path = tmp_path / "bom.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps(GOOD).encode() + b"\r\n" + b'{"id": 2,}\r\n')
    reader = DumpReader(path, on_error="skip")
    assert [row.sample.id for row in reader] == ["a"]
    assert str(reader.errors[0]).endswith("at column 10")  # CRLF: the column is still right
    later = tmp_path / "later.jsonl"  # a mark anywhere else is a real fault in the line
    later.write_bytes(json.dumps(GOOD).encode() + b"\n\xef\xbb\xbf" + json.dumps(GOOD).encode())
    reader = DumpReader(later, on_error="skip")
    assert len(list(reader)) == 1 and "Unexpected UTF-8 BOM" in reader.errors[0].problem


_ROW = json.dumps({"id": "b", "completion": "x", "reference": "y"})

# Bad lines as tools really write them, and the 1-based column of the character at fault
# (None: the line ends too soon, so the decoder points just past its end).
REAL_BAD_LINES = [
    (_ROW[:26], None),  # a writer killed mid-line
    (_ROW[:27], 27),  # killed inside a string: the decoder names where it opens
    (_ROW[:-1], None),  # the closing brace lost
    (str({"id": "b", "completion": "x"}), 2),  # Python's repr written instead of JSON
    (_ROW[:-1] + ', "extra": 1,}', len(_ROW) + 13),  # a trailing comma from hand editing
    (_ROW + _ROW, len(_ROW) + 1),  # two appends racing: two objects on one line
    ('{"id": "é", "completion": x}', 27),  # columns count characters, not bytes
    ('{"id": "a\tb", "completion": "x"}', 10),  # a raw tab inside a string
    ('{"id": "b", "completion": "unterminated}', 27),  # the string never closes
    ('{"id": "b" "completion": "x"}', 12),  # a missing comma
]


@pytest.mark.parametrize(("line", "column"), REAL_BAD_LINES)
def test_json_errors_name_the_column_the_decoder_names(
    tmp_path: Path, line: str, column: int | None
) -> None:
    expected = len(line) + 1 if column is None else column
    with pytest.raises(json.JSONDecodeError) as decoded:
        json.loads(line)
    assert decoded.value.colno == expected  # Python's decoder on the line alone agrees
    path = _jsonl(tmp_path / "d.jsonl", [GOOD, line])
    reader = DumpReader(path, on_error="skip")
    list(reader)
    assert reader.errors[0].problem.endswith(f"at column {expected}"), reader.errors[0]


def test_a_dataset_dict_names_the_split_flag(tmp_path: Path) -> None:
    import datasets

    rows = {"completion": ["a"]}
    folder = tmp_path / "dd"
    datasets.DatasetDict(
        {"train": datasets.Dataset.from_dict(rows), "test": datasets.Dataset.from_dict(rows)}
    ).save_to_disk(str(folder))
    with pytest.raises(DumpError, match=r"several splits \['train', 'test'\]; .* --split"):
        list(DumpReader(folder))
    with pytest.raises(DumpError, match="no split 'dev'"):
        list(DumpReader(folder, split="dev"))
