"""``rewardsmith doctor``: the machine's facts, the mode and languages, and its exit code."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from rewardsmith.cli.main import app
from rewardsmith.verifiers.code.languages import LANGUAGES
from rewardsmith.verifiers.sandbox import modes, run_python

pytestmark = pytest.mark.sandbox


def _doctor(*args: str, env: dict[str, str] | None = None) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["doctor", *args], env=env)
    return result.exit_code, result.output


def test_json_names_the_mode_the_sandbox_really_uses() -> None:
    code, out = _doctor("--json")
    report = json.loads(out)
    assert code == 0 and report["check"]["ok"] and report["check"]["seccomp_in_jail"]
    assert report["mode"] == run_python("pass").mode
    assert report["not_covered"] == list(modes.NOT_COVERED[modes.Mode(report["mode"])])
    assert report["machine"]["root"] is modes.probe().root
    assert {row["language"] for row in report["languages"]} == set(LANGUAGES)
    python = next(r for r in report["languages"] if r["language"] == "python")
    assert python["available"] and python["version"].startswith("Python 3")


def test_the_tables_show_the_mode_and_every_language() -> None:
    code, out = _doctor()
    assert code == 0 and "mode" in out and run_python("pass").mode in out  # type: ignore[operator]
    for name in LANGUAGES:
        assert name in out


def test_run_builds_and_runs_each_available_language_in_the_jail(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Two languages, one compiled: test_languages_anywhere builds every language already.
    from rewardsmith.verifiers.code import languages

    monkeypatch.setattr(languages, "LANGUAGES", {k: LANGUAGES[k] for k in ("python", "c")})
    code, out = _doctor("--run", "--json")
    report = json.loads(out)
    ran = [r for r in report["languages"] if r["available"]]
    assert code == 0 and ran and all(r["jail"] == "ok" for r in ran), report["languages"]
    assert {r["language"] for r in report["languages"]} == {"python", "c"}


def test_exits_non_zero_when_the_code_verifier_cannot_run() -> None:
    code, out = _doctor("--json", env={modes.ENV_MODE: "no-such-mode"})
    report = json.loads(out)
    assert code == 1 and report["mode"] is None and not report["check"]["ok"]
    assert "no-such-mode" in report["check"]["error"]


def test_a_server_that_cannot_start_shows_its_exception_and_where() -> None:
    # A real start failure: /tmp read-only (a tmpfs mounted so, in a private mount
    # namespace of the doctor process only), where the server makes its folder.
    import os
    import shutil
    import subprocess
    import sys

    if os.geteuid() != 0 or shutil.which("unshare") is None:
        pytest.skip("mounting a read-only /tmp for the test needs root and unshare(1)")
    doctor = f"{sys.executable} -m rewardsmith.cli.main doctor --json"
    done = subprocess.run(
        ["unshare", "--mount", "--propagation", "private", "bash", "-c",
         f"mount -t tmpfs -o ro tmpfs /tmp && {doctor}"],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    report = json.loads(done.stdout)
    error = report["check"]["error"]
    assert done.returncode == 1 and not report["check"]["ok"]
    assert "OSError: [Errno 30] Read-only file system: '/tmp/rewardsmith-sandbox-" in error
    assert "_server.py" in error and "_private_dir" in error, error  # where it was raised
