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
from typing import Any, Literal, get_args, get_origin, get_type_hints

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
    max_prompt_tokens: int = 512
    """The longest prompt, in tokens. Each step pads its prompts to the longest of them."""
    prompt_truncation: Literal["error", "left"] = "error"
    """A prompt longer than max_prompt_tokens: `error` stops before training and names the
    row; `left` cuts it from the left (keeping its end), counts it in `prompt/truncated`
    and warns once with the number of prompts cut."""
    max_new_tokens: int = 8
    """Completions stop at EOS or here (then they count as truncated)."""
    temperature: float = 1.0
    """Sampling temperature; log-probabilities are taken at the same temperature."""
    ppo_epochs: int = 1
    """Passes over each rollout batch."""
    minibatch_size: int = 16
    """Sequences per optimiser step, across all ranks; must divide the global batch."""
    micro_batch_size: int | None = None
    """Sequences per forward/backward pass on each rank (gradient accumulation: a rank's
    share of a minibatch runs in chunks of this size before one optimiser step; the
    gradient is the same). Also the chunk size when scoring rollouts. None: all at once."""
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
    environment: str | None = None
    """Train on a multi-turn environment, by its name (those of `rewardsmith env run`):
    `prompts` holds its tasks and the environment's own reward is the reward (`reward` and
    `reward_spec` are not used). Either engine (hf, vllm), with or without `reward_overlap`
    (there the next batch's first environment steps run while the policy learns)."""
    turn_tokens: int = 32
    """Multi-turn: new tokens per model turn at most (all turns and observations together
    fit in `max_new_tokens`)."""
    chat_template: bool = False
    """Multi-turn: render the prompt and observations with the tokenizer's chat template
    (`rewardsmith.trainer.chat`)."""
    turn_credit: Literal["final", "per_turn"] = "final"
    """Multi-turn episodes: `final` credits only the episode's final reward, at its last
    action token; `per_turn` also credits each earlier turn's reward (the environment's
    per-step shaping) at the last token of that turn's action, so a turn's tokens are not
    credited with what earlier turns earned. ppo and reinforce_pp place the rewards on
    tokens; grpo gives each turn's tokens an advantage of their own, the turn's return
    against the same group's episodes at that turn (see `turn_discount`). Not rloo."""
    turn_discount: float = 1.0
    """grpo with `turn_credit: per_turn`: a turn's return is its reward plus this times the
    next turn's return (the last turn's is the final reward). Below 1, an answer that is
    right only after a retry credits the turns before it less than a right first answer,
    so the first turn learns to be right on its own; 1 credits every turn with the final
    reward. ppo and reinforce_pp discount per token instead (`gamma`)."""
    kl_coef: float = 0.01
    """Initial KL coefficient beta. 0 disables the reference model."""
    kl_estimator: Literal["k1", "k3"] | None = None
    """Estimator of the KL penalty in the reward (ppo, reinforce_pp); None means k1. grpo and
    rloo put the KL in the loss, always as k3 weighted by the importance ratio (its gradient
    is the KL's; see losses.kl_loss); k1 there has zero expected gradient and is an error."""
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
    mask_truncated: bool = False
    """Drop completions that hit max_new_tokens without EOS from the loss. Off by default:
    a truncated completion is scored as written, and its (usually low) reward is what teaches
    the policy to stop; dropping them leaves PPO nothing that penalises rambling."""
    reward_overlap: Literal["off", "one_step"] = "one_step"
    """one_step: generate batch k+1 while batch k is scored, so batch k+1 comes from the
    weights before update k (one step stale; its old log-probs are those of the weights
    that sampled it, so the PPO ratio corrects for it). off: generate each batch after the
    previous update (on-policy, slower when rewards are slow). Multi-turn runs: turn 0 of
    batch k+1 comes from the weights before update k, and its first environment steps run
    while update k does (`trainer.multiturn`)."""
    reward: dict[str, dict[str, Any]] = field(
        default_factory=lambda: {"exact_match": {"weight": 1.0}}
    )
    """Verifier name -> its settings plus `weight` (default 1), used when no `reward_spec`:
    the reward is their weighted mean, sum_k w_k v_k / sum_k w_k over the verifiers that
    apply to the sample (`rewardsmith.graders.build`; ``-v a -v b`` on the CLI means the same)."""
    reward_spec: str | None = None
    """A rewardsmith.graders YAML reward spec; when set it replaces `reward`."""
    reward_executor: Literal["inline", "pool", "ray"] = "pool"
    """Where verifiers run: in process (trusted, microsecond checks), a process pool, or Ray."""
    reward_workers: int | None = None
    """Worker processes of the reward executor (None: one per core)."""
    reward_timeout_s: float = 60.0
    """Hard limit per verifier call; past it the process is killed and the sample dropped."""
    reward_batch_timeout_s: float = 600.0
    """A reward source that has not answered a batch in this long has hung: retry it."""
    reward_retries: int = 2
    """Retries of a batch whose reward source raised or hung; after them the batch is
    skipped (no update that step), counted in `reward/skipped_batches` and logged."""
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
    engine: Literal["hf", "vllm"] = "hf"
    """Rollout engine: hf (transformers in this process, on the live policy) or vllm (its own
    process and venv; the policy's weights are pushed to it after every update)."""
    vllm_python: str | None = None
    """Python of the vLLM venv (None: $REWARDSMITH_VLLM_PYTHON, else .venv-vllm/bin/python
    in the checkout; `make vllm` builds it)."""
    vllm_dtype: Literal["auto", "float32", "bfloat16"] = "auto"
    """dtype of vLLM's copy of the weights (auto: the policy's `dtype`)."""
    vllm_kv_cache_gb: float = 1.0
    """Memory vLLM reserves for its KV cache, in GB."""
    lora_rank: int = 0
    """LoRA rank (peft; `pip install rewardsmith[lora]`). 0: train every weight. With LoRA
    the reference is the base model with the adapter disabled: no second copy."""
    lora_alpha: float = 16.0
    """LoRA scaling numerator (the update is scaled by alpha / rank)."""
    lora_target_modules: str | list[str] = "all-linear"
    """Modules that get adapters: peft's "all-linear" or a list of module names."""

    def __post_init__(self) -> None:
        for problem in _problems(self):
            raise ValueError(problem)

    @property
    def global_batch(self) -> int:
        return self.prompts_per_step * self.group_size

    @property
    def kl_in_loss(self) -> bool:
        """grpo and rloo put the KL in the loss; ppo and reinforce_pp in the reward."""
        return self.algorithm in ("grpo", "rloo") and self.uses_reference

    @property
    def uses_reference(self) -> bool:
        return self.kl_coef > 0 or self.kl_target is not None

    @property
    def reward_kl_estimator(self) -> Literal["k1", "k3"]:
        """The estimator of the KL penalty in the reward (ppo, reinforce_pp)."""
        return self.kl_estimator or "k1"

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def _problems(c: TrainConfig) -> list[str]:
    problems = _choice_problems(c)
    positive = ["steps", "prompts_per_step", "group_size", "max_prompt_tokens", "max_new_tokens"]
    positive += ["ppo_epochs", "minibatch_size", "kl_horizon", "turn_tokens"]
    problems += [
        f"{name} must be >= 1, got {getattr(c, name)}" for name in positive if getattr(c, name) < 1
    ]
    if c.global_batch % c.minibatch_size:
        problems.append(
            f"minibatch_size={c.minibatch_size} must divide the global batch of "
            f"{c.global_batch} sequences (prompts_per_step * group_size)"
        )
    if c.micro_batch_size is not None and c.micro_batch_size < 1:
        problems.append(f"micro_batch_size must be >= 1 or None, got {c.micro_batch_size}")
    if c.algorithm == "rloo" and c.group_size < 2:
        problems.append("rloo needs group_size >= 2 (the baseline is the other samples)")
    if not 0 < c.temperature <= 10:
        problems.append(f"temperature must be in (0, 10], got {c.temperature}")
    if c.kl_coef < 0 or (c.kl_target is not None and c.kl_target <= 0):
        problems.append("kl_coef must be >= 0 and kl_target > 0 when set")
    if c.kl_in_loss and c.kl_estimator == "k1":
        problems.append(
            f"kl_estimator='k1' with {c.algorithm}, which puts the KL in the loss: k1's expected "
            "gradient there is zero, so it would not hold the policy near the reference. "
            "Leave kl_estimator unset (the loss uses k3 weighted by the importance ratio)"
        )
    if c.turn_credit == "per_turn" and c.algorithm == "rloo":
        problems.append(
            "turn_credit='per_turn' needs a token-level algorithm (ppo or reinforce_pp) or "
            "grpo's per-turn groups; rloo gives one advantage per sequence. Use "
            "turn_credit='final'"
        )
    if not 0 <= c.turn_discount <= 1:
        problems.append(f"turn_discount must be in [0, 1], got {c.turn_discount}")
    elif c.turn_discount != 1 and (c.turn_credit, c.algorithm) != ("per_turn", "grpo"):
        problems.append(
            "turn_discount discounts grpo's per-turn returns: set turn_credit='per_turn' "
            "and algorithm='grpo' (ppo and reinforce_pp discount per token: gamma)"
        )
    if not 0 <= c.gamma <= 1 or not 0 <= c.gae_lambda <= 1:
        problems.append("gamma and gae_lambda must be in [0, 1]")
    if c.reward_workers is not None and c.reward_workers < 1:
        problems.append(f"reward_workers must be >= 1 or None, got {c.reward_workers}")
    if c.reward_retries < 0 or c.reward_batch_timeout_s <= 0:
        problems.append("reward_retries must be >= 0 and reward_batch_timeout_s > 0")
    if c.reward_spec is None and not c.reward:
        problems.append("set `reward` (verifier name -> settings) or `reward_spec` (a YAML file)")
    if c.lora_rank < 0 or c.lora_alpha <= 0:
        problems.append("lora_rank must be >= 0 and lora_alpha > 0")
    if c.lora_rank and c.parallel == "fsdp":
        problems.append("LoRA with parallel=fsdp is not supported: use parallel=ddp")
    if c.vllm_kv_cache_gb <= 0:
        problems.append(f"vllm_kv_cache_gb must be > 0, got {c.vllm_kv_cache_gb}")
    return problems


def _choice_problems(c: TrainConfig) -> list[str]:
    """Every Literal-typed setting holds one of its options."""
    problems = []
    for name, hint in get_type_hints(TrainConfig).items():
        options = [a for arg in get_args(hint) for a in _literal_options(arg)]
        options += _literal_options(hint)
        value = getattr(c, name)
        if options and value not in options and not (value is None and _optional(hint)):
            shown = [str(o) for o in options]
            listed = ", ".join(shown[:-1]) + " or " + shown[-1] if len(shown) > 1 else shown[0]
            problems.append(f"{name} must be {listed}, got {value!r}")
    return problems


def _literal_options(hint: Any) -> list[Any]:
    return list(get_args(hint)) if get_origin(hint) is Literal else []


def _optional(hint: Any) -> bool:
    return type(None) in get_args(hint)


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
