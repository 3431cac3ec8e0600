"""Fault injection for `rewardsmith score`: kill -9 at random points, a full disk and a
read-only file system (a small tmpfs mounted for the test), a second writer of the same
output, damaged lines and infrastructure-failure rows on resume. (Slow and vanishing HTTP
clients are in test_server_slow.)

Every fault must end in one clear line naming the file, with the rows written before it
intact: resuming gives every row once, with the values of an uninterrupted run.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from rewardsmith.datasets.scored import ScoredWriter
from tests.cli.kill_trials import compare, rows, write_dump
from tests.cli.test_score import CLI, WIDE

KILL_TRIALS = Path(__file__).with_name("kill_trials.py")


def _score(dump: Path, out: Path, *extra: object) -> subprocess.CompletedProcess[str]:
    args = ["score", dump, "-o", out, "-v", "exact_match", "--backend", "inline", *extra]
    return subprocess.run(
        [*CLI, *map(str, args)], capture_output=True, text=True, timeout=300, env=WIDE
    )


def _one_clear_line(done: subprocess.CompletedProcess[str], *parts: str) -> None:
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Traceback" not in done.stderr, done.stderr
    errors = [line for line in done.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, done.stderr
    for part in parts:
        assert part in errors[0], errors[0]


@pytest.fixture
def dump(tmp_path: Path) -> Path:
    path = tmp_path / "dump.jsonl"
    write_dump(path)
    return path


@pytest.fixture
def reference(tmp_path: Path, dump: Path) -> dict[str, dict[str, Any]]:
    out = tmp_path / "reference.jsonl"
    assert _score(dump, out).returncode == 0
    return {r["id"]: r for r in rows(out)}


@pytest.mark.slow
def test_kill_9_at_50_random_points_loses_duplicates_and_stales_nothing(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(KILL_TRIALS), str(tmp_path), "50", "34"],
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    trials = json.loads(done.stdout)["trials"]
    assert len(trials) == 50 and sum(t["killed"] for t in trials) >= 25
    bad = [t for t in trials if t["exit"] != 0 or t["lost"] or t["duplicated"] or t["differ"]]
    assert bad == []


def _in_a_small_tmpfs(script: str, size: str = "48k") -> subprocess.CompletedProcess[str]:
    """`script` (bash) in a private mount namespace with a tmpfs of `size` at $SMALL."""
    if os.geteuid() != 0 or shutil.which("unshare") is None:
        pytest.skip("mounting a small tmpfs for the test needs root and unshare(1)")
    prelude = "SMALL=$(mktemp -d) && mount -t tmpfs -o size=" + size + ' tmpfs "$SMALL" && '
    return subprocess.run(
        ["unshare", "--mount", "--propagation", "private", "bash", "-c", prelude + script],
        capture_output=True,
        text=True,
        timeout=300,
        env=WIDE,
        check=False,
    )


@pytest.mark.parametrize(
    ("size", "chunk"), [("48k", 7), ("12k", 256)], ids=["after-some-chunks", "in-the-first"]
)
def test_a_full_disk_is_one_line_and_the_rows_so_far_resume(
    tmp_path: Path, dump: Path, reference: dict[str, dict[str, Any]], size: str, chunk: int
) -> None:
    saved = tmp_path / "saved"
    saved.mkdir()
    command = " ".join([*CLI, "score", str(dump), "-o", '"$SMALL/out.jsonl"', "-v"])
    command += f" exact_match --backend inline --chunk-size {chunk}"
    done = _in_a_small_tmpfs(
        f'{command}; echo "exit=$?" >&2; cp "$SMALL"/out.jsonl* {saved}/; true', size
    )
    done.returncode = int(done.stderr.rsplit("exit=", 1)[1].split()[0])
    _one_clear_line(done, "out.jsonl", "No space left on device", "run the same command again")
    out = saved / "out.jsonl"
    partial = out.read_bytes()
    assert partial == b"" or partial.endswith(b"\n")
    assert len(rows(out)) < len(reference)
    assert out.with_name("out.jsonl.run.json").exists()  # recorded before the first row
    resumed = _score(dump, out)  # no --resume-anyway needed
    assert resumed.returncode == 0, resumed.stderr
    assert compare(rows(out), reference) == {"lost": [], "duplicated": 0, "differ": []}


def test_a_read_only_output_is_one_line(tmp_path: Path, dump: Path) -> None:
    command = " ".join([*CLI, "score", str(dump), "-o", '"$SMALL/out.jsonl"', "-v"])
    done = _in_a_small_tmpfs(f'mount -o remount,ro "$SMALL" && {command} exact_match')
    _one_clear_line(done, "out.jsonl", "Read-only file system")


def test_a_second_writer_fails_at_once_and_rescore_unlinks_nothing(
    tmp_path: Path, dump: Path
) -> None:
    out = tmp_path / "out.jsonl"
    with ScoredWriter(out) as holder:  # another process: this one, mid-run
        holder.commit({"fingerprint": {}})
        holder.write({"id": "held"})
        for extra in ((), ("--rescore",)):
            second = _score(dump, out, *extra)
            _one_clear_line(second, str(out), "another run is writing it", str(os.getpid()))
        assert out.exists() and [r["id"] for r in rows(out)] == ["held"]
        holder.write({"id": "held-2"})
    assert [r["id"] for r in rows(out)] == ["held", "held-2"]


def test_a_damaged_middle_line_names_file_line_and_fix(tmp_path: Path, dump: Path) -> None:
    out = tmp_path / "out.jsonl"
    assert _score(dump, out, "--limit", "20").returncode == 0
    lines = out.read_text().splitlines(keepends=True)
    lines[6] = lines[6][:40] + "\n"
    out.write_text("".join(lines))
    done = _score(dump, out)
    _one_clear_line(done, f"{out}:7: not a JSON row", "head -n 6", "--rescore")


def test_a_damaged_last_line_is_dropped_and_rescored(
    tmp_path: Path, dump: Path, reference: dict[str, dict[str, Any]]
) -> None:
    out = tmp_path / "out.jsonl"
    assert _score(dump, out, "--limit", "20").returncode == 0
    lines = out.read_text().splitlines(keepends=True)
    lines[-1] = lines[-1][:40] + "\n"
    out.write_text("".join(lines))
    done = _score(dump, out)
    assert done.returncode == 0 and "dropped a damaged last line" in done.stderr
    assert compare(rows(out), reference) == {"lost": [], "duplicated": 0, "differ": []}


def test_infrastructure_failures_are_rescored_unless_kept(
    tmp_path: Path, dump: Path, reference: dict[str, dict[str, Any]]
) -> None:
    out = tmp_path / "out.jsonl"
    assert _score(dump, out).returncode == 0

    def fail_some() -> None:  # as a run whose sandbox could not start wrote them
        damaged = rows(out)
        for row in damaged[::10]:
            row["rewardsmith"].update(value=None, infra_failure="crash", reason="no sandbox")
        out.write_text("".join(json.dumps(r) + "\n" for r in damaged))
        record = out.with_name(out.name + ".run.json")  # committed, as that run had
        record.write_text(
            json.dumps({**json.loads(record.read_text()), "bytes": out.stat().st_size})
        )

    fail_some()
    kept = _score(dump, out, "--keep-infra-failures")
    assert kept.returncode == 0 and "0 scored" in kept.stdout
    assert sum(r["rewardsmith"]["infra_failure"] is not None for r in rows(out)) == 20
    again = _score(dump, out)
    assert again.returncode == 0 and "20 scored, 180 kept from before" in again.stdout
    assert "20 rows an infrastructure failure decided are scored again" in again.stderr
    assert compare(rows(out), reference) == {"lost": [], "duplicated": 0, "differ": []}


@pytest.mark.slow
def test_two_score_runs_on_one_output_never_double_a_row(tmp_path: Path) -> None:
    dump = tmp_path / "big.jsonl"
    with dump.open("w") as handle:
        for i in range(3000):
            row = {"id": f"b{i:05d}", "prompt": "p", "completion": "yes", "reference": "yes"}
            handle.write(json.dumps(row) + "\n")
    out = tmp_path / "out.jsonl"
    args = [*CLI, *map(str, ["score", dump, "-o", out, "-v", "exact_match", "--backend"])]
    args += ["inline", "--chunk-size", "7"]
    # Started together: each imports for a second or more, then one takes the output.
    runs = [
        subprocess.Popen([*args, *extra], stderr=subprocess.PIPE, text=True, env=WIDE)
        for extra in ((), ("--rescore",))
    ]
    try:
        ended = [(run.wait(timeout=600), run.stderr.read()) for run in runs]  # type: ignore[union-attr]
    finally:
        for run in runs:
            if run.poll() is None:
                run.kill()
    for code, stderr in ended:
        if code != 0:  # the one that came second while the other held the output
            assert code == 1 and "another run is writing it" in stderr, stderr
            assert "Traceback" not in stderr
    assert sum(code == 0 for code, _ in ended) >= 1
    ids = [r["id"] for r in rows(out)]
    assert len(ids) == len(set(ids)) == 3000
