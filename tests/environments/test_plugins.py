"""Third-party environments found through the ``rewardsmith.environments`` entry-point
group: a package's distribution metadata on the path (as `pip install` leaves it) makes
its environment available to `make_environment`, `rewardsmith env run` and `env spec`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from rewardsmith.environments.episodes import available_environments, make_environment

REPO = Path(__file__).resolve().parents[2]

PLUGIN = '''
from rewardsmith.environments.base import ToolEnvironment


class Shout(ToolEnvironment):
    """Answer the prompt in capitals."""

    name = "shout"

    def __init__(self):
        super().__init__({"exact_match": {"weight": 1.0}})
'''


def install(site: Path, entry: str = "plugin_envs:Shout", source: str = PLUGIN) -> Path:
    """What `pip install` of a package declaring an environment leaves on the path."""
    site.mkdir(parents=True, exist_ok=True)
    (site / "plugin_envs.py").write_text(textwrap.dedent(source))
    meta = site / "plugin_envs-0.1.dist-info"
    meta.mkdir(parents=True)
    (meta / "METADATA").write_text("Metadata-Version: 2.1\nName: plugin-envs\nVersion: 0.1\n")
    (meta / "entry_points.txt").write_text(f"[rewardsmith.environments]\nshout = {entry}\n")
    return site


def test_an_installed_plugin_environment_is_found_by_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(install(tmp_path)))
    assert "shout" in available_environments() and "retry_arithmetic" in available_environments()
    env = make_environment("shout", max_turns=2)
    state, prompt = env.reset({"id": "a", "prompt": "hello", "reference": "HELLO"})
    assert env.limits.max_turns == 2 and prompt == "hello"
    assert env.step(state, "HELLO").reward.value == 1.0  # type: ignore[union-attr]
    env.close()


def test_a_broken_plugin_is_named_not_a_traceback(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(install(tmp_path, entry="plugin_envs:Missing")))
    with pytest.raises(ValueError, match=r"environment 'shout' \(plugin_envs:Missing\) could not"):
        make_environment("shout")
    with pytest.raises(ValueError, match=r"entry-point group 'rewardsmith\.environments'"):
        make_environment("nope")


def test_env_spec_and_env_run_find_the_plugin(tmp_path: Path) -> None:
    site = install(tmp_path / "site")
    env = {**os.environ, "PYTHONPATH": f"{site}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    command = [sys.executable, "-m", "rewardsmith.cli.main", "env", "spec", "shout"]
    spec = subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert spec.returncode == 0, spec.stderr[-2000:]
    assert "exact_match" in spec.stdout
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps({"id": "t", "prompt": "hi", "reference": "HI"}) + "\n")
    model = tmp_path / "model"
    made = [sys.executable, "-m", "rewardsmith.cli.main", "env", "tiny-model", str(model)]
    assert subprocess.run(made, cwd=REPO, env=env, capture_output=True, timeout=120).returncode == 0
    out = tmp_path / "episodes.jsonl"
    run = [sys.executable, "-m", "rewardsmith.cli.main", "env", "run", "shout"]
    run += ["--tasks", str(tasks), "--model", str(model), "-o", str(out), "--turn-tokens", "4"]
    done = subprocess.run(run, cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    row = json.loads(out.read_text().splitlines()[0])
    assert row["id"] == "t" and row["final_reward"] in (0.0, 1.0)
