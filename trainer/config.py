"""The trainer's configuration: one frozen record, checked once, loadable from YAML.

>>> cfg = TrainConfig(model="m", prompts="p.jsonl", output_dir="out", algorithm="grpo")
>>> cfg.global_batch
64
>>> TrainConfig(model="m", prompts="p", output_dir="o", group_size=3, prompts_per_step=4,
...             minibatch_size=5)
Traceback (most recent call last):
...
ValueError: minibatch_size=5 must divide the global batch of 12 sequences ...
"""

from __future__ import annotations

import dataclasses
import difflib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml

__all__ = ["TrainConfig", "load_config"]

Algorithm = Literal["ppo", "grpo", "rloo", "reinforce_pp"]


@dataclass(frozen=True)
class TrainConfig:
    """Everything a run needs. Paths are plain strings so the record round-trips YAML."""

    model: str
    """Directory of a Hugging Face causal LM (`from_pretrained` path). Also the reference."""
    prompts: str
    """JSONL of tasks, one object per line with `prompt`, `reference` and optional `id`."""
    output_dir: str
    """Checkpoints, metrics.jsonl and TensorBoard events go here."""
    algorithm: Algorithm = "grpo"
    """ppo (value head + GAE), grpo, rloo or reinforce_pp (critic-free)."""
    steps: int = 100
    """Optimisation steps; each generates, scores and learns from one global batch."""
    prompts_per_step: int = 8
    """Distinct prompts per step, across all ranks."""
    group_size: int = 8
    """Completions sampled per prompt (the group of GRPO/RLOO)."""
    max_prompt_tokens: int = 16
    """Prompts are left-padded (or cut from the left) to this many tokens."""
    max_new_tokens: int = 8
    """Completions stop at EOS or here (then they count as truncated)."""
    temperature: float = 1.0
    """Sampling temperature; log-probabilities are taken at the same temperature."""
    ppo_epochs: int = 1
    """Passes over each rollout batch."""
    minibatch_size: int = 16
    """Sequences per optimiser step, across all ranks; must divide the global batch."""
    lr: float = 1e-3
    """Adam learning rate."""
    max_grad_norm: float = 1.0
    """Global gradient-norm clip."""
    clip_coef: float = 0.2
    """PPO ratio clip epsilon."""
    value_clip: float = 0.2
    """Value-loss clip (ppo only)."""
    vf_coef: float = 0.1
    """Weight of the value loss (ppo only)."""
    ent_coef: float = 0.0
    """Weight of the entropy bonus."""
    gamma: float = 1.0
    """Discount (ppo and reinforce_pp)."""
    gae_lambda: float = 0.95
    """GAE lambda (ppo)."""
    kl_coef: float = 0.01
    """Initial KL coefficient beta. 0 disables the reference model."""
    kl_estimator: Literal["k1", "k3"] = "k1"
    """Per-token KL estimator. PPO and REINFORCE++ put it in the reward, GRPO/RLOO in the loss."""
    kl_target: float | None = None
    """Set to use the adaptive controller (Ziegler et al. 2019) with this target KL."""
    kl_horizon: int = 10_000
    """Horizon of the adaptive controller, in samples."""
    whiten_advantages: bool = True
    """Whiten advantages over the batch (ppo)."""
    whiten_rewards: bool = False
    """Scale token rewards to unit variance before GAE (ppo)."""
    scale_by_std: bool = True
    """GRPO: divide by the group's std (False gives Dr. GRPO)."""
    mask_truncated: bool = True
    """Drop completions that hit max_new_tokens without EOS from the loss."""
    overlap: bool = True
    """Generate batch k+1 while batch k is scored (one step off-policy; PPO's ratio covers it)."""
    reward: dict[str, dict[str, Any]] = field(
        default_factory=lambda: {"exact_match": {"weight": 1.0}}
    )
    """Verifier name -> its settings plus `weight`: the default reward when no grader spec."""
    reward_spec: str | None = None
    """A rewardsmith.graders YAML reward spec; when set it replaces `reward`."""
    reward_executor: Literal["inline", "pool", "ray"] = "pool"
    """Where verifiers run: in process (trusted, microsecond checks), a process pool, or Ray."""
    reward_workers: int | None = None
    """Worker processes of the reward executor (None: one per core)."""
    reward_timeout_s: float = 60.0
    """Hard limit per verifier call; past it the process is killed and the sample dropped."""
    seed: int = 0
    """Seeds initialisation, prompt order and sampling; a run is repeatable from it."""
    checkpoint_every: int = 0
    """Save a checkpoint every this many steps (0: only at the end)."""
    resume: bool = False
    """Continue from the latest checkpoint in output_dir."""
    parallel: Literal["ddp", "fsdp"] = "ddp"
    """Under torchrun: ddp (a full replica per rank) or fsdp (parameters, gradients and
    optimiser state sharded across ranks, for models that do not fit on one device)."""
    device: Literal["auto", "cpu", "cuda"] = "auto"
    """auto: CUDA when available (NCCL), else CPU (gloo)."""
    tensorboard: bool = True
    """Write TensorBoard events beside metrics.jsonl."""
    dtype: Literal["float32", "bfloat16"] = "float32"
    """Parameter dtype of policy and reference."""

    def __post_init__(self) -> None:
        for problem in _problems(self):
            raise ValueError(problem)

    @property
    def global_batch(self) -> int:
        return self.prompts_per_step * self.group_size

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def _problems(c: TrainConfig) -> list[str]:
    problems = []
    positive = ["steps", "prompts_per_step", "group_size", "max_prompt_tokens", "max_new_tokens"]
    positive += ["ppo_epochs", "minibatch_size", "kl_horizon"]
    problems += [
        f"{name} must be >= 1, got {getattr(c, name)}" for name in positive if getattr(c, name) < 1
    ]
    if c.global_batch % c.minibatch_size:
        problems.append(
            f"minibatch_size={c.minibatch_size} must divide the global batch of "
            f"{c.global_batch} sequences (prompts_per_step * group_size)"
        )
    if c.algorithm == "rloo" and c.group_size < 2:
        problems.append("rloo needs group_size >= 2 (the baseline is the other samples)")
    if not 0 < c.temperature <= 10:
        problems.append(f"temperature must be in (0, 10], got {c.temperature}")
    if c.kl_coef < 0 or (c.kl_target is not None and c.kl_target <= 0):
        problems.append("kl_coef must be >= 0 and kl_target > 0 when set")
    if c.kl_estimator not in ("k1", "k3"):
        problems.append(f"kl_estimator must be 'k1' or 'k3', got {c.kl_estimator!r}")
    if c.algorithm not in ("ppo", "grpo", "rloo", "reinforce_pp"):
        problems.append(f"algorithm must be ppo, grpo, rloo or reinforce_pp, got {c.algorithm!r}")
    if not 0 <= c.gamma <= 1 or not 0 <= c.gae_lambda <= 1:
        problems.append("gamma and gae_lambda must be in [0, 1]")
    if c.reward_workers is not None and c.reward_workers < 1:
        problems.append(f"reward_workers must be >= 1 or None, got {c.reward_workers}")
    if c.reward_executor not in ("inline", "pool", "ray"):
        problems.append(f"reward_executor must be inline, pool or ray, got {c.reward_executor!r}")
    if c.parallel not in ("ddp", "fsdp"):
        problems.append(f"parallel must be ddp or fsdp, got {c.parallel!r}")
    if c.reward_spec is None and not c.reward:
        problems.append("set `reward` (verifier name -> settings) or `reward_spec` (a YAML file)")
    return problems


def load_config(path: str | Path, **overrides: Any) -> TrainConfig:
    """Read a YAML config; unknown keys fail with the closest known name."""
    data = yaml.safe_load(Path(path).read_text()) or {}
    if not isinstance(data, dict):
        raise ValueError(f"{path}: a trainer config is a mapping of settings, got {type(data)}")
    data.update({k: v for k, v in overrides.items() if v is not None})
    known = {f.name for f in dataclasses.fields(TrainConfig)}
    for key in data:
        if key not in known:
            close = difflib.get_close_matches(key, known, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ValueError(f"{path}: unknown setting {key!r}{hint}")
    return TrainConfig(**data)
