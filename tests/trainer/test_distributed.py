"""Two processes under torchrun (gloo, CPU) against one process with the same global batch."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import yaml

from rewardsmith.trainer.advantages import grpo_advantages
from rewardsmith.trainer.checkpoint import latest_checkpoint, load_state
from rewardsmith.trainer.config import TrainConfig
from rewardsmith.trainer.loop import train
from rewardsmith.trainer.metrics import read_metrics

from .conftest import small_config

pytestmark = pytest.mark.distributed
HERE = Path(__file__).resolve().parent
LOGGED_STATS = {"loss/policy", "policy/entropy", "policy/approx_kl", "grad_norm"}
CLIP_FRACTIONS = ("policy/clipfrac", "value/clipfrac")


def assert_clip_fractions_agree(one: list[dict], two: list[dict], config: TrainConfig) -> None:
    """A clip fraction counts tokens whose ratio (or value) moved past the clip range: one
    token that sits within float noise of the boundary counts in one run and not the other
    (seen on one CPU: value/clipfrac 1/56 against 0). So the two runs may differ by one
    token in one minibatch update, which weighs at most 1 / (updates x rows) of a step's mean
    (every row has at least one token); the continuous statistics still agree to 1e-4."""
    rows = config.minibatch_size
    updates = config.ppo_epochs * -(-config.global_batch // rows)
    one_token = 1 / (updates * rows)
    for key in CLIP_FRACTIONS:
        if key in one[0]:
            got, want = [r[key] for r in one], [r[key] for r in two]
            assert got == pytest.approx(want, abs=one_token + 1e-9), key


def torchrun(args: list[str], cwd: Path) -> None:
    command = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        "--nproc-per-node",
        "2",
        *args,
    ]
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONWARNINGS": "ignore"}
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-4000:]


def test_group_normalisation_sees_groups_that_span_ranks(tmp_path: Path) -> None:
    # Three groups of 4 over two ranks of 6: group 1 (rows 4-7) straddles the ranks.
    scores = [1.0, 0.0, 0.0, 0.0, 1.0, 1.0, 0.0, 1.0, 0.0, 0.0, 0.0, 0.0]
    torchrun(
        [str(HERE / "_group_worker.py"), json.dumps(scores), "4", str(tmp_path / "out")], cwd=HERE
    )
    ranks = [json.loads((tmp_path / f"out.rank{r}.json").read_text()) for r in (0, 1)]
    got = ranks[0]["advantages"] + ranks[1]["advantages"]
    assert got == pytest.approx(grpo_advantages(torch.tensor(scores), 4).tolist(), abs=1e-6)
    # Normalising each rank's rows alone would have been wrong for the straddling group.
    alone = grpo_advantages(torch.tensor(ranks[0]["local"][4:]), 2).tolist()
    assert alone != pytest.approx(ranks[0]["advantages"][4:], abs=1e-3)


@pytest.mark.slow
def test_two_processes_equal_one_with_the_same_global_batch(
    tiny_model: str, tmp_path: Path
) -> None:
    # One prompt of 8 completions: each rank generates 4, so the group spans both ranks.
    settings = {
        "algorithm": "grpo",
        "steps": 2,
        "prompts_per_step": 1,
        "group_size": 8,
        "minibatch_size": 4,
        "kl_coef": 0.05,
    }
    train(small_config(tiny_model, tmp_path / "one", **settings))
    two = small_config(tiny_model, tmp_path / "two", **settings)
    config = tmp_path / "two.yaml"
    config.write_text(yaml.safe_dump(two.to_dict()))
    torchrun(["-m", "rewardsmith.trainer", str(config)], cwd=tmp_path)
    a, b = read_metrics(tmp_path / "one"), read_metrics(tmp_path / "two")
    for key in ("reward/mean", "reward/format", "response/length", "kl/seq"):
        assert [r[key] for r in a] == pytest.approx([r[key] for r in b], abs=1e-5), key
    # Losses and statistics are all-reduced before logging: the log is the whole batch's.
    assert set(a[0]) == set(b[0])
    for key in sorted(LOGGED_STATS | {"loss/kl"}):
        assert [r[key] for r in a] == pytest.approx([r[key] for r in b], abs=1e-4), key
    assert_clip_fractions_agree(a, b, two)
    one_dir, two_dir = latest_checkpoint(tmp_path / "one"), latest_checkpoint(tmp_path / "two")
    assert one_dir is not None and two_dir is not None
    sa, sb = load_state(one_dir)["model"], load_state(two_dir)["model"]
    assert max(float((sa[k] - sb[k]).abs().max()) for k in sa) < 1e-4


def test_fsdp_gives_each_rank_half_of_every_model(tiny_model: str, tmp_path: Path) -> None:
    torchrun([str(HERE / "_shard_worker.py"), tiny_model, str(tmp_path / "out")], cwd=HERE)
    ranks = [json.loads((tmp_path / f"out.rank{r}.json").read_text()) for r in (0, 1)]
    for name in ("policy", "reference"):
        full = ranks[0][name]["full"]
        assert all(rank[name]["all_sharded"] for rank in ranks), name
        # Rows are split evenly; odd dims and the 1-wide value head leave a rank a few more.
        assert all(abs(rank[name]["local"] - full / 2) < 0.01 * full for rank in ranks), name
        assert sum(rank[name]["local"] for rank in ranks) == full


@pytest.mark.slow
def test_fsdp_equals_one_process_and_resumes_from_its_full_checkpoint(
    tiny_model: str, tmp_path: Path
) -> None:
    # PPO: the value head and the frozen reference are sharded too. Each rank generates
    # 4 of the 8 sequences and learns on 2 of each minibatch of 4.
    settings = {"algorithm": "ppo", "steps": 3, "checkpoint_every": 2, "kl_coef": 0.05}
    train(small_config(tiny_model, tmp_path / "one", **settings))
    fsdp = small_config(tiny_model, tmp_path / "fsdp", parallel="fsdp", **settings)
    config = tmp_path / "fsdp.yaml"
    config.write_text(yaml.safe_dump(fsdp.to_dict()))
    torchrun(["-m", "rewardsmith.trainer", str(config)], cwd=tmp_path)
    one, two = read_metrics(tmp_path / "one"), read_metrics(tmp_path / "fsdp")
    for key in ("reward/mean", "kl/seq", "response/length", "grad_norm"):
        assert [r[key] for r in one] == pytest.approx([r[key] for r in two], abs=1e-5), key
    for key in sorted(LOGGED_STATS | {"loss/value"}):
        assert [r[key] for r in one] == pytest.approx([r[key] for r in two], abs=1e-4), key
    assert_clip_fractions_agree(one, two, fsdp)
    assert_same_weights(tmp_path / "one", tmp_path / "fsdp")
    # Resume from the step-2 checkpoint (full tensors gathered at save, re-sharded at load).
    (tmp_path / "fsdp" / "checkpoints" / "latest").write_text("step_000002")
    config.write_text(yaml.safe_dump({**fsdp.to_dict(), "resume": True}))
    torchrun(["-m", "rewardsmith.trainer", str(config)], cwd=tmp_path)
    resumed = read_metrics(tmp_path / "fsdp")
    assert [r["step"] for r in resumed] == [0, 1, 2]
    assert [r["grad_norm"] for r in one] == pytest.approx(
        [r["grad_norm"] for r in resumed], abs=1e-5
    )
    assert_same_weights(tmp_path / "one", tmp_path / "fsdp")


def assert_same_weights(a: Path, b: Path, tol: float = 1e-4) -> None:
    """The final checkpoints' full weights and Adam moments agree within `tol`."""
    dir_a, dir_b = latest_checkpoint(a), latest_checkpoint(b)
    assert dir_a is not None and dir_b is not None
    sa, sb = load_state(dir_a), load_state(dir_b)
    assert sa["model"].keys() == sb["model"].keys()
    assert max(float((sa["model"][k] - sb["model"][k]).abs().max()) for k in sa["model"]) < tol
    moments_a, moments_b = sa["optimizer"]["state"], sb["optimizer"]["state"]
    assert moments_a.keys() == moments_b.keys()
    for i in moments_a:
        diff = (moments_a[i]["exp_avg"] - moments_b[i]["exp_avg"]).abs().max()
        assert float(diff) < tol
