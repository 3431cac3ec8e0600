"""veRL and OpenRLHF load our adapter files by path and call them as shown here."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

import rewardsmith.graders.integrations as integrations
from rewardsmith.graders.integrations import InfraFailureError, VerlScore
from rewardsmith.verifiers import Sample
from tests.support.plugin import install_plugin

SPEC = """
grader:
  weighted:
    components:
      correct: exact_match
      tagged: {verify: format, patterns: ["^A:"]}
"""


def _load_by_path(path: Path, name: str) -> ModuleType:
    """What veRL's `get_custom_reward_fn` and OpenRLHF's remote-RM loader do."""
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture
def spec_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "reward.yaml"
    path.write_text(SPEC)
    monkeypatch.setenv("REWARDSMITH_SPEC", str(path))
    return path


def test_verl_compute_score_as_verl_calls_it(spec_env: Path) -> None:
    module = _load_by_path(Path(integrations.__file__).with_name("verl.py"), "custom_reward")
    compute_score = module.compute_score
    # veRL's reward manager calls with keywords, one sample at a time.
    result = compute_score(
        data_source="capitals",
        solution_str="A: Paris",
        ground_truth="A: paris",
        extra_info={"index": 7},
    )
    assert result == {"score": 2.0, "correct": 1.0, "tagged": 1.0}
    wrong = compute_score(data_source="capitals", solution_str="Lyon", ground_truth="A: Paris")
    assert wrong["score"] == 0.0


def test_openrlhf_reward_func_file(spec_env: Path) -> None:
    module = _load_by_path(Path(integrations.__file__).with_name("openrlhf.py"), "remote_rm")
    out = module.reward_func(
        queries=["Q: capital of France? A: Paris", "Q: capital of Peru? Quito"],
        prompts=["Q: capital of France? ", "Q: capital of Peru? "],
        labels=["A: Paris", "A: Lima"],
    )
    assert out["rewards"].tolist() == [2.0, 0.0] and out["scores"].tolist() == [2.0, 0.0]
    assert out["extra_logs"]["correct"].tolist() == [1.0, 0.0]


def test_infra_failure_is_never_a_silent_number(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    plugin = install_plugin(tmp_path / "plugin")
    monkeypatch.syspath_prepend(str(plugin))
    spec = "grader:\n  weighted:\n    components:\n      slow: {verify: slow_echo, delay_s: 30}\n"
    scorer = VerlScore(spec, backend="pool", workers=1, timeout_s=0.5)
    with pytest.raises(InfraFailureError, match="verifier_timeout"):
        scorer(data_source="x", solution_str="a", ground_truth="a")
    stated = VerlScore(spec, backend="pool", workers=1, timeout_s=0.5, fallback=-1.0)
    assert stated(data_source="x", solution_str="a", ground_truth="a")["score"] == -1.0


def test_same_reward_offline_and_through_adapters(spec_env: Path) -> None:
    from rewardsmith.graders import load_spec

    grader = load_spec(spec_env)
    sample = Sample(id="0", completion="A: 4", reference="A: 4")
    offline = grader.score([sample], None)[0].value
    assert (
        VerlScore(spec_env, backend="inline")(
            data_source="t", solution_str="A: 4", ground_truth="A: 4"
        )["score"]
        == offline
    )
